/// A tenant of the project (an entry of `tenants`): its ID, and what it sets differently from the
/// project. Each setting left nil is the project's (`users.*`, `passwords`, `mfa`).
public struct TenantSettings: Sendable, Hashable {
    /// The tenant ID: 1 to 64 letters, digits and hyphens.
    public var id: String
    /// The name pages and emails show for the tenant, if it has its own.
    public var displayName: String?
    /// The tenant's `selfServiceSignUp`, when it differs from the project's.
    public var selfServiceSignUp: Bool?
    /// The tenant's `selfServiceDelete`, when it differs from the project's.
    public var selfServiceDelete: Bool?
    /// The tenant's `emailEnumerationProtection`, when it differs from the project's.
    public var emailEnumerationProtection: Bool?
    /// The tenant's password policy; the keys its `passwords` does not give are the project's as the
    /// file was read.
    public var passwords: PasswordSettings?
    /// The tenant's multi-factor settings; the keys its `mfa` does not give are the project's as
    /// the file was read.
    public var multiFactor: MultiFactorSettings?

    /// A tenant that inherits every setting.
    public init(
        id: String, displayName: String? = nil, selfServiceSignUp: Bool? = nil, selfServiceDelete: Bool? = nil,
        emailEnumerationProtection: Bool? = nil, passwords: PasswordSettings? = nil, multiFactor: MultiFactorSettings? = nil
    ) {
        self.id = id
        self.displayName = displayName
        self.selfServiceSignUp = selfServiceSignUp
        self.selfServiceDelete = selfServiceDelete
        self.emailEnumerationProtection = emailEnumerationProtection
        self.passwords = passwords
        self.multiFactor = multiFactor
    }
}

/// The settings that apply to the accounts of one tenant, or of the project itself: the tenant's
/// own where it has them, the project's otherwise.
public struct AccountSettings: Sendable, Hashable {
    /// The tenant ID; "" for the project.
    public var tenantID: String
    /// The tenant's display name, if it has one.
    public var displayName: String?
    /// Sign-up, deletion, enumeration protection, one account per email.
    public var users: UserSettings
    /// The password policy.
    public var passwords: PasswordSettings
    /// Multi-factor authentication.
    public var multiFactor = MultiFactorSettings()
}

extension ServiceSettings {
    /// The settings for the accounts of tenant `id` ("" for the project itself); nil for a tenant
    /// the project does not have.
    public func accountSettings(forTenant id: String) -> AccountSettings? {
        guard !id.isEmpty else { return AccountSettings(tenantID: "", users: users, passwords: passwords, multiFactor: multiFactor) }
        guard let tenant = tenantSettings[id] else { return nil }
        var users = self.users
        users.selfServiceSignUp = tenant.selfServiceSignUp ?? users.selfServiceSignUp
        users.selfServiceDelete = tenant.selfServiceDelete ?? users.selfServiceDelete
        users.emailEnumerationProtection = tenant.emailEnumerationProtection ?? users.emailEnumerationProtection
        return AccountSettings(
            tenantID: id, displayName: tenant.displayName, users: users, passwords: tenant.passwords ?? passwords,
            multiFactor: tenant.multiFactor ?? multiFactor)
    }
}

extension TenantSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, displayName, selfServiceSignUp, selfServiceDelete, emailEnumerationProtection, passwords, mfa
    }

    /// Reads an entry of `tenants`: a tenant ID, or a mapping whose `passwords` and `mfa` keys it
    /// does not give are `project`'s.
    init(from decoder: any Decoder, inheriting project: ServiceSettings) throws {
        if let id = try ScalarText(from: decoder).text {
            try self.init(id: Self.checked(id, at: decoder.codingPath))
            return
        }
        let tenant = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try Self.checked(tenant.decode(String.self, forKey: .id), at: tenant.codingPath + [CodingKeys.id]))
        displayName = try tenant.string(.displayName)
        selfServiceSignUp = try tenant.boolean(.selfServiceSignUp)
        selfServiceDelete = try tenant.boolean(.selfServiceDelete)
        emailEnumerationProtection = try tenant.boolean(.emailEnumerationProtection)
        let policy = try PasswordSettings(from: tenant.superDecoder(forKey: .passwords), inheriting: project.passwords)
        passwords = policy == project.passwords ? nil : policy
        let multiFactor = try MultiFactorSettings(from: tenant.superDecoder(forKey: .mfa), inheriting: project.multiFactor)
        self.multiFactor = multiFactor == project.multiFactor ? nil : multiFactor
    }

    private static func checked(_ id: String, at path: [any CodingKey]) throws(DecodingProblem) -> String {
        guard ServiceSettings.isWellFormedTenantID(id) else {
            throw DecodingProblem(path, "expected a tenant ID of 1 to 64 letters, digits and hyphens; got '\(id)'")
        }
        return id
    }
}
