import ActionLinksConfiguration
import ActionLinksTestSupport
import Foundation
import GRDB
import Logging
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksStores

/// An account's second factors in both stores (schema v14: the `accounts.mfa` column, one JSON
/// array, NULL for none): written and read back whole wherever an account is read, and a damaged
/// value is an error, never an account without its factors.
@Suite("Second factors: both stores keep an account's factors (schema v14)", .timeLimit(.minutes(5)))
struct SecondFactorStoreTests {
    static let now = Timestamp(milliseconds: 1_800_000_000_123)

    /// Two factors: one named and used, one unnamed and never used.
    static let factors = [
        SecondFactor(
            enrollmentID: "factorA0000000000000000000001", displayName: "Phone app", enrolledAt: Timestamp(milliseconds: 1_700_000_000_456),
            sealedSecret: "c2VhbGVkLWE", lastUsedStep: 56_666_666),
        SecondFactor(
            enrollmentID: "factorB0000000000000000000002", displayName: nil, enrolledAt: Timestamp(milliseconds: 1_700_000_100_789),
            sealedSecret: "c2VhbGVkLWI"),
    ]

    /// An account with `factors`.
    static func account(_ id: String, _ email: String, factors: [SecondFactor]) -> Account {
        Account(localID: id, tenantID: "", email: email, emailVerified: true, createdAt: now, secondFactors: factors)
    }

    /// Every read of an account finds `expected` on `id` (by ID, by address, through its session,
    /// and in both listings).
    static func expectEverywhere(_ accounts: any AccountStore, id: String, email: String, session: Data, _ expected: [SecondFactor])
        async throws
    {
        #expect(try await accounts.account(id: id, tenantID: "")?.secondFactors == expected)
        #expect(try await accounts.account(email: email, tenantID: "")?.secondFactors == expected)
        #expect(try await accounts.session(hash: session)?.account.secondFactors == expected)
        #expect(try await accounts.accounts(tenantID: "", after: nil, limit: 10).first { $0.localID == id }?.secondFactors == expected)
        #expect(
            try await accounts.accounts(tenantID: "", descending: false, offset: 0, limit: 10).first { $0.localID == id }?.secondFactors
                == expected)
        let read = try await accounts.transaction(tenantID: "", now: now) { tx in
            try tx.prefetch([.id(id)])
            return try tx.account(id: id)?.secondFactors
        }
        #expect(read == expected)
    }

    @Test("inserted with two factors, updated to one, then none: every read has them as written", arguments: StoreFactory.kinds)
    func roundTrip(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        let session = Data("mfa-session".utf8)
        try await store.accounts.transaction(tenantID: "", now: Self.now) { tx in
            try tx.prefetch([.id("mfa-user"), .id("plain-user")])
            try tx.insert(Self.account("mfa-user", "mfa@example.com", factors: Self.factors))
            try tx.insert(Self.account("plain-user", "plain@example.com", factors: []))
            try tx.addSession(
                Session(hash: session, tenantID: "", accountID: "mfa-user", createdAt: Self.now, signInProvider: "password", authTime: 0))
        }
        try await Self.expectEverywhere(store.accounts, id: "mfa-user", email: "mfa@example.com", session: session, Self.factors)
        #expect(try await store.accounts.account(id: "plain-user", tenantID: "")?.secondFactors == [])

        let changed = SecondFactor(
            enrollmentID: Self.factors[1].enrollmentID, displayName: "Tablet", enrolledAt: Self.factors[1].enrolledAt,
            sealedSecret: Self.factors[1].sealedSecret, lastUsedStep: 57_000_000)
        try await store.accounts.transaction(tenantID: "", now: Self.now) { tx in
            try tx.prefetch([.id("mfa-user")])
            var account = try #require(try tx.account(id: "mfa-user"))
            account.secondFactors = [changed]
            account.displayName = "Mallory"
            try tx.update(account)
        }
        try await Self.expectEverywhere(store.accounts, id: "mfa-user", email: "mfa@example.com", session: session, [changed])
        #expect(try await store.accounts.account(id: "mfa-user", tenantID: "")?.displayName == "Mallory")

        // An update of something else keeps them.
        try await store.accounts.transaction(tenantID: "", now: Self.now) { tx in
            try tx.prefetch([.id("mfa-user")])
            var account = try #require(try tx.account(id: "mfa-user"))
            account.displayName = "Alice"
            try tx.update(account)
        }
        try await Self.expectEverywhere(store.accounts, id: "mfa-user", email: "mfa@example.com", session: session, [changed])

        try await store.accounts.transaction(tenantID: "", now: Self.now) { tx in
            try tx.prefetch([.id("mfa-user")])
            var account = try #require(try tx.account(id: "mfa-user"))
            account.secondFactors = []
            try tx.update(account)
        }
        try await Self.expectEverywhere(store.accounts, id: "mfa-user", email: "mfa@example.com", session: session, [])
    }

    @Test("SQLite: NULL for none, the JSON array otherwise; a damaged value is a store inconsistency")
    func sqliteColumn() async throws {
        let path = TestProject.temporaryDirectory("actionlinks-mfa").appendingPathComponent("mfa.sqlite").path
        let database = try SQLiteDatabase(path: path)
        try await database.accounts.transaction(tenantID: "", now: Self.now) { tx in
            try tx.insert(Self.account("mfa-user", "mfa@example.com", factors: Self.factors))
            try tx.insert(Self.account("plain-user", "plain@example.com", factors: []))
        }
        let stored = try await database.pool.read { db in
            try String?.fetchAll(db, sql: "SELECT mfa FROM accounts ORDER BY local_id")
        }
        #expect(stored.count == 2 && stored[1] == nil)
        #expect(try SecondFactor.factors(json: stored[0]) == Self.factors)
        try await database.pool.write { db in
            try db.execute(sql: "UPDATE accounts SET mfa = '{\"not\": \"a list\"}' WHERE local_id = 'mfa-user'")
        }
        await #expect(throws: StoreInconsistency.self) { try await database.accounts.account(id: "mfa-user", tenantID: "") }
        #expect(try await database.accounts.account(id: "plain-user", tenantID: "") != nil)
    }

    @Test("SQLite: an account of schema v13 has no factors after v14")
    func sqliteMigration() async throws {
        let directory = TestProject.temporaryDirectory("actionlinks-mfa")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("v13.sqlite").path
        let queue = try DatabaseQueue(path: path)
        let versions = SQLiteDatabase.migrator.migrations
        let v14 = try #require(versions.firstIndex { $0.hasPrefix("v14") }, "this test migrates from the version before the factors")
        try SQLiteDatabase.migrator.migrate(queue, upTo: versions[v14 - 1])
        try await queue.write { db in
            try db.execute(
                sql: "INSERT INTO accounts (local_id, tenant_id, email, created_at) VALUES ('old', '', 'old@example.com', 0)")
        }
        try queue.close()
        let database = try SQLiteDatabase(path: path)
        let account = try #require(try await database.accounts.account(id: "old", tenantID: ""))
        #expect(account.secondFactors == [] && account.email == "old@example.com")
    }

    @Test("PostgreSQL: NULL for none, the JSON array otherwise; a damaged value is a store inconsistency")
    func postgresColumn() async throws {
        let url = try await PostgresTestServer.freshDatabaseURL()
        let location = try PostgresLocation(url: url + (url.contains("?") ? "&" : "?") + "pool_size=2")
        let database = try PostgresStore(location: location, logger: Logger(label: "test-mfa"))
        Task.detached { await database.client.run() }
        try await database.migrate()
        try await database.accounts.transaction(tenantID: "", now: Self.now) { tx in
            try tx.prefetch([.id("mfa-user"), .id("plain-user")])
            try tx.insert(Self.account("mfa-user", "mfa@example.com", factors: Self.factors))
            try tx.insert(Self.account("plain-user", "plain@example.com", factors: []))
        }
        let stored = try await PostgresTestServer.column("SELECT coalesce(mfa, 'NULL') FROM accounts ORDER BY local_id", url: url)
        #expect(stored.count == 2 && stored[1] == "NULL", "\(stored)")
        #expect(try SecondFactor.factors(json: stored.first) == Self.factors)
        _ = try await PostgresTestServer.column(
            "UPDATE accounts SET mfa = '[{\"enrollmentID\": 1}]' WHERE local_id = 'mfa-user' RETURNING local_id", url: url)
        await #expect(throws: StoreInconsistency.self) { try await database.accounts.account(id: "mfa-user", tenantID: "") }
        #expect(try await database.accounts.account(id: "plain-user", tenantID: "") != nil)
    }
}
