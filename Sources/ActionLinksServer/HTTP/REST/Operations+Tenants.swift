import ActionLinks
import ActionLinksConfiguration
import Foundation

/// Tenants, as the admin API v2 manages them (`projects/<p>/tenants[/<t>]`): what
/// `firebase-admin`'s tenant management calls. Tenants from the configuration are listed and read
/// here but changed only in the configuration.
extension IdentityToolkitAPI {
    mutating func addTenantOperations(_ services: LinkDomainServices) {
        let tenants = services.tenants
        let gateway = services.store
        let store = services.tenantStore
        let clock = services.clock
        let projectID = services.settings.project.id
        let configured = services.settings.tenants.sorted()

        add("tenants", on: .path, methods: [.get, .post], requires: [.admin], body: TenantRequest.self) {
            fields, call throws(ActionError) in
            if call.method == .get {
                let size = min(max(call.query["pageSize"].flatMap { Int($0) } ?? 20, 1), 1000)
                let token = call.query["pageToken"]
                let stored = try await gateway.call { try await store.tenants(after: token, limit: size) }
                var policies = configured.filter { token == nil || $0 > token! }.compactMap(tenants.configured)
                policies += stored.map(tenants.policy)
                policies.sort { $0.tenantID < $1.tenantID }
                let page = Array(policies.prefix(size))
                return TenantListResponse(
                    tenants: page.map { TenantResponse($0, project: projectID) },
                    nextPageToken: page.count >= size ? page.last?.tenantID : nil)
            }
            let id = TenantRequest.newID(displayName: fields.displayName)
            var record = TenantRecord(tenantID: id, displayName: fields.displayName, createdAt: clock.now)
            fields.apply(to: &record, mask: nil)
            _ = try record.passwordPolicyConfig?.settings()
            try await gateway.call { try await store.save(record) }
            return TenantListResponse.single(TenantResponse(tenants.policy(record), project: projectID))
        }

        // The project's configuration as Firebase's v2 API shows it; it comes from the
        // configuration file (`users.*`), so no request changes it.
        let users = services.settings.users
        add("config", on: .path, methods: [.get, .patch], requires: [.admin], body: EmptyRequest.self) { _, call throws(ActionError) in
            guard call.method == .get else { throw ProjectSettingsResponse.readOnly }
            return ProjectSettingsResponse(
                allowDuplicateEmails: !users.oneAccountPerEmail, improvedEmailPrivacy: users.emailEnumerationProtection,
                withBlockingFunctions: true)
        }

        add("tenant", on: .path, methods: [.get, .patch, .delete], requires: [.admin], body: TenantRequest.self) {
            fields, call throws(ActionError) in
            guard let id = call.parameters["tenantID"] else { throw ActionError(.tenantNotFound) }
            if tenants.isConfigured(id) {
                guard call.method == .get else {
                    throw ActionError.invalidArgument("the tenant '\(id)' is defined in the configuration; change it there")
                }
                return TenantListResponse.single(TenantResponse(try await tenants.policy(for: id), project: projectID))
            }
            guard var record = try await gateway.call({ try await store.tenant(id: id) }) else {
                throw ActionError(.tenantNotFound, "There is no tenant with this ID.")
            }
            switch call.method {
            case .delete:
                try await gateway.call { try await store.deleteTenant(id: id) }
                return TenantListResponse()
            case .patch:
                let mask = call.query["updateMask"].map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }
                fields.apply(to: &record, mask: mask?.isEmpty == true ? nil : mask)
                _ = try record.passwordPolicyConfig?.settings()
                try await gateway.call { try await store.save(record) }
                fallthrough
            default:
                return TenantListResponse.single(TenantResponse(tenants.policy(record), project: projectID))
            }
        }
    }
}

/// A tenant's fields, as the v2 API takes them.
struct TenantRequest: Decodable, Sendable {
    var displayName: String?
    var allowPasswordSignup: LenientBool?
    var enableEmailLinkSignin: LenientBool?
    var enableAnonymousUser: LenientBool?
    var disableAuth: LenientBool?
    /// The tenant's own password policy (checked before it is saved: ``PasswordPolicyConfig/settings()``).
    var passwordPolicyConfig: PasswordPolicyConfig?

    /// Copies the fields named in `mask` (all of them, with Firebase production's defaults for
    /// those not given, when there is no mask). The password policy is replaced whole when the
    /// mask names `passwordPolicyConfig`, and field by field when it names its fields
    /// (`passwordPolicyConfig.passwordPolicyEnforcementState`, as firebase-admin's masks do).
    func apply(to record: inout TenantRecord, mask: [String]?) {
        func wanted(_ name: String) -> Bool { mask?.contains(name) ?? true }
        applyPasswordPolicy(to: &record, mask: mask)
        if wanted("displayName"), mask == nil || displayName != nil { record.displayName = displayName }
        if wanted("allowPasswordSignup"), mask == nil || allowPasswordSignup != nil {
            record.allowPasswordSignup = allowPasswordSignup?.value ?? false
        }
        if wanted("enableEmailLinkSignin"), mask == nil || enableEmailLinkSignin != nil {
            record.enableEmailLinkSignin = enableEmailLinkSignin?.value ?? false
        }
        if wanted("enableAnonymousUser"), mask == nil || enableAnonymousUser != nil {
            record.enableAnonymousUser = enableAnonymousUser?.value ?? false
        }
        if wanted("disableAuth"), mask == nil || disableAuth != nil { record.disableAuth = disableAuth?.value ?? false }
    }

    private func applyPasswordPolicy(to record: inout TenantRecord, mask: [String]?) {
        let prefix = "passwordPolicyConfig."
        guard let mask, !mask.contains("passwordPolicyConfig") else {
            record.passwordPolicyConfig = passwordPolicyConfig
            return
        }
        let fields = mask.filter { $0.hasPrefix(prefix) }.map { $0.dropFirst(prefix.count) }
        guard !fields.isEmpty else { return }
        var config = record.passwordPolicyConfig ?? PasswordPolicyConfig()
        let given = passwordPolicyConfig ?? PasswordPolicyConfig()
        for field in fields {
            switch field {
            case "passwordPolicyEnforcementState": config.passwordPolicyEnforcementState = given.passwordPolicyEnforcementState
            case "passwordPolicyVersions": config.passwordPolicyVersions = given.passwordPolicyVersions
            case "forceUpgradeOnSignin": config.forceUpgradeOnSignin = given.forceUpgradeOnSignin
            default: continue
            }
        }
        record.passwordPolicyConfig = config
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

/// A tenant as the v2 API shows it.
struct TenantResponse: Encodable, Sendable {
    struct MFAConfig: Encodable, Sendable {
        var state = "DISABLED"
        var enabledProviders: [String] = []
    }
    var name: String
    var tenantId: String
    var displayName: String?
    var allowPasswordSignup: Bool
    var enableEmailLinkSignin: Bool
    var enableAnonymousUser: Bool
    var disableAuth: Bool
    var mfaConfig = MFAConfig()
    /// The tenant's own password policy (none when it has the project's).
    var passwordPolicyConfig: PasswordPolicyConfig?

    init(_ policy: TenantPolicy, project: String) {
        name = "projects/\(project)/tenants/\(policy.tenantID)"
        tenantId = policy.tenantID
        displayName = policy.displayName
        allowPasswordSignup = policy.allowPasswordSignup
        enableEmailLinkSignin = policy.enableEmailLinkSignin
        enableAnonymousUser = policy.enableAnonymousUser
        disableAuth = policy.disableAuth
        passwordPolicyConfig = policy.passwordPolicyConfig
    }
}

/// A tenant, a page of tenants, or nothing (a deletion): the v2 API's answers.
struct TenantListResponse: Encodable, Sendable {
    var tenants: [TenantResponse]?
    var nextPageToken: String?
    var one: TenantResponse?

    static func single(_ tenant: TenantResponse) -> TenantListResponse { TenantListResponse(one: tenant) }

    func encode(to encoder: any Encoder) throws {
        if let one {
            try one.encode(to: encoder)
            return
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(tenants, forKey: .tenants)
        try container.encodeIfPresent(nextPageToken, forKey: .nextPageToken)
    }

    enum CodingKeys: String, CodingKey { case tenants, nextPageToken }
}

/// The project's configuration (`GET /v2/projects/<p>/config`, and the emulator's
/// `/emulator/v1/projects/<p>/config` without `blockingFunctions`).
struct ProjectSettingsResponse: Encodable, Sendable {
    struct SignIn: Encodable, Sendable { var allowDuplicateEmails: Bool }
    struct EmailPrivacy: Encodable, Sendable { var enableImprovedEmailPrivacy: Bool }
    /// This server has no blocking functions: always `{}`.
    struct BlockingFunctions: Encodable, Sendable {}
    var signIn: SignIn
    var blockingFunctions: BlockingFunctions?
    var emailPrivacyConfig: EmailPrivacy

    init(allowDuplicateEmails: Bool, improvedEmailPrivacy: Bool, withBlockingFunctions: Bool) {
        signIn = SignIn(allowDuplicateEmails: allowDuplicateEmails)
        blockingFunctions = withBlockingFunctions ? BlockingFunctions() : nil
        emailPrivacyConfig = EmailPrivacy(enableImprovedEmailPrivacy: improvedEmailPrivacy)
    }

    /// What a change of it answers.
    static let readOnly = ActionError.notImplemented(
        "the project's configuration is read from the configuration file (users.oneAccountPerEmail, users.emailEnumerationProtection); change it there"
    )
}
