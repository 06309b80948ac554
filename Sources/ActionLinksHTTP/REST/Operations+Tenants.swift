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
            let created = try await tenants.create(displayName: fields.displayName, now: clock.now) { record throws(ActionError) in
                try fields.apply(to: &record, mask: nil)
            }
            return TenantListResponse.single(TenantResponse(created, project: projectID))
        }

        // The project's configuration as Firebase's v2 API shows it; it comes from the
        // configuration file (`users.*`, `mfa`), so no request changes it.
        let users = services.settings.users
        let multiFactor = tenants.project.multiFactor
        add("config", on: .path, methods: [.get, .patch], requires: [.admin], body: ProjectSettingsRequest.self) {
            fields, call throws(ActionError) in
            guard call.method == .get else {
                let mask = call.query["updateMask"]?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
                let touchesMFA = fields.hasMFA || mask.contains { $0 == "mfa" || $0.hasPrefix("mfa.") }
                throw touchesMFA ? ProjectSettingsResponse.multiFactorReadOnly : ProjectSettingsResponse.readOnly
            }
            return ProjectSettingsResponse(
                allowDuplicateEmails: !users.oneAccountPerEmail, improvedEmailPrivacy: users.emailEnumerationProtection,
                withBlockingFunctions: true, multiFactor: multiFactor)
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
                let updated = try await tenants.update(id) { record throws(ActionError) in
                    try fields.apply(to: &record, mask: mask?.isEmpty == true ? nil : mask)
                }
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
    /// The tenant's multi-factor settings (checked when applied: ``MultiFactorConfigRequest/applied(to:fields:)``).
    var mfaConfig: MultiFactorConfigRequest?

    /// Copies the fields named in `mask` (all of them, with Firebase production's defaults for
    /// those not given, when there is no mask). The password policy is replaced whole when the
    /// mask names `passwordPolicyConfig`, and field by field when it names its fields
    /// (`passwordPolicyConfig.passwordPolicyEnforcementState`, as firebase-admin's masks do); the
    /// multi-factor settings likewise (`mfaConfig`, or `mfaConfig.state`, `mfaConfig.enabledProviders`,
    /// `mfaConfig.providerConfigs`), `INVALID_ARGUMENT` when those it copies are not valid.
    func apply(to record: inout TenantRecord, mask: [String]?) throws(ActionError) {
        func wanted(_ name: String) -> Bool { mask?.contains(name) ?? true }
        try applyMultiFactor(to: &record, mask: mask)
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

    private func applyMultiFactor(to record: inout TenantRecord, mask: [String]?) throws(ActionError) {
        guard let mask, !mask.contains("mfaConfig") else {
            record.multiFactor = try mfaConfig?.applied(to: nil, fields: nil)
            return
        }
        let fields = Set(mask.filter { MultiFactorConfigRequest.fields.contains($0) })
        guard !fields.isEmpty else { return }
        record.multiFactor = try (mfaConfig ?? MultiFactorConfigRequest()).applied(to: record.multiFactor, fields: fields)
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
    var name: String
    var tenantId: String
    var displayName: String?
    var allowPasswordSignup: Bool
    var enableEmailLinkSignin: Bool
    var enableAnonymousUser: Bool
    var disableAuth: Bool
    /// Always there, with `enabledProviders: []` (this server has no SMS factors).
    var mfaConfig: MultiFactorConfigResponse
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
        mfaConfig = MultiFactorConfigResponse(policy.multiFactor, enabledProviders: [])
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
    /// The project's multi-factor settings (`mfa` in the configuration file): `{state}` at least,
    /// with the TOTP provider's entry when it is configured; not shown by the emulator's endpoint.
    var mfa: MultiFactorConfigResponse?

    init(allowDuplicateEmails: Bool, improvedEmailPrivacy: Bool, withBlockingFunctions: Bool, multiFactor: MultiFactorPolicy? = nil) {
        signIn = SignIn(allowDuplicateEmails: allowDuplicateEmails)
        blockingFunctions = withBlockingFunctions ? BlockingFunctions() : nil
        emailPrivacyConfig = EmailPrivacy(enableImprovedEmailPrivacy: improvedEmailPrivacy)
        mfa = multiFactor.map { MultiFactorConfigResponse($0, enabledProviders: nil) }
    }

    /// What a change of it answers.
    static let readOnly = ActionError.notImplemented(
        "the project's configuration is read from the configuration file (users.oneAccountPerEmail, users.emailEnumerationProtection); change it there"
    )
}

extension ProjectSettingsResponse {
    /// What a change of its `mfa` answers: the keys of the configuration file that set it.
    static let multiFactorReadOnly = ActionError.notImplemented(
        "the project's multi-factor configuration is read from the configuration file (\(MultiFactorSettings.fileKeys)); change it there"
    )
}

/// What a change of the project's configuration sends: only whether it touches `mfa` matters (no
/// request changes the configuration, and the refusal names the keys to change instead).
struct ProjectSettingsRequest: Decodable, Sendable {
    /// Whether the body has `mfa`.
    var hasMFA = false

    /// Reads the body's member names; a body that is not an object touches nothing.
    init(from decoder: any Decoder) throws {
        let body = try? decoder.container(keyedBy: MultiFactorConfigRequest.AnyKey.self)
        hasMFA = body?.allKeys.contains { $0.stringValue == "mfa" } ?? false
    }
}

/// A tenant's `mfaConfig` as the v2 API takes it, as firebase-admin's `createTenant` and
/// `updateTenant` send it: `{state, enabledProviders, providerConfigs: [{state,
/// totpProviderConfig: {adjacentIntervals}}]}`. Its fields are read as they come and checked by
/// ``applied(to:fields:)``, with Google's and firebase-admin's rules.
struct MultiFactorConfigRequest: Decodable, Sendable {
    /// The TOTP provider's entry of `providerConfigs`.
    struct ProviderConfig: Decodable, Sendable {
        /// `state`, as sent.
        var state: String?
        /// `totpProviderConfig`; nil when not sent.
        var totpProviderConfig: TOTPProviderConfig?
        /// The keys other than `state` and `totpProviderConfig`.
        var otherKeys: [String] = []

        /// Reads the entry, keeping the names of members it does not know for the check.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            state = try container.decodeIfPresent(String.self, forKey: AnyKey("state"))
            totpProviderConfig = try container.decodeIfPresent(TOTPProviderConfig.self, forKey: AnyKey("totpProviderConfig"))
            otherKeys = container.allKeys.map(\.stringValue).filter { $0 != "state" && $0 != "totpProviderConfig" }.sorted()
        }
    }

    /// `totpProviderConfig`.
    struct TOTPProviderConfig: Decodable, Sendable {
        /// `adjacentIntervals`, when it is a JSON number.
        var adjacentIntervals: Double?
        /// Whether `adjacentIntervals` was sent as something other than a number.
        var adjacentIntervalsNotANumber = false
        /// The keys other than `adjacentIntervals`.
        var otherKeys: [String] = []

        /// Reads `adjacentIntervals` as any JSON value (a non-number is refused by the check) and
        /// keeps the names of the other members.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            let key = AnyKey("adjacentIntervals")
            if container.contains(key), !((try? container.decodeNil(forKey: key)) ?? false) {
                adjacentIntervals = try? container.decode(Double.self, forKey: key)
                adjacentIntervalsNotANumber = adjacentIntervals == nil
            }
            otherKeys = container.allKeys.map(\.stringValue).filter { $0 != "adjacentIntervals" }.sorted()
        }
    }

    /// Any member name.
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// The update-mask entries that name its fields (an array is a leaf of the mask).
    static let fields: Set<String> = ["mfaConfig.state", "mfaConfig.enabledProviders", "mfaConfig.providerConfigs"]

    /// `state`, as sent.
    var state: String?
    /// `enabledProviders`: `PHONE_SMS` is refused (this server has no SMS factors).
    var enabledProviders: [String]?
    /// `providerConfigs`: at most the TOTP provider's entry.
    var providerConfigs: [ProviderConfig]?

    /// Nothing sent.
    init() {}

    /// `current` (the tenant's settings, nil for none) with the fields named by `fields` (of
    /// ``fields``; every field when nil, the whole configuration then replaced) checked and
    /// copied; a field named but not sent is its default (`DISABLED`, no providers).
    func applied(to current: MultiFactorPolicy?, fields: Set<String>?) throws(ActionError) -> MultiFactorPolicy {
        func wanted(_ name: String) -> Bool { fields?.contains("mfaConfig." + name) ?? true }
        var policy = (fields == nil ? nil : current) ?? .disabled
        if wanted("state") { policy.state = try Self.state(state, field: "mfaConfig.state") ?? .disabled }
        if wanted("enabledProviders") {
            for provider in enabledProviders ?? [] where provider != "PROVIDER_UNSPECIFIED" {
                guard provider != "PHONE_SMS" else {
                    throw ActionError.invalidArgument(
                        "mfaConfig.enabledProviders: PHONE_SMS is not available: this server has no SMS second factors; enable authenticator apps with a providerConfigs entry with totpProviderConfig"
                    )
                }
                throw ActionError.invalidArgument("mfaConfig.enabledProviders: unknown provider '\(provider.prefix(64))'")
            }
        }
        if wanted("providerConfigs") {
            let configs = providerConfigs ?? []
            guard configs.count <= 1 else {
                throw ActionError.invalidArgument(
                    "mfaConfig.providerConfigs has at most one entry, the TOTP provider's; got \(configs.count)")
            }
            policy.totpState = nil
            policy.adjacentIntervals = nil
            if let config = configs.first {
                let field = "mfaConfig.providerConfigs[0]"
                if let other = config.otherKeys.first {
                    throw ActionError.invalidArgument(
                        "\(field) takes only state and totpProviderConfig; got '\(other.prefix(64))'")
                }
                guard let state = try Self.state(config.state, field: field + ".state") else {
                    throw ActionError.invalidArgument("\(field).state is required: ENABLED, DISABLED or MANDATORY")
                }
                guard let totp = config.totpProviderConfig else {
                    throw ActionError.invalidArgument("\(field).totpProviderConfig is required (it may be {})")
                }
                if let other = totp.otherKeys.first {
                    throw ActionError.invalidArgument(
                        "\(field).totpProviderConfig takes only adjacentIntervals; got '\(other.prefix(64))'")
                }
                let intervals = totp.adjacentIntervals
                if totp.adjacentIntervalsNotANumber || intervals.map({ !(0...10).contains($0) || $0.rounded() != $0 }) == true {
                    throw ActionError.invalidArgument(
                        "\(field).totpProviderConfig.adjacentIntervals must be a whole number from 0 to 10")
                }
                policy.totpState = state
                policy.adjacentIntervals = intervals.map { Int($0) }
            }
        }
        return policy
    }

    /// A state as sent: nil when not sent, `INVALID_ARGUMENT` naming `field` when not one of them.
    private static func state(_ text: String?, field: String) throws(ActionError) -> MultiFactorPolicy.State? {
        guard let text else { return nil }
        guard let state = MultiFactorPolicy.State(rawValue: text) else {
            throw ActionError.invalidArgument("\(field) must be ENABLED, DISABLED or MANDATORY; got '\(text.prefix(64))'")
        }
        return state
    }
}

/// Multi-factor settings as the v2 API shows them: a tenant's `mfaConfig`, the project's `mfa`.
/// `state` is always there (firebase-admin refuses a configuration without it), and the TOTP
/// provider's entry has `state` and `totpProviderConfig` (`{}` when `adjacentIntervals` was not
/// given: no default is filled in, as Google answers).
struct MultiFactorConfigResponse: Encodable, Sendable {
    /// An entry of `providerConfigs`.
    struct ProviderConfig: Encodable, Sendable {
        /// The provider's state.
        var state: String
        /// The TOTP provider's settings.
        var totpProviderConfig: TOTPProviderConfig
    }

    /// `totpProviderConfig`.
    struct TOTPProviderConfig: Encodable, Sendable {
        /// Left out when not given.
        var adjacentIntervals: Int?
    }

    /// `DISABLED`, `ENABLED` or `MANDATORY`.
    var state: String
    /// The SMS providers (a tenant's always `[]`; left out of the project's).
    var enabledProviders: [String]?
    /// The TOTP provider's entry, when there is one.
    var providerConfigs: [ProviderConfig]?

    /// `policy` as the API shows it.
    init(_ policy: MultiFactorPolicy, enabledProviders: [String]?) {
        state = policy.state.rawValue
        self.enabledProviders = enabledProviders
        providerConfigs = policy.totpState.map {
            [ProviderConfig(state: $0.rawValue, totpProviderConfig: TOTPProviderConfig(adjacentIntervals: policy.adjacentIntervals))]
        }
    }
}
