import ActionLinksDomain
import PostgresNIO

/// ``TenantStore`` on PostgreSQL.
public struct PostgresTenantStore: TenantStore {
    let database: PostgresStore

    public func tenant(id: String) async throws -> TenantRecord? {
        try await database.withConnection { connection in
            for try await settings in try await connection.query(
                "SELECT settings FROM tenants WHERE tenant_id = \(id)", logger: database.logger
            ).decode(String.self) {
                return TenantRecord(json: settings)
            }
            return nil
        }
    }

    public func tenants(after id: String?, limit: Int) async throws -> [TenantRecord] {
        try await database.withConnection { connection in
            var tenants: [TenantRecord] = []
            for try await settings in try await connection.query(
                "SELECT settings FROM tenants WHERE tenant_id > \(id ?? "") ORDER BY tenant_id LIMIT \(Int64(limit))",
                logger: database.logger
            ).decode(String.self) {
                if let tenant = TenantRecord(json: settings) { tenants.append(tenant) }
            }
            return tenants
        }
    }

    public func save(_ tenant: TenantRecord) async throws {
        try await database.withConnection { connection in
            try await connection.query(
                """
                INSERT INTO tenants (tenant_id, settings, created_at) VALUES (\(tenant.tenantID), \(tenant.json), \(tenant.createdAt))
                ON CONFLICT (tenant_id) DO UPDATE SET settings = excluded.settings
                """, logger: database.logger)
        }
    }

    public func deleteTenant(id: String) async throws -> Bool {
        try await database.withConnection { connection in
            try await connection.query("DELETE FROM tenants WHERE tenant_id = \(id) RETURNING 1", logger: database.logger).collect().count
                > 0
        }
    }
}
