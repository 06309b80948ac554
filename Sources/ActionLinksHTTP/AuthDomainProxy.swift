import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Firebase's own auth helper, proxied from the project's auth domain in upstream mode
/// (`upstream.authDomain`): `/__/auth/*` other than `action` and `links`, and
/// `/__/firebase/init.json` — Firebase's documented "proxy auth requests to firebaseapp.com" — so a
/// web app can use the link domain as its `authDomain` and an iOS app its `customAuthDomain`.
/// Only those paths (``isHelperPath(_:)``), sent exactly as checked (``requestTarget(of:)``), only
/// GET, HEAD and POST: never an open proxy. Hop-by-hop headers, those the `Connection` header names
/// and the method and URL overrides are dropped; `X-Forwarded-For/Proto/Host` are added (the host
/// is the link domain the request came in on, never the client's `Host`); cookies pass both ways,
/// bodies are capped, and the whole exchange, head and body, has one deadline
/// (`upstream.answerTimeout`). Whatever goes wrong upstream is a bare 502, and a request beyond
/// `upstream.poolSize` exchanges in flight with the auth domain a bare 503 at once. Neither an
/// `Authorization` header nor this server's own cookies go to the auth domain.
struct AuthDomainProxy {
    /// The largest answer passed on.
    static let maximumAnswerBytes = 4 << 20
    /// Headers never passed on, either way: the connection's own, and those this proxy sets itself.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer",
        "transfer-encoding", "upgrade", "host", "content-length", "forwarded", "x-forwarded-for", "x-forwarded-proto",
        "x-forwarded-host", "authorization",
    ]
    /// Request headers that ask a server behind a proxy for another method or path than the request
    /// line's (frameworks and gateways honour them): never passed on.
    static let overrides: Set<String> = [
        "x-http-method-override", "x-http-method", "x-method-override", "x-original-url", "x-rewrite-url",
    ]

    let upstream: UpstreamClient
    let settings: ServiceSettings

    var collection: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        routes.add(middleware: RequestBodyLimitMiddleware(maximumBytes: settings.server.maximumBodyBytes))
        let proxy = self
        for path in ["/__/auth/**", "/__/firebase/init.json"] {
            for method in [HTTPRequest.Method.get, .head, .post] {
                routes.on(RouterPath(path), method: method) { request, context in await proxy.forward(request, context: context) }
            }
            routes.refuseOtherMethods(RouterPath(path), allowed: [.get, .head, .post])
        }
        return routes
    }

    func forward(_ request: Request, context: ServerRequestContext) async -> Response {
        guard let origin = upstream.settings.authDomainOrigin else {
            return Self.text(
                .notFound,
                "Firebase's auth helper is not proxied here: set upstream.authDomain (e.g. \(upstream.settings.projectID).firebaseapp.com) to serve /__/auth/* from it\n"
            )
        }
        let path = request.uri.path
        let target = path + (request.uri.query.map { "?" + $0 } ?? "")
        // What async-http-client will send is what was checked, byte for byte: Foundation reads some
        // paths and queries otherwise (a path that is not UTF-8 as empty, sent as `/`).
        guard Self.isHelperPath(path), Self.requestTarget(of: origin + target) == target else {
            return Self.text(.notFound, "Not found.\n")
        }
        var outgoing = HTTPClientRequest(url: origin + target)
        outgoing.method = .init(rawValue: request.method.rawValue)
        let dropped = Self.hopByHop.union(Self.overrides).union(Self.connectionOptions(request.headers[values: .connection]))
        for field in request.headers where !dropped.contains(field.name.canonicalName) {
            if field.name == .cookie {
                // This server's own cookies (the remembered device) are not the auth domain's business.
                let kept = field.value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.hasPrefix(RememberedDevice.cookieName + "=") }
                if !kept.isEmpty { outgoing.headers.add(name: "Cookie", value: kept.joined(separator: "; ")) }
                continue
            }
            outgoing.headers.add(name: field.name.rawName, value: field.value)
        }
        if let client = context.clientAddress { outgoing.headers.add(name: "X-Forwarded-For", value: client) }
        outgoing.headers.add(name: "X-Forwarded-Proto", value: context.isSecure ? "https" : "http")
        outgoing.headers.add(name: "X-Forwarded-Host", value: linkDomain(named: request.head.authority).description)
        if request.method == .post { outgoing.body = .bytes(context.body) }
        do throws(UpstreamClient.ExchangeFailure) {
            let answer = try await upstream.exchange(outgoing, upTo: Self.maximumAnswerBytes)
            let droppedFromAnswer = Self.hopByHop.union(Self.connectionOptions(answer.headers["connection"]))
            var headers = HTTPFields()
            for (name, value) in answer.headers where !droppedFromAnswer.contains(name.lowercased()) {
                if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
            }
            return Response(status: .init(code: Int(answer.status)), headers: headers, body: .init(byteBuffer: answer.body))
        } catch .busy {
            var busy = Self.text(.serviceUnavailable, "The auth domain is busy; try again in a moment.\n")
            busy.headers[.retryAfter] = "1"
            return busy
        } catch {
            return Self.text(.badGateway, "The auth domain did not answer.\n")
        }
    }

    /// The link domain named by a request's `Host` (`host` or `host:port`, as configured), or the
    /// first link domain when it names none of them: what the auth domain hears as
    /// `X-Forwarded-Host`, so a client's own `Host` never reaches it.
    func linkDomain(named authority: String?) -> LinkDomain {
        guard let authority, let named = try? LinkDomain(authority),
            let known = settings.linkDomains.first(where: { $0.host == named.host && $0.port == named.port })
        else { return settings.linkDomains[0] }
        return known
    }

    /// The lower-cased header names a `Connection` header's values list (RFC 9110 §7.6.1: a proxy
    /// drops them before passing the message on).
    static func connectionOptions(_ values: [String]) -> Set<String> {
        Set(values.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
    }

    /// Whether `path` (as received, percent-escapes and all) is one of the helper's paths, spelt so
    /// that every reader reads it the same way: only RFC 3986's unreserved characters (letters,
    /// digits, `-`, `.`, `_`, `~`) and `/`, a percent-escape only for an unreserved character other
    /// than `.`, and no `.` or `..` segment. An escape that is not UTF-8 of such a character (`%ff`,
    /// `%80`, `x%c3`, the overlong `%c0%ae`, an escaped dot, slash or backslash) is refused: Foundation
    /// reads a path that is not UTF-8 as empty, which async-http-client sends as `/`, the auth domain's
    /// root. The helper's real paths (`handler`, `iframe`, their scripts, `init.json`) need none of this.
    static func isHelperPath(_ path: String) -> Bool {
        func isUnreservedOrSlash(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                true
            default: false
            }
        }
        let lowered = path.lowercased()
        guard path.hasPrefix("/__/auth/") || path == "/__/firebase/init.json",
            !path.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." }),
            !lowered.contains("%2e"), !lowered.contains("%2f"),
            path.utf8.allSatisfy({ isUnreservedOrSlash($0) || $0 == UInt8(ascii: "%") }),
            let decoded = PercentEncoding.decode(path), decoded.utf8.allSatisfy(isUnreservedOrSlash)
        else { return false }
        return true
    }

    /// The request target async-http-client sends for `url`, derived as it derives it (1.37.0,
    /// `DeconstructedURL(url:)` and `URL.uri` in HTTPHandler.swift): Foundation's percent-encoded
    /// path, or `/` when Foundation's decoded path is empty, then `?` and Foundation's query. Nil
    /// when Foundation does not take `url` at all.
    static func requestTarget(of url: String) -> String? {
        guard let parsed = URL(string: url) else { return nil }
        var target =
            parsed.path.isEmpty ? "/" : URLComponents(url: parsed, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? parsed.path
        if let query = parsed.query { target += "?" + query }
        return target
    }

    static func text(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
