import Foundation
import GRDB
import NIOCore
import PostgresNIO

/// A tenant made through the admin API (`projects/<p>/tenants`), as the store keeps it. Tenants
/// from the configuration are not stored.
public struct TenantRecord: Codable, Sendable, Hashable {
    /// The tenant's ID.
    public var tenantID: String
    /// Its display name.
    public var displayName: String?
    /// Whether password sign-up and sign-in work (Firebase's `allowPasswordSignup`).
    public var allowPasswordSignup: Bool
    /// Whether email-link sign-in works (`enableEmailLinkSignin`).
    public var enableEmailLinkSignin: Bool
    /// Whether anonymous sign-in works (`enableAnonymousUser`).
    public var enableAnonymousUser: Bool
    /// Whether the tenant refuses everything (`disableAuth`: `PROJECT_DISABLED`).
    public var disableAuth: Bool
    /// When it was made.
    public var createdAt: Timestamp

    /// Creates a record.
    public init(
        tenantID: String, displayName: String? = nil, allowPasswordSignup: Bool = false, enableEmailLinkSignin: Bool = false,
        enableAnonymousUser: Bool = false, disableAuth: Bool = false, createdAt: Timestamp
    ) {
        self.tenantID = tenantID
        self.displayName = displayName
        self.allowPasswordSignup = allowPasswordSignup
        self.enableEmailLinkSignin = enableEmailLinkSignin
        self.enableAnonymousUser = enableAnonymousUser
        self.disableAuth = disableAuth
        self.createdAt = createdAt
    }

    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    init?(json: String) {
        guard let record = try? JSONDecoder().decode(TenantRecord.self, from: Data(json.utf8)) else { return nil }
        self = record
    }
}

/// Where the tenants made through the API live.
public protocol TenantStore: Sendable {
    /// The tenant with this ID.
    func tenant(id: String) async throws -> TenantRecord?
    /// Up to `limit` tenants with IDs after `id`, by ID.
    func tenants(after id: String?, limit: Int) async throws -> [TenantRecord]
    /// Adds or replaces a tenant.
    func save(_ tenant: TenantRecord) async throws
    /// Deletes a tenant; returns whether there was one.
    @discardableResult
    func deleteTenant(id: String) async throws -> Bool
}

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
