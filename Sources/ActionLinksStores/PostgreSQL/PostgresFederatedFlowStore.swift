import ActionLinksDomain
import Foundation
import PostgresNIO

/// ``FederatedFlowStore`` on PostgreSQL: each step is one `UPDATE ... WHERE <condition> RETURNING`,
/// so of two instances racing for a flow exactly one wins.
public struct PostgresFederatedFlowStore: FederatedFlowStore {
    let database: PostgresStore

    public func saveFlow(_ flow: FederatedFlow) async throws {
        try await database.withConnection { connection in
            try await connection.query(
                "DELETE FROM federated_flows WHERE expires_at < \(flow.createdAt - .seconds(86_400))", logger: database.logger)
            try await connection.query(
                """
                INSERT INTO federated_flows (state_hash, tenant_id, expires_at, details)
                VALUES (\(flow.stateHash), \(flow.tenantID), \(flow.expiresAt), \(flow.details))
                """, logger: database.logger)
        }
    }

    public func flow(stateHash: String) async throws -> FederatedFlow? {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT state_hash, tenant_id, expires_at, returned_at, code_hash, consumed_at, details
                FROM federated_flows WHERE state_hash = \(stateHash)
                """, logger: database.logger)
            for try await (hash, tenant, expires, returned, code, consumed, details) in rows.decode(
                (String, String, Timestamp, Timestamp?, String?, Timestamp?, String).self)
            {
                return FederatedFlow(
                    stateHash: hash, tenantID: tenant, expiresAt: expires, returnedAt: returned, codeHash: code, consumedAt: consumed,
                    details: details)
            }
            return nil
        }
    }

    public func markReturned(stateHash: String, codeHash: String?, now: Timestamp) async throws -> Bool {
        try await database.withConnection { connection in
            try await connection.query(
                """
                UPDATE federated_flows SET returned_at = \(now), code_hash = \(codeHash)
                WHERE state_hash = \(stateHash) AND returned_at IS NULL AND consumed_at IS NULL AND expires_at > \(now)
                RETURNING 1
                """, logger: database.logger
            ).collect().count == 1
        }
    }

    public func consumeFlow(stateHash: String, now: Timestamp) async throws -> Bool {
        try await database.withConnection { connection in
            try await connection.query(
                """
                UPDATE federated_flows SET consumed_at = \(now)
                WHERE state_hash = \(stateHash) AND returned_at IS NOT NULL AND consumed_at IS NULL AND expires_at > \(now)
                RETURNING 1
                """, logger: database.logger
            ).collect().count == 1
        }
    }

    /// One-time SAML assertions (``FederatedFlowStore/useSAMLAssertion(key:expiresAt:now:)``): one
    /// conditional insert, so two instances (or two requests) can never both use one.
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

extension PostgresStore {
    /// The federated sign-in flows on this database.
    public var federatedFlows: PostgresFederatedFlowStore { PostgresFederatedFlowStore(database: self) }
}
