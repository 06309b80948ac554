import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `/__/auth/handler` (and, on a development server, `/emulator/auth/handler`, where the SDKs in
/// emulator mode open it): the browser's side of federated sign-in.
///
/// - A GET from an SDK (`apiKey`, `providerId`, the app) starts a flow and sends the browser to the
///   provider, with a cookie that binds the flow to this browser.
/// - The provider's answer (`code` and `state` in the query, or posted with `form_post`) is checked
///   against its flow, and the browser goes back to the app that started it: the callback scheme of
///   the registered iOS app, an intent for the Android app, or the allow-listed page of a web app.
///
/// Anything the server cannot tie to a registered app gets an error page, never a redirect.
struct FederatedHandlerRoutes {
    let services: LinkDomainServices
    let pages: ActionPages

    /// The cookie that binds a flow to the browser that started it: a random value whose hash each
    /// flow keeps (one browser may have several flows going).
    static let bindingCookie = "actionlinks_federated"

    var collection: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        routes.add(middleware: PageHeadersMiddleware())
        routes.add(middleware: RequestBodyLimitMiddleware(maximumBytes: services.settings.server.maximumBodyBytes))
        let handler = self
        var paths = ["/__/auth/handler"]
        if services.settings.server.development { paths.append("/emulator/auth/handler") }
        for path in paths {
            routes.get(RouterPath(path)) { request, context in await handler.get(request, context: context) }
            routes.post(RouterPath(path)) { request, context in await handler.post(request, context: context) }
            routes.refuseOtherMethods(RouterPath(path), allowed: [.get, .post])
        }
        return routes
    }

    // MARK: Requests

    func get(_ request: Request, context: ServerRequestContext) async -> Response {
        guard let query = FormFields.decode(request.uri.query ?? "") else { return errorPage(request, language: nil) }
        if query["apiKey"] == nil, query["state"] != nil || query["code"] != nil || query["error"] != nil {
            return await providerReturned(request, parameters: query, raw: request.uri.query ?? "")
        }
        return await start(request, query: query, context: context)
    }

    /// A provider's `form_post` answer.
    func post(_ request: Request, context: ServerRequestContext) async -> Response {
        let body = String(buffer: context.body)
        guard let fields = FormFields.decode(body) else { return errorPage(request, language: nil) }
        return await providerReturned(request, parameters: fields, raw: body)
    }

    // MARK: Start

    func start(_ request: Request, query: [String: String], context: ServerRequestContext) async -> Response {
        let settings = services.settings
        let language = query["hl"].flatMap { $0.utf8.count <= 35 && $0.utf8.allSatisfy(Self.isTagByte) ? $0 : nil }
        guard let apiKey = query["apiKey"], settings.project.apiKey(matching: apiKey) != nil,
            let providerID = query["providerId"], (1...128).contains(providerID.utf8.count),
            let authType = query["authType"], (1...40).contains(authType.utf8.count), authType.utf8.allSatisfy(Self.isTagByte)
        else { return errorPage(request, language: language) }
        let eventID = query["eventId"]
        if let eventID, !(1...128).contains(eventID.utf8.count) || !eventID.utf8.allSatisfy(Self.isEventByte) {
            return errorPage(request, language: language)
        }
        var start = FederatedSignInService.Start(
            providerID: providerID, tenantID: query["tid"] ?? "", kind: .webPage, returnTo: "", eventID: eventID, authType: authType)
        if let bundleID = query["ibi"] {
            // iOS: the callback scheme comes from the registered app that `ibi` and `clientId` (or
            // `appId`) name together, never from the request.
            let apps = services.apps.appleApps.filter { $0.bundleID == bundleID }
            let scheme: String?
            if let clientID = query["clientId"] {
                scheme = apps.first { $0.clientID == clientID }?.clientIDURLScheme
            } else if let appID = query["appId"] {
                scheme = apps.first { $0.googleAppID == appID }?.googleAppIDURLScheme
            } else {
                scheme = nil
            }
            guard let scheme, eventID != nil, let session = Self.sessionHash(query["sessionId"]) else {
                return errorPage(request, language: language)
            }
            (start.kind, start.returnTo, start.sessionHash) = (.iOSApp, scheme, session)
        } else if let package = query["apn"] {
            // Android: see FederatedHandlerRoutes+Android.swift.
            switch androidStart(query, package: package) {
            case .success(let app):
                (start.kind, start.returnTo, start.sessionHash) = (.androidApp, app.package, app.sessionHash)
                start.androidPublicKey = app.publicKey
            case .failure(let refusal):
                return androidErrorPage(request, language: language, refusal: refusal)
            }
        } else if let redirect = query["redirectUrl"], let allowed = services.policy.evaluate(redirect).url {
            (start.kind, start.returnTo) = (.webPage, allowed)
        } else {
            return errorPage(request, language: language)
        }
        if let scopes = query["scopes"] {
            start.extraScopes = scopes.split(separator: ",").map(String.init)
            guard start.extraScopes.allSatisfy({ $0.utf8.allSatisfy(Self.isScopeByte) }) else {
                return errorPage(request, language: language)
            }
        }
        if let custom = query["customParameters"], !custom.isEmpty {
            // A JSON object of strings; anything else is refused.
            guard let object = try? JSONDecoder().decode([String: String].self, from: Data(custom.utf8)) else {
                return errorPage(request, language: language)
            }
            start.customParameters = object.map { ($0.key, $0.value) }.sorted { $0.0 < $1.0 }
        }
        start.language = language
        var binding = request.cookies[Self.bindingCookie]?.value ?? ""
        if binding.utf8.count != 43 || !binding.utf8.allSatisfy(Self.isEventByte) { binding = Secrets.token() }
        start.bindingHash = FederatedFlow.hash(binding)
        let location: String
        do throws(ActionError) {
            if !start.tenantID.isEmpty { _ = try await services.tenants.policy(for: start.tenantID) }
            location = try await services.federated.authorizationURL(for: start)
        } catch  where error.code == .operationNotAllowed || error.code == .projectDisabled {
            // A known app asking for a provider it may not use hears it the way its SDK expects.
            let flow = FederatedFlow(
                stateHash: "", tenantID: start.tenantID, providerID: providerID, kind: start.kind, returnTo: start.returnTo,
                eventID: eventID, authType: authType, sessionHash: nil, bindingHash: nil, nonce: "",
                codeVerifier: nil, redirectURI: handlerURL(request), createdAt: .epoch, expiresAt: .epoch)
            return returnToApp(
                .appError(flow, code: FederatedSignInService.authCode(error.code), message: error.detail ?? error.code.rawValue),
                request: request, language: language)
        } catch {
            return errorPage(request, language: language, error: error)
        }
        // SameSite=Lax is enough for an answer by redirect (a top-level GET); a `form_post` answer
        // is a cross-site POST, which only a SameSite=None cookie (which must be Secure) goes with.
        let attributes = context.isSecure ? "SameSite=None; Secure" : "SameSite=Lax"
        var response = Response.redirect(to: location, type: .found)
        response.headers[.setCookie] =
            "\(Self.bindingCookie)=\(binding); Path=/; Max-Age=\(FederatedFlow.lifetime.components.seconds); HttpOnly; \(attributes)"
        return response
    }

    /// The handler URL of the first link domain (where an error before any flow says it came from).
    func handlerURL(_ request: Request) -> String { services.settings.linkDomains[0].origin + "/__/auth/handler" }

    /// `sessionId` as the iOS SDK sends it: the SHA-256 (64 hex digits) of the secret it keeps.
    static func sessionHash(_ text: String?) -> String? {
        guard let text, text.utf8.count == 64, text.utf8.allSatisfy({ isHexByte($0) }) else { return nil }
        return text.lowercased()
    }

    static func isHexByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// Letters, digits, `-`, `_` and `:` (event IDs: iOS letters, JS `uid:::digits`, Android UUIDs).
    static func isEventByte(_ byte: UInt8) -> Bool {
        (0x30...0x3A).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
    }

    static func isTagByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
    }

    /// RFC 6749's scope-token characters.
    static func isScopeByte(_ byte: UInt8) -> Bool {
        byte == 0x21 || (0x23...0x5B).contains(byte) || (0x5D...0x7E).contains(byte)
    }

    // MARK: The provider's answer

    func providerReturned(_ request: Request, parameters: [String: String], raw: String) async -> Response {
        do {
            let outcome = try await services.federated.providerReturned(
                parameters: parameters, query: raw, binding: request.cookies[Self.bindingCookie]?.value)
            return returnToApp(outcome, request: request, language: nil)
        } catch {
            return errorPage(request, language: nil, error: error)
        }
    }

    /// Sends the browser back: to the iOS app's callback scheme (`<scheme>://firebaseauth/link`,
    /// the inner URL `/__/auth/callback` with `link` or `firebaseError`, `authType` and `eventId`),
    /// to the Android app (an intent, behind a button: browsers open intents on a tap), or to a URL.
    func returnToApp(_ outcome: FederatedSignInService.Return, request: Request, language: String?) -> Response {
        let flow: FederatedFlow
        var items: [(String, String)]
        switch outcome {
        case .redirect(let url):
            return .redirect(to: url, type: .found)
        case .app(let returned, let link):
            flow = returned
            items = [("authType", flow.authType), ("link", link)]
        case .appError(let returned, let code, let message):
            flow = returned
            let error = IdentityToolkitJSON.encode(["code": code, "message": message])
            items = [("firebaseError", String(decoding: error, as: UTF8.self)), ("authType", flow.authType)]
            if flow.kind == .webPage {
                return .redirect(to: URLText.url(flow.returnTo, fragment: "error=" + code), type: .found)
            }
        }
        if let eventID = flow.eventID { items.append(("eventId", eventID)) }
        switch flow.kind {
        case .androidApp:
            return androidReturn(flow, items: items, request: request, language: language)
        default:
            let origin = Self.origin(of: flow.redirectURI) ?? services.settings.linkDomains[0].origin
            let inner =
                origin + "/__/auth/callback?" + items.map { "\($0.0)=\(PercentEncoding.encodeComponent($0.1))" }.joined(separator: "&")
            let location = flow.returnTo + "://firebaseauth/link?deep_link_id=" + PercentEncoding.encodeComponent(inner)
            return .redirect(to: location, type: .found)
        }
    }

    /// `scheme://host[:port]` of an absolute URL.
    static func origin(of url: String) -> String? {
        guard let parts = try? URLParts(url), let host = parts.host else { return nil }
        return parts.scheme + "://" + host + (parts.port.map { $0.isEmpty ? "" : ":" + $0 } ?? "")
    }

    /// The page for a request that cannot go anywhere: 400 (503 when a store or provider is down).
    func errorPage(_ request: Request, language: String?, error: ActionError? = nil) -> Response {
        let pageLanguage = pages.templates.language(requested: language, acceptLanguage: request.headers[.acceptLanguage])
        if let error, error.code == .unavailable {
            return pages.outcome(.unavailable, pageLanguage, status: .serviceUnavailable)
        }
        return pages.result(
            status: .badRequest, language: pageLanguage, title: "federated.error.title", body: "federated.error.body",
            values: ["appName": services.settings.project.appName])
    }
}
