import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksHeaders
import HTTPTypes
import Hummingbird
import HummingbirdCore

/// Who is calling the REST API.
public enum APICaller: Sendable, Equatable {
    /// The admin credential: Firebase's "privileged" request (`Authorization: Bearer owner` on a
    /// development server, else the admin token).
    case admin
    /// A client with one of the project's API keys (on a development server, any key): the key it
    /// sent, which the links it asks for carry.
    case client(apiKey: String)
}

/// The REST API's gate, before any handler, with Firebase's rules: a project in the path must be
/// ours; a `Bearer` token (scheme and, on a development server, `owner` in any case) claims the
/// admin credential and must be it (`401 UNAUTHENTICATED`); any other `Authorization` scheme (a
/// browser's `Basic`) is no claim at all; without the admin credential an API key is needed
/// (`403 PERMISSION_DENIED`), and on a production server it must be one of the project's with its
/// application restriction met (``check(key:headers:_:)``: Google's API front end's refusals). A
/// browser page on an origin we do not know never gets to use the admin credential (on a
/// developer's machine, `Bearer owner` would otherwise be one fetch away). A preflight passes
/// untouched.
struct APIAuthenticationMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let settings: ServiceSettings
    let origins: WebOrigins
    let accessTokens: ServiceAccountTokens

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.method == .options { return try await next(request, context) }
        var parameters = ResolvedParameters(context.parameters)
        _ = parameters.operationAfterColon("project")
        if let project = parameters.project, project != settings.project.id {
            throw ActionError(.projectNotFound, "this server serves project '\(settings.project.id)', not '\(project.prefix(100))'")
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
        try Self.caller(uri: request.uri, headers: request.headers, settings, accessTokens: accessTokens)
    }

    /// Who calls with a request to `uri` with `headers`: the admin (a `Bearer` token must be the
    /// admin credential), or a client with an API key this server takes; else the refusal.
    static func caller(uri: URI, headers: HTTPFields, _ settings: ServiceSettings, accessTokens: ServiceAccountTokens) throws(ActionError)
        -> APICaller
    {
        if let authorization = headers[.authorization], let bearer = AuthorizationHeader(authorization)?.bearerToken {
            try requireAdmin(bearer: bearer, settings.server, accessTokens: accessTokens)
            return .admin
        }
        guard let key = clientKey(uri: uri, headers: headers), !key.isEmpty else {
            throw ActionError(.permissionDenied, "The request is missing a valid API key.")
        }
        try check(key: key, headers: headers, settings)
        return .client(apiKey: key)
    }

    /// A client's API key: the query's `key`, else the `X-Goog-Api-Key` header.
    static func clientKey(uri: URI, headers: HTTPFields) -> String? {
        uri.queryParameters["key"].map(String.init) ?? headers[.googAPIKey]
    }

    /// Whether this server takes a client's API key with the request's `headers`
    /// (``check(key:headers:_:)`` without its error).
    static func accepts(key: String, headers: HTTPFields, _ settings: ServiceSettings) -> Bool {
        (try? check(key: key, headers: headers, settings)) != nil
    }

    /// Takes a client's API key as Google's API front end does, or throws its refusal: Firebase's
    /// emulator (a development server) takes any key; production only one of the project's
    /// (compared in constant time; else `400 API key not valid`, ErrorInfo `API_KEY_INVALID`), and a
    /// restricted one only from a request that satisfies its restriction (else `403
    /// PERMISSION_DENIED` with Google's message and ErrorInfo: `API_KEY_IOS_APP_BLOCKED`,
    /// `API_KEY_ANDROID_APP_BLOCKED` or `API_KEY_HTTP_REFERRER_BLOCKED`).
    static func check(key: String, headers: HTTPFields, _ settings: ServiceSettings) throws(ActionError) {
        if settings.server.development { return }
        guard let found = settings.project.apiKey(matching: key) else { throw ActionError(.invalidAPIKey) }
        guard found.isRestricted else { return }
        let client = APIKey.Client { name in HTTPField.Name(name).flatMap { headers[$0] } }
        guard !found.admits(client) else { return }
        throw blocked(found.restriction, client, projectID: settings.project.id)
    }

    /// Google's 403 for a request that does not satisfy its key's restriction: the value the
    /// request sent, or `<empty>`, in Google's sentence, and the ErrorInfo naming the restriction
    /// (the `consumer` is `projects/<number>` at Google; this server has no project number and names
    /// the project's ID).
    static func blocked(_ restriction: APIKey.Restriction, _ client: APIKey.Client, projectID: String) -> ActionError {
        func shown(_ value: String?) -> String { value.flatMap { $0.isEmpty ? nil : String($0.prefix(200)) } ?? "<empty>" }
        var metadata = ["service": ActionError.ErrorInfo.service, "consumer": "projects/" + projectID]
        let message: String
        let reason: String
        switch restriction {
        case .iosApps:
            message = "Requests from this iOS client application \(shown(client.iosBundleID)) are blocked."
            reason = "API_KEY_IOS_APP_BLOCKED"
        case .androidApps:
            message = "Requests from this Android client application \(shown(client.androidPackage)) are blocked."
            reason = "API_KEY_ANDROID_APP_BLOCKED"
        case .httpReferrers, .none:
            message = "Requests from referer \(shown(client.referrer)) are blocked."
            reason = "API_KEY_HTTP_REFERRER_BLOCKED"
            metadata["httpReferrer"] = shown(client.referrer)
        }
        return ActionError(.permissionDenied, message, errorInfo: .init(reason: reason, metadata: metadata))
    }

    /// Nothing if a bearer token is the admin credential, else Google's refusal: an access token
    /// asked for without a scope Identity Toolkit takes gets `403` "insufficient authentication
    /// scopes", anything else `401 UNAUTHENTICATED`.
    static func requireAdmin(bearer: String, _ settings: ServerSettings, accessTokens: ServiceAccountTokens) throws(ActionError) {
        if isAdmin(bearer: bearer, settings, accessTokens: accessTokens) { return }
        if accessTokens.standing(of: bearer) == .insufficientScope {
            throw ActionError(.permissionDenied, "Request had insufficient authentication scopes.")
        }
        throw ActionError(
            .unauthenticated,
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."
        )
    }

    /// Whether an `Authorization` header carries the admin credential.
    static func isAdmin(_ authorization: String, _ settings: ServerSettings, accessTokens: ServiceAccountTokens) -> Bool {
        guard let bearer = AuthorizationHeader(authorization)?.bearerToken else { return false }
        return isAdmin(bearer: bearer, settings, accessTokens: accessTokens)
    }

    /// Whether a bearer token is the admin credential: on a development server `owner` (any case)
    /// or a Google service-account access token (`ya29.…`), as Firebase's emulator takes them; an
    /// unexpired access token this server granted with an admin scope, for a key it still has
    /// (``ServiceAccountTokens``); else
    /// `server.adminToken` (compared in constant time).
    static func isAdmin(bearer: String, _ settings: ServerSettings, accessTokens: ServiceAccountTokens) -> Bool {
        if settings.development, bearer.lowercased() == "owner" || bearer.hasPrefix("ya29.") { return true }
        if accessTokens.standing(of: bearer) == .admin { return true }
        return settings.adminToken.map { ConstantTime.equal(Array(bearer.utf8), Array($0.utf8)) } ?? false
    }
}
