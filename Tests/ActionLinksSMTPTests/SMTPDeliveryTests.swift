import ActionLinksSMTPTestSupport
import Foundation
import Testing

@testable import ActionLinksSMTP

/// Messages sent to a real SMTP server (aiosmtpd) and read back by Python's email package.
@Suite(.timeLimit(.minutes(5)))
struct SMTPDeliveryTests {
    static let credentials = SMTPServer.Credentials(username: "mailer", password: "correct horse battery staple")
    static let from = MailAddress("noreply@links.example.com", displayName: "ActionLinks — Вход")
    static let to = MailAddress("user@example.org")

    static func mail(subject: String, date: Date = Date(timeIntervalSince1970: 1_751_360_703)) -> OutgoingMail {
        OutgoingMail(from: from, to: to, subject: subject, text: MailComposerTests.text, html: MailComposerTests.html, date: date)
    }

    static func envelope(_ mail: OutgoingMail) throws -> SMTPEnvelope {
        SMTPEnvelope(sender: mail.from.address, recipients: [mail.to.address], message: try MailComposer.compose(mail).bytes)
    }

    /// Checks that `received` is `mail` as a mail program reads it.
    static func expectDelivered(_ received: ReceivedMessage, _ mail: OutgoingMail, messageID: String) {
        let parsed = received.parsed
        #expect(received.mailFrom == mail.from.address)
        #expect(received.rcptTos == [mail.to.address])
        #expect(parsed.defects == [])
        #expect(parsed.subject == mail.subject)
        #expect(parsed.fromName == mail.from.displayName)
        #expect(parsed.fromAddress == mail.from.address)
        #expect(parsed.to == [mail.to.address])
        #expect(parsed.messageID == "<\(messageID)>")
        #expect(parsed.date == MailComposer.rfc5322Date(mail.date!))
        #expect(parsed.dateTimestamp == mail.date!.timeIntervalSince1970)
        #expect(parsed.contentType == "multipart/alternative")
        #expect(parsed.mimeVersion == "1.0")
        #expect(parsed.autoSubmitted == "auto-generated")
        #expect(parsed.text == mail.text)
        #expect(parsed.html == mail.html)
        #expect(parsed.sevenBit)
        #expect(parsed.longestLine <= 998)
    }

    @Test func startTLSWithAuthPlainDeliversMessagesPythonReadsBack() async throws {
        let certificates = try await TestCertificates.shared.make()
        let logs = CapturedLogs()
        try await SMTPTestServer.with([
            "--cert", certificates.localhost.certificate, "--key", certificates.localhost.key, "--starttls-required", "--auth-required",
        ]) { server in
            let client = try SMTPClient(
                server: SMTPServer(
                    host: "localhost", port: server.port, security: .startTLS, credentials: Self.credentials,
                    trust: .certificateAuthorities(pemFile: certificates.localhost.certificate)),
                logger: logs.logger)
            var sent: [(OutgoingMail, String)] = []
            for subject in HeaderFieldTests.subjects.prefix(3) {
                let mail = Self.mail(subject: subject)
                let composed = try MailComposer.compose(mail)
                try await client.send(SMTPEnvelope(sender: mail.from.address, recipients: [mail.to.address], message: composed.bytes))
                sent.append((mail, composed.messageID))
            }
            await client.shutdown()

            let received = try server.messages()
            try #require(received.count == 3)
            for (message, (mail, messageID)) in zip(received, sent) {
                Self.expectDelivered(message, mail, messageID: messageID)
                #expect(message.authenticated)
            }
            let events = try server.events()
            #expect(events.contains { $0.event == "auth" && $0.mechanism == "PLAIN" && $0.success == true })
            #expect(events.filter { $0.event == "mail" }.allSatisfy { $0.tls == true }, "every MAIL FROM after STARTTLS")
            #expect(try server.connections() == 1, "the three messages share one connection")
            #expect(events.filter { $0.event == "rset" }.count == 2, "RSET before each reuse")
        }
        // Debug logs say what happened, never the credentials nor the message.
        let logged = logs.text.joined(separator: "\n")
        #expect(logged.contains("smtp message accepted"))
        for secret in [
            Self.credentials.password, Array("\0mailer\0\(Self.credentials.password)".utf8).base64, "Follow this link", "oobCode",
            "ActionLinks にサインイン",
        ] {
            #expect(!logged.contains(secret), "the logs hold \(secret)")
        }
    }

    @Test func authLoginWhenTheServerOffersOnlyLogin() async throws {
        let certificates = try await TestCertificates.shared.make()
        try await SMTPTestServer.with([
            "--cert", certificates.localhost.certificate, "--key", certificates.localhost.key, "--starttls-required", "--auth-required",
            "--auth-mechanisms", "LOGIN",
        ]) { server in
            let client = try SMTPClient(
                server: SMTPServer(
                    host: "localhost", port: server.port, credentials: Self.credentials,
                    trust: .certificateAuthorities(pemFile: certificates.localhost.certificate)))
            let mail = Self.mail(subject: HeaderFieldTests.subjects[2])
            let composed = try MailComposer.compose(mail)
            try await client.send(SMTPEnvelope(sender: mail.from.address, recipients: [mail.to.address], message: composed.bytes))
            await client.shutdown()
            let received = try server.messages()
            try #require(received.count == 1)
            Self.expectDelivered(received[0], mail, messageID: composed.messageID)
            #expect(try server.events().filter { $0.event == "auth" }.map { "\($0.mechanism!) \($0.success!)" } == ["LOGIN true"])
        }
    }

    @Test func implicitTLS() async throws {
        let certificates = try await TestCertificates.shared.make()
        try await SMTPTestServer.with([
            "--tls", "--cert", certificates.localhost.certificate, "--key", certificates.localhost.key, "--auth-required",
        ]) { server in
            let client = try SMTPClient(
                server: SMTPServer(
                    host: "localhost", port: server.port, security: .tls, credentials: Self.credentials,
                    trust: .certificateAuthorities(pemFile: certificates.localhost.certificate)))
            let mail = Self.mail(subject: HeaderFieldTests.subjects[0])
            let composed = try MailComposer.compose(mail)
            try await client.send(SMTPEnvelope(sender: mail.from.address, recipients: [mail.to.address], message: composed.bytes))
            await client.shutdown()
            let received = try server.messages()
            try #require(received.count == 1)
            Self.expectDelivered(received[0], mail, messageID: composed.messageID)
            #expect(try server.events().first { $0.event == "connect" }?.tls == true)
        }
    }

    @Test func implicitTLSToAnIPAddressChecksTheCertificatesAddress() async throws {
        let certificates = try await TestCertificates.shared.make()
        try await SMTPTestServer.with(["--tls", "--cert", certificates.localhost.certificate, "--key", certificates.localhost.key]) {
            server in
            let client = try SMTPClient(
                server: SMTPServer(
                    host: "127.0.0.1", port: server.port, security: .tls,
                    trust: .certificateAuthorities(pemFile: certificates.localhost.certificate)))
            try await client.send(try Self.envelope(Self.mail(subject: "To an address")))
            await client.shutdown()
            #expect(try server.messages().count == 1)
        }
    }

    @Test func plainConnectionsAuthenticateOnlyOnLoopback() async throws {
        try await SMTPTestServer.with(["--auth-required", "--auth-plaintext"]) { server in
            let client = try SMTPClient(
                server: SMTPServer(host: "127.0.0.1", port: server.port, security: .none, credentials: Self.credentials))
            try await client.send(try Self.envelope(Self.mail(subject: "Plain on loopback")))
            await client.shutdown()
            #expect(try server.messages().map(\.authenticated) == [true])
            #expect(try server.events().contains { $0.event == "mail" && $0.tls == false })
        }
    }

    @Test func multipleRecipientsAndTheNullSender() async throws {
        try await SMTPTestServer.with { server in
            let client = try SMTPClient(server: SMTPServer(host: "127.0.0.1", port: server.port, security: .none))
            let message = try MailComposer.compose(Self.mail(subject: "Bounce")).bytes
            try await client.send(SMTPEnvelope(sender: "", recipients: ["a@example.org", "b@example.org"], message: message))
            await client.shutdown()
            let received = try server.messages()
            #expect(received.map(\.mailFrom) == ["<>"], "aiosmtpd's way of writing the null sender")
            #expect(received.map(\.rcptTos) == [["a@example.org", "b@example.org"]])
        }
    }
}
