import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import HTTPTypes
import Hummingbird

/// What a page route throws, as a localised page: an oversized form, a refused or failed action.
struct PageErrorMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let pages: ActionPages

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ActionError {
            var response = pages.failure(error, pages.templates.language(requested: nil, acceptLanguage: request.headers[.acceptLanguage]))
            PageHeadersMiddleware.apply(to: &response)
            return response
        }
    }
}
