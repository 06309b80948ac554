import ActionLinksDomain
import Foundation
import NIOCore
import PostgresNIO

/// ``SignInCodeStore`` on PostgreSQL, shared by every instance: each method is one statement, so a
/// try is counted, and a code used, atomically across instances. (A code is issued, tried and used
/// a few times per sign-in, not per request of every kind: the statements are not prepared.)
public struct PostgresSignInCodeStore: SignInCodeStore {
    let database: PostgresStore

    public func issue(_ record: SignInCodeRecord) async throws {
        try await database.withConnection { connection in
            try await connection.query(
                """
                INSERT INTO sign_in_codes (tenant_id, email, mac, sealed_link, attempts, created_at, expires_at, used_at)
                VALUES (\(record.tenantID), \(record.email), \(ByteBuffer(bytes: record.mac)), \(ByteBuffer(bytes: record.sealedLink)), 0,
                        \(record.createdAt), \(record.expiresAt), NULL)
                ON CONFLICT (tenant_id, email) DO UPDATE SET
                    mac = excluded.mac, sealed_link = excluded.sealed_link, attempts = 0, created_at = excluded.created_at,
                    expires_at = excluded.expires_at, used_at = NULL
                """, logger: database.logger)
        }
    }

    /// Counts the limits' events and, when every count is within its maximum, one try of the
    /// address's live code, returning its MAC: one statement, so the store is written (and the
    /// statement commits) alike whether or not the address has a code. The counts are
    /// `CountEvents`' upsert, locking the keys in sorted order as `countEvents` does (no deadlock
    /// between the two); the try reads them from its output (a data-modifying `WITH` runs once, to
    /// completion, before what reads it).
    public func tryCode(
        tenantID: String, email: String, now: Timestamp, maximumTries: Int, limits: [EventLimit], windowStart: Timestamp
    ) async throws -> SignInCodeTry {
        var byKey: [String: Int] = [:]
        for limit in limits { byKey[limit.key] = min(byKey[limit.key] ?? .max, limit.maximum) }
        let keys = byKey.keys.sorted()
        let maximums = keys.map { Int64(byKey[$0] ?? 0) }
        let row = try await database.withConnection { connection in
            try await connection.query(
                """
                WITH counted AS (
                    INSERT INTO event_counts (key, window_start, count)
                    SELECT key, \(windowStart), 1 FROM unnest(\(keys)::text[]) WITH ORDINALITY AS keys(key, position) ORDER BY position
                    ON CONFLICT (key, window_start) DO UPDATE SET count = event_counts.count + 1
                    RETURNING key, count
                ), over AS (
                    SELECT coalesce(bool_or(c.count > l.maximum), false) AS limited
                    FROM counted c JOIN unnest(\(keys)::text[], \(maximums)::int8[]) AS l(key, maximum) ON l.key = c.key
                ), tried AS (
                    UPDATE sign_in_codes s SET attempts = s.attempts + 1
                    WHERE s.tenant_id = \(tenantID) AND s.email = \(email) AND s.used_at IS NULL AND s.expires_at > \(now)
                      AND s.attempts < \(Int64(maximumTries)) AND NOT (SELECT limited FROM over)
                    RETURNING s.mac
                )
                SELECT (SELECT limited FROM over), (SELECT mac FROM tried)
                """, logger: database.logger
            ).decode((Bool, ByteBuffer?).self).first { _ in true }
        }
        guard let row else { return .counted(mac: nil) }
        let (limited, mac) = row
        return limited ? .limited : .counted(mac: mac.map { Data($0.readableBytesView) })
    }

    public func use(tenantID: String, email: String, mac: Data, now: Timestamp) async throws -> Data? {
        let sealed = try await database.withConnection { connection in
            try await connection.query(
                """
                UPDATE sign_in_codes SET used_at = \(now)
                WHERE tenant_id = \(tenantID) AND email = \(email) AND mac = \(ByteBuffer(bytes: mac)) AND used_at IS NULL
                  AND expires_at > \(now)
                RETURNING sealed_link
                """, logger: database.logger
            ).decode(ByteBuffer.self).first { _ in true }
        }
        return sealed.map { Data($0.readableBytesView) }
    }

    @discardableResult
    public func purge(before cutoff: Timestamp) async throws -> Int {
        try await database.withConnection(bounded: false) { connection in
            try await connection.query(Self.purgeStatement(before: cutoff), logger: database.logger).collect().count
        }
    }

    /// The purge's statement, with an index for each condition (`SchemaTests` plans it).
    static func purgeStatement(before cutoff: Timestamp) -> PostgresQuery {
        "DELETE FROM sign_in_codes WHERE expires_at < \(cutoff) OR used_at < \(cutoff) RETURNING 1"
    }
}
