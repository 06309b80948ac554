import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import Foundation

/// Tenants, as the admin API v2 manages them (`projects/<p>/tenants[/<t>]`): what
/// `firebase-admin`'s tenant management calls. Tenants from the configuration are listed and read
/// here but changed only in the configuration.
extension IdentityToolkitAPI {
    mutating func addTenantOperations(_ services: LinkDomainServices) {
        let tenants = services.tenants
        let clock = services.clock
        let projectID = services.settings.project.id

        add("tenants", on: .path, methods: [.get, .post], requires: [.admin], body: TenantRequest.self) {
            fields, call throws(ActionError) in
            if call.method == .get {
                let page = try await tenants.page(after: call.query["pageToken"], pageSize: call.query["pageSize"].flatMap { Int($0) })
                return TenantListResponse(tenants: page.tenants.map { TenantResponse($0, project: projectID) }, nextPageToken: page.next)
            }
            let created = try await tenants.create(displayName: fields.displayName, now: clock.now) { fields.apply(to: &$0, mask: nil) }
            return TenantListResponse.single(TenantResponse(created, project: projectID))
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
            let id = call.parameters["tenantID"]
            switch call.method {
            case .delete:
                try await tenants.delete(id)
                return TenantListResponse()
            case .patch:
                let mask = call.query["updateMask"].map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }
                let updated = try await tenants.update(id) { fields.apply(to: &$0, mask: mask?.isEmpty == true ? nil : mask) }
                return TenantListResponse.single(TenantResponse(updated, project: projectID))
            default:
                return TenantListResponse.single(TenantResponse(try await tenants.administered(id), project: projectID))
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
