import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksHeaders
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The paths of Google's REST APIs that lead to ``IdentityToolkitAPI``:
///
/// - `/v1/accounts:<op>` and `/v1/projects/<p>[/tenants/<t>]/accounts[:<op>]`, also under
///   `/identitytoolkit.googleapis.com/v1/` (the host as a path, as Firebase's emulator serves it);
/// - `/v1/signInCodes:<op>` (this server's own: a sign-in code exchanged for its link), under both;
/// - `/v1/projects/<p>[/tenants/<t>]:createSessionCookie`, `/v1/projects/<p>:queryAccounts`;
/// - `GET /v1/projects` (the project's configuration);
/// - `/v1/token` and `/securetoken.googleapis.com/v1/token` (refresh);
/// - `/v2/projects/<p>/tenants[/<t>]` (tenants), `/v2/projects/<p>/config` (read only) and
///   `GET /v2/passwordPolicy` (the project's or a tenant's password policy), and
///   `/v2/accounts/mfaEnrollment:<op>` and `/v2/accounts/mfaSignIn:<op>` (second factors);
/// - on a development server, `/www.googleapis.com/identitytoolkit/v3/relyingparty/<legacy name>`,
///   the names the iOS SDK (and others) still call.
struct IdentityToolkitRoutes {
    static let prefixes = ["/v1", "/identitytoolkit.googleapis.com/v1"]
    static let tenantPrefixes = ["/v2", "/identitytoolkit.googleapis.com/v2"]
    static let tokenPaths = ["/v1/token", "/securetoken.googleapis.com/v1/token"]
    static let legacyPrefix = "/www.googleapis.com/identitytoolkit/v3/relyingparty"

    /// Every path prefix the API answers under (for the metrics label and Firebase's `NOT_FOUND`).
    static let allPrefixes = prefixes + tenantPrefixes + ["/securetoken.googleapis.com", "/www.googleapis.com"]

    let api: IdentityToolkitAPI
    let settings: ServiceSettings
    let origins: WebOrigins
    let accessTokens: ServiceAccountTokens

    /// A collection of REST routes with what every REST surface puts before them: CORS for the
    /// web origins, `gate` (this server's API gate, when the surface's accounts are its own), and
    /// the body-size limit.
    static func collection(
        settings: ServiceSettings, origins: WebOrigins, gate: APIAuthenticationMiddleware?
    ) -> RouteCollection<ServerRequestContext> {
        let collection = RouteCollection(context: ServerRequestContext.self)
        collection.add(middleware: APICORSMiddleware(origins: origins))
        if let gate { collection.add(middleware: gate) }
        collection.add(middleware: RequestBodyLimitMiddleware(maximumBytes: settings.server.maximumBodyBytes))
        return collection
    }

    /// Adds the API's routes to `router`.
    func add(to router: Router<ServerRequestContext>) {
        let collection = Self.collection(
            settings: settings, origins: origins,
            gate: APIAuthenticationMiddleware(settings: settings, origins: origins, accessTokens: accessTokens))
        for prefix in Self.prefixes {
            route(collection, "\(prefix)/accounts:{operation}")
            route(collection, "\(prefix)/signInCodes:{operation}") { (.signInCodes, $0.get("operation") ?? "") }
            route(collection, "\(prefix)/projects/{project}/accounts:{operation}")
            route(collection, "\(prefix)/projects/{project}/accounts") { _ in (.accounts, "signUp") }
            route(collection, "\(prefix)/projects/{project}/tenants/{tenant}/accounts:{operation}")
            route(collection, "\(prefix)/projects/{project}/tenants/{tenant}/accounts") { _ in (.accounts, "signUp") }
            // `projects/<p>:createSessionCookie`: the operation follows the project after a colon.
            route(collection, "\(prefix)/projects/{project}") { (.project, $0.operationAfterColon("project")) }
            route(collection, "\(prefix)/projects/{project}/tenants/{tenant}") { (.project, $0.operationAfterColon("tenant")) }
            route(collection, "\(prefix)/projects") { _ in (.path, "projects") }
        }
        for prefix in Self.tenantPrefixes {
            route(collection, "\(prefix)/projects/{project}/tenants") { _ in (.path, "tenants") }
            route(collection, "\(prefix)/projects/{project}/tenants/{tenantID}") { _ in (.path, "tenant") }
            route(collection, "\(prefix)/projects/{project}/config") { _ in (.path, "config") }
            route(collection, "\(prefix)/passwordPolicy") { _ in (.path, "passwordPolicy") }
            route(collection, "\(prefix)/accounts/mfaEnrollment:{operation}") { (.path, "mfaEnrollment:" + ($0.get("operation") ?? "")) }
            route(collection, "\(prefix)/accounts/mfaSignIn:{operation}") { (.path, "mfaSignIn:" + ($0.get("operation") ?? "")) }
        }
        for path in Self.tokenPaths { route(collection, RouterPath(path)) { _ in (.path, "token") } }
        if settings.server.development {
            route(collection, "\(Self.legacyPrefix)/{legacy}") { [api] parameters in
                let legacy = parameters.get("legacy") ?? ""
                guard let key = api.legacy(legacy) else { return (.accounts, "legacy:" + legacy) }
                return (key.surface, key.name)
            }
        }
        router.addRoutes(collection)
    }

    /// Routes every method of `path` to the operation `name` picks from the path's parameters
    /// (by default the `{operation}` capture, an `accounts:` operation).
    private func route(
        _ collection: RouteCollection<ServerRequestContext>, _ path: RouterPath,
        name: @escaping @Sendable (inout ResolvedParameters) -> (IdentityToolkitAPI.Surface, String) = {
            (.accounts, $0.get("operation") ?? "")
        }
    ) {
        let api = api
        for method in LinkDomainRouter.otherMethods {
            collection.on(path, method: method) { request, context in
                if request.method == .options { return APICORSMiddleware.preflight(request, allowed: true) }
                guard let caller = context.caller else { throw ActionError(.unauthenticated) }
                var isForm = false
                var declaresJSON = false
                if let type = request.headers[.contentType].flatMap({ MediaType($0) }) {
                    isForm = type.matches("application", "x-www-form-urlencoded")
                    declaresJSON = type.matches("application", "json")
                    guard isForm || declaresJSON else {
                        throw ActionError(.invalidContentType, "expected Content-Type: application/json")
                    }
                }
                var parameters = ResolvedParameters(context.parameters)
                let (surface, operation) = name(&parameters)
                var query: [String: String] = [:]
                for (key, value) in request.uri.queryParameters { query[String(key)] = String(value) }
                var apiKey: String?
                if case .client(let key) = caller { apiKey = key }
                let who = Caller(
                    isAdmin: caller == .admin, pathTenant: parameters.tenant, clientAddress: context.clientAddress,
                    locale: request.firebaseLocale, apiKey: apiKey)
                let call = RESTCall(
                    caller: who, namesProject: parameters.project != nil, body: context.body, query: query, parameters: parameters.values,
                    method: request.method, isForm: isForm, declaresJSON: declaresJSON)
                return RESTAPIResponse.json(try await api.perform(operation, on: surface, call: call))
            }
        }
    }
}

/// The path parameters of a call: the project, the tenant and the operation.
struct ResolvedParameters {
    var values: [String: String]

    init(_ parameters: Parameters) {
        values = [:]
        for (key, value) in parameters { values[String(key)] = String(value) }
    }

    func get(_ name: String) -> String? { values[name] }

    var project: String? { values["project"] }
    var tenant: String? { values["tenant"] }

    /// Splits `<id>:<operation>` in the parameter `name` into the ID (kept as `name`) and the
    /// operation (`projects/<p>:createSessionCookie`).
    mutating func operationAfterColon(_ name: String) -> String {
        guard let value = values[name], let colon = value.firstIndex(of: ":") else { return "" }
        values[name] = String(value[..<colon])
        return String(value[value.index(after: colon)...])
    }
}

/// The REST API's answers.
enum RESTAPIResponse {
    /// JSON, never cached; ``APICORSMiddleware`` adds CORS headers for an allowed origin.
    static let headers: HTTPFields = [
        .contentType: "application/json; charset=utf-8", .cacheControl: "no-store", .xContentTypeOptions: "nosniff",
    ]

    /// A JSON answer, 200.
    static func json(_ body: Data) -> Response {
        Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
