import ActionLinksTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// A completed action is one store transaction (consume the code and apply it): `kill -9` at any
/// moment leaves either both or neither. Before, a sign-in consumed its code in one transaction and
/// created the account in a second, and a kill between them left a used code and no account.
extension HeavyTests {
    @Suite("kill -9 never separates a consumed code from its effect", .serialized, .timeLimit(.minutes(20)))
    struct CrashAtomicityTests {
        /// Every consumed sign-in code has its account (signed in at or after the consumption), every
        /// consumed reset code its password (set at or after it): the number of codes that break this.
        static let orphanQuery = """
            SELECT count(*) FROM codes c WHERE c.consumed_at IS NOT NULL AND (
              (c.mode = 'signIn' AND NOT EXISTS (SELECT 1 FROM accounts a
                 WHERE a.tenant_id = c.tenant_id AND a.email = c.email AND a.last_login_at >= c.consumed_at))
              OR (c.mode = 'resetPassword' AND NOT EXISTS (SELECT 1 FROM accounts a
                 WHERE a.tenant_id = c.tenant_id AND a.local_id = c.account_id AND a.password_updated_at >= c.consumed_at)))
            """

        @Test("sign-ins and resets under load, the server killed and restarted in a loop", arguments: ["sqlite", "postgres"])
        func killLoop(kind: String) async throws {
            let shared = TestProject.temporaryDirectory("actionlinks-crash")
            defer { try? FileManager.default.removeItem(at: shared) }
            let sqlitePath = shared.appendingPathComponent("actionlinks.sqlite").path
            let store = kind == "sqlite" ? "sqlite:" + sqlitePath : try await PostgresTestServer.freshDatabaseURL()
            let environment = ["ACTIONLINKS_STORE": store, "ACTIONLINKS_DATA_DIRECTORY": shared.path]
            let completed = Locked<Int>(0)
            let rounds = 6
            for round in 0..<rounds {
                let completedBefore = completed.value
                let server = try await TestServer(environment: environment)
                try await server.createAccount(email: "reset\(round)@example.com")
                let stop = Locked<Bool>(false)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<6 {
                        group.addTask {
                            var turn = 0
                            while !stop.value {
                                turn += 1
                                do {
                                    if worker == 0 {
                                        let (_, code) = try await server.link("PASSWORD_RESET", email: "reset\(round)@example.com")
                                        let reply = try await server.api(
                                            "resetPassword", ["oobCode": code, "newPassword": "a long password \(turn)"])
                                        if reply.status == 200 { completed.withLock { $0 += 1 } }
                                    } else {
                                        let email = "r\(round)w\(worker)t\(turn)@example.com"
                                        let (_, code) = try await server.link(
                                            "EMAIL_SIGNIN", email: email, extra: ["continueUrl": "https://app.example.com/"])
                                        let reply = try await server.api("signInWithEmailLink", ["oobCode": code, "email": email])
                                        if reply.status == 200 { completed.withLock { $0 += 1 } }
                                    }
                                } catch {
                                    // The server was killed under this request.
                                    if stop.value { return }
                                }
                            }
                        }
                    }
                    group.addTask {
                        // The kill lands under load, at a point chosen by what was done: after a
                        // few actions of this round (with the other workers' requests in flight),
                        // then a random moment later.
                        let actions = Int.random(in: 2...8)
                        try await Eventually.wait(for: "\(actions) completed actions in round \(round)") {
                            completed.value - completedBefore >= actions
                        }
                        try await Task.sleep(for: .milliseconds(Int.random(in: 0...150)))
                        kill(server.process.processIdentifier, SIGKILL)
                        stop.set(true)
                    }
                    try await group.waitForAll()
                }
                server.process.waitUntilExit()
            }
            let orphans: Int
            if kind == "sqlite" {
                let database = try SQLiteDatabase(path: sqlitePath)
                orphans = try await database.pool.read { db in try Int.fetchOne(db, sql: Self.orphanQuery) ?? -1 }
                let consumed = try await database.pool.read { db in
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM codes WHERE consumed_at IS NOT NULL") ?? 0
                }
                #expect(
                    consumed >= completed.value,
                    "every acknowledged completion is on disk: \(consumed) consumed, \(completed.value) acknowledged")
            } else {
                orphans = Int(try await PostgresTestServer.column("SELECT (\(Self.orphanQuery))::text", url: store).first ?? "-1") ?? -1
            }
            #expect(orphans == 0, "\(orphans) consumed codes without their effect")
            print(
                "kill -9 loop (\(kind)): \(rounds) kills, \(completed.value) actions acknowledged, \(orphans) consumed codes without their effect"
            )
        }
    }
}
