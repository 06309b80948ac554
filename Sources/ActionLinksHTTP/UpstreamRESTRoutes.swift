import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksHeaders
import Foundation
import Hummingbird
import NIOFoundationCompat

/// The REST paths in upstream mode: `accounts:sendOobCode` (``CodeIssuer``, whose codes are the
/// project's: ``UpstreamCodeSource``), this server's own `signInCodes:exchange` (the code in a
/// sign-in mail it sent; the app then completes `signInWithEmailLink` with Google, which issued
/// the link's code), and for every other path of
/// Google's APIs a 404 that says where the SDKs go instead; never a silent half of an emulator. A
/// client's API key must be one of the project's; the admin credential is this server's (the admin
/// token, or an access token it granted).
struct UpstreamRESTRoutes {
    let issuer: CodeIssuer
    /// The project this server fronts.
    let upstream: UpstreamSettings
    /// The front's own policy (email-enumeration protection), for the project and each tenant:
    /// the tenants themselves are the project's, and upstream checks them.
    let tenants: TenantDirectory
    let settings: ServiceSettings
    let origins: WebOrigins
    let accessTokens: ServiceAccountTokens

    func add(to router: Router<ServerRequestContext>) {
        // No API gate: the front checks the caller itself (``caller(_:namesProject:)``).
        let collection = IdentityToolkitRoutes.collection(settings: settings, origins: origins, gate: nil)
        for prefix in IdentityToolkitRoutes.prefixes {
            route(collection, "\(prefix)/accounts:{operation}")
            route(collection, "\(prefix)/signInCodes:{operation}", answers: "exchange")
            route(collection, "\(prefix)/projects/{project}/accounts:{operation}")
            route(collection, "\(prefix)/projects/{project}/tenants/{tenant}/accounts:{operation}")
            for other in ["accounts", "tenants/{tenant}/accounts", "", "tenants/{tenant}"] {
                route(collection, RouterPath("\(prefix)/projects/{project}" + (other.isEmpty ? "" : "/" + other)))
            }
            route(collection, "\(prefix)/projects")
        }
        for prefix in IdentityToolkitRoutes.tenantPrefixes {
            route(collection, "\(prefix)/projects/{project}/**")
        }
        for path in IdentityToolkitRoutes.tokenPaths { route(collection, RouterPath(path)) }
        route(collection, "\(IdentityToolkitRoutes.legacyPrefix)/{legacy}")
        router.addRoutes(collection)
    }

    /// `path`'s routes: `answers` (`sendOobCode` under `accounts:`, `exchange` under
    /// `signInCodes:`) for a POST to this project, a 404 that says where the SDKs go otherwise.
    private func route(_ collection: RouteCollection<ServerRequestContext>, _ path: RouterPath, answers: String = "sendOobCode") {
        let routes = self
        for method in LinkDomainRouter.otherMethods {
            collection.on(path, method: method) { request, context in
                if request.method == .options { return APICORSMiddleware.preflight(request, allowed: true) }
                let operation = context.parameters.get("operation") ?? ""
                let project = context.parameters.get("project")
                guard request.method == .post, operation == answers,
                    project == nil || project == routes.upstream.projectID
                else {
                    throw ActionError(
                        .notFound,
                        "NOT_FOUND : this link domain fronts project \(routes.upstream.projectID); the SDKs call Firebase directly"
                    )
                }
                var caller = try routes.caller(request, namesProject: project != nil)
                caller.pathTenant = context.parameters.get("tenant")
                caller.clientAddress = context.clientAddress
                caller.locale = request.firebaseLocale
                // The SDKs and firebase-admin send JSON; a form or text/plain body is what a page
                // on another site can send without a CORS preflight.
                guard let type = request.headers[.contentType].flatMap({ MediaType($0) }), type.matches("application", "json") else {
                    throw ActionError(.invalidContentType, "expected Content-Type: application/json")
                }
                if answers == "exchange" {
                    let fields: SignInCodeExchangeRequest = try Self.decoded(context.body, operation: "signInCodes:exchange")
                    let exchange = try await routes.issuer.signInCodes.exchange(
                        email: fields.email, code: fields.code, tenantID: try caller.tenantID(body: fields.tenantId),
                        clientAddress: caller.clientAddress)
                    let answer = SignInCodeExchangeResponse(emailLink: exchange.emailLink, email: exchange.email)
                    return RESTAPIResponse.json(IdentityToolkitJSON.encode(answer))
                }
                let fields: SendOobCodeRequest = try Self.decoded(context.body, operation: "accounts:sendOobCode")
                let tenant = routes.tenants.fronted(try caller.tenantID(body: fields.tenantId))
                let issued = try await routes.issuer.issue(fields.issueRequest, caller: caller, tenant: tenant)
                return RESTAPIResponse.json(
                    IdentityToolkitJSON.encode(SendOobCodeResponse(issued, returnLink: fields.returnOobLink?.value ?? false)))
            }
        }
    }

    /// The request's JSON body as `Body`, or `INVALID_JSON` naming the operation.
    private static func decoded<Body: Decodable>(_ body: ByteBuffer, operation: String) throws(ActionError) -> Body {
        do {
            return try IdentityToolkitJSON.decoder.decode(Body.self, from: Data(buffer: body))
        } catch {
            throw ActionError(.invalidJSON, "the body is not the JSON of \(operation)")
        }
    }

    /// The caller, with Firebase's rules as ``APIAuthenticationMiddleware`` applies them, but the
    /// project's own API keys.
    private func caller(_ request: Request, namesProject: Bool) throws(ActionError) -> Caller {
        if let authorization = request.headers[.authorization], let bearer = AuthorizationHeader(authorization)?.bearerToken {
            try APIAuthenticationMiddleware.requireAdmin(bearer: bearer, settings.server, accessTokens: accessTokens)
            if let origin = request.headers[.origin], !origins.allowsAPI(origin) {
                throw ActionError(
                    .insufficientPermission, "the admin credential is not accepted from a browser page on \(origin.prefix(100))")
            }
            return Caller(isAdmin: true)
        }
        let key = request.uri.queryParameters["key"].map(String.init) ?? request.headers[.googAPIKey]
        guard let key, !key.isEmpty else { throw ActionError(.permissionDenied, "The request is missing a valid API key.") }
        guard upstream.accepts(apiKey: key) else { throw ActionError(.invalidAPIKey) }
        if namesProject { throw ActionError(.insufficientPermission, "Only authenticated requests can specify target_project_id.") }
        return Caller(isAdmin: false, apiKey: key)
    }
}
