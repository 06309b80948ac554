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
        try await database.withConnection { connection in try await Self.issue(connection, record, database: database) }
    }

    /// Stores `record`, replacing the address's code (on its own, or inside a caller's transaction).
    static func issue(_ connection: PostgresConnection, _ record: SignInCodeRecord, database: PostgresStore) async throws {
        try await connection.query(
            """
            INSERT INTO sign_in_codes (tenant_id, email, mac, sealed_link, attempts, created_at, expires_at, used_at, link_hash)
            VALUES (\(record.tenantID), \(record.email), \(ByteBuffer(bytes: record.mac)), \(ByteBuffer(bytes: record.sealedLink)), 0,
                    \(record.createdAt), \(record.expiresAt), NULL, \(record.linkHash.map { ByteBuffer(bytes: $0) }))
            ON CONFLICT (tenant_id, email) DO UPDATE SET
                mac = excluded.mac, sealed_link = excluded.sealed_link, attempts = 0, created_at = excluded.created_at,
                expires_at = excluded.expires_at, used_at = NULL, link_hash = excluded.link_hash
            """, logger: database.logger)
    }

    /// Counts the stages' events in order and, when every count is within its maximum, one try of
    /// the address's live code, returning its MAC and sealed link: one statement, so the store is
    /// written (and the statement commits) alike whether or not the address has a code. Each stage
    /// is `CountEvents`' upsert in a data-modifying `WITH`, its keys in sorted order, and counts
    /// only when no stage before it went over (it reads their output: a data-modifying `WITH` runs
    /// once, to completion, before what reads it); every exchange takes the stages in the same
    /// order (IP, address, the address's failures), so two cannot deadlock.
    public func tryCode(tenantID: String, email: String, now: Timestamp, maximumTries: Int, stages: [EventLimitStage]) async throws
        -> SignInCodeTry
    {
        var bindings = PostgresBindings()
        func bind(_ value: some PostgresEncodable & Sendable) throws -> String {
            try bindings.append(value)
            return "$\(bindings.count)"
        }
        var parts: [String] = []
        var overs: [String] = []
        for (index, stage) in stages.enumerated() {
            var byKey: [String: Int] = [:]
            for limit in stage.limits { byKey[limit.key] = min(byKey[limit.key] ?? .max, limit.maximum) }
            let keys = byKey.keys.sorted()
            let (keyList, maximums) = (try bind(keys), try bind(keys.map { Int64(byKey[$0] ?? 0) }))
            let window = try bind(stage.windowStart)
            let earlier = index == 0 ? "" : "WHERE NOT (SELECT over FROM through\(index - 1))"
            parts.append(
                """
                counted\(index) AS (
                    INSERT INTO event_counts (key, window_start, count)
                    SELECT key, \(window), 1 FROM unnest(\(keyList)::text[]) WITH ORDINALITY AS keys(key, position) \(earlier)
                    ORDER BY position
                    ON CONFLICT (key, window_start) DO UPDATE SET count = event_counts.count + 1
                    RETURNING key, count
                ), over\(index) AS (
                    SELECT coalesce(bool_or(c.count > l.maximum), false) AS over
                    FROM counted\(index) c JOIN unnest(\(keyList)::text[], \(maximums)::int8[]) AS l(key, maximum) ON l.key = c.key
                ), through\(index) AS (
                    SELECT \(index == 0 ? "" : "(SELECT over FROM through\(index - 1)) OR ")(SELECT over FROM over\(index)) AS over
                )
                """)
            overs.append("(SELECT over FROM over\(index))")
        }
        let limited = stages.isEmpty ? "false" : "(SELECT over FROM through\(stages.count - 1))"
        parts.append(
            """
            tried AS (
                UPDATE sign_in_codes s SET attempts = s.attempts + 1
                WHERE s.tenant_id = \(try bind(tenantID)) AND s.email = \(try bind(email)) AND s.used_at IS NULL
                  AND s.expires_at > \(try bind(now)) AND s.attempts < \(try bind(Int64(maximumTries))) AND NOT \(limited)
                RETURNING s.mac, s.sealed_link
            )
            """)
        let sql =
            "WITH " + parts.joined(separator: ", ")
            + " SELECT ARRAY[\(overs.isEmpty ? "false" : overs.joined(separator: ", "))]::bool[], (SELECT mac FROM tried), (SELECT sealed_link FROM tried)"
        let query = PostgresQuery(unsafeSQL: sql, binds: bindings)
        let row = try await database.withConnection { connection in
            try await connection.query(query, logger: database.logger).decode(([Bool], ByteBuffer?, ByteBuffer?).self).first { _ in true }
        }
        guard let row else { return .counted(mac: nil, sealedLink: nil) }
        let (over, mac, sealed) = row
        if let stage = over.firstIndex(of: true) { return .limited(stage: stage) }
        return .counted(mac: mac.map { Data($0.readableBytesView) }, sealedLink: sealed.map { Data($0.readableBytesView) })
    }

    public func use(tenantID: String, email: String, mac: Data, now: Timestamp, givingBack: [EventLimitStage]) async throws -> Data? {
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
        guard let sealed else { return nil }
        // A right code is no failed guess. Taken back in statements of their own after the use: in
        // the use's, its row lock and the counts' would be taken in the opposite order to tryCode's
        // (counts, then the row), and two exchanges could deadlock.
        for stage in givingBack {
            try await database.codes.uncountEvents(keys: stage.limits.map(\.key), windowStart: stage.windowStart)
        }
        return Data(sealed.readableBytesView)
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
