import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The Identity Toolkit REST operations this server answers, by their v1 names
/// (`accounts:<name>`), with the legacy v3 names SDKs still call (`relyingparty/<name>`). Each
/// surface of operations adds itself in its own file (`Operations+*.swift`): **a new endpoint is
/// one `add` there**, which declares what the call needs (``Requirement``) and gets it resolved.
struct IdentityToolkitAPI: Sendable {
    /// Where an operation's name appears in a path: an operation is reached only there, by its
    /// exact name (`POST /v1/accounts:token` is not the token endpoint).
    enum Surface: Sendable, Hashable {
        /// `accounts:<name>` (and `projects/<p>[/tenants/<t>]/accounts[:<name>]`).
        case accounts
        /// `projects/<p>[/tenants/<t>]:<name>`.
        case project
        /// A path of its own: `/v1/token`, `GET /v1/projects`, the v2 tenants and config.
        case path
        /// `signInCodes:<name>`: this server's own sign-in codes (``SignInCodes``).
        case signInCodes
    }

    /// What an operation needs before its handler runs; resolved once, by ``perform(_:on:call:)``.
    enum Requirement: Sendable, Hashable {
        /// The admin credential; without it Firebase's `INSUFFICIENT_PERMISSION`.
        case admin
        /// The call's tenant (the path's, else the body's `tenantId`; two that differ are
        /// `TENANT_ID_MISMATCH`), handed to the handler.
        case tenant
        /// As ``tenant``, and enabled: `PROJECT_DISABLED` before anything else is looked at.
        case enabledTenant
        /// Who the call acts for (``Acting``), for an operation a user makes with their ID token
        /// and the admin makes for anyone: for the admin, the call's enabled tenant (the ID
        /// token's tenant counted too when ``CarriesIDToken/adminCountsIDTokenTenant``); for a
        /// client, the user the body's `idToken` names, checked (``AccountService/user(idToken:caller:bodyTenant:allowDisabled:)``);
        /// a client without one hears `PROJECT_DISABLED`, then `MISSING_ID_TOKEN`.
        case user
        /// A body declared JSON (`Content-Type: application/json`), else `INVALID_CONTENT_TYPE`
        /// (415): a form, a text or an untyped body is what any web page can make its visitors'
        /// browsers send without a CORS preflight (for an operation worth guessing at).
        case jsonBody
    }

    /// Who an operation that ``Requirement/user`` acts for.
    enum Acting: Sendable {
        /// The admin, in the call's tenant (enabled).
        case admin(TenantPolicy)
        /// The user the ID token names.
        case user(AccountService.User)
    }

    /// One operation: the methods it takes, what it needs, and its handler.
    struct Operation: Sendable {
        var methods: Set<HTTPRequest.Method>
        var requires: Set<Requirement>
        var handle: @Sendable (RESTCall) async throws(ActionError) -> Data
    }

    struct Key: Hashable, Sendable {
        var surface: Surface
        var name: String
    }

    private(set) var operations: [Key: Operation] = [:]
    /// Legacy v3 name → the operation.
    private(set) var legacyNames: [String: Key] = [:]

    /// Adds an operation whose body decodes as `Body` and whose answer encodes from `Answer`.
    mutating func add<Body: Decodable & Sendable, Answer: Encodable & SendableMetatype>(
        _ name: String, on surface: Surface = .accounts, legacy: String? = nil, methods: Set<HTTPRequest.Method> = [.post],
        requires: Set<Requirement> = [], body: Body.Type,
        _ handler: @escaping @Sendable (Body, RESTCall) async throws(ActionError) -> Answer
    ) {
        precondition(requires.isDisjoint(with: [.tenant, .enabledTenant, .user]), "\(name): a handler that needs the tenant takes it")
        let key = Key(surface: surface, name: name)
        operations[key] = Operation(methods: methods, requires: requires) { call throws(ActionError) in
            IdentityToolkitJSON.encode(try await handler(try call.decode(Body.self), call))
        }
        if let legacy { legacyNames[legacy] = key }
    }

    /// Adds an operation that needs the call's tenant (``Requirement/tenant`` or
    /// ``Requirement/enabledTenant``), resolved from the path and the body's `tenantId` (``NamesTenant``),
    /// and handed to `handler`.
    mutating func add<Body: Decodable & Sendable & NamesTenant, Answer: Encodable & SendableMetatype>(
        _ name: String, on surface: Surface = .accounts, legacy: String? = nil, methods: Set<HTTPRequest.Method> = [.post],
        requires: Set<Requirement>, body: Body.Type,
        _ handler: @escaping @Sendable (Body, RESTCall, TenantPolicy) async throws(ActionError) -> Answer
    ) {
        precondition(!requires.isDisjoint(with: [.tenant, .enabledTenant]), "\(name): say which tenant it needs")
        let key = Key(surface: surface, name: name)
        operations[key] = Operation(methods: methods, requires: requires) { [tenants] call throws(ActionError) in
            let fields = try call.decode(Body.self)
            let tenant = try await call.tenant(body: fields.namedTenant(in: call), tenants: tenants)
            if requires.contains(.enabledTenant) { try tenant.checkEnabled() }
            return IdentityToolkitJSON.encode(try await handler(fields, call, tenant))
        }
        if let legacy { legacyNames[legacy] = key }
    }

    /// Adds an operation that acts for the ID token's user or the admin (``Requirement/user``),
    /// resolved from the body (``CarriesIDToken``) and the path, and handed to `handler`.
    mutating func add<Body: Decodable & Sendable & CarriesIDToken, Answer: Encodable & SendableMetatype>(
        _ name: String, on surface: Surface = .accounts, legacy: String? = nil, methods: Set<HTTPRequest.Method> = [.post],
        requires: Set<Requirement>, body: Body.Type,
        _ handler: @escaping @Sendable (Body, RESTCall, Acting) async throws(ActionError) -> Answer
    ) {
        precondition(requires.contains(.user) && requires.isDisjoint(with: [.tenant, .enabledTenant]), "\(name): say it acts for the user")
        let key = Key(surface: surface, name: name)
        operations[key] = Operation(methods: methods, requires: requires) { [accounts, tenants] call throws(ActionError) in
            let fields = try call.decode(Body.self)
            let acting: Acting
            if call.isAdmin {
                let tokenTenant = Body.adminCountsIDTokenTenant ? await accounts.tenant(ofIDToken: fields.idToken) : nil
                let tenant = try await call.tenant(body: fields.tenantId, token: tokenTenant, tenants: tenants)
                try tenant.checkEnabled()
                acting = .admin(tenant)
            } else if let idToken = fields.idToken {
                acting = .user(try await accounts.user(idToken: idToken, caller: call.caller, bodyTenant: fields.tenantId))
            } else {
                // Firebase answers PROJECT_DISABLED first.
                try await call.tenant(body: fields.tenantId, tenants: tenants).checkEnabled()
                throw ActionError(.missingIDToken)
            }
            return IdentityToolkitJSON.encode(try await handler(fields, call, acting))
        }
        if let legacy { legacyNames[legacy] = key }
    }

    /// The tenants, for the operations that need one.
    let tenants: TenantDirectory
    /// Who an ID token names, for the operations that act for a user.
    let accounts: AccountService

    /// Answers `name` on `surface` for `call`: Firebase's `NOT_FOUND` for an operation or method
    /// it does not have, and for a call that names the project (in the path, or as
    /// `targetProjectId` in the body) without the admin credential, Firebase's
    /// `INSUFFICIENT_PERMISSION`.
    func perform(_ name: String, on surface: Surface, call: RESTCall) async throws(ActionError) -> Data {
        guard let operation = operations[Key(surface: surface, name: name)], operation.methods.contains(call.method) else {
            throw ActionError(.notFound, "\(call.method.rawValue) \(name.prefix(100)) is not a method of this API")
        }
        let namesProject = call.namesProject || (call.mayNameTarget && (try? call.decode(ProjectTarget.self))?.targetProjectId != nil)
        if namesProject || operation.requires.contains(.admin), !call.isAdmin {
            throw ActionError(.insufficientPermission, "Only authenticated requests can specify target_project_id.")
        }
        if operation.requires.contains(.jsonBody), !call.declaresJSON {
            throw ActionError(.invalidContentType, "expected Content-Type: application/json")
        }
        return try await operation.handle(call)
    }

    /// The operation a legacy v3 name stands for.
    func legacy(_ name: String) -> Key? { legacyNames[name] }

    /// Every operation of the server.
    static func all(_ services: LinkDomainServices) -> IdentityToolkitAPI {
        var api = IdentityToolkitAPI(tenants: services.tenants, accounts: services.accounts)
        api.addOobCodeOperations(services)
        api.addSignInOperations(services)
        api.addAccountOperations(services)
        api.addImportOperations(services)
        api.addTenantOperations(services)
        api.addPasswordPolicyOperations()
        api.addFederatedOperations(services)
        api.addSignInCodeOperations(services)
        api.addSecondFactorOperations(services)
        return api
    }
}

/// A body that may name its tenant (`tenantId`).
protocol NamesTenant {
    var tenantId: String? { get }
    /// The tenant the call names besides the path's: the body's `tenantId` unless the operation
    /// reads it elsewhere too.
    func namedTenant(in call: RESTCall) -> String?
}

extension NamesTenant {
    func namedTenant(in call: RESTCall) -> String? { tenantId }
}

/// A body that may carry the caller's ID token and name a tenant (``IdentityToolkitAPI/Requirement/user``).
protocol CarriesIDToken {
    var idToken: String? { get }
    var tenantId: String? { get }
    /// Whether the admin's call is routed by the ID token's tenant too (when the token verifies).
    static var adminCountsIDTokenTenant: Bool { get }
}

extension CarriesIDToken {
    static var adminCountsIDTokenTenant: Bool { false }
}

/// The project a body names (`targetProjectId`, as the legacy admin calls send it).
struct ProjectTarget: Decodable, Sendable, PlainFormDecodable {
    var targetProjectId: String?

    init(plainForm fields: [String: String]) { targetProjectId = fields["targetProjectId"] }
}
