import ActionLinksConfiguration
import Foundation

/// What a tenant (or the project itself, tenant "") allows: Firebase's tenant switches and this
/// server's self-service and privacy settings, resolved once per request.
public struct TenantPolicy: Sendable, Hashable {
    /// The tenant ("" for the project).
    public var tenantID: String
    /// The tenant's display name.
    public var displayName: String?
    /// Every call answers `PROJECT_DISABLED`.
    public var disableAuth = false
    /// Password sign-up and sign-in (`OPERATION_NOT_ALLOWED`, `PASSWORD_LOGIN_DISABLED` when off).
    public var allowPasswordSignup = true
    /// Email-link sign-in (`OPERATION_NOT_ALLOWED` when off).
    public var enableEmailLinkSignin = true
    /// Anonymous sign-in (`ADMIN_ONLY_OPERATION` when off).
    public var enableAnonymousUser = true
    /// Whether clients may create accounts (sign-up, anonymous sign-in, a first email-link sign-in);
    /// `ADMIN_ONLY_OPERATION` when off. Admin calls are never restricted.
    public var selfServiceSignUp = true
    /// Whether a signed-in user may delete their own account (`ADMIN_ONLY_OPERATION` when off).
    public var selfServiceDelete = true
    /// Firebase's email-enumeration protection: answers that never tell whether an address has an
    /// account (`INVALID_LOGIN_CREDENTIALS`, no `registered` in `createAuthUri`).
    public var emailEnumerationProtection = false
    /// The password policy.
    public var passwords: PasswordPolicy
    /// The tenant's own password policy as the v2 API shows it; nil when it has the project's.
    package var passwordPolicyConfig: PasswordPolicyConfig?
    /// Whether the tenant was made through the API (it may then be changed or deleted there).
    public var isStored = false
    /// Multi-factor authentication: whether authenticator apps may be enrolled, and whether an
    /// account with one is asked for it.
    public var multiFactor = MultiFactorPolicy.disabled

    /// Throws `PROJECT_DISABLED` when the tenant refuses everything.
    package func checkEnabled() throws(ActionError) {
        if disableAuth { throw ActionError(.projectDisabled) }
    }
}

extension MultiFactorPolicy {
    /// The policy the configuration file's `mfa` (the project's, or a tenant's) gives.
    package init(settings: MultiFactorSettings) {
        func state(_ state: MultiFactorSettings.State) -> State {
            switch state {
            case .disabled: .disabled
            case .enabled: .enabled
            case .mandatory: .mandatory
            }
        }
        self.init(
            state: state(settings.state), totpState: settings.totp.map { state($0.state) },
            adjacentIntervals: settings.totp?.adjacentIntervals)
    }
}

/// The project's tenants: those in the configuration and those made through the admin API.
public struct TenantDirectory: Sendable {
    let settings: ServiceSettings
    let store: any TenantStore
    let gateway: StoreGateway

    /// The project's own policy (tenant "").
    package var project: TenantPolicy {
        configured("") ?? TenantPolicy(tenantID: "", passwords: PasswordPolicy(settings: settings.passwords))
    }

    /// The policy of the project ("") or of a tenant from the configuration.
    func configured(_ id: String) -> TenantPolicy? {
        guard let account = settings.accountSettings(forTenant: id) else { return nil }
        return TenantPolicy(
            tenantID: id, displayName: account.displayName, selfServiceSignUp: account.users.selfServiceSignUp,
            selfServiceDelete: account.users.selfServiceDelete, emailEnumerationProtection: account.users.emailEnumerationProtection,
            passwords: PasswordPolicy(settings: account.passwords),
            passwordPolicyConfig: settings.tenantSettings[id]?.passwords.map(PasswordPolicyConfig.init),
            multiFactor: MultiFactorPolicy(settings: account.multiFactor))
    }

    /// The policy a front applies in a tenant (`id`, "" for the project) of the Firebase project
    /// it fronts: its own (email-enumeration protection) under that tenant's ID. The tenant itself
    /// is the project's, and upstream checks it.
    package func fronted(_ id: String) -> TenantPolicy {
        var policy = project
        policy.tenantID = id
        return policy
    }

    /// The policy of a tenant a call names ("" for the project): `INVALID_TENANT_ID` for an ID that
    /// cannot be one, `TENANT_NOT_FOUND` for one that does not exist.
    package func policy(for id: String) async throws(ActionError) -> TenantPolicy {
        guard !id.isEmpty else { return project }
        guard ServiceSettings.isWellFormedTenantID(id) else {
            throw ActionError(.invalidTenantID, "a tenant ID is 1 to 64 letters, digits and hyphens")
        }
        if let policy = configured(id) { return policy }
        guard let stored = try await gateway.call({ try await self.store.tenant(id: id) }) else {
            throw ActionError(.tenantNotFound, "There is no tenant with this ID.")
        }
        return policy(stored)
    }

    /// ``policy(for:)`` when it needs no read: the project's, or a configured tenant's; `nil` for
    /// any other ID (a stored tenant, or none), which only ``policy(for:)`` settles.
    package func policyNow(for id: String) -> TenantPolicy? {
        id.isEmpty ? project : configured(id)
    }

    /// The policy of a stored tenant.
    func policy(_ tenant: TenantRecord) -> TenantPolicy {
        var policy = project
        policy.tenantID = tenant.tenantID
        policy.displayName = tenant.displayName
        policy.disableAuth = tenant.disableAuth
        policy.allowPasswordSignup = tenant.allowPasswordSignup
        policy.enableEmailLinkSignin = tenant.enableEmailLinkSignin
        policy.enableAnonymousUser = tenant.enableAnonymousUser
        // Checked when it was saved; a stored one that no longer reads (never expected) is the project's.
        if let config = tenant.passwordPolicyConfig, let own = try? config.settings() {
            policy.passwords = PasswordPolicy(settings: own)
            policy.passwordPolicyConfig = config
        }
        // A stored tenant's multi-factor settings are its own (Identity Platform's `mfaConfig`), not the project's.
        policy.multiFactor = tenant.multiFactor ?? .disabled
        policy.isStored = true
        return policy
    }

    /// Whether `id` names a configured tenant (which the API may read but not change).
    func isConfigured(_ id: String) -> Bool { settings.tenants.contains(id) }
}

/// The admin API's tenant management (`projects/<p>/tenants[/<t>]`, what firebase-admin's tenant
/// management calls): tenants from the configuration are listed and read but changed only there
/// (`INVALID_ARGUMENT`); those made through the API are created, changed and deleted here.
extension TenantDirectory {
    /// A page of the project's tenants by ID, those from the configuration and the stored ones
    /// together: up to `pageSize` (20 when not given, at most 1000) after `token`, and the token of
    /// the next page when this one is full.
    package func page(after token: String?, pageSize: Int?) async throws(ActionError) -> (tenants: [TenantPolicy], next: String?) {
        let size = min(max(pageSize ?? 20, 1), 1000)
        let stored = try await gateway.call { try await self.store.tenants(after: token, limit: size) }
        var policies = settings.tenants.sorted().filter { token == nil || $0 > token! }.compactMap(configured)
        policies += stored.map(policy)
        policies.sort { $0.tenantID < $1.tenantID }
        let page = Array(policies.prefix(size))
        return (page, page.count >= size ? page.last?.tenantID : nil)
    }

    /// A new stored tenant named `displayName` (its ID made from the name, as Firebase makes it),
    /// its fields set by `edit` (which may refuse them); a password policy that does not read, or
    /// multi-factor settings out of range, are refused before anything is saved.
    package func create(
        displayName: String?, now: Timestamp, edit: (inout TenantRecord) throws(ActionError) -> Void
    ) async throws(ActionError) -> TenantPolicy {
        var record = TenantRecord(tenantID: Self.newID(displayName: displayName), displayName: displayName, createdAt: now)
        try edit(&record)
        return try await save(record)
    }

    /// A tenant as the admin reads it, configured or stored (`TENANT_NOT_FOUND`).
    package func administered(_ id: String?) async throws(ActionError) -> TenantPolicy {
        if let id, isConfigured(id) { return try await policy(for: id) }
        return policy(try await stored(id, changing: false))
    }

    /// Changes a stored tenant with `edit` (checked as ``create(displayName:now:edit:)`` checks).
    package func update(_ id: String?, edit: (inout TenantRecord) throws(ActionError) -> Void) async throws(ActionError) -> TenantPolicy {
        var record = try await stored(id, changing: true)
        try edit(&record)
        return try await save(record)
    }

    /// Deletes a stored tenant.
    package func delete(_ id: String?) async throws(ActionError) {
        let record = try await stored(id, changing: true)
        _ = try await gateway.call { try await self.store.deleteTenant(id: record.tenantID) }
    }

    /// The stored tenant `id`: `TENANT_NOT_FOUND` when there is none; `INVALID_ARGUMENT` when it
    /// is configured and a change was asked for.
    private func stored(_ id: String?, changing: Bool) async throws(ActionError) -> TenantRecord {
        guard let id else { throw ActionError(.tenantNotFound) }
        if changing, isConfigured(id) {
            throw ActionError.invalidArgument("the tenant '\(id)' is defined in the configuration; change it there")
        }
        guard let record = try await gateway.call({ try await self.store.tenant(id: id) }) else {
            throw ActionError(.tenantNotFound, "There is no tenant with this ID.")
        }
        return record
    }

    private func save(_ record: TenantRecord) async throws(ActionError) -> TenantPolicy {
        _ = try record.passwordPolicyConfig?.settings()
        if let intervals = record.multiFactor?.adjacentIntervals, !(0...10).contains(intervals) {
            throw ActionError.invalidArgument("adjacentIntervals must be a whole number from 0 to 10; got \(intervals)")
        }
        try await gateway.call { try await self.store.save(record) }
        return policy(record)
    }

    /// A new tenant's ID: its display name (letters, digits and hyphens) and five random
    /// characters, as Firebase makes them, or 28 random characters without a name.
    static func newID(displayName: String?) -> String {
        let random = Secrets.accountID()
        guard let name = displayName?.filter({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }), !name.isEmpty else {
            return random
        }
        return String(name.prefix(40)) + "-" + random.prefix(5)
    }
}
