import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import HTTPTypes
import Hummingbird

/// What no route takes: under the API prefixes Firebase's `NOT_FOUND`, under `/__/` the 404 page,
/// anything else from `www/` (or the 404 page).
struct FallbackMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let staticFiles: StaticFiles
    let pages: ActionPages

    static func isAPIPath(_ path: String) -> Bool {
        path.hasPrefix("/emulator/") || IdentityToolkitRoutes.allPrefixes.contains { path.hasPrefix($0 + "/") }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound && context.endpointPath == "NotFound" {
            let path = request.uri.path
            if Self.isAPIPath(path) {
                return try ActionError(.notFound, "no method at \(path.prefix(200))").response(from: request, context: context)
            }
            if !path.hasPrefix("/__/"), let response = staticFiles.respond(to: request) { return response }
            var response = pages.notFound(request)
            PageHeadersMiddleware.apply(to: &response)
            return response
        }
    }
}
