import ActionLinks
import ActionLinksSMTPTestSupport
import ActionLinksTestSupport
import Foundation
import Testing

/// The outbox survives the process: a mail is stored before its request is answered, so `kill -9`
/// right after the answer loses nothing. On SQLite the restarted server takes back the leases of
/// its dead predecessor at once; on PostgreSQL another instance sends the mail once the dead
/// instance's lease ends.
extension HeavyTests {
    @Suite("kill -9 loses no mail", .serialized, .timeLimit(.minutes(10)))
    struct MailCrashTests {
        static let addresses = (1...5).map { "crash\($0)@example.com" }

        /// Asks `server` for a reset mail to each of ``addresses``; every answer is 200.
        static func ask(_ server: TestServer) async throws {
            for address in addresses {
                try await server.createAccount(email: address)
                let asked = try await server.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": address])
                #expect(asked.status == 200, "\(asked.text)")
            }
        }

        /// Waits for one mail to each of ``addresses`` at `smtp`, checks that each one's link resets
        /// its password, and returns the links' codes.
        @discardableResult
        static func expectEveryMail(at smtp: SMTPTestServer, _ server: TestServer) async throws -> [String] {
            var received: [ReceivedMessage] = []
            try await Eventually.wait(for: "a mail to each address", upTo: .seconds(150)) {
                received = try smtp.messages()
                return Set(received.flatMap(\.rcptTos)).isSuperset(of: addresses)
            }
            var codes: [String] = []
            for address in addresses {
                let text = try #require(received.first { $0.rcptTos == [address] }?.parsed.text)
                let link = try #require(text.split(separator: "\n").first { $0.hasPrefix("https://") }.map(String.init))
                let code = try #require(ActionCodeLink.parse(link)?.oobCode)
                let reset = try await server.api("resetPassword", ["oobCode": code, "newPassword": "a new password for \(address)"])
                #expect(reset.status == 200, "\(address): \(reset.text)")
                codes.append(code)
            }
            return codes
        }

        /// Every row of every table of the database at `url` as text, and each waiting mail's sealed
        /// bytes as they are: what a copy of the database would show.
        static func postgresRows(_ url: String) async throws -> String {
            let tables = try await PostgresTestServer.column(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
                url: url)
            var rows: [String] = []
            for table in tables { rows += try await PostgresTestServer.column("SELECT t::text FROM \"\(table)\" t", url: url) }
            rows += try await PostgresTestServer.column("SELECT encode(sealed, 'escape') FROM mail_outbox", url: url)
            #expect(tables.contains("mail_outbox") && tables.contains("codes"))
            return rows.joined(separator: "\n")
        }

        static func smtp(port: Int) -> [String: String] {
            ["ACTIONLINKS_MAIL_BACKEND": "smtp", "ACTIONLINKS_MAIL_SMTP_URL": "smtp://127.0.0.1:\(port)?tls=none"]
        }

        @Test(
            "SQLite: killed right after answering, with its mail mid-send; the restarted server sends every mail, and the database file holds no code"
        )
        func sqliteRestart() async throws {
            let shared = TestProject.temporaryDirectory("actionlinks-mail-crash")
            defer { try? FileManager.default.removeItem(at: shared) }
            let store = [
                "ACTIONLINKS_STORE": "sqlite:" + shared.appendingPathComponent("actionlinks.sqlite").path,
                "ACTIONLINKS_DATA_DIRECTORY": shared.path,
            ]
            // A mail server that accepts and never greets: a claimed mail hangs mid-send.
            let silent = try await SilentListener()
            defer { Task { await silent.close() } }
            let first = try await TestServer(environment: store.merging(Self.smtp(port: silent.port)) { $1 })
            try await Self.ask(first)
            try await Eventually.wait(for: "the first server to be sending") { silent.accepted >= 1 }
            kill(first.process.processIdentifier, SIGKILL)
            first.process.waitUntilExit()

            let database =
                try Data(contentsOf: shared.appendingPathComponent("actionlinks.sqlite"))
                + ((try? Data(contentsOf: shared.appendingPathComponent("actionlinks.sqlite-wal"))) ?? Data())
            try await SMTPTestServer.with([]) { smtp in
                let started = ContinuousClock.now
                let second = try await TestServer(environment: store.merging(Self.smtp(port: smtp.port)) { $1 })
                let codes = try await Self.expectEveryMail(at: smtp, second)
                // The accounts hold the addresses; the outbox, sealed, holds no link and no code.
                for clear in codes + ["oobCode=", "mode=resetPassword", "/__/auth/action"] {
                    #expect(database.range(of: Data(clear.utf8)) == nil, "the database held \(clear) in clear")
                }
                // Not the 90 s lease of the dead process: it was taken back at start.
                #expect(ContinuousClock.now - started < .seconds(60), "took \(ContinuousClock.now - started)")
                #expect(try smtp.messages().count == Self.addresses.count, "each mail once")
            }
        }

        @Test("the SMTP server down for a minute: the mail waits and arrives when it is back")
        func smtpDownForAMinute() async throws {
            try await SMTPTestServer.with([]) { smtp in
                let server = try await TestServer(environment: Self.smtp(port: smtp.port))
                await smtp.stop()
                try await Self.ask(server)
                try await Task.sleep(for: .seconds(60))
                #expect(try smtp.messages().isEmpty)
                #expect(server.standardError.contains("mail delivery failed"))
                try await smtp.restart()
                // The backoff is at most a minute: the next attempt comes within one.
                try await Self.expectEveryMail(at: smtp, server)
                #expect(try smtp.messages().count == Self.addresses.count, "each mail once")
            }
        }

        @Test("PostgreSQL: an instance killed mid-send; another instance sends its mail once the lease ends; no row holds a code or a link")
        func postgresOtherInstance() async throws {
            let url = try await PostgresTestServer.freshDatabaseURL()
            let store = ["ACTIONLINKS_STORE": url]
            let silent = try await SilentListener()
            defer { Task { await silent.close() } }
            try await SMTPTestServer.with([]) { smtp in
                let first = try await TestServer(environment: store.merging(Self.smtp(port: silent.port)) { $1 })
                try await Self.ask(first)
                do {
                    try await Eventually.wait(for: "the first instance to be sending") { silent.accepted >= 1 }
                } catch {
                    Issue.record("the first instance's log:\n\(first.standardError)")
                    throw error
                }
                let killed = ContinuousClock.now
                kill(first.process.processIdentifier, SIGKILL)
                first.process.waitUntilExit()
                let rows = try await Self.postgresRows(url)
                let second = try await TestServer(environment: store.merging(Self.smtp(port: smtp.port)) { $1 })
                let codes = try await Self.expectEveryMail(at: smtp, second)
                for clear in codes + ["oobCode=", "mode=resetPassword", "/__/auth/action"] {
                    #expect(!rows.contains(clear), "the database held \(clear) in clear")
                }
                let waited = ContinuousClock.now - killed
                #expect(waited < .seconds(150), "the lease (90 s) and a poll, not more: \(waited)")
            }
        }
    }
}
