import ActionLinksDomain
import Foundation
import GRDB

/// ``MailOutboxStore`` on the embedded SQLite database. Every write goes through the database's
/// single writer (in a batch of concurrent requests' writes: ``SQLiteBatchedWrites``), so two
/// claims, even of two instances on one file, run one after the other and never lease one mail
/// twice.
public struct SQLiteMailOutboxStore: MailOutboxStore {
    let pool: DatabasePool
    let batches: SQLiteBatchedWrites

    public func enqueue(_ mail: OutboxMail) async throws {
        try await batches.write { db in try Self.enqueue(db, mail) }
    }

    /// Stores `mail` (inside a caller's transaction: the link's write, an account transaction).
    static func enqueue(_ db: Database, _ mail: OutboxMail) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO mail_outbox (id, sealed, code_hash, created_at, expires_at, due_at, attempts, leased_until, leased_by)
                VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL)
                """
        ).execute(arguments: [mail.id, mail.sealed, mail.codeHash, mail.createdAt, mail.expiresAt, mail.dueAt, mail.attempts])
    }

    public func claim(now: Timestamp, limit: Int, leaseUntil: Timestamp, owner: String) async throws -> OutboxClaim {
        try await batches.write { db in
            try db.cachedStatement(sql: Self.dropStatement).execute(arguments: [now, now, now])
            let dropped = db.changesCount
            let rows = try Row.fetchAll(
                db.cachedStatement(sql: Self.leaseStatement), arguments: [leaseUntil, owner, now, now, max(limit, 0)])
            // RETURNING gives the rows in no promised order.
            let mails = rows.map(Self.mail).sorted { ($0.dueAt, $0.id) < ($1.dueAt, $1.id) }
            return OutboxClaim(mails: mails, dropped: dropped)
        }
    }

    /// The claim's first statement: deletes the due mails that can no longer be sent, their link
    /// expired or their code no longer live (missing, consumed, retired or expired). It and
    /// ``leaseStatement`` read only due mails, through `mail_outbox_due` (`MailOutboxStoreTests`
    /// plans them).
    static let dropStatement = """
        DELETE FROM mail_outbox
        WHERE due_at <= ? AND (expires_at <= ? OR (code_hash IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM codes c
            WHERE c.hash = mail_outbox.code_hash AND c.consumed_at IS NULL AND c.retired_at IS NULL AND c.expires_at > ?)))
        """

    /// The claim's second statement: leases the oldest due mails that no live lease holds.
    static let leaseStatement = """
        UPDATE mail_outbox SET leased_until = ?, leased_by = ?
        WHERE id IN (
            SELECT id FROM mail_outbox WHERE due_at <= ? AND (leased_until IS NULL OR leased_until < ?)
            ORDER BY due_at, id LIMIT ?)
        RETURNING id, sealed, code_hash, created_at, expires_at, due_at, attempts
        """

    @discardableResult
    public func remove(id: String, owner: String) async throws -> Bool {
        try await batches.write { db in
            try db.cachedStatement(sql: "DELETE FROM mail_outbox WHERE id = ? AND leased_by = ?").execute(arguments: [id, owner])
            return db.changesCount == 1
        }
    }

    @discardableResult
    public func reschedule(id: String, owner: String, dueAt: Timestamp) async throws -> Bool {
        try await batches.write { db in
            try db.cachedStatement(
                sql: """
                    UPDATE mail_outbox SET attempts = attempts + 1, due_at = ?, leased_until = NULL, leased_by = NULL
                    WHERE id = ? AND leased_by = ?
                    """
            ).execute(arguments: [dueAt, id, owner])
            return db.changesCount == 1
        }
    }

    public func backlog() async throws -> (count: Int, oldest: Timestamp?) {
        try await pool.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT count(*) AS count, min(created_at) AS oldest FROM mail_outbox")
            return (row?["count"] ?? 0, row?["oldest"])
        }
    }

    public func leaseHolders() async throws -> [String] {
        try await pool.read { db in try String.fetchAll(db, sql: "SELECT DISTINCT leased_by FROM mail_outbox WHERE leased_by IS NOT NULL") }
    }

    @discardableResult
    public func releaseLeases(heldBy owner: String) async throws -> Int {
        try await batches.write { db in
            try db.cachedStatement(sql: "UPDATE mail_outbox SET leased_until = NULL, leased_by = NULL WHERE leased_by = ?")
                .execute(arguments: [owner])
            return db.changesCount
        }
    }

    /// A `mail_outbox` row as the claim returns it.
    static func mail(_ row: Row) -> OutboxMail {
        OutboxMail(
            id: row["id"], sealed: row["sealed"], codeHash: row["code_hash"], createdAt: row["created_at"], expiresAt: row["expires_at"],
            dueAt: row["due_at"], attempts: row["attempts"])
    }
}
