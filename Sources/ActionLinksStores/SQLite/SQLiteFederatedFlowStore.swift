import ActionLinksDomain
import Foundation
import GRDB

/// ``FederatedFlowStore`` on the embedded SQLite database.
public struct SQLiteFederatedFlowStore: FederatedFlowStore {
    let pool: DatabasePool

    public func saveFlow(_ flow: FederatedFlow) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM federated_flows WHERE expires_at < ?", arguments: [flow.createdAt - .seconds(86_400)])
            try db.execute(
                sql: "INSERT INTO federated_flows (state_hash, tenant_id, expires_at, details) VALUES (?, ?, ?, ?)",
                arguments: [flow.stateHash, flow.tenantID, flow.expiresAt, flow.details])
        }
    }

    public func flow(stateHash: String) async throws -> FederatedFlow? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM federated_flows WHERE state_hash = ?", arguments: [stateHash]) else {
                return nil
            }
            return FederatedFlow(
                stateHash: row["state_hash"], tenantID: row["tenant_id"], expiresAt: row["expires_at"], returnedAt: row["returned_at"],
                codeHash: row["code_hash"], consumedAt: row["consumed_at"], details: row["details"])
        }
    }

    public func markReturned(stateHash: String, codeHash: String?, now: Timestamp) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE federated_flows SET returned_at = ?, code_hash = ?
                    WHERE state_hash = ? AND returned_at IS NULL AND consumed_at IS NULL AND expires_at > ?
                    """, arguments: [now, codeHash, stateHash, now])
            return db.changesCount == 1
        }
    }

    public func consumeFlow(stateHash: String, now: Timestamp) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE federated_flows SET consumed_at = ?
                    WHERE state_hash = ? AND returned_at IS NOT NULL AND consumed_at IS NULL AND expires_at > ?
                    """, arguments: [now, stateHash, now])
            return db.changesCount == 1
        }
    }

    /// One-time SAML assertions (``FederatedFlowStore/useSAMLAssertion(key:expiresAt:now:)``): one
    /// conditional insert, so two instances (or two requests) can never both use one.
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

extension SQLiteDatabase {
    /// The federated sign-in flows on this database.
    public var federatedFlows: SQLiteFederatedFlowStore { SQLiteFederatedFlowStore(pool: pool) }
}
