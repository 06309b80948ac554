import Foundation

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
    /// Its own password policy, as the v2 API took it (`passwordPolicyConfig`); nil: the project's.
    package var passwordPolicyConfig: PasswordPolicyConfig?
    /// Its multi-factor settings (`mfaConfig`); nil: none enabled.
    public var multiFactor: MultiFactorPolicy?
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

    package var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    package init?(json: String) {
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
