import ActionLinks
import ActionLinksSMTPTestSupport
import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain

/// `mail.backend: smtp` against a real SMTP server (aiosmtpd): STARTTLS required, AUTH required,
/// the server's certificate trusted through `mail.smtp.caFile`; what arrives is read back by
/// Python's email package and compared with the server's own templates.
@Suite("Mail over SMTP", .timeLimit(.minutes(5)))
struct SMTPMailTests {
    static let password = "correct horse battery staple"

    /// The server's settings for `server`: STARTTLS to 127.0.0.1 as user `mailer`, its password in a
    /// private file, its certificate authority in another.
    static func environment(_ server: SMTPTestServer, caFile: String) throws -> [String: String] {
        let folder = TestProject.temporaryDirectory("actionlinks-smtp-secret")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let passwordFile = folder.appendingPathComponent("smtp-password")
        try (password + "\n").write(to: passwordFile, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passwordFile.path)
        return [
            "ACTIONLINKS_MAIL_BACKEND": "smtp", "ACTIONLINKS_MAIL_SMTP_URL": "smtp://mailer@127.0.0.1:\(server.port)",
            "ACTIONLINKS_MAIL_SMTP_PASSWORD_FILE": passwordFile.path, "ACTIONLINKS_MAIL_SMTP_CA_FILE": caFile,
            "ACTIONLINKS_MAIL_FROM": "Пример — Example App <noreply@links.example.com>",
        ]
    }

    /// The test server's options: STARTTLS with the `localhost` certificate, required, and AUTH required.
    static func options() async throws -> (options: [String], caFile: String) {
        let certificates = try await TestCertificates.shared.make()
        return (
            [
                "--cert", certificates.localhost.certificate, "--key", certificates.localhost.key, "--starttls-required",
                "--auth-required",
            ], certificates.localhost.certificate
        )
    }

    /// The messages `server` accepted for `address`, once there are `count`.
    static func received(by server: SMTPTestServer, _ count: Int, to address: String) async throws -> [ReceivedMessage] {
        var found: [ReceivedMessage] = []
        try await Eventually.wait(for: "\(count) mail(s) to \(address)") {
            found = try server.messages().filter { $0.rcptTos == [address] }
            return found.count >= count
        }
        return found
    }

    /// The `=?charset?encoding?text?=` words of the header lines of `eml`.
    static func encodedWords(_ eml: String) -> [Substring] {
        let header = eml.components(separatedBy: "\r\n\r\n")[0]
        return header.split(whereSeparator: { $0 == " " || $0 == "\r" || $0 == "\n" || $0 == "\t" })
            .filter { $0.hasPrefix("=?") && $0.hasSuffix("?=") }
    }

    enum Sent: String, CaseIterable {
        case signIn, resetPassword, verifyEmail, verifyAndChangeEmail
    }

    @Test(
        "every kind of mail in every language arrives over STARTTLS with AUTH, reads back as the templates render it, and says nothing of itself in the logs",
        arguments: ["en", "ru", "ja", "ar"])
    func everyMailInEveryLanguage(language: String) async throws {
        let (options, caFile) = try await Self.options()
        let templates = try await PageTemplates(www: Repository.www)
        try await SMTPTestServer.with(options) { server in
            try await TestApp.router(environment: try Self.environment(server, caFile: caFile), mail: .configuredBackend) { app in
                let locale = ["X-Firebase-Locale": language]
                var recipients: [Sent: String] = [:]
                for sent in Sent.allCases {
                    let address = "\(sent.rawValue.lowercased())-\(language)@example.com"
                    let fields: [String: Any]
                    switch sent {
                    case .signIn:
                        fields = ["requestType": "EMAIL_SIGNIN", "email": address]
                    case .resetPassword:
                        try await app.createAccount(email: address, password: "pass-\(language)-1")
                        fields = ["requestType": "PASSWORD_RESET", "email": address]
                    case .verifyEmail:
                        try await app.createAccount(email: address)
                        fields = ["requestType": "VERIFY_EMAIL", "email": address]
                    case .verifyAndChangeEmail:
                        let old = "old-\(language)@example.com"
                        let signedUp = try await app.api(
                            "signUp", ["email": old, "password": "pass-\(language)-2", "returnSecureToken": true])
                        let idToken = try #require(signedUp.json["idToken"] as? String, "\(signedUp.text)")
                        fields = ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": idToken, "newEmail": address]
                    }
                    let answer = try await app.api("sendOobCode", fields, admin: sent == .verifyEmail, headers: locale)
                    #expect(answer.status == 200, "\(sent): \(answer.text)")
                    recipients[sent] = address
                }
                for sent in Sent.allCases {
                    let address = try #require(recipients[sent])
                    let received = try #require(try await Self.received(by: server, 1, to: address).first)
                    let parsed = received.parsed
                    let text = try #require(parsed.text, "\(sent): no text part")
                    let asSent = MailMessage(
                        to: address, from: "", subject: parsed.subject, text: text, html: parsed.html ?? "", mode: .signIn)
                    let link = try Mailbox.link(in: asSent)
                    let mode = try #require(ActionCodeLink.parse(link)?.mode)
                    #expect(mode.rawValue == sent.rawValue)
                    let expected = templates.mail(
                        mode: mode, link: link, email: address, appName: app.configuration.service.project.appName, languageCode: language,
                        from: app.configuration.service.mail.from,
                        signInCode: sent == .signIn ? try SignInCodeTests.code(in: asSent).filter(\.isNumber) : nil)
                    #expect(parsed.subject == expected.subject, "\(sent) in \(language)")
                    #expect(text == expected.text, "\(sent) in \(language): the text part")
                    #expect(parsed.html == expected.html, "\(sent) in \(language): the HTML part")
                    #expect(parsed.fromName == "Пример — Example App" && parsed.fromAddress == "noreply@links.example.com")
                    #expect(received.mailFrom == "noreply@links.example.com" && parsed.to == [address])
                    #expect(received.authenticated, "the mail went only after AUTH")
                    #expect(parsed.defects.isEmpty, "\(parsed.defects)")
                    #expect(parsed.sevenBit && parsed.longestLine <= 998)
                    #expect(parsed.messageID?.hasSuffix("@links.example.com>") == true)
                    let eml = try String(contentsOfFile: received.eml, encoding: .utf8)
                    for word in Self.encodedWords(eml) { #expect(word.count <= 75, "an encoded word of \(word.count) characters: \(word)") }
                    let code = try #require(ActionCodeLink.parse(link)?.oobCode)
                    #expect(
                        !app.logs.text.contains(code) && !app.logs.text.contains(address), "the logs hold neither the code nor the address")
                }
                // One connection carried every mail of the run (the pool), each after STARTTLS.
                let events = try server.events()
                #expect(events.contains { $0.event == "tls" } && events.contains { $0.event == "auth" && $0.success == true })
                #expect(!events.contains { $0.event == "mail" && $0.tls == false })
            }
        }
    }

    @Test("while the SMTP server is down the mail waits in the outbox; it goes once the server is back, and its link still works")
    func serverDownThenBack() async throws {
        let (options, caFile) = try await Self.options()
        try await SMTPTestServer.with(options) { server in
            try await TestApp.router(environment: try Self.environment(server, caFile: caFile), mail: .configuredBackend) { app in
                await server.stop()
                try await app.createAccount(email: "dana@example.com", password: "old-password-1")
                let asked = try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "dana@example.com"])
                #expect(asked.status == 200, "the request is answered while the mail server is down: \(asked.text)")
                try await Eventually.wait(for: "a failed attempt") { app.logs.text.contains("mail delivery failed") }
                #expect(try await MailOutboxTests.mail(app)["actionlinks_mail_outbox_depth"] == 1)
                try await server.restart()
                let received = try #require(try await Self.received(by: server, 1, to: "dana@example.com").first)
                let text = try #require(received.parsed.text)
                let link = try Mailbox.link(
                    in: MailMessage(to: "dana@example.com", from: "", subject: "", text: text, html: "", mode: .resetPassword))
                let code = try #require(ActionCodeLink.parse(link)?.oobCode)
                let reset = try await app.api("resetPassword", ["oobCode": code, "newPassword": "new-password-2"])
                #expect(reset.status == 200, "\(reset.text)")
                try await Eventually.wait(for: "the outbox to empty") {
                    try await MailOutboxTests.mail(app)["actionlinks_mail_outbox_depth"] == 0
                }
                #expect(try await MailOutboxTests.mail(app)[MailOutboxTests.delivered] == 1)
            }
        }
    }

    @Test("a server that refuses the recipient for good (550) gets one try; the mail is given up, the server serves on")
    func permanentRefusal() async throws {
        let (options, caFile) = try await Self.options()
        try await SMTPTestServer.with(options + ["--reply-code", "550"]) { server in
            try await TestApp.router(environment: try Self.environment(server, caFile: caFile), mail: .configuredBackend) { app in
                try await app.createAccount(email: "eli@example.com")
                #expect(try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "eli@example.com"]).status == 200)
                try await Eventually.wait(for: "the refusal") {
                    try await MailOutboxTests.mail(app)[#"actionlinks_mail_sent_total{outcome="rejected"}"#] == 1
                }
                try await Eventually.wait(for: "the outbox to empty") {
                    try await MailOutboxTests.mail(app)["actionlinks_mail_outbox_depth"] == 0
                }
                #expect(try server.events().filter { $0.event == "rcpt" }.count == 1, "a refused recipient is not tried again")
                #expect(try await app.request("GET", "/healthz").status == 200)
            }
        }
    }
}
