import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksHeaders
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// What the action pages do with a link's code (`/__/auth/action` GET and POST, `/__/auth/links`):
/// this server's own codes (``ActionPages``) or the fronted project's (``UpstreamActionFlow``),
/// chosen where the server is put together. A GET only shows (mail scanners fetch every link); a
/// POST with a valid form token consumes and applies.
protocol ActionFlow: Sendable {
    /// `GET /__/auth/action`: the page for a link, never consuming its code.
    func landing(_ request: Request) async -> Response
    /// `POST /__/auth/action`: the form's post.
    func confirm(_ request: Request, context: ServerRequestContext) async -> Response
    /// `GET /__/auth/links`: a mobile link's browser fallback.
    func mobileLink(_ request: Request, context: ServerRequestContext) async -> Response
}

/// The pages of `/__/auth/action` and `/__/auth/links`, and their flow for this server's own codes
/// (``ActionFlow``): a GET only shows (mail scanners fetch every link), a POST with a valid form
/// token consumes and applies.
package struct ActionPages: ActionFlow {
    let completer: ActionCompleter
    /// The code a sign-in link's page shows beside its form.
    let signInCodes: SignInCodes
    let tokens: TokenService
    /// The tenants, whose password policies the reset form states and checks.
    let tenants: TenantDirectory
    let settings: ServiceSettings
    let policy: ContinueURLPolicy
    let apps: AppsConfiguration
    let origins: WebOrigins
    /// Ties each form to its code and mode.
    let formTokens: SignedToken
    let devices: RememberedDevice
    let clock: any ServiceClock
    let templates: PageTemplates
    /// The pages and compiled forms kept for every request (``PageCache``).
    let cache = PageCache()
    /// Whether the page's text masks the addresses (fronting a Firebase project, whose page does).
    let masksAddresses: Bool

    package init(services: LinkDomainServices, templates: PageTemplates, masksAddresses: Bool = false) {
        completer = services.completer
        signInCodes = services.signInCodes
        tokens = services.tokens
        tenants = services.tenants
        settings = services.settings
        policy = services.policy
        apps = services.apps
        origins = services.origins
        formTokens = SignedToken(.form, formKey: services.keys.formKey)
        devices = RememberedDevice(formKey: services.keys.formKey)
        clock = services.clock
        self.templates = templates
        self.masksAddresses = masksAddresses
    }

    /// The modes that have a page: every mode of this server's own codes.
    static let pageModes: Set<ActionCodeLink.Mode> = [
        .signIn, .resetPassword, .verifyEmail, .verifyAndChangeEmail, .recoverEmail, .revertSecondFactorAddition,
    ]

    /// The modes that have a page in upstream mode (``UpstreamActionFlow``): a second-factor revert
    /// is left to Google's own handler, which shows the factor it removes.
    static let upstreamPageModes: Set<ActionCodeLink.Mode> = pageModes.subtracting([.revertSecondFactorAddition])

    // MARK: Outcomes

    /// The pages that end a flow without a form.
    typealias Outcome = PageOutcome

    func notFound(_ request: Request) -> Response {
        outcome(.notFound, templates.language(requested: nil, acceptLanguage: request.headers[.acceptLanguage]), status: .notFound)
    }

    func failure(_ error: ActionError, _ language: String) -> Response {
        failurePage(error, language).response
    }

    func failurePage(_ error: ActionError, _ language: String) -> PageAnswer {
        switch error.code {
        case .expiredOOBCode: outcomePage(.expired, language, status: .gone)
        case .unavailable: outcomePage(.unavailable, language, status: .serviceUnavailable)
        case .userDisabled: outcomePage(.disabled, language, status: .forbidden)
        case .tooManyAttempts: outcomePage(.tooMany, language, status: .tooManyRequests)
        default: outcomePage(.invalid, language)
        }
    }

    func outcome(_ outcome: Outcome, _ language: String, status: HTTPResponse.Status = .badRequest) -> Response {
        outcomePage(outcome, language, status: status).response
    }

    /// The page of an outcome, rendered once per language (``outcomeBody(_:_:)``).
    func outcomePage(_ outcome: Outcome, _ language: String, status: HTTPResponse.Status = .badRequest) -> PageAnswer {
        PageAnswer(status: status, body: outcomeBody(outcome, language))
    }

    /// A result page: `title` and `body` are string keys, filled with `values`.
    func result(
        status: HTTPResponse.Status, language: String, title: String, body: String, values: [String: String],
        continueLink: (url: String, label: String)? = nil
    ) -> Response {
        resultPage(status: status, language: language, title: title, body: body, values: values, continueLink: continueLink).response
    }

    func resultPage(
        status: HTTPResponse.Status, language: String, title: String, body: String, values: [String: String],
        continueLink: (url: String, label: String)? = nil, resetOffer: ResultView.ResetOffer? = nil
    ) -> PageAnswer {
        let view = ResultView(
            frame: templates.frame(language, title: templates.text(title, language, values), appName: settings.project.appName),
            body: templates.text(body, language, values), continueLink: continueLink, resetOffer: resetOffer)
        return PageAnswer(status: status, body: templates.render(view))
    }

    func html(_ page: ByteBuffer, status: HTTPResponse.Status) -> Response {
        Response(status: status, body: .init(byteBuffer: page))
    }

    /// Whether a form post comes from one of our own pages. `Sec-Fetch-Site` decides when the
    /// browser sends it; otherwise the `Origin` must be one of the link domains (`null`, which
    /// sandboxed frames and some redirects send, is not); without either, the `Referer`'s origin
    /// must be. A post that carries none of the three is refused: every browser that can show the
    /// page sends at least one of them.
    func isSameSite(_ request: Request) -> Bool {
        if let site = request.headers[.secFetchSite] { return site == "same-origin" }
        if let origin = request.headers[.origin] { return origins.isLinkDomain(origin) }
        if let referer = request.headers[.referer], let parts = try? URLParts(referer), let host = parts.host {
            let origin = parts.scheme + "://" + host + (parts.port.map { $0.isEmpty ? "" : ":" + $0 } ?? "")
            return origins.isLinkDomain(origin)
        }
        return false
    }
}

/// A page as its parts: what a route answers (``response``), and what the event-loop fast path
/// writes itself (``ActionPageFastPath``), with the same headers in the same order.
package struct PageAnswer: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields = [:]
    /// The HTML; `nil` for a redirect.
    var body: ByteBuffer?

    var response: Response {
        guard let body else { return Response(status: status, headers: headers) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }

    /// The response head as Hummingbird and ``PageHeadersMiddleware`` make it for ``response``
    /// (`Content-Length` after the page's own headers, then the pages' headers), before `Date`.
    var head: HTTPResponse {
        var fields = headers
        if !fields.contains(.contentLength) { fields[.contentLength] = String(body?.readableBytes ?? 0) }
        PageHeadersMiddleware.apply(to: &fields)
        return HTTPResponse(status: status, headerFields: fields)
    }

    /// The head of a page without headers of its own (all but a redirect), its lines but the
    /// status line, the length and `Date` encoded once.
    static let cachedHead = CachedHead(status: nil, beforeLength: [:], afterLength: PageHeadersMiddleware.headers)

    /// The whole answer as ``HTTP1Answer/encode(_:body:)`` writes ``head`` with `Date: date` added
    /// (as Hummingbird adds it). A page without headers of its own is written from
    /// ``cachedHead``: no header fields are made, checked or encoded per request.
    func encoded(date: String) -> ByteBuffer {
        let body = body.flatMap { $0.readableBytes > 0 ? $0 : nil }
        guard headers.isEmpty else {
            var head = head
            head.headerFields[.date] = date
            return HTTP1Answer.encode(head, body: body)
        }
        return Self.cachedHead.encode(status: status, body: body, date: date)
    }
}
