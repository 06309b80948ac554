import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import HTTPTypes
import Hummingbird

/// CORS for the REST API: an allowed origin (``WebOrigins``) is reflected on every answer, a
/// preflight included (with the headers it asks for and, for a page on a public site calling a
/// development server on this machine, `Access-Control-Allow-Private-Network`); any other origin
/// gets no CORS headers, so its page cannot read the answer.
struct APICORSMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let origins: WebOrigins

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as ActionError {
            response = try error.response(from: request, context: context)
        }
        response.headers[.vary] = "Origin"
        guard let origin = request.headers[.origin], origins.allowsAPI(origin) else {
            if request.method == .options { return Response(status: .noContent, headers: [.vary: "Origin"]) }
            return response
        }
        response.headers[.accessControlAllowOrigin] = origin
        // A page may read when to try again (a limited sign-in code exchange, a busy server).
        if response.headers[.retryAfter] != nil { response.headers[.accessControlExposeHeaders] = "Retry-After" }
        return response
    }

    /// The headers a web app's Firebase SDK sends; a preflight allows these and those it asks for.
    static let allowedRequestHeaders =
        "authorization, content-type, x-goog-api-key, x-firebase-locale, x-client-version, x-firebase-gmpid, x-firebase-client, x-firebase-appcheck"

    /// A CORS preflight's answer (``APICORSMiddleware`` adds the origin when it is allowed).
    static func preflight(_ request: Request, allowed: Bool) -> Response {
        guard allowed else { return Response(status: .noContent, headers: [.vary: "Origin"]) }
        var headers: HTTPFields = [
            .accessControlAllowMethods: "GET, POST, PATCH, DELETE, OPTIONS", .accessControlMaxAge: "3600",
            .accessControlAllowHeaders: request.headers[.accessControlRequestHeaders].map { allowedRequestHeaders + ", " + $0 }
                ?? allowedRequestHeaders,
        ]
        if request.headers[HTTPField.Name("Access-Control-Request-Private-Network")!] == "true" {
            headers[HTTPField.Name("Access-Control-Allow-Private-Network")!] = "true"
        }
        return Response(status: .noContent, headers: headers)
    }
}
