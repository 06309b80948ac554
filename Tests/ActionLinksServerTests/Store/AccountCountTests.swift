import ActionLinksTestSupport
import Foundation
import GRDB
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksStores

/// Each tenant's number of accounts: on SQLite kept by the schema's triggers (v11), so that
/// `accounts:query`'s `recordsCount` reads one row instead of every account of the tenant (issue 35
/// item 8); on PostgreSQL counted (see `PostgresAccountStore.countAccounts`). Both must be exact.
@Suite("Account counts", .timeLimit(.minutes(5)))
struct AccountCountTests {
    let now = Timestamp(milliseconds: 1_800_000_000_000)

    func insert(_ ids: [String], tenant: String = "", into store: StoreUnderTest) async throws {
        try await store.accounts.transaction(tenantID: tenant, now: now) { tx in
            try tx.prefetch(ids.map(AccountKey.id))
            for id in ids { try tx.insert(Account(localID: id, tenantID: tenant, email: "\(id)@example.com", createdAt: self.now)) }
        }
    }

    func count(_ store: StoreUnderTest, _ tenant: String = "") async throws -> Int {
        try await store.accounts.countAccounts(tenantID: tenant)
    }

    @Test(
        "the count follows every insert and deletion, per tenant: one at a time, in a batch, a tenant's whole deletion",
        arguments: StoreFactory.kinds)
    func followsChanges(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        #expect(try await count(store) == 0, "no accounts, no rows: zero")
        #expect(try await count(store, "t-1") == 0, "no accounts, no rows: zero")
        try await insert((0..<40).map { "a\($0)" }, into: store)
        try await insert(["b0", "b1", "b2"], tenant: "t-1", into: store)
        #expect(try await count(store) == 40)
        #expect(try await count(store, "t-1") == 3)

        try await store.accounts.transaction(tenantID: "", now: now) { tx in
            try tx.prefetch(["a3", "a17"].map(AccountKey.id))
            try tx.delete(id: "a3")
            try tx.delete(id: "a17")
        }
        #expect(try await count(store) == 38, "a deletion counts in its own tenant only")
        #expect(try await count(store, "t-1") == 3, "a deletion counts in its own tenant only")

        // A refused transaction changes no count: its inserts are rolled back with it.
        await #expect(throws: (any Error).self) {
            try await store.accounts.transaction(tenantID: "", now: now) { tx in
                try tx.prefetch([.id("c0")])
                try tx.insert(Account(localID: "c0", email: "c0@example.com", createdAt: self.now))
                throw StoreInconsistency(description: "refused on purpose")
            }
        }
        #expect(try await count(store) == 38)

        try await store.accounts.deleteAllAccounts(tenantID: "t-1")
        #expect(try await count(store, "t-1") == 0)
        #expect(try await count(store) == 38)
        try await insert(["b0"], tenant: "t-1", into: store)
        #expect(try await count(store, "t-1") == 1)
    }

    @Test("sign-ups in one tenant at the same time are all counted", arguments: StoreFactory.kinds)
    func concurrentInserts(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<10 { try await insert(["w\(worker)-\(index)"], into: store) }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await count(store) == 80)
    }

    /// A database of the previous version gets its counts when it migrates: the accounts it has
    /// are counted once, and the triggers count from then on.
    @Test("a v10 SQLite database with accounts is counted by the migration")
    func migrationCounts() async throws {
        let directory = TestProject.temporaryDirectory("actionlinks-count")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("old.sqlite").path
        let queue = try DatabaseQueue(path: path)
        let versions = SQLiteDatabase.migrator.migrations
        let counts = try #require(versions.firstIndex { $0.hasPrefix("v11") }, "this test migrates from the version before the counts")
        try SQLiteDatabase.migrator.migrate(queue, upTo: versions[counts - 1])
        try await queue.write { db in
            for (index, tenant) in ["", "", "", "t-1"].enumerated() {
                try db.execute(
                    sql: "INSERT INTO accounts (local_id, tenant_id, email, created_at) VALUES (?, ?, ?, 0)",
                    arguments: ["old-\(index)", tenant, "old-\(index)@example.com"])
            }
        }
        try queue.close()
        let database = try SQLiteDatabase(path: path)
        #expect(try await database.accounts.countAccounts(tenantID: "") == 3)
        #expect(try await database.accounts.countAccounts(tenantID: "t-1") == 1)
        try await database.accounts.transaction(tenantID: "t-1", now: now) { tx in
            try tx.prefetch([.id("old-3")])
            try tx.delete(id: "old-3")
        }
        #expect(try await database.accounts.countAccounts(tenantID: "t-1") == 0)
    }

    @Test("counting reads the counts' rows, never the accounts (SQLite's plan)")
    func countPlan() async throws {
        let path = TestProject.temporaryDirectory("actionlinks-count").appendingPathComponent("plan.sqlite").path
        let database = try SQLiteDatabase(path: path)
        let plan = try await database.pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + SQLiteAccountStore.countStatement, arguments: [""]).map {
                $0["detail"] as String
            }
        }
        #expect(plan.contains { $0.hasPrefix("SEARCH account_counts") } && !plan.contains { $0.contains(" accounts") }, "\(plan)")
    }
}
