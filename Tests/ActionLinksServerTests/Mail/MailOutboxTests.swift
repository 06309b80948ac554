import ActionLinksTestSupport
import Foundation
import Synchronization
import Testing

@testable import ActionLinksDomain

/// The outbox (docs/ARCHITECTURE.md §13): a mail is stored, sealed, before its request is
/// answered, and the deliverer sends it, retries it for `mail.retryFor`, gives it up, or drops it
/// when its link was used first.
@Suite("The mail outbox", .timeLimit(.minutes(5)))
struct MailOutboxTests {
    /// A backend a test steers: it holds each message until told, fails it, or takes it.
    final class Backend: Sendable {
        enum Answer: Sendable {
            case take, hold, failForNow, refuse
        }

        private let state = Mutex<(answer: Answer, attempts: Int, taken: [MailMessage])>((.take, 0, []))

        var answer: Answer {
            get { state.withLock { $0.answer } }
            set { state.withLock { $0.answer = newValue } }
        }
        var attempts: Int { state.withLock { $0.attempts } }
        var taken: [MailMessage] { state.withLock { $0.taken } }

        var transport: MailTransport {
            { message in
                while true {
                    let answer = self.state.withLock { state -> Answer in
                        if state.answer != .hold { state.attempts += 1 }
                        if state.answer == .take { state.taken.append(message) }
                        return state.answer
                    }
                    switch answer {
                    case .take: return
                    case .hold: try await Task.sleep(for: .milliseconds(20))
                    case .failForNow: throw MailDeliveryError(message: "450 mailbox busy", permanent: false)
                    case .refuse: throw MailDeliveryError(message: "550 no such user", permanent: true)
                    }
                }
            }
        }
    }

    /// The `actionlinks_mail_*` series of `/metrics`, by name and label.
    static func mail(_ app: TestApp) async throws -> [String: Double] {
        let text = try await app.request("GET", "/metrics", headers: ["Authorization": "Bearer owner"]).text
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("actionlinks_mail_") {
            let parts = line.split(separator: " ")
            values[String(parts[0])] = Double(parts.last ?? "")
        }
        return values
    }

    static let delivered = #"actionlinks_mail_sent_total{outcome="delivered"}"#

    /// The first message `backend` took for `address`, once it took one.
    static func taken(by backend: Backend, to address: String) async throws -> MailMessage {
        var found: MailMessage?
        try await Eventually.wait(for: "a mail to \(address)") {
            found = backend.taken.first { $0.to == address }
            return found != nil
        }
        return try #require(found)
    }

    @Test(
        "a mail is in the store, sealed, before its request is answered: no link, code or sign-in code in the database's files; it goes once the backend takes it"
    )
    func sealedBeforeTheAnswer() async throws {
        let backend = Backend()
        backend.answer = .hold
        try await TestApp.router(mail: .transport(backend.transport)) { app in
            let asked = try await app.api("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "ann@example.com"])
            #expect(asked.status == 200, "\(asked.text)")
            try await Eventually.wait(for: "the outbox to show the mail") { try await Self.mail(app)["actionlinks_mail_outbox_depth"] == 1 }
            // What a copy of the database holds while the mail waits.
            let files = ["actionlinks.sqlite", "actionlinks.sqlite-wal"].map {
                (name: $0, bytes: (try? Data(contentsOf: app.dataDirectory.appendingPathComponent($0))) ?? Data())
            }
            backend.answer = .take
            let message = try await Self.taken(by: backend, to: "ann@example.com")
            let link = try Mailbox.link(in: message)
            let oobCode = try SignInCodeTests.oobCode(link)
            let signInCode = try SignInCodeTests.code(in: message)
            #expect(!message.id.isEmpty)
            for (name, bytes) in files {
                // (The code's row holds the address, as every code's does; the link and the codes are the mail's.)
                for secret in [oobCode, signInCode, signInCode.filter(\.isNumber), "mode=signIn"] {
                    #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(name) holds \(secret) in clear")
                }
            }
            try await Eventually.wait(for: "the outbox to empty") { try await Self.mail(app)["actionlinks_mail_outbox_depth"] == 0 }
            #expect(try await Self.mail(app)[Self.delivered] == 1)
        }
    }

    @Test(
        "a temporary failure is tried again with backoff until mail.retryFor, then given up; a permanent one is given up at once; neither logs the address"
    )
    func retries() async throws {
        let clock = ManualClock()
        let backend = Backend()
        backend.answer = .failForNow
        try await TestApp.router(environment: ["ACTIONLINKS_MAIL_RETRY_FOR": "10m"], clock: clock, mail: .transport(backend.transport)) {
            app in
            try await app.createAccount(email: "bo@example.com")
            #expect(try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "bo@example.com"]).status == 200)
            try await Eventually.wait(for: "the first attempt") { backend.attempts == 1 }
            // Not before its backoff (2 s of the server's clock), then again. (The clock moves on
            // until it comes: the first failure's retry may be scheduled after a first move.)
            #expect(backend.attempts == 1)
            try await Eventually.wait(for: "the second attempt", every: .milliseconds(500)) {
                clock.advance(seconds: 3)
                return backend.attempts >= 2
            }
            #expect(try await Self.mail(app)[#"actionlinks_mail_sent_total{outcome="retried"}"#] ?? 0 >= 1)
            // Ten minutes on, the next failure is the last.
            clock.advance(seconds: 600)
            try await Eventually.wait(for: "the mail to be given up") {
                try await Self.mail(app)[#"actionlinks_mail_sent_total{outcome="expired"}"#] == 1
            }
            // The depth is read again after the round that gave it up (not in the same instant).
            try await Eventually.wait(for: "the outbox to be empty") { try await Self.mail(app)["actionlinks_mail_outbox_depth"] == 0 }
            backend.answer = .refuse
            try await app.createAccount(email: "cy@example.com")
            #expect(try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "cy@example.com"]).status == 200)
            try await Eventually.wait(for: "the refusal") {
                try await Self.mail(app)[#"actionlinks_mail_sent_total{outcome="rejected"}"#] == 1
            }
            let logged = app.logs.text
            #expect(logged.contains("mail given up") && !logged.contains("bo@example.com") && !logged.contains("cy@example.com"))
        }
    }

    @Test(
        "a mail whose link was used before it went is dropped, not sent late; /readyz says a backlog older than mail.backlogAlarm and stays ready"
    )
    func droppedAndReadiness() async throws {
        let clock = ManualClock()
        let backend = Backend()
        backend.answer = .failForNow
        try await TestApp.router(environment: ["ACTIONLINKS_MAIL_BACKLOG_ALARM": "5m"], clock: clock, mail: .transport(backend.transport)) {
            app in
            #expect(try await app.api("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "eve@example.com"]).status == 200)
            try await Eventually.wait(for: "the first attempt") { backend.attempts == 1 }
            clock.advance(seconds: 6 * 60)
            var ready = try await app.request("GET", "/readyz")
            try await Eventually.wait(for: "the backlog to be seen") {
                ready = try await app.request("GET", "/readyz")
                return ready.text.contains("mail: 1 waiting")
            }
            #expect(ready.status == 200, "a mail server that is down takes no instance out: \(ready.text)")
            // The link signs in on its own (the person found it elsewhere): its mail goes no more.
            let listed = try #require(try await app.issuedLinks().last { $0["email"] as? String == "eve@example.com" })
            let oobCode = try #require(listed["oobCode"] as? String)
            #expect(try await app.api("signInWithEmailLink", ["email": "eve@example.com", "oobCode": oobCode]).status == 200)
            backend.answer = .take
            clock.advance(seconds: 120)
            try await Eventually.wait(for: "the mail to be dropped") {
                try await Self.mail(app)[#"actionlinks_mail_sent_total{outcome="dropped"}"#] == 1
            }
            #expect(backend.taken.isEmpty)
            ready = try await app.request("GET", "/readyz")
            #expect(ready.text.contains("mail: ok"), "\(ready.text)")
        }
    }
}
