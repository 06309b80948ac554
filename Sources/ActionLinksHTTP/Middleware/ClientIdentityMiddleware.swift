import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import HTTPTypes
import Hummingbird

/// Resolves who is really calling (``ClientIdentity``) before anything else looks at the request.
struct ClientIdentityMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let settings: ServerSettings

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let (client, forwardedScheme) = ClientIdentity.resolve(
            peer: context.peerAddress, headers: request.headers, settings: settings)
        context.clientAddress = client
        context.isSecure = settings.tls != nil || (forwardedScheme.map { $0 == "https" } ?? !settings.development)
        return try await next(request, context)
    }
}
