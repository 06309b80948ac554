import ActionLinks
import ActionLinksConfiguration
import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Firebase's own auth helper, proxied from the project's auth domain in upstream mode
/// (`upstream.authDomain`): `/__/auth/*` other than `action` and `links`, and
/// `/__/firebase/init.json` — Firebase's documented "proxy auth requests to firebaseapp.com" — so a
/// web app can use the link domain as its `authDomain` and an iOS app its `customAuthDomain`.
/// Only those paths, only GET, HEAD and POST: never an open proxy. Hop-by-hop headers are dropped,
/// `X-Forwarded-For/Proto/Host` added, cookies pass both ways, bodies are capped and every call has
/// a deadline; whatever goes wrong upstream is a bare 502. Neither an `Authorization` header nor
/// this server's own cookies go to the auth domain.
struct AuthDomainProxy {
    /// The largest answer passed on.
    static let maximumAnswerBytes = 4 << 20
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer",
        "transfer-encoding", "upgrade", "host", "content-length", "forwarded", "x-forwarded-for", "x-forwarded-proto",
        "x-forwarded-host", "authorization",
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
        // Only the helper's own paths: a dot segment or an escaped dot, slash or backslash could
        // name another path of the auth domain once it normalises the path.
        let path = request.uri.path
        let lowered = path.lowercased()
        guard path.hasPrefix("/__/auth/") || path == "/__/firebase/init.json",
            !path.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." }),
            !lowered.contains("%2e"), !lowered.contains("%2f"), !lowered.contains("%5c"), !path.contains("\\")
        else { return Self.text(.notFound, "Not found.\n") }
        var outgoing = HTTPClientRequest(url: origin + path + (request.uri.query.map { "?" + $0 } ?? ""))
        outgoing.method = .init(rawValue: request.method.rawValue)
        for field in request.headers where !Self.hopByHop.contains(field.name.canonicalName) {
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
        if let host = request.head.authority { outgoing.headers.add(name: "X-Forwarded-Host", value: host) }
        if request.method == .post { outgoing.body = .bytes(context.body) }
        do {
            let answer = try await upstream.client.execute(outgoing, timeout: upstream.answerTimeout)
            let body = try await answer.body.collect(upTo: Self.maximumAnswerBytes)
            var headers = HTTPFields()
            for (name, value) in answer.headers where !Self.hopByHop.contains(name.lowercased()) {
                if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
            }
            return Response(status: .init(code: Int(answer.status.code)), headers: headers, body: .init(byteBuffer: body))
        } catch {
            return Self.text(.badGateway, "The auth domain did not answer.\n")
        }
    }

    static func text(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
