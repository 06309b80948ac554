import ActionLinks
import ActionLinksConfiguration
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
        case "/healthz": return .health
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

/// Resolves who is really calling (``ClientIdentity``) before anything else looks at the request.
struct ClientIdentityMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let settings: ServerSettings

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let (client, forwardedScheme) = ClientIdentity.resolve(
            peer: context.peerAddress, headers: request.headers, trustedProxies: settings.trustedProxies)
        context.clientAddress = client
        context.isSecure = settings.tls != nil || (forwardedScheme.map { $0 == "https" } ?? !settings.development)
        return try await next(request, context)
    }
}

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

/// DESIGN §9's headers on every page (no referrer: the URL holds a code; never cached, indexed or
/// framed; no scripts), added to whatever a page route answers, a redirect included.
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

/// One log line per request at `debug`: the method, the route that answered (its pattern, never the
/// URL, which may hold a code or a key), the status and the time taken.
struct RequestLoggingMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
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
