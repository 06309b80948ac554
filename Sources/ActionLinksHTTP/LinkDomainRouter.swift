import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksHeaders
import Hummingbird

/// The link domain's routes (docs/ARCHITECTURE.md §4.2): one route collection per surface, and the middleware
/// every request goes through (metrics, the real client, the fallback to `www/`). To add an
/// endpoint, add it to the collection of its surface; to add a surface, add a collection here.
public enum LinkDomainRouter {
    /// The router for the services and the loaded `www/`; `associations` are the generated
    /// association files (generated once, and shared with the event-loop fast path).
    package static func build(
        services: LinkDomainServices, templates: PageTemplates, staticFiles: StaticFiles, associations: AssociationRoutes
    ) -> Router<ServerRequestContext> {
        // Fronting a Firebase project, the pages mask addresses (as its own page does) and every
        // code is the project's: checked and applied upstream.
        let pages = ActionPages(services: services, templates: templates, masksAddresses: services.upstream != nil)
        let flow: any ActionFlow = services.upstream.map { UpstreamActionFlow(pages: pages, upstream: $0, services: services) } ?? pages
        let router = Router(context: ServerRequestContext.self)
        router.add(middleware: RequestMetricsMiddleware(metrics: services.metrics))
        router.add(middleware: RequestLoggingMiddleware())
        router.add(middleware: ClientIdentityMiddleware(settings: services.settings.server))
        router.add(middleware: FallbackMiddleware(staticFiles: staticFiles, pages: pages))
        router.addRoutes(associations.collection)
        router.addRoutes(PageRoutes(pages: pages, flow: flow).collection)
        if let upstream = services.upstream {
            // Fronting a Firebase project, its own helper runs the federated sign-in (or nothing does).
            router.addRoutes(AuthDomainProxy(upstream: upstream, settings: services.settings).collection)
        } else {
            router.addRoutes(FederatedHandlerRoutes(services: services, pages: pages).collection)
        }
        if let upstream = services.upstream {
            UpstreamRESTRoutes(
                issuer: services.issuer, upstream: upstream.settings, tenants: services.tenants, settings: services.settings,
                origins: services.origins, accessTokens: services.serviceAccountTokens
            )
            .add(to: router)
        } else {
            IdentityToolkitRoutes(
                api: IdentityToolkitAPI.all(services), settings: services.settings, origins: services.origins,
                accessTokens: services.serviceAccountTokens
            ).add(to: router)
        }
        router.addRoutes(OAuthTokenRoutes(tokens: services.serviceAccountTokens, settings: services.settings).collection)
        if services.settings.server.development {
            router.addRoutes(EmulatorRoutes(services: services).collection, atPath: "/emulator/v1/projects/{project}")
        }
        router.addRoutes(
            OperationsRoutes(
                metrics: services.metrics, settings: services.settings.server, accessTokens: services.serviceAccountTokens,
                readiness: services.readiness
            ).collection)
        return router
    }

    /// The methods a known path answers: those it takes, and 405 with `Allow` for the others.
    static let otherMethods: [HTTPRequest.Method] = [.get, .head, .post, .put, .delete, .patch, .options]
}

extension RouteCollection where Context == ServerRequestContext {
    /// Answers every method but `allowed` on `path` with 405 and `Allow`.
    func refuseOtherMethods(_ path: RouterPath, allowed: [HTTPRequest.Method]) {
        let allow = allowed.map(\.rawValue).joined(separator: ", ")
        for method in LinkDomainRouter.otherMethods where !allowed.contains(method) {
            on(path, method: method) { _, _ in Response(status: .methodNotAllowed, headers: [.allow: allow]) }
        }
    }
}

/// `/.well-known/apple-app-site-association` (and the root copy) and `/.well-known/assetlinks.json`,
/// generated at start and answered from memory (``AssociationFastPath`` answers the same files on
/// the event loop; these routes answer what it passes on), and `/.well-known/jwks.json`, read for
/// each request.
package struct AssociationRoutes {
    let files: [String: PrebuiltJSON?]
    /// The ID tokens' keys, which rotate: their JWKS is read for each request.
    let tokens: TokenService

    package init(services: LinkDomainServices) throws {
        var apps = services.apps
        // Fronting a Firebase project, the app's own SDK finishes sign-in links with Firebase.
        apps.claimSignInActionLinks = services.settings.upstream != nil
        let generator = AssociationGenerator(configuration: apps)
        let apple = services.apps.appleApps.isEmpty ? nil : PrebuiltJSON(try generator.appleAppSiteAssociation(), maxAge: 300)
        files = [
            "/.well-known/apple-app-site-association": apple, "/apple-app-site-association": apple,
            "/.well-known/assetlinks.json": services.apps.androidApps.isEmpty ? nil : PrebuiltJSON(try generator.assetLinks(), maxAge: 300),
        ]
        tokens = services.tokens
    }

    /// The files the event-loop fast path answers, by exact path.
    package var prebuilt: [String: PrebuiltJSON] { files.compactMapValues { $0 } }

    var collection: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        for (path, file) in files {
            let respond: @Sendable (Request, ServerRequestContext) -> Response = { request, _ in
                guard let file else {
                    return Response(
                        status: .notFound, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(string: "{}")))
                }
                return file.response(for: request)
            }
            routes.get(RouterPath(path), use: respond)
            routes.head(RouterPath(path), use: respond)
            routes.refuseOtherMethods(RouterPath(path), allowed: [.get, .head])
        }
        let tokens = tokens
        let published = PublishedJWKS()
        let jwks: @Sendable (Request, ServerRequestContext) throws -> Response = { request, _ in
            guard let document = tokens.jwks else { throw ActionError(.unavailable, "the signing keys are not loaded") }
            return published.answer(for: document).response(for: request)
        }
        routes.get("/.well-known/jwks.json", use: jwks)
        routes.head("/.well-known/jwks.json", use: jwks)
        routes.refuseOtherMethods("/.well-known/jwks.json", allowed: [.get, .head])
        return routes
    }
}

/// The pages of a link: `/__/auth/action` (GET and HEAD show, POST confirms) and the mobile-link
/// fallback `/__/auth/links`.
struct PageRoutes {
    let pages: ActionPages
    /// What the pages do with a code: ``pages`` themselves, or ``UpstreamActionFlow``.
    let flow: any ActionFlow

    var collection: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        let (pages, flow) = (pages, flow)
        routes.add(middleware: PageHeadersMiddleware())
        routes.add(middleware: PageErrorMiddleware(pages: pages))
        routes.add(middleware: RequestBodyLimitMiddleware(maximumBytes: pages.settings.server.maximumBodyBytes))
        routes.head(RouterPath(ActionCodeLink.actionPath)) { _, _ in Response(status: .ok) }
        routes.get(RouterPath(ActionCodeLink.actionPath)) { request, _ in await flow.landing(request) }
        routes.post(RouterPath(ActionCodeLink.actionPath)) { request, context in await flow.confirm(request, context: context) }
        routes.refuseOtherMethods(RouterPath(ActionCodeLink.actionPath), allowed: [.get, .head, .post])
        routes.head(RouterPath(ActionCodeLink.mobileLinkPath)) { _, _ in Response(status: .ok) }
        routes.get(RouterPath(ActionCodeLink.mobileLinkPath)) { request, context in await flow.mobileLink(request, context: context) }
        routes.refuseOtherMethods(RouterPath(ActionCodeLink.mobileLinkPath), allowed: [.get, .head])
        return routes
    }
}

/// Firebase's emulator endpoints, on a development server (`/emulator/v1/projects/<p>/...`, no
/// credential, as the emulator has them): `GET` and `DELETE` of `oobCodes` (the live codes this
/// process issued; deleting retires them) and `DELETE` of `accounts` (how test suites reset state),
/// for the project and for each tenant, and `GET` of `config` (read only).
struct EmulatorRoutes {
    let services: LinkDomainServices

    var collection: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        let emulator = EmulatorEndpoints(services: services)
        for tenantPath in ["", "tenants/{tenant}/"] {
            routes.on(RouterPath(tenantPath + "oobCodes"), method: .get) { _, context in try await emulator.codes(context) }
            routes.on(RouterPath(tenantPath + "oobCodes"), method: .delete) { _, context in try await emulator.deleteCodes(context) }
            routes.on(RouterPath(tenantPath + "accounts"), method: .delete) { _, context in try await emulator.deleteAccounts(context) }
        }
        routes.on("config", method: .get) { _, context in try await emulator.config(context) }
        routes.on("config", method: .patch) { _, _ -> Response in throw ProjectSettingsResponse.readOnly }
        return routes
    }
}

/// `/healthz` (liveness), `/readyz` (readiness: ``Readiness``) and `/metrics`.
struct OperationsRoutes {
    let metrics: ServerMetrics
    let settings: ServerSettings
    let accessTokens: ServiceAccountTokens
    let readiness: Readiness

    var collection: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        routes.get("/healthz") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: "ok\n")))
        }
        let readiness = readiness
        routes.get("/readyz") { _, _ in
            let report = await readiness.report()
            return Response(
                status: report.ready ? .ok : .serviceUnavailable,
                headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: report.lines.joined(separator: "\n") + "\n")))
        }
        let (metrics, settings, accessTokens) = (metrics, settings, accessTokens)
        routes.get("/metrics") { request, _ in
            OperationsRoutes.metrics(request, metrics: metrics, settings: settings, accessTokens: accessTokens)
        }
        return routes
    }

    /// Prometheus metrics, for a scraper that sends `server.metricsToken` (or the admin credential)
    /// as a bearer token. Where the request comes from proves nothing: behind a proxy on the same
    /// machine, every request comes from loopback.
    static func metrics(_ request: Request, metrics: ServerMetrics, settings: ServerSettings, accessTokens: ServiceAccountTokens)
        -> Response
    {
        let authorized = request.headers[values: .authorization].contains { header in
            if APIAuthenticationMiddleware.isAdmin(header, settings, accessTokens: accessTokens) { return true }
            guard let token = settings.metricsToken, let bearer = AuthorizationHeader(header)?.bearerToken else { return false }
            return ConstantTime.equal(Array(bearer.utf8), Array(token.utf8))
        }
        guard authorized else {
            return Response(
                status: .unauthorized, headers: [.contentType: "text/plain; charset=utf-8", .wwwAuthenticate: "Bearer"],
                body: .init(byteBuffer: ByteBuffer(string: "metrics need Authorization: Bearer <server.metricsToken>\n")))
        }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
    }
}
