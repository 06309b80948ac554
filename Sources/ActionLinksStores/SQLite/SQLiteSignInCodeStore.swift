import ActionLinksDomain
import Foundation
import GRDB

/// ``SignInCodeStore`` on the embedded SQLite database. Each method is one write through the
/// database's single writer (in a batch of concurrent requests' writes: ``SQLiteBatchedWrites``),
/// so tries and uses of one code are serialised.
public struct SQLiteSignInCodeStore: SignInCodeStore {
    let batches: SQLiteBatchedWrites

    public func issue(_ record: SignInCodeRecord) async throws {
        try await batches.write { db in try Self.issue(db, record) }
    }

    /// Stores `record`, replacing the address's code (inside a caller's transaction).
    static func issue(_ db: Database, _ record: SignInCodeRecord) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO sign_in_codes (tenant_id, email, mac, sealed_link, attempts, created_at, expires_at, used_at, link_hash)
                VALUES (?, ?, ?, ?, 0, ?, ?, NULL, ?)
                ON CONFLICT (tenant_id, email) DO UPDATE SET
                    mac = excluded.mac, sealed_link = excluded.sealed_link, attempts = 0, created_at = excluded.created_at,
                    expires_at = excluded.expires_at, used_at = NULL, link_hash = excluded.link_hash
                """
        ).execute(
            arguments: [record.tenantID, record.email, record.mac, record.sealedLink, record.createdAt, record.expiresAt, record.linkHash])
    }

    public func tryCode(tenantID: String, email: String, now: Timestamp, maximumTries: Int, stages: [EventLimitStage]) async throws
        -> SignInCodeTry
    {
        try await batches.write { db in
            // The counts and the try in one transaction: an address with a code and one without
            // write and commit alike.
            for (index, stage) in stages.enumerated() {
                let counts = try SQLiteCodeStore.countEvents(db, keys: stage.limits.map(\.key), windowStart: stage.windowStart)
                if zip(counts, stage.limits).contains(where: { $0 > $1.maximum }) { return .limited(stage: index) }
            }
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        UPDATE sign_in_codes SET attempts = attempts + 1
                        WHERE tenant_id = ? AND email = ? AND used_at IS NULL AND expires_at > ? AND attempts < ?
                        RETURNING mac, sealed_link
                        """),
                arguments: [tenantID, email, now, maximumTries])
            return .counted(mac: row?["mac"], sealedLink: row?["sealed_link"])
        }
    }

    public func use(tenantID: String, email: String, mac: Data, now: Timestamp, givingBack: [EventLimitStage]) async throws -> Data? {
        try await batches.write { db in
            let sealed = try Data.fetchOne(
                db.cachedStatement(
                    sql: """
                        UPDATE sign_in_codes SET used_at = ?
                        WHERE tenant_id = ? AND email = ? AND mac = ? AND used_at IS NULL AND expires_at > ?
                        RETURNING sealed_link
                        """),
                arguments: [now, tenantID, email, mac, now])
            if sealed != nil {
                for stage in givingBack {
                    try SQLiteCodeStore.uncountEvents(db, keys: stage.limits.map(\.key), windowStart: stage.windowStart)
                }
            }
            return sealed
        }
    }

    @discardableResult
    public func purge(before cutoff: Timestamp) async throws -> Int {
        try await batches.write { db in
            try db.execute(sql: Self.purgeStatement, arguments: [cutoff, cutoff])
            return db.changesCount
        }
    }

    /// The purge's statement, with an index for each condition (`SchemaTests` plans it).
    static let purgeStatement = "DELETE FROM sign_in_codes WHERE expires_at < ? OR used_at < ?"
}
