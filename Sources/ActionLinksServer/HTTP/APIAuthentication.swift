import ActionLinks
import ActionLinksConfiguration
import ActionLinksHeaders
import Hummingbird

/// Who is calling the REST API.
public enum APICaller: Sendable {
    /// The admin credential (`Authorization: Bearer owner` on a development server, else the admin token).
    case admin
    /// A client with the project's API key.
    case client
}

/// The REST API's gate, before any handler: the project in the path must be ours, the method
/// POST, and the caller the admin (a bearer token) or a client (the API key), whom it puts in the
/// context. A preflight passes untouched. A browser page on an origin we do not know never gets
/// to use the admin credential (on a developer's machine, `Bearer owner` would otherwise be one
/// fetch away).
struct APIAuthenticationMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let settings: ServiceSettings
    let origins: WebOrigins

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.method == .options { return try await next(request, context) }
        if let project = context.parameters.get("project"), project != settings.project.id {
            throw ActionError(.projectNotFound, "this server serves project '\(settings.project.id)', not '\(project.prefix(100))'")
        }
        guard request.method == .post else {
            throw ActionError(.notFound, "\(request.method) \(request.uri.path.prefix(200)) is not a method of this API")
        }
        let caller = try authenticate(request)
        if caller == .admin, let origin = request.headers[.origin], !origins.allowsAPI(origin) {
            throw ActionError(.insufficientPermission, "the admin credential is not accepted from a browser page on \(origin.prefix(100))")
        }
        var context = context
        context.caller = caller
        return try await next(request, context)
    }

    func authenticate(_ request: Request) throws(ActionError) -> APICaller {
        // A bearer token claims the admin credential and must be it; any other scheme (a browser's
        // `Basic`, say) is no claim at all, and the call is a client's.
        if let authorization = request.headers[.authorization], AuthorizationHeader(authorization)?.bearerToken != nil {
            guard Self.isAdmin(authorization, settings.server) else {
                throw ActionError(.unauthenticated, "Request had invalid authentication credentials.")
            }
            return .admin
        }
        let key = request.uri.queryParameters["key"].map(String.init) ?? request.headers[.googAPIKey]
        guard let key, !key.isEmpty else {
            throw ActionError(.permissionDenied, "The request is missing a valid API key (?key= or x-goog-api-key).")
        }
        guard ConstantTime.equal(Array(key.utf8), Array(settings.project.apiKey.utf8)) else {
            throw ActionError(.invalidAPIKey)
        }
        return .client
    }

    /// Whether an `Authorization` header carries the admin credential: `Bearer owner` on a development
    /// server, else `Bearer <server.adminToken>` (compared in constant time).
    static func isAdmin(_ authorization: String, _ settings: ServerSettings) -> Bool {
        guard let bearer = AuthorizationHeader(authorization)?.bearerToken else { return false }
        let token = Array(bearer.utf8)
        if settings.development, token == Array("owner".utf8) { return true }
        return settings.adminToken.map { ConstantTime.equal(token, Array($0.utf8)) } ?? false
    }
}
