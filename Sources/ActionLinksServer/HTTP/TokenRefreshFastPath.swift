import ActionLinksConfiguration
import ActionLinksHeaders
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// Answers the SDKs' token refresh on the connection's event loop when the account store reads on
/// the caller's thread (``ImmediateSessionLookup``, SQLite's):
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
final class TokenRefreshFastPath: FastPathHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What the fast path needs of the server, shared by every connection.
    struct Refresher: Sendable {
        let signIn: SignInService
        let sessions: any ImmediateSessionLookup
        let settings: ServiceSettings
        let projectID: String
        let metrics: ServerMetrics
        let logger: Logger

        /// The largest body the fast path reads (a refresh token's form is well under 1 KiB).
        var maximumBody: Int { min(8192, settings.server.maximumBodyBytes) }

        /// The answer's head, as the route's headers, Hummingbird (`Content-Length`) and
        /// ``APICORSMiddleware`` (`Vary: Origin`) make it, before `Date`.
        static func head(length: Int) -> HTTPResponse {
            var fields = RESTAPIResponse.headers
            fields[.contentLength] = String(length)
            fields[.vary] = "Origin"
            return HTTPResponse(status: .ok, headerFields: fields)
        }

        /// ``head(length:)``'s lines up to the length's value, encoded once.
        static let headLines: [UInt8] = {
            var lines = "HTTP/1.1 200 OK\r\n"
            for field in RESTAPIResponse.headers { lines += "\(field.name.rawName): \(field.value)\r\n" }
            return Array((lines + "Content-Length: ").utf8)
        }()

        /// The whole answer with `json`, as ``RawAnswers/encode(_:body:)`` writes ``head(length:)``
        /// with `Date` added, from ``headLines``.
        static func encoded(_ json: Data, date: String) -> ByteBuffer {
            var buffer = ByteBuffer()
            buffer.reserveCapacity(headLines.count + 64 + json.count)
            buffer.writeBytes(headLines)
            buffer.writeString(String(json.count))
            buffer.writeStaticString("\r\nVary: Origin\r\nDate: ")
            buffer.writeString(date)
            buffer.writeStaticString("\r\n\r\n")
            buffer.writeBytes(json)
            return buffer
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

        /// The token path a request target names, with or without a query, or `nil`.
        static func tokenPath(_ target: String) -> String? {
            let bytes = target.utf8
            let path = bytes[..<(bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.endIndex)]
            return IdentityToolkitRoutes.tokenPaths.first { $0.utf8.elementsEqual(path) }
        }
    }

    let refresher: Refresher
    var forwarded = 0
    /// The request being read here, until its `.end` arrives.
    private var reading: (head: HTTPRequest, path: String, body: ByteBuffer, start: ContinuousClock.Instant)?
    var raw: RawAnswers?

    init(refresher: Refresher) {
        self.refresher = refresher
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            let fields = request.headerFields
            if forwarded == 0, request.method == .post, let path = request.path.flatMap(Refresher.tokenPath),
                !fields.contains(.origin), !fields.contains(.authorization), !fields.contains(.connection)
            {
                reading = (request, path, ByteBuffer(), .now)
                return
            }
            forwarded += 1
            context.fireChannelRead(data)
        case .body(var part):
            guard case .some((let head, let path, var body, let start)) = reading else { return context.fireChannelRead(data) }
            guard body.readableBytes + part.readableBytes <= refresher.maximumBody else {
                // Too long for a refresh: the router reads it (and refuses it where it must).
                reading = nil
                forward(context: context, head: head, body: body)
                context.fireChannelRead(data)
                return
            }
            reading = nil  // the buffer is uniquely referenced while it grows
            body.writeBuffer(&part)
            reading = (head, path, body, start)
        case .end:
            guard let (head, path, body, start) = reading else { return context.fireChannelRead(data) }
            reading = nil
            guard let json = refresher.answer(target: head.path ?? "", headers: head.headerFields, body: body) else {
                forward(context: context, head: head, body: body)
                context.fireChannelRead(data)
                return
            }
            if let raw {
                raw.write(Refresher.encoded(json, date: HTTPDate.now))
                context.triggerUserOutboundEvent(FastPathAnswered(), promise: nil)
            } else {
                var response = Refresher.head(length: json.count)
                response.headerFields[.date] = HTTPDate.now
                context.write(wrapOutboundOut(.head(response)), promise: nil)
                context.write(wrapOutboundOut(.body(ByteBuffer(bytes: json))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
            let duration = ContinuousClock.now - start
            refresher.metrics.request(.api, status: 200, duration: duration)
            refresher.logger.debug(
                "request",
                metadata: ["method": "POST", "route": "\(path)", "status": "200", "duration": "\(duration)"])
        }
    }

    /// Passes a request read here on to the router: its head and what arrived of its body.
    private func forward(context: ChannelHandlerContext, head: HTTPRequest, body: ByteBuffer) {
        forwarded += 1
        context.fireChannelRead(wrapInboundOut(.head(head)))
        if body.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(.body(body))) }
    }
}
