import ActionLinksTestSupport
import Foundation
import GRDB
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksStores

/// Sessions that can no longer refresh leave the sessions table (schema v15): the write that raises
/// an account's `validSince` moves the sessions it revokes into `revoked_sessions`, deleting the
/// account moves all of them into `deleted_sessions`, and the hourly purge drops both kinds of
/// tombstone after ``sessionTombstoneLifetime``. Until then a refresh's answer is the same as
/// before (`TOKEN_EXPIRED`, `USER_NOT_FOUND`).
@Suite("Session tombstones: revoked sessions leave the table, tombstones go after 30 days (schema v15)", .timeLimit(.minutes(5)))
struct SessionTombstoneTests {
    static let start = Timestamp(milliseconds: 1_800_000_000_250)

    static func session(_ name: String, _ accountID: String, at time: Timestamp) -> Session {
        Session(hash: hash(name), tenantID: "", accountID: accountID, createdAt: time, signInProvider: "password", authTime: time.seconds)
    }

    static func hash(_ name: String) -> Data { Data(("session-" + name).utf8) }

    static func account(_ id: String) -> Account {
        Account(localID: id, tenantID: "", email: "\(id)@example.com", emailVerified: true, createdAt: start)
    }

    /// Runs `work` on the account `id` in a transaction at `now`.
    static func change(_ accounts: any AccountStore, _ id: String, at now: Timestamp, _ work: @escaping @Sendable (inout Account) -> Void)
        async throws
    {
        try await accounts.transaction(tenantID: "", now: now) { tx in
            try tx.prefetch([.id(id)])
            var account = try tx.existingAccount(id: id)
            work(&account)
            try tx.update(account)
        }
    }

    @Test(
        "a revocation moves exactly the sessions it ends; an unrelated change moves none; deletion tombstones them all; the purge keeps 30 days",
        arguments: StoreFactory.kinds)
    func lifecycle(kind: String) async throws {
        let accounts = try await StoreFactory.make(kind).accounts
        let early = Self.start
        let later = Self.start + .seconds(1)
        try await accounts.transaction(tenantID: "", now: early) { tx in
            try tx.prefetch([.id("user"), .id("other")])
            try tx.insert(Self.account("user"))
            try tx.insert(Self.account("other"))
            try tx.addSession(Self.session("early", "user", at: early))
            try tx.addSession(Self.session("later", "user", at: later))
            try tx.addSession(Self.session("other", "other", at: early))
        }
        // Revoked from the later session's second: the early session goes, the later one (of the
        // same second as `validSince`) stays, as firebase-admin compares; the other account's stays.
        let revokedAt = later + .milliseconds(500)
        try await Self.change(accounts, "user", at: revokedAt) { $0.validSince = later.seconds }
        #expect(try await accounts.session(hash: Self.hash("early")) == nil, "a revoked session leaves the sessions table")
        #expect(try await accounts.endedSession(hash: Self.hash("early")) == .revoked(tenantID: "", accountID: "user"))
        #expect(try await accounts.session(hash: Self.hash("later")) != nil)
        #expect(try await accounts.endedSession(hash: Self.hash("later")) == nil)
        #expect(try await accounts.session(hash: Self.hash("other")) != nil)

        // A change that leaves `validSince` as it is, or lowers it, moves nothing.
        try await Self.change(accounts, "user", at: revokedAt) { $0.displayName = "Renamed" }
        try await Self.change(accounts, "user", at: revokedAt) { $0.validSince = 0 }
        #expect(try await accounts.session(hash: Self.hash("later")) != nil)
        #expect(try await accounts.endedSession(hash: Self.hash("early")) == .revoked(tenantID: "", accountID: "user"))

        // Deleting the account tombstones its live and its revoked sessions alike.
        let deletedAt = Self.start + .seconds(60)
        try await accounts.transaction(tenantID: "", now: deletedAt) { tx in
            try tx.prefetch([.id("user")])
            try tx.delete(id: "user")
        }
        for name in ["early", "later"] {
            #expect(try await accounts.session(hash: Self.hash(name)) == nil)
            #expect(try await accounts.endedSession(hash: Self.hash(name)) == .ofDeletedAccount, "\(name)")
        }

        // The other account revoked too, later; the purge drops each tombstone only once it is
        // older than its cutoff, and nothing that can still refresh.
        let otherRevoked = Self.start + .seconds(3600)
        try await Self.change(accounts, "other", at: otherRevoked) { $0.validSince = otherRevoked.seconds }
        #expect(try await accounts.endedSession(hash: Self.hash("other")) == .revoked(tenantID: "", accountID: "other"))
        #expect(try await accounts.purgeEndedSessions(before: deletedAt) == 0)
        #expect(try await accounts.purgeEndedSessions(before: deletedAt + .milliseconds(1)) == 2, "the deleted account's two")
        #expect(try await accounts.endedSession(hash: Self.hash("early")) == nil)
        #expect(try await accounts.endedSession(hash: Self.hash("other")) == .revoked(tenantID: "", accountID: "other"))
        #expect(try await accounts.purgeEndedSessions(before: otherRevoked + .seconds(1)) == 1)
        #expect(try await accounts.endedSession(hash: Self.hash("other")) == nil)
        #expect(try await accounts.account(id: "other", tenantID: "") != nil, "the purge touches no account")
    }

    @Test("SQLite: the sessions a store of v14 kept after their revocation move to the tombstones at v15")
    func sqliteMigration() async throws {
        let directory = TestProject.temporaryDirectory("actionlinks-tombstones")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("v14.sqlite").path
        let queue = try DatabaseQueue(path: path)
        let versions = SQLiteDatabase.migrator.migrations
        let v15 = try #require(versions.firstIndex { $0.hasPrefix("v15") }, "this test migrates from the version before the tombstones")
        try SQLiteDatabase.migrator.migrate(queue, upTo: versions[v15 - 1])
        try await queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO accounts (local_id, tenant_id, email, created_at, valid_since) VALUES ('old', '', 'old@example.com', 0, 100);
                    INSERT INTO refresh_tokens (hash, tenant_id, account_id, created_at) VALUES (?, '', 'old', 99999), (?, '', 'old', 100000);
                    """, arguments: [Self.hash("revoked"), Self.hash("live")])
        }
        try queue.close()
        let database = try SQLiteDatabase(path: path)
        #expect(try await database.accounts.session(hash: Self.hash("revoked")) == nil)
        #expect(try await database.accounts.endedSession(hash: Self.hash("revoked")) == .revoked(tenantID: "", accountID: "old"))
        #expect(try await database.accounts.session(hash: Self.hash("live")) != nil)
    }
}
