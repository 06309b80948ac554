import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import HTTPTypes
import Hummingbird

/// The pages' headers (docs/ARCHITECTURE.md §9) on every page (no referrer: the URL holds a code;
/// never cached, indexed or framed; no scripts), added to whatever a page route answers, a redirect
/// included.
struct PageHeadersMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    /// The headers, with the HTML content type that a page's body has.
    static let headers: HTTPFields = [
        .contentType: "text/html; charset=utf-8", .referrerPolicy: "no-referrer", .cacheControl: "no-store", .xRobotsTag: "noindex",
        .contentSecurityPolicy:
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        .xFrameOptions: "DENY", .xContentTypeOptions: "nosniff",
    ]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        Self.apply(to: &response)
        return response
    }

    static func apply(to response: inout Response) {
        apply(to: &response.headers)
    }

    static func apply(to fields: inout HTTPFields) {
        if fields.isEmpty {
            fields = headers
            return
        }
        for field in headers where fields[field.name] == nil { fields.append(field) }
    }
}
