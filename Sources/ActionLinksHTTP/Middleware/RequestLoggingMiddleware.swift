import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import HTTPTypes
import Hummingbird

/// One log line per request at `debug`: the method, the route that answered (its pattern, never the
/// URL, which may hold a code or a key), the status and the time taken. Every line logged for the
/// request carries its trace (``RequestTrace``) when the platform in front gave one.
struct RequestLoggingMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var context = context
        if let (trace, span) = RequestTrace.ids(request.headers) {
            context.logger[metadataKey: RequestTrace.traceKey] = "\(trace)"
            if let span { context.logger[metadataKey: RequestTrace.spanKey] = "\(span)" }
        }
        var status = HTTPResponse.Status.internalServerError
        defer {
            context.logger.debug(
                "request",
                metadata: [
                    "method": "\(request.method.rawValue)", "route": "\(context.endpointPath ?? "-")", "status": "\(status.code)",
                    "duration": "\(ContinuousClock.now - start)",
                ])
        }
        do {
            let response = try await next(request, context)
            status = response.status
            return response
        } catch let error as any HTTPResponseError {
            status = error.status
            throw error
        }
    }
}
