import ActionLinks
import ActionLinksConfiguration
import ActionLinksHeaders
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The request context: what the responder needs beyond the request itself.
public struct ServerRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The socket peer's IP address (a proxy's when one is in front).
    public let peerAddress: String?
    /// The client's IP address: the peer's, or the one a trusted proxy names (``ClientIdentity``).
    public var clientAddress: String?
    /// Whether the client reached us over HTTPS: TLS here, a trusted proxy's `https`, or, without
    /// either, any server that is not a development server (production sits behind a TLS proxy).
    public var isSecure = true

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = source.channel.remoteAddress?.ipAddress
        clientAddress = peerAddress
    }
}

/// Routes every request of the link domain (DESIGN §4) with one `switch` on the path: the routes
/// are few and fixed, and the association files are answered before anything else is looked at.
public struct LinkDomainResponder: HTTPResponder {
    public typealias Context = ServerRequestContext

    let service: ActionService
    let pages: ActionPages
    let api: RESTAPI
    let staticFiles: StaticFiles
    let appleAssociation: PrebuiltJSON?
    let assetLinks: PrebuiltJSON?
    let jwks: PrebuiltJSON

    /// A responder over a service and the loaded `www/`.
    public init(service: ActionService, templates: PageTemplates, staticFiles: StaticFiles) throws {
        self.service = service
        self.staticFiles = staticFiles
        pages = ActionPages(service: service, templates: templates)
        api = RESTAPI(service: service)
        let generator = AssociationGenerator(configuration: service.apps)
        appleAssociation = service.apps.appleApps.isEmpty ? nil : PrebuiltJSON(try generator.appleAppSiteAssociation(), maxAge: 300)
        assetLinks = service.apps.androidApps.isEmpty ? nil : PrebuiltJSON(try generator.assetLinks(), maxAge: 300)
        jwks = PrebuiltJSON(Array(service.tokens.jwks), maxAge: 3600)
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        var context = context
        let server = service.settings.server
        let (client, forwardedScheme) = ClientIdentity.resolve(peer: context.peerAddress, headers: request.headers, trustedProxies: server.trustedProxies)
        context.clientAddress = client
        context.isSecure = server.tls != nil || (forwardedScheme.map { $0 == "https" } ?? !server.development)
        let (route, response) = await route(request, context: context)
        service.metrics.request(route, status: response.status.code, duration: ContinuousClock.now - start)
        return response
    }

    func route(_ request: Request, context: Context) async -> (ServerMetrics.Route, Response) {
        let path = request.uri.path
        switch path {
        case "/.well-known/apple-app-site-association", "/apple-app-site-association":
            return (.association, association(appleAssociation, request))
        case "/.well-known/assetlinks.json":
            return (.association, association(assetLinks, request))
        case "/.well-known/jwks.json":
            return (.jwks, association(jwks, request))
        case "/healthz":
            return (.health, Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(string: "ok\n"))))
        case "/metrics":
            return (.metrics, metrics(request, context: context))
        case ActionCodeLink.actionPath:
            return (.actionPage, await pages.action(request, context: context))
        case ActionCodeLink.mobileLinkPath:
            return (.mobileLinkPage, await pages.mobileLink(request, context: context))
        default:
            if path.hasPrefix("/v1/") || path.hasPrefix("/identitytoolkit.googleapis.com/v1/") {
                return (.api, await api.respond(to: request, context: context))
            }
            if path.hasPrefix("/emulator/") { return (.emulator, await api.respond(to: request, context: context)) }
            if path.hasPrefix("/__/") { return (.notFound, pages.notFound(request)) }
            if let response = staticFiles.respond(to: request) { return (.staticFile, response) }
            return (.notFound, pages.notFound(request))
        }
    }

    /// Prometheus metrics, for a scraper that sends `server.metricsToken` (or the admin credential)
    /// as a bearer token. Where the request comes from proves nothing: behind a proxy on the same
    /// machine, every request comes from loopback.
    func metrics(_ request: Request, context: Context) -> Response {
        let settings = service.settings.server
        let authorized = request.headers[values: .authorization].contains { header in
            if RESTAPI.isAdmin(header, settings) { return true }
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
            body: .init(byteBuffer: ByteBuffer(bytes: service.metrics.exposition())))
    }

    /// The files ``AssociationFastPath`` answers on the event loop, by exact path: the ones this
    /// responder answers from memory for `GET` and `HEAD`.
    var prebuiltFiles: [String: PrebuiltJSON] {
        var files = ["/.well-known/jwks.json": jwks]
        if let appleAssociation {
            files["/.well-known/apple-app-site-association"] = appleAssociation
            files["/apple-app-site-association"] = appleAssociation
        }
        if let assetLinks { files["/.well-known/assetlinks.json"] = assetLinks }
        return files
    }

    func association(_ file: PrebuiltJSON?, _ request: Request) -> Response {
        guard request.method == .get || request.method == .head else {
            return Response(status: .methodNotAllowed, headers: [.allow: "GET, HEAD"])
        }
        guard let file else {
            return Response(status: .notFound, headers: [.contentType: "application/json", .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(string: "{}")))
        }
        return file.response(for: request)
    }
}

/// A JSON document built once, with its ETag, answered from memory.
struct PrebuiltJSON: Sendable {
    let body: ByteBuffer
    let headers: HTTPFields
    let etag: String

    init(_ bytes: [UInt8], maxAge: Int) {
        body = ByteBuffer(bytes: bytes)
        etag = "\"" + StaticFiles.digest(bytes) + "\""
        headers = [.contentType: "application/json", .eTag: etag, .cacheControl: "public, max-age=\(maxAge)"]
    }

    func response(for request: Request) -> Response {
        response(method: request.method, ifNoneMatch: request.headers[.ifNoneMatch]).response
    }

    /// The answer to a `GET` or `HEAD`, and its body when it has one.
    func response(method: HTTPRequest.Method, ifNoneMatch: String?) -> (response: Response, body: ByteBuffer?) {
        if ifNoneMatch == etag { return (Response(status: .notModified, headers: headers), nil) }
        if method == .head {
            var headers = headers
            headers[.contentLength] = String(body.readableBytes)
            return (Response(status: .ok, headers: headers), nil)
        }
        return (Response(status: .ok, headers: headers, body: .init(byteBuffer: body)), body)
    }
}

/// The files of `www/` (other than templates, mail and strings), loaded into memory at start.
public struct StaticFiles: Sendable {
    struct File: Sendable {
        let body: ByteBuffer
        let headers: HTTPFields
        let etag: String
    }

    let files: [String: File]

    /// Loads every file under `www` except the `templates`, `mail` and `strings` folders.
    public init(www: String) throws {
        var files: [String: File] = [:]
        let root = URL(fileURLWithPath: www).standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { throw PageTemplatesError(path: www, message: "cannot read the folder") }
        while let relative = walker.nextObject() as? String {
            let first = relative.split(separator: "/").first.map(String.init) ?? ""
            if ["templates", "mail", "strings"].contains(first) || relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { continue }
            let full = (root as NSString).appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue,
                let data = FileManager.default.contents(atPath: full)
            else { continue }
            let bytes = [UInt8](data)
            let etag = "\"" + Self.digest(bytes) + "\""
            var headers: HTTPFields = [
                .contentType: Self.contentType(of: relative), .eTag: etag, .cacheControl: "public, max-age=300",
                .xContentTypeOptions: "nosniff", .referrerPolicy: "no-referrer",
            ]
            // Every HTML page, ours or the site's own, gets the pages' headers (CSP, no framing, ...).
            if relative.lowercased().hasSuffix(".html") || relative.lowercased().hasSuffix(".htm") {
                headers = ActionPages.pageHeaders
                headers[.eTag] = etag
            }
            let file = File(body: ByteBuffer(bytes: bytes), headers: headers, etag: etag)
            files["/" + relative] = file
            if relative == "index.html" { files["/"] = file } else if relative.hasSuffix("/index.html") {
                files["/" + relative.dropLast("index.html".count)] = file
            }
        }
        self.files = files
    }

    func respond(to request: Request) -> Response? {
        guard let file = files[request.uri.path] else { return nil }
        guard request.method == .get || request.method == .head else { return Response(status: .methodNotAllowed, headers: [.allow: "GET, HEAD"]) }
        if request.headers[.ifNoneMatch] == file.etag { return Response(status: .notModified, headers: file.headers) }
        if request.method == .head {
            var headers = file.headers
            headers[.contentLength] = String(file.body.readableBytes)
            return Response(status: .ok, headers: headers)
        }
        return Response(status: .ok, headers: file.headers, body: .init(byteBuffer: file.body))
    }

    static func contentType(of path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "html": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "json": "application/json"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "ico": "image/x-icon"
        case "txt": "text/plain; charset=utf-8"
        case "webmanifest": "application/manifest+json"
        default: "application/octet-stream"
        }
    }

    /// A short content hash for ETags (FNV-1a 64; not a security boundary).
    static func digest(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}

extension HTTPField.Name {
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
    static let xRobotsTag = Self("X-Robots-Tag")!
    static let xFrameOptions = Self("X-Frame-Options")!
    static let contentSecurityPolicy = Self("Content-Security-Policy")!
    static let googAPIKey = Self("x-goog-api-key")!
    static let firebaseLocale = Self("X-Firebase-Locale")!
    static let secFetchSite = Self("Sec-Fetch-Site")!
}
