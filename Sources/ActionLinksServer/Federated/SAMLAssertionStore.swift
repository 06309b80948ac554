import Foundation
import GRDB
import PostgresNIO

// One-time SAML assertions: each assertion ID an IdP issued is accepted once, and remembered until
// the assertion could no longer be accepted anyway (its NotOnOrAfter plus the clock skew). Each
// use is one conditional insert, so two instances (or two requests) can never both use it. The
// table is schema v5 (SQLiteSchema.swift, PostgresSchema.swift).

extension SQLiteFederatedFlowStore {
    public func useSAMLAssertion(key: String, expiresAt: Timestamp, now: Timestamp) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM saml_assertions WHERE expires_at <= ?", arguments: [now])
            try db.execute(
                sql: "INSERT INTO saml_assertions (key, expires_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                arguments: [key, expiresAt])
            return db.changesCount == 1
        }
    }
}

extension PostgresFederatedFlowStore {
    public func useSAMLAssertion(key: String, expiresAt: Timestamp, now: Timestamp) async throws -> Bool {
        try await database.withConnection { connection in
            try await connection.query("DELETE FROM saml_assertions WHERE expires_at <= \(now)", logger: database.logger)
            return try await connection.query(
                """
                INSERT INTO saml_assertions (key, expires_at) VALUES (\(key), \(expiresAt))
                ON CONFLICT (key) DO NOTHING RETURNING 1
                """, logger: database.logger
            ).collect().count == 1
        }
    }
}
