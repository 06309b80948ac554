import Foundation
import GRDB
import PostgresNIO

// One-time SAML assertions: each assertion ID an IdP issued is accepted once, and remembered until
// the assertion could no longer be accepted anyway (its NotOnOrAfter plus the clock skew). Each
// use is one conditional insert, so two instances (or two requests) can never both use it.

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

extension SQLiteDatabase {
    /// Migration v5: the SAML assertions already used.
    static let samlAssertionsSchema = """
        CREATE TABLE saml_assertions (
            key TEXT PRIMARY KEY NOT NULL,
            expires_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX saml_assertions_expiry ON saml_assertions (expires_at);
        """
}

extension PostgresStore {
    /// Migration v5: the SAML assertions already used.
    static let samlAssertionsSchema = [
        "CREATE TABLE saml_assertions (key TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)",
        "CREATE INDEX saml_assertions_expiry ON saml_assertions (expires_at)",
    ]
}
