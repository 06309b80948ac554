import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import HTTPTypes
import Hummingbird

/// Counts every request per route and status class, and times it (`/metrics`).
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        metrics.request(
            Self.route(endpoint: context.endpointPath, path: request.uri.path, status: response.status), status: response.status.code,
            duration: ContinuousClock.now - start)
        return response
    }

    /// The metrics label of the route that answered.
    static func route(endpoint: String?, path: String, status: HTTPResponse.Status) -> ServerMetrics.Route {
        switch endpoint {
        case "/.well-known/apple-app-site-association", "/apple-app-site-association", "/.well-known/assetlinks.json": return .association
        case "/.well-known/jwks.json": return .jwks
        case "/healthz", "/readyz": return .health
        case "/metrics": return .metrics
        case ActionCodeLink.actionPath: return .actionPage
        case ActionCodeLink.mobileLinkPath: return .mobileLinkPage
        case .some(let endpoint) where endpoint.hasPrefix("/emulator/"): return .emulator
        case .some(let endpoint) where IdentityToolkitRoutes.allPrefixes.contains(where: { endpoint.hasPrefix($0 + "/") }): return .api
        default:
            if FallbackMiddleware.isAPIPath(path) { return .api }
            return status == .notFound ? .notFound : .staticFile
        }
    }
}
