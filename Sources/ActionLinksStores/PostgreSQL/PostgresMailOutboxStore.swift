import ActionLinksDomain
import Foundation
import NIOCore
import PostgresNIO

/// ``MailOutboxStore`` on PostgreSQL, shared by every instance. A claim is one statement that
/// locks the rows it drops and leases with `FOR UPDATE SKIP LOCKED`: two instances claiming at once
/// take different mails and never wait for each other. The claim, polled every few seconds by
/// every instance, is prepared once per connection; the other calls come once per mail and are not.
public struct PostgresMailOutboxStore: MailOutboxStore {
    let database: PostgresStore

    public func enqueue(_ mail: OutboxMail) async throws {
        try await database.withConnection { connection in try await Self.enqueue(connection, mail, database: database) }
    }

    /// Stores `mail` (on its own, or inside a caller's transaction: an account transaction, a lone
    /// code's issue).
    static func enqueue(_ connection: PostgresConnection, _ mail: OutboxMail, database: PostgresStore) async throws {
        try await connection.query(
            """
            INSERT INTO mail_outbox (id, sealed, code_hash, created_at, expires_at, due_at, attempts, leased_until, leased_by)
            VALUES (\(mail.id), \(ByteBuffer(bytes: mail.sealed)), \(mail.codeHash.map { ByteBuffer(bytes: $0) }), \(mail.createdAt),
                    \(mail.expiresAt), \(mail.dueAt), \(Int32(mail.attempts)), NULL, NULL)
            """, logger: database.logger)
    }

    public func claim(now: Timestamp, limit: Int, leaseUntil: Timestamp, owner: String) async throws -> OutboxClaim {
        let statement = ClaimMail(now: now, limit: max(limit, 0), leaseUntil: leaseUntil, owner: owner)
        return try await database.withConnection { connection in
            var claim = OutboxClaim(mails: [], dropped: 0)
            for try await row in try await connection.execute(statement, logger: database.logger) {
                claim.dropped = row.dropped
                if let mail = row.mail { claim.mails.append(mail) }
            }
            return claim
        }
    }

    @discardableResult
    public func remove(id: String, owner: String) async throws -> Bool {
        try await database.withConnection { connection in
            try await connection.query(
                "DELETE FROM mail_outbox WHERE id = \(id) AND leased_by = \(owner) RETURNING 1", logger: database.logger
            ).collect().count == 1
        }
    }

    @discardableResult
    public func reschedule(id: String, owner: String, dueAt: Timestamp) async throws -> Bool {
        try await database.withConnection { connection in
            try await connection.query(
                """
                UPDATE mail_outbox SET attempts = attempts + 1, due_at = \(dueAt), leased_until = NULL, leased_by = NULL
                WHERE id = \(id) AND leased_by = \(owner)
                RETURNING 1
                """, logger: database.logger
            ).collect().count == 1
        }
    }

    public func backlog() async throws -> (count: Int, oldest: Timestamp?) {
        try await database.withConnection { connection in
            let rows = try await connection.query("SELECT count(*), min(created_at) FROM mail_outbox", logger: database.logger)
            for try await (count, oldest) in rows.decode((Int64, Timestamp?).self) { return (Int(count), oldest) }
            return (0, nil)
        }
    }

    public func leaseHolders() async throws -> [String] {
        try await database.withConnection { connection in
            var owners: [String] = []
            let rows = try await connection.query(
                "SELECT DISTINCT leased_by FROM mail_outbox WHERE leased_by IS NOT NULL", logger: database.logger)
            for try await owner in rows.decode(String.self) { owners.append(owner) }
            return owners
        }
    }

    @discardableResult
    public func releaseLeases(heldBy owner: String) async throws -> Int {
        try await database.withConnection { connection in
            try await connection.query(
                "UPDATE mail_outbox SET leased_until = NULL, leased_by = NULL WHERE leased_by = \(owner) RETURNING 1",
                logger: database.logger
            ).collect().count
        }
    }
}

/// ``MailOutboxStore/claim(now:limit:leaseUntil:owner:)`` in one statement: the due mails that can
/// no longer be sent are locked and deleted (`doomed`, `dropped`), then up to `limit` other due
/// mails with no live lease are locked, oldest due first, and leased (`due`, `leased`). Every lock
/// is taken `SKIP LOCKED`: a row another claim (or a remove, a reschedule) holds is left to it, so
/// concurrent claims never share a mail and never wait. "Live" is spelt `coalesce(consumed_at,
/// retired_at) IS NULL`, as ``ConsumeCode`` spells it, so that the planner looks each code up by
/// its key. One row always comes back: the count of dropped mails, with a leased mail or none.
struct ClaimMail: PostgresPreparedStatement {
    static let name = "actionlinks_claim_mail_v1"
    static let sql = """
        WITH doomed AS (
            SELECT m.id FROM mail_outbox m
            WHERE m.due_at <= $1 AND (m.expires_at <= $1 OR (m.code_hash IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM codes c WHERE c.hash = m.code_hash AND coalesce(c.consumed_at, c.retired_at) IS NULL AND c.expires_at > $1)))
            FOR UPDATE OF m SKIP LOCKED
        ), dropped AS (
            DELETE FROM mail_outbox m USING doomed d WHERE m.id = d.id RETURNING m.id
        ), due AS (
            SELECT m.id FROM mail_outbox m
            WHERE m.due_at <= $1 AND (m.leased_until IS NULL OR m.leased_until < $1) AND m.id NOT IN (SELECT id FROM doomed)
            ORDER BY m.due_at, m.id
            LIMIT $2
            FOR UPDATE OF m SKIP LOCKED
        ), leased AS (
            UPDATE mail_outbox m SET leased_until = $3, leased_by = $4 FROM due d WHERE m.id = d.id
            RETURNING m.id, m.sealed, m.code_hash, m.created_at, m.expires_at, m.due_at, m.attempts
        )
        SELECT (SELECT count(*) FROM dropped) AS dropped, l.id, l.sealed, l.code_hash, l.created_at, l.expires_at, l.due_at, l.attempts
        FROM (SELECT 1) AS one LEFT JOIN leased l ON true
        ORDER BY l.due_at, l.id
        """

    struct Row {
        var dropped: Int
        var mail: OutboxMail?
    }

    var now: Timestamp
    var limit: Int
    var leaseUntil: Timestamp
    var owner: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(now)
        bindings.append(Int64(limit))
        bindings.append(leaseUntil)
        bindings.append(owner)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let named = PostgresNamedRow(row)
        let dropped = Int(try named("dropped", as: Int64.self))
        guard let id = try named("id", as: String?.self) else { return Row(dropped: dropped, mail: nil) }
        let mail = OutboxMail(
            id: id, sealed: Data(try named("sealed", as: ByteBuffer.self).readableBytesView),
            codeHash: try named("code_hash", as: ByteBuffer?.self).map { Data($0.readableBytesView) }, createdAt: try named("created_at"),
            expiresAt: try named("expires_at"), dueAt: try named("due_at"), attempts: Int(try named("attempts", as: Int32.self)))
        return Row(dropped: dropped, mail: mail)
    }
}
