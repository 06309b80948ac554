import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksHeaders
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOFoundationCompat
import NIOHTTPTypes

/// The SDKs' token refresh, answered on the event loop (``FastPathRoute``) when the account store
/// reads on the caller's thread (``ImmediateSessionLookup``, SQLite's):
/// `POST /v1/token` (or `/securetoken.googleapis.com/v1/token`) with the API key and the form
/// `grant_type=refresh_token&refresh_token=…` (the web SDK) or the JSON
/// `{"grantType":"refresh_token","refreshToken":…}` (iOS, Android), the call every signed-in
/// client makes every hour.
/// The session is read synchronously (an indexed read of the WAL database, which never waits for a
/// writer), the ID token signed on the event loop, and the answer written below the HTTP codec,
/// instead of handing the request to the router, the middleware and the async responder and back.
///
/// The answer is the route's, made by the same code (``SignInService/refreshNow(refreshToken:sessions:)``,
/// ``TokenResponse``, ``IdentityToolkitJSON``), with the same headers in the same order, `Date` as
/// Hummingbird adds it, and the request counted in the metrics as the route's. Everything else goes
/// on to the router untouched, with its body: other paths and methods; a request with `Origin`
/// (CORS is the middleware's), `Authorization` (the admin's), `Connection`, or a body that is
/// neither a plain form nor JSON or is over 8 KiB; a key the route would refuse (unknown, or restricted to apps or
/// websites the request's headers do not name: the route's own check decides); and any refresh that needs more than a
/// read and a signature (no such session, a stored tenant, a refusal, `lastRefreshAt` to write),
/// so every error and every write is the route's. A request that arrives while an earlier one on
/// the connection is still with the router goes there too (pipelined answers stay in order).
///
/// Signing takes the event loop for one RSA signature (about 0.2 ms with OpenSSL); a refresh on the
/// router would spend that on a pool thread, plus the hops there and back.
package struct TokenRefreshFastPath: FastPathRoute {
    let signIn: SignInService
    let sessions: any ImmediateSessionLookup
    let settings: ServiceSettings
    let projectID: String

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

    package func answer(_ claim: String, head: HTTPRequest, body: ByteBuffer) -> Data? {
        answer(target: head.path ?? "", headers: head.headerFields, body: body)
    }

    package func status(of answer: Data) -> Int { 200 }

    package func encoded(_ answer: Data) -> ByteBuffer? { Self.encoded(answer, date: HTTPDate.now) }

    package func parts(of answer: Data) -> (head: HTTPResponse, body: ByteBuffer?) {
        (Self.head(length: answer.count), ByteBuffer(bytes: answer))
    }

    package func logRoute(_ claim: String) -> String { claim }

    /// The answer's head, as the route's headers, Hummingbird (`Content-Length`) and
    /// ``APICORSMiddleware`` (`Vary: Origin`) make it, before `Date`.
    static func head(length: Int) -> HTTPResponse {
        var fields = RESTAPIResponse.headers
        fields[.contentLength] = String(length)
        fields[.vary] = "Origin"
        return HTTPResponse(status: .ok, headerFields: fields)
    }

    /// ``head(length:)`` with the length and `Date` left out, encoded once.
    static let cachedHead = CachedHead(status: .ok, beforeLength: RESTAPIResponse.headers, afterLength: [.vary: "Origin"])

    /// The whole answer with `json`, ``head(length:)`` with `Date` added, from ``cachedHead``.
    static func encoded(_ json: Data, date: String) -> ByteBuffer {
        cachedHead.encode(json: json, date: date)
    }

    /// The route's JSON answer to `target` with `headers` and `body`, or `nil` when the route
    /// must answer (see ``TokenRefreshFastPath``).
    func answer(target: String, headers: HTTPFields, body: ByteBuffer) -> Data? {
        // The key as the route's authentication takes it (``APIAuthenticationMiddleware``).
        guard let key = APIAuthenticationMiddleware.clientKey(uri: URI(target), headers: headers), !key.isEmpty,
            APIAuthenticationMiddleware.accepts(key: key, headers: headers, settings),
            let type = headers[.contentType].flatMap({ MediaType($0) }), !RESTCall.mayNameTarget(body),
            let request = Self.request(
                body, isForm: type.matches("application", "x-www-form-urlencoded"), isJSON: type.matches("application", "json"))
        else { return nil }
        guard request.grantType == "refresh_token", let refreshToken = request.refreshToken, !refreshToken.isEmpty,
            let refreshed = signIn.refreshNow(refreshToken: refreshToken, sessions: sessions)
        else { return nil }
        return IdentityToolkitJSON.encode(
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
    package init(signIn: SignInService, sessions: any ImmediateSessionLookup, settings: ServiceSettings, projectID: String) {
        self.signIn = signIn
        self.sessions = sessions
        self.settings = settings
        self.projectID = projectID
    }
}
