import ActionLinksDomain
import GRDB

/// ``TenantStore`` on the embedded SQLite database.
public struct SQLiteTenantStore: TenantStore {
    let pool: DatabasePool

    public func tenant(id: String) async throws -> TenantRecord? {
        try await pool.read { db in
            try String.fetchOne(db, sql: "SELECT settings FROM tenants WHERE tenant_id = ?", arguments: [id]).flatMap(
                TenantRecord.init(json:))
        }
    }

    public func tenants(after id: String?, limit: Int) async throws -> [TenantRecord] {
        try await pool.read { db in
            try String.fetchAll(
                db, sql: "SELECT settings FROM tenants WHERE tenant_id > ? ORDER BY tenant_id LIMIT ?", arguments: [id ?? "", limit]
            ).compactMap(TenantRecord.init(json:))
        }
    }

    public func save(_ tenant: TenantRecord) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO tenants (tenant_id, settings, created_at) VALUES (?, ?, ?)
                    ON CONFLICT (tenant_id) DO UPDATE SET settings = excluded.settings
                    """, arguments: [tenant.tenantID, tenant.json, tenant.createdAt])
        }
    }

    public func deleteTenant(id: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM tenants WHERE tenant_id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }
}
