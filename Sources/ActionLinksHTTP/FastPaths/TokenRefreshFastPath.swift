import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksHeaders
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTPTypes

/// The SDKs' token refresh, answered from the event loop (``FastPathRoute``):
/// `POST /v1/token` (or `/securetoken.googleapis.com/v1/token`) with the API key and the form
/// `grant_type=refresh_token&refresh_token=…` (the web SDK) or the JSON
/// `{"grantType":"refresh_token","refreshToken":…}` (iOS, Android), the call every signed-in
/// client makes every hour. The request is read and checked on the event loop and answered below
/// the HTTP codec, instead of handing it to the router, the middleware and the async responder and
/// back. How depends on the account store:
///
/// - One that reads on the caller's thread (``ImmediateSessionLookup``, SQLite's): the session is
///   read synchronously (an indexed read of the WAL database, which never waits for a writer) and
///   the ID token signed on the event loop, at once; any refresh that needs more than a read and a
///   signature (no such session, a stored tenant, a refusal, `lastRefreshAt` to write) goes to the
///   route, so every error and every write is the route's.
/// - Any other (PostgreSQL's, whose reads cross a network): the route's own refresh
///   (``SignInService/refresh(grantType:refreshToken:)``) runs in a task, and its answer, tokens or
///   refusal, is written when it is done (``FastPathRoute/answersLater(_:)``).
///
/// The answer is the route's, made by the same code (``TokenResponse``, ``IdentityToolkitJSON``,
/// ``RESTAnswer``), with the same headers in the same order, `Date` as Hummingbird adds it, and the
/// request counted in the metrics as the route's. Everything else goes on to the router untouched,
/// with its body: other paths and methods; a request with `Origin` (CORS is the middleware's),
/// `Authorization` (the admin's), `Connection`, or a body that is neither a plain form nor JSON or
/// is over 8 KiB; a key the route would refuse (unknown, or restricted to apps or websites the
/// request's headers do not name: the route's own check decides); a grant type other than
/// `refresh_token` or no token. A request that arrives while an earlier one on the connection is
/// still with the router goes there too (pipelined answers stay in order).
///
/// Signing takes the event loop (or the task's thread) for one RSA signature (about 0.2 ms with
/// OpenSSL); a refresh on the router would spend that on a pool thread, plus the hops there and back.
package struct TokenRefreshFastPath: FastPathRoute {
    let signIn: SignInService
    /// The store's synchronous reads, or `nil` when the route's refresh runs in a task.
    let sessions: (any ImmediateSessionLookup)?
    let settings: ServiceSettings
    let projectID: String
    let logger: Logger

    package typealias Answer = RESTAnswer

    package func metricsRoute(for claim: String) -> ServerMetrics.Route { .api }

    /// The largest body the fast path reads (a refresh token's form is well under 1 KiB).
    package func maximumBody(for claim: String) -> Int? { min(8192, settings.server.maximumBodyBytes) }

    /// A refresh: `POST` to a token path, without `Origin` (CORS is the middleware's) or
    /// `Authorization` (the admin's). The claim is the path.
    package func claim(_ head: HTTPRequest) -> String? {
        let fields = head.headerFields
        guard head.method == .post, let path = head.path.flatMap({ FastPathTarget.path($0, in: IdentityToolkitRoutes.tokenPaths) }),
            !fields.contains(.origin),
            !fields.contains(.authorization)
        else { return nil }
        return path
    }

    package func answersLater(_ claim: String) -> Bool { sessions == nil }

    package func answer(_ claim: String, head: HTTPRequest, body: ByteBuffer) -> Answer? {
        guard let sessions, let refreshToken = refreshToken(head: head, body: body),
            let refreshed = signIn.refreshNow(refreshToken: refreshToken, sessions: sessions)
        else { return nil }
        return .ok(encode(refreshed))
    }

    package func start(
        _ claim: String, head: HTTPRequest, body: ByteBuffer, peer: String?,
        reply: @escaping @Sendable (@escaping @Sendable () -> Answer) -> Void
    ) -> Bool {
        guard sessions == nil, let refreshToken = refreshToken(head: head, body: body) else { return false }
        let (signIn, logger) = (signIn, logger)
        Task {
            do throws(ActionError) {
                let refreshed = try await signIn.refresh(grantType: "refresh_token", refreshToken: refreshToken)
                reply { .ok(encode(refreshed)) }
            } catch {
                reply { .refusal(error, route: claim, logger: logger) }
            }
        }
        return true
    }

    package func status(of answer: Answer) -> Int { answer.status }

    package func encoded(_ answer: Answer) -> ByteBuffer? { answer.encoded }

    package func parts(of answer: Answer) -> (head: HTTPResponse, body: ByteBuffer?) { answer.parts }

    package func logRoute(_ claim: String) -> String { claim }

    /// The refresh token of a request this fast path may take (see ``TokenRefreshFastPath``), or
    /// `nil` when the route must answer it: the key as the route's authentication takes it
    /// (``APIAuthenticationMiddleware``), a plain form or JSON, the grant type and a token.
    func refreshToken(head: HTTPRequest, body: ByteBuffer) -> String? {
        let headers = head.headerFields
        guard let key = APIAuthenticationMiddleware.clientKey(uri: URI(head.path ?? ""), headers: headers), !key.isEmpty,
            APIAuthenticationMiddleware.accepts(key: key, headers: headers, settings),
            let type = headers[.contentType].flatMap({ MediaType($0) }), !RESTCall.mayNameTarget(body),
            let request = Self.request(
                body, isForm: type.matches("application", "x-www-form-urlencoded"), isJSON: type.matches("application", "json")),
            request.grantType == "refresh_token", let refreshToken = request.refreshToken, !refreshToken.isEmpty
        else { return nil }
        return refreshToken
    }

    /// The route's JSON answer to a refresh.
    func encode(_ refreshed: SignInService.Refreshed) -> Data {
        IdentityToolkitJSON.encode(
            TokenResponse(
                accessToken: refreshed.idToken, expiresIn: String(TokenService.lifetime), tokenType: "Bearer",
                refreshToken: refreshed.refreshToken, idToken: refreshed.idToken, userID: refreshed.account.localID,
                projectID: projectID))
    }

    /// The body read as the route reads it: the web SDK's plain form (``PlainForm``; any other
    /// form is the route's), or the JSON the iOS and Android SDKs send (``IdentityToolkitJSON``).
    static func request(_ body: ByteBuffer, isForm: Bool, isJSON: Bool) -> TokenRequest? {
        if isForm { return PlainForm.fields(body).map(TokenRequest.init(plainForm:)) }
        guard isJSON else { return nil }
        return try? IdentityToolkitJSON.decode(TokenRequest.self, from: Data(buffer: body))
    }

    /// Makes the value from each of its fields.
    package init(
        signIn: SignInService, sessions: (any ImmediateSessionLookup)?, settings: ServiceSettings, projectID: String, logger: Logger
    ) {
        self.signIn = signIn
        self.sessions = sessions
        self.settings = settings
        self.projectID = projectID
        self.logger = logger
    }
}
