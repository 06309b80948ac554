import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import HTTPTypes
import Hummingbird

/// Reads a request's body before any handler does, up to `server.maximumBodyBytes`; a larger body
/// is `PAYLOAD_TOO_LARGE` (413), answered by the surface: Firebase's error body under the API, a
/// page under `/__/auth/`. Handlers then read the collected body without a limit of their own.
struct RequestBodyLimitMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let maximumBytes: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .post || request.method == .put || request.method == .patch else { return try await next(request, context) }
        var context = context
        do {
            context.body = try await request.body.collect(upTo: maximumBytes)
        } catch {
            throw ActionError(.payloadTooLarge, "the request body is larger than \(maximumBytes) bytes")
        }
        return try await next(request, context)
    }
}
