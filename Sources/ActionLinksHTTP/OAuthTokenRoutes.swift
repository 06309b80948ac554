import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import Foundation
import Hummingbird

/// `POST /token` and `/oauth2.googleapis.com/token` (the host as a path, as the emulator prefixes
/// are): Google's OAuth 2 token endpoint for this server's own service accounts
/// (``ServiceAccountTokens``), so that firebase-admin and google-auth get an access token from a
/// service-account file whose `token_uri` points here, and so that one ActionLinks can be another's
/// upstream.
struct OAuthTokenRoutes {
    static let paths = ["/token", "/oauth2.googleapis.com/token"]

    let tokens: ServiceAccountTokens
    let settings: ServiceSettings

    var collection: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        routes.add(middleware: RequestBodyLimitMiddleware(maximumBytes: settings.server.maximumBodyBytes))
        let tokens = tokens
        let audiences = Self.audiences(settings)
        let development = settings.server.development
        for path in Self.paths {
            routes.post(RouterPath(path)) { request, context in
                let fields = (try? URLEncodedFormDecoder().decode([String: String].self, from: String(buffer: context.body))) ?? [:]
                var audiences = audiences
                // A development server on this machine also takes the URL the request itself names,
                // when it is a loopback one (tests, one server on one machine): never a production
                // server, where the Host header is the client's to choose.
                if development, let host = request.head.authority, let url = try? URLParts("http://" + host), let name = url.host,
                    Loopback.isLoopback(name)
                {
                    audiences += ["http://", "https://"].map { $0 + host + request.uri.path }
                }
                do throws(OAuthError) {
                    guard let grantType = fields["grant_type"] else {
                        throw OAuthError(.invalidRequest, "Missing required parameter: grant_type")
                    }
                    guard grantType == ServiceAccountTokens.jwtBearerGrant else {
                        throw OAuthError(.unsupportedGrantType, "Invalid grant_type: \(grantType.prefix(100))")
                    }
                    guard let assertion = fields["assertion"], !assertion.isEmpty else {
                        throw OAuthError(.invalidRequest, "Missing required parameter: assertion")
                    }
                    return Self.json(.ok, try await tokens.grant(assertion: assertion, audiences: audiences))
                } catch {
                    return Self.json(.badRequest, error)
                }
            }
            routes.refuseOtherMethods(RouterPath(path), allowed: [.post])
        }
        return routes
    }

    /// The audiences an assertion may name (RFC 7523 §3: the server rejects one that does not name
    /// it): Google's token URL (which google-auth signs whatever the file's `token_uri` says), the
    /// token URLs of this server's link domains, and `server.tokenAudiences`.
    static func audiences(_ settings: ServiceSettings) -> [String] {
        [ServiceAccountTokens.googleTokenURL] + settings.linkDomains.flatMap { domain in paths.map { domain.origin + $0 } }
            + settings.server.tokenAudiences
    }

    static func json(_ status: HTTPResponse.Status, _ value: some Encodable) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
