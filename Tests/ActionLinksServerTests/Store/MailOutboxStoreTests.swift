import ActionLinksTestSupport
import Foundation
import GRDB
import Logging
import PostgresNIO
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksStores

/// The mail outbox (``MailOutboxStore``, on both stores): a mail claimed with a lease is held until
/// the lease ends, only its holder removes or reschedules it, due mails come oldest first, a mail
/// that can no longer be sent is dropped, and concurrent claims never share a mail.
@Suite("The mail outbox", .timeLimit(.minutes(5)))
struct MailOutboxStoreTests {
    let now = Timestamp(milliseconds: 1_800_000_000_000)

    func mail(
        _ id: String, code: String? = nil, created: Duration = .zero, due: Duration = .zero, lifetime: Duration = .seconds(7200)
    ) -> OutboxMail {
        OutboxMail(
            id: id, sealed: Data("sealed \(id)".utf8), codeHash: code.map { Data($0.utf8) }, createdAt: now + created,
            expiresAt: now + lifetime, dueAt: now + due)
    }

    func code(_ hash: String, email: String, lifetime: Duration = .seconds(3600)) -> ActionCodeRecord {
        ActionCodeRecord(
            hash: Data(hash.utf8), mode: .signIn, tenantID: "", accountID: nil, email: email, newEmail: nil, continueURL: nil,
            languageCode: nil, appSettings: nil, createdAt: now, expiresAt: now + lifetime)
    }

    func claim(_ store: StoreUnderTest, at time: Timestamp, limit: Int = 100, lease: Duration = .seconds(60), owner: String) async throws
        -> OutboxClaim
    {
        try await store.outbox.claim(now: time, limit: limit, leaseUntil: time + lease, owner: owner)
    }

    @Test(
        "a claim leases a due mail until the lease ends; only its holder removes or reschedules it; a reschedule counts the attempt",
        arguments: StoreFactory.kinds)
    func lease(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        let first = mail("m1")
        try await store.outbox.enqueue(first)
        try await store.outbox.enqueue(mail("m2", due: .seconds(3600)))

        #expect(try await claim(store, at: now - .milliseconds(1), owner: "a").mails.isEmpty, "not due before its time")
        let claimed = try await claim(store, at: now, owner: "a")
        #expect(claimed.mails == [first], "the mail as it was enqueued, and not m2, due in an hour")
        #expect(claimed.dropped == 0)
        #expect(try await claim(store, at: now + .seconds(1), owner: "b").mails.isEmpty, "held by a's lease")
        #expect(try await claim(store, at: now + .seconds(60), owner: "b").mails.isEmpty, "held to the lease's last instant")
        let taken = try await claim(store, at: now + .seconds(60) + .milliseconds(1), owner: "b")
        #expect(taken.mails.map(\.id) == ["m1"], "b claims it once a's lease has ended")

        #expect(try await store.outbox.remove(id: "m1", owner: "a") == false, "a no longer holds it")
        #expect(try await store.outbox.reschedule(id: "m1", owner: "a", dueAt: now) == false)
        let later = now + .seconds(300)
        #expect(try await store.outbox.reschedule(id: "m1", owner: "b", dueAt: later) == true)
        #expect(try await store.outbox.reschedule(id: "m1", owner: "b", dueAt: later) == false, "the reschedule ended b's lease")
        #expect(try await claim(store, at: later - .milliseconds(1), owner: "c").mails.isEmpty, "due again only at its new time")
        let again = try await claim(store, at: later, owner: "c")
        #expect(again.mails.map(\.id) == ["m1"] && again.mails.first?.attempts == 1 && again.mails.first?.dueAt == later)

        #expect(try await store.outbox.remove(id: "m1", owner: "b") == false)
        #expect(try await store.outbox.remove(id: "m1", owner: "c") == true)
        #expect(try await store.outbox.remove(id: "m1", owner: "c") == false, "gone")
        #expect(try await store.outbox.backlog().count == 1, "m2 waits")
        #expect(try await claim(store, at: now + .seconds(3600), owner: "d").mails.map(\.id) == ["m2"])
    }

    @Test("due mails come oldest due first, at most `limit` a claim", arguments: StoreFactory.kinds)
    func order(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        for (id, due) in [("e", 40), ("b", 10), ("d", 30), ("a", 0), ("c", 20), ("f", 99_000)] {
            try await store.outbox.enqueue(mail(id, due: .milliseconds(due)))
        }
        let at = now + .seconds(1)
        #expect(try await claim(store, at: at, limit: 0, owner: "x").mails.isEmpty)
        #expect(try await claim(store, at: at, limit: 3, owner: "x").mails.map(\.id) == ["a", "b", "c"])
        #expect(try await claim(store, at: at, limit: 3, owner: "y").mails.map(\.id) == ["d", "e"], "f is not due")
    }

    @Test(
        "a due mail whose link expired, or whose code was consumed, retired, deleted or expired, is dropped; one without a code goes until its expiry",
        arguments: StoreFactory.kinds)
    func dropped(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        // The purge goes first, so that it deletes only this code.
        try await store.codes.issue(code("deleted", email: "del@example.com", lifetime: .seconds(600)))
        _ = try await store.codes.purge(before: now + .seconds(1200), countsBefore: now, longCountsBefore: now)
        try await store.codes.issue(code("consumed", email: "con@example.com"))
        _ = try await store.codes.consume(hashes: [Data("consumed".utf8)], modes: [.signIn], now: now, by: "test")
        try await store.codes.issue(code("retired", email: "ret@example.com"))
        try await store.codes.issue(code("newer", email: "ret@example.com"))
        try await store.codes.issue(code("short", email: "short@example.com", lifetime: .seconds(1)))
        try await store.codes.issue(code("live", email: "live@example.com"))
        for dead in [
            mail("expired", lifetime: .seconds(1)), mail("of-consumed", code: "consumed"), mail("of-retired", code: "retired"),
            mail("of-deleted", code: "deleted"), mail("of-expired-code", code: "short"),
        ] {
            try await store.outbox.enqueue(dead)
        }
        try await store.outbox.enqueue(mail("of-live", code: "live"))
        try await store.outbox.enqueue(mail("of-newer", code: "newer"))
        try await store.outbox.enqueue(mail("no-code", lifetime: .seconds(2)))
        try await store.outbox.enqueue(mail("later", code: "consumed", due: .seconds(60)))

        let at = now + .seconds(1)
        let claimed = try await claim(store, at: at, lease: .zero, owner: "a")
        #expect(claimed.dropped == 5)
        #expect(claimed.mails.map(\.id) == ["no-code", "of-live", "of-newer"])
        #expect(try await store.outbox.backlog().count == 4, "a dead mail that is not due yet waits")

        // The leases ended at once: no-code is claimed again until its link expires.
        let again = try await claim(store, at: now + .milliseconds(1999), lease: .seconds(600), owner: "b")
        #expect(again.mails.map(\.id) == ["no-code", "of-live", "of-newer"])
        let expired = try await claim(store, at: now + .seconds(2) + .seconds(60), owner: "c")
        #expect(expired.dropped == 2, "no-code's link expired, leased or not; later's code is consumed")
        #expect(expired.mails.isEmpty, "of-live and of-newer are b's")
    }

    @Test("16 concurrent claims of 64 due mails from 4 owners: every mail is claimed exactly once", arguments: StoreFactory.kinds)
    func concurrentClaims(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        let ids = (0..<64).map { String(format: "mail-%02d", $0) }
        for (index, id) in ids.enumerated() { try await store.outbox.enqueue(mail(id, due: .milliseconds(index % 7))) }
        let at = now + .seconds(1)
        let claims = try await withThrowingTaskGroup(of: [String].self) { group in
            for index in 0..<16 {
                group.addTask {
                    try await claim(store, at: at, limit: 8, lease: .seconds(600), owner: "owner-\(index % 4)").mails.map(\.id)
                }
            }
            return try await group.reduce(into: [[String]]()) { $0.append($1) }
        }
        let claimed = claims.flatMap { $0 }
        #expect(claimed.count == 64 && Set(claimed) == Set(ids), "each of the 64 once: \(claims)")
        #expect(try await claim(store, at: at, owner: "late").mails.isEmpty)
    }

    @Test("the backlog counts the waiting mails and dates the oldest", arguments: StoreFactory.kinds)
    func backlog(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        var backlog = try await store.outbox.backlog()
        #expect(backlog.count == 0 && backlog.oldest == nil)
        try await store.outbox.enqueue(mail("new", created: .seconds(30)))
        try await store.outbox.enqueue(mail("old", created: .seconds(10), due: .seconds(3600)))
        try await store.outbox.enqueue(mail("mid", created: .seconds(20)))
        backlog = try await store.outbox.backlog()
        #expect(backlog.count == 3 && backlog.oldest == now + .seconds(10), "leased or not, due or not: \(backlog)")
        let claimed = try await claim(store, at: now, owner: "a")
        for mail in claimed.mails { try await store.outbox.remove(id: mail.id, owner: "a") }
        backlog = try await store.outbox.backlog()
        #expect(backlog.count == 1 && backlog.oldest == now + .seconds(10))
    }

    @Test("a mail written in an account transaction is kept with it, and gone when it throws", arguments: StoreFactory.kinds)
    func accountTransaction(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        let kept = mail("kept")
        // Enqueued before a read of an account not yet loaded: PostgreSQL runs the unit of work
        // again, and the mail is still written once.
        try await store.accounts.transaction(tenantID: "", now: now) { tx in
            try tx.enqueue(kept)
            _ = try tx.account(id: "nobody")
        }
        await #expect(throws: AccountStoreError.accountNotFound) {
            try await store.accounts.transaction(tenantID: "", now: now) { tx in
                try tx.enqueue(mail("thrown"))
                throw AccountStoreError.accountNotFound
            }
        }
        #expect(try await store.outbox.backlog().count == 1)
        #expect(try await claim(store, at: now, owner: "a").mails == [kept])
    }

    @Test("SQLite: each of the claim's statements reads the due mails through mail_outbox_due, never the whole table")
    func sqlitePlan() throws {
        let path = TestProject.temporaryDirectory("actionlinks-outbox-plan").appendingPathComponent("plan.sqlite").path
        let database = try SQLiteDatabase(path: path)
        let statements = [SQLiteMailOutboxStore.dropStatement, SQLiteMailOutboxStore.leaseStatement]
        try database.pool.write { db in
            for sql in statements {
                let arguments = StatementArguments(Array(repeating: 0, count: sql.filter { $0 == "?" }.count))
                let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
                #expect(plan.contains { $0.contains("mail_outbox_due") }, "\(sql): \(plan)")
                #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(sql) reads a whole table: \(plan)")
            }
        }
    }

    @Test("PostgreSQL: a claim skips the mails another transaction has locked, without waiting, and can read through mail_outbox_due")
    func postgresSkipsLocked() async throws {
        let database = try await PostgresTestServer.freshStore()
        let outbox = database.outbox
        for id in ["m1", "m2", "m3"] { try await outbox.enqueue(mail(id)) }
        try await outbox.enqueue(mail("dead", lifetime: .seconds(1)))
        let at = now + .seconds(1)
        // m1 and the dead mail are held by an open transaction on another connection: a claim that
        // waited for it would wait for ever (the transaction waits for the claim).
        let claim = try await database.transaction { connection in
            for try await _ in try await connection.query(
                "SELECT id FROM mail_outbox WHERE id IN ('m1', 'dead') FOR UPDATE", logger: database.logger)
            {}
            return try await outbox.claim(now: at, limit: 10, leaseUntil: at + .seconds(60), owner: "a")
        }
        #expect(claim.mails.map(\.id) == ["m2", "m3"] && claim.dropped == 0)
        let next = try await outbox.claim(now: at, limit: 10, leaseUntil: at + .seconds(60), owner: "b")
        #expect(next.mails.map(\.id) == ["m1"] && next.dropped == 1, "once released")

        let statement = ClaimMail(now: at, limit: 10, leaseUntil: at, owner: "a")
        let plan = try await database.withConnection { connection in
            // On a table this small a sequential scan is the cheapest plan; turned off, the planner
            // still falls back to one when no index serves the claim.
            try await connection.query("SET enable_seqscan = off", logger: database.logger)
            var plan: [String] = []
            let explain = PostgresQuery(unsafeSQL: "EXPLAIN " + ClaimMail.sql, binds: try statement.makeBindings())
            for try await line in try await connection.query(explain, logger: database.logger).decode(String.self) { plan.append(line) }
            try await connection.query("RESET enable_seqscan", logger: database.logger)
            return plan
        }
        #expect(plan.contains { $0.contains("mail_outbox_due") }, "\(plan)")
        #expect(!plan.contains { $0.contains("Seq Scan") }, "\(plan)")
    }
}
