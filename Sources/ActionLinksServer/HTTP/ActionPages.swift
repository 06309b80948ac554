import ActionLinks
import ActionLinksConfiguration
import ActionLinksHeaders
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// The pages of `/__/auth/action` and `/__/auth/links`: a GET only shows (mail scanners fetch every
/// link), a POST with a valid form token consumes and applies.
struct ActionPages: Sendable {
    let completer: ActionCompleter
    let tokens: TokenService
    let passwordPolicy: PasswordPolicy
    let settings: ServiceSettings
    let policy: ContinueURLPolicy
    let apps: AppsConfiguration
    let origins: WebOrigins
    /// The key of form tokens and remembered-device cookies.
    let formKey: SymmetricKey
    let templates: PageTemplates
    /// The project this server fronts (upstream mode), which checks and applies every code.
    let upstream: UpstreamClient?
    /// Sends links through this domain in upstream mode (the recovered address's password reset).
    let upstreamSender: UpstreamLinkSender?

    init(services: LinkDomainServices, templates: PageTemplates) {
        completer = services.completer
        tokens = services.tokens
        passwordPolicy = services.passwordPolicy
        settings = services.settings
        policy = services.policy
        apps = services.apps
        origins = services.origins
        formKey = services.keys.formKey
        self.templates = templates
        upstream = services.upstream
        upstreamSender = services.upstream.map {
            UpstreamLinkSender(upstream: $0, issuer: services.issuer, settings: services.settings, clock: services.clock)
        }
    }
    /// How long a rendered form can be submitted.
    static let formLifetime: Int64 = 3600

    // MARK: /__/auth/action

    func landing(_ request: Request) async -> Response {
        if let upstream { return await upstreamLanding(request, upstream: upstream) }
        let acceptLanguage = request.headers[.acceptLanguage]
        switch landingStart(uri: request.uri, acceptLanguage: acceptLanguage) {
        case .page(let page): return page.response
        case .lookUp(let link, let language):
            let record: Result<ActionCodeRecord, ActionError>
            do throws(ActionError) {
                record = .success(try await completer.check(code: link.oobCode, tenantID: link.tenantID ?? ""))
            } catch {
                record = .failure(error)
            }
            return landingPage(link: link, lookup: record, language: language, acceptLanguage: acceptLanguage) { record in
                isRememberedDevice(request, email: record.email, tenantID: record.tenantID)
            }.response
        }
    }

    /// The first half of a landing page: the link read from the request, or the page that refuses it.
    enum LandingStart {
        case page(PageAnswer)
        /// The code must be looked up; `language` is the page's language until the code names one.
        case lookUp(ActionCodeLink, language: String)
    }

    func landingStart(uri: URI, acceptLanguage: String?) -> LandingStart {
        let language = templates.language(requested: uri.queryParameters["lang"].map(String.init), acceptLanguage: acceptLanguage)
        guard let link = ActionCodeLink.parse("https://link.invalid" + uri.string),
            link.apiKey == nil || link.apiKey == settings.project.apiKey
        else { return .page(outcomePage(.invalid, language)) }
        return .lookUp(link, language: language)
    }

    /// The second half: the page for the looked-up code (``ActionCompleter/check(code:tenantID:)``'s
    /// answer); `isRemembered` tells whether the browser is a remembered device for the record.
    func landingPage(
        link: ActionCodeLink, lookup: Result<ActionCodeRecord, ActionError>, language: String, acceptLanguage: String?,
        isRemembered: (ActionCodeRecord) -> Bool
    ) -> PageAnswer {
        let record: ActionCodeRecord
        switch lookup {
        case .success(let found): record = found
        case .failure(let error): return failurePage(error, language)
        }
        guard record.mode == link.mode, Self.pageModes.contains(record.mode) else { return outcomePage(.invalid, language) }
        let pageLanguage = templates.language(requested: link.languageCode ?? record.languageCode, acceptLanguage: acceptLanguage)
        // As Firebase's hosted page does, a sign-in link goes on to the app's page, where its own
        // Firebase SDK completes the sign-in (`signInWithEmailLink(email, location.href)`); the
        // continue URL is checked again, and nothing is consumed here.
        if record.mode == .signIn, settings.pages.signIn == .redirect, let stored = record.continueURL,
            let url = policy.evaluate(stored).url
        {
            var items = [("apiKey", settings.project.apiKey), ("oobCode", link.oobCode), ("mode", "signIn"), ("lang", pageLanguage)]
            if !record.tenantID.isEmpty { items.append(("tenantId", record.tenantID)) }
            return PageAnswer(status: .seeOther, headers: [.location: Self.url(url, adding: items)], body: nil)
        }
        var state = FormState()
        state.remembered = record.mode == .signIn && isRemembered(record)
        return formPage(for: record, code: link.oobCode, language: pageLanguage, state: state)
    }

    /// `url` with `items` added to its query (before any fragment), each name and value
    /// percent-encoded (a provider's custom parameter named `a&state` stays one parameter).
    static func url(_ url: String, adding items: [(String, String)]) -> String {
        let query = items.map { "\(PercentEncoding.encodeComponent($0.0))=\(PercentEncoding.encodeComponent($0.1))" }.joined(separator: "&")
        let hash = url.firstIndex(of: "#")
        let base = hash.map { String(url[..<$0]) } ?? url
        let fragment = hash.map { String(url[$0...]) } ?? ""
        let separator = base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
        return base + separator + query + fragment
    }

    /// `url` with its fragment replaced by `fragment`.
    static func url(_ url: String, fragment: String) -> String {
        (url.firstIndex(of: "#").map { String(url[..<$0]) } ?? url) + "#" + fragment
    }

    /// The modes that have a page (a second-factor revert is completed in the app).
    static let pageModes: Set<ActionCodeLink.Mode> = [.signIn, .resetPassword, .verifyEmail, .verifyAndChangeEmail, .recoverEmail]

    func confirm(_ request: Request, context: ServerRequestContext) async -> Response {
        if let upstream { return await upstreamConfirm(request, context: context, upstream: upstream) }
        // The body was collected (and its size checked) by RequestBodyLimitMiddleware.
        let fields = (try? URLEncodedFormDecoder().decode(ConfirmForm.self, from: String(buffer: context.body)))
        let language = templates.language(requested: fields?.lang, acceptLanguage: request.headers[.acceptLanguage])
        guard let fields, let code = fields.oobCode, let mode = fields.mode.flatMap(ActionCodeLink.Mode.init(rawValue:)),
            Self.pageModes.contains(mode), let token = fields.form
        else { return outcome(.invalid, language) }
        // The token ties the form to its code and mode: a valid one means this browser was shown this form.
        guard isSameSite(request), verifyFormToken(token, code: code, mode: mode) else {
            return outcome(.form, language, status: .forbidden)
        }
        let consumer = "page " + (context.clientAddress ?? "?")
        var state = FormState()
        do {
            let done: ActionCompleter.Completion
            switch mode {
            case .signIn:
                var email = (fields.email ?? "").trimmingCharacters(in: .whitespaces)
                state.emailValue = email
                if email.isEmpty, fields.remembered == "1" {
                    let record = try await completer.check(code: code)
                    if isRememberedDevice(request, email: record.email, tenantID: record.tenantID) { email = record.email }
                }
                if email.isEmpty {
                    state.emailError = templates.text("emailMissing", language)
                    return form(
                        for: try await completer.check(code: code), code: code, language: language, state: state, status: .badRequest)
                }
                done = try await completer.signIn(code: code, email: email, tenant: nil, consumer: consumer)
            case .resetPassword:
                let password = fields.password ?? ""
                state.passwordError = passwordProblem(password, language)
                if state.passwordError == nil, password != fields.passwordAgain {
                    state.passwordAgainError = templates.text("passwordsDiffer", language)
                }
                if state.hasError {
                    return form(
                        for: try await completer.check(code: code), code: code, language: language, state: state, status: .badRequest)
                }
                done = try await completer.resetPassword(code: code, newPassword: password, tenant: nil, consumer: consumer)
            default:
                done = try await completer.apply(code: code, expectedMode: mode, tenant: nil, consumer: consumer)
            }
            var values = ["email": done.account.email ?? done.record.email, "appName": settings.project.appName]
            if let newEmail = done.record.newEmail { values["newEmail"] = newEmail }
            // Redirect targets are checked again now: the allow-list may have changed since the link was issued.
            let continueLink = done.record.continueURL.flatMap { policy.evaluate($0).url }.map {
                (url: $0, label: templates.text("continue", language))
            }
            var response = result(
                status: .ok, language: language, title: "\(mode.rawValue).done.title", body: "\(mode.rawValue).done.body", values: values,
                continueLink: continueLink)
            if mode == .signIn {
                // A web app on the continue URL gets the session too: a one-time custom token in the
                // fragment (never sent to any server), for `signInWithCustomToken`.
                if let continueLink {
                    let token = try await tokens.handOffToken(
                        accountID: done.account.localID, tenantID: done.record.tenantID, now: Timestamp.now)
                    let target = Self.url(continueLink.url, fragment: "customToken=" + token)
                    response = Response(status: .seeOther, headers: [.location: target])
                }
                response.headers[.setCookie] = deviceCookie(email: done.record.email, tenantID: done.record.tenantID, context: context)
            }
            return response
        } catch let error where error.code == .invalidEmail || error.code == .missingEmail {
            guard let record = try? await completer.check(code: code) else { return outcome(.invalid, language) }
            state.emailError = templates.text(error.code == .missingEmail ? "emailMissing" : "signIn.emailMismatch", language)
            return form(for: record, code: code, language: language, state: state, status: .badRequest)
        } catch let error where error.code == .weakPassword || error.code == .missingPassword {
            guard let record = try? await completer.check(code: code) else { return outcome(.invalid, language) }
            state.passwordError = passwordProblem(fields.password ?? "", language) ?? templates.text("passwordMissing", language)
            return form(for: record, code: code, language: language, state: state, status: .badRequest)
        } catch let error where error.code == .invalidOOBCode {
            // The form was ours, for this code and mode, and the code no longer works: the usual cause
            // is a second submission of the same form (a double tap, or the back button).
            return outcome(.used, language)
        } catch {
            return failure(error, language)
        }
    }

    /// What the person typed and what was wrong with it, for a form shown again.
    struct FormState {
        var remembered = false
        var emailValue: String?
        var emailError: String?
        var passwordError: String?
        var passwordAgainError: String?
        /// In upstream mode, the link's fields the form carries back.
        var upstreamFields: ActionFormView.UpstreamFields?
        /// Said instead of the mode's introduction (upstream did not answer; nothing was changed).
        var notice: String?
        var hasError: Bool { emailError != nil || passwordError != nil || passwordAgainError != nil }
    }

    /// Why a new password is refused, in `language`, or `nil` when the policy accepts it.
    func passwordProblem(_ password: String, _ language: String) -> String? {
        switch passwordPolicy.problem(password) {
        case nil: nil
        case .missing: templates.text("passwordMissing", language)
        case .tooShort(let minimum): templates.text("passwordTooShort", language, ["minimum": String(minimum)])
        case .tooLong(let maximum): templates.text("passwordTooLong", language, ["maximum": String(maximum)])
        }
    }

    func form(for record: ActionCodeRecord, code: String, language: String, state: FormState, status: HTTPResponse.Status = .ok) -> Response
    {
        formPage(for: record, code: code, language: language, state: state, status: status).response
    }

    func formPage(
        for record: ActionCodeRecord, code: String, language: String, state: FormState, status: HTTPResponse.Status = .ok
    ) -> PageAnswer {
        let mode = record.mode.rawValue
        // Fronting a Firebase project, the page's text masks the addresses (the password form's
        // hidden username keeps the full one, for password managers).
        let shown = upstream == nil ? { $0 } : EmailAddress.masked
        var values = ["appName": settings.project.appName, "email": shown(record.email)]
        if let newEmail = record.newEmail { values["newEmail"] = shown(newEmail) }
        let minimum = String(settings.passwords.minimumLength)
        var view = ActionFormView(
            frame: templates.frame(language, title: templates.text("\(mode).title", language, values), appName: settings.project.appName),
            intro: templates.text("\(mode).intro", language, values), button: templates.text("\(mode).button", language, values),
            mode: mode, oobCode: code, formToken: formToken(code: code, mode: record.mode, now: Int64(Date().timeIntervalSince1970)),
            email: record.email, minimumLength: minimum, errorLabel: templates.text("errorLabel", language))
        if record.mode == .signIn {
            if state.remembered {
                view.remembered = true
                view.intro = templates.text("signIn.knownIntro", language, values)
            } else {
                view.emailField = .init(
                    label: templates.text("emailLabel", language), help: templates.text("emailHelp", language),
                    value: state.emailValue.flatMap { $0.isEmpty ? nil : $0 }, error: state.emailError)
            }
        }
        view.upstreamFields = state.upstreamFields
        if let notice = state.notice { view.intro = notice }
        if record.mode == .resetPassword {
            view.passwordFields = .init(
                label: templates.text("passwordLabel", language), help: templates.text("passwordHelp", language, ["minimum": minimum]),
                againLabel: templates.text("passwordAgainLabel", language), error: state.passwordError, againError: state.passwordAgainError
            )
        }
        return PageAnswer(status: status, body: templates.render(view))
    }

    // MARK: /__/auth/links

    /// The browser fallback of a mobile link: only an inner link to our own action handler is shown.
    /// The code is looked up (never consumed): an expired or used link says so here, and a link that
    /// asks for a newer Android app than can open it gets the update page.
    func mobileLink(_ request: Request, context: ServerRequestContext) async -> Response {
        let acceptLanguage = request.headers[.acceptLanguage]
        let language = templates.language(requested: nil, acceptLanguage: acceptLanguage)
        if upstream != nil { return upstreamMobileLink(request, language: language) }
        // The library unwraps the wrapper exactly as the SDKs do, decoding `link` once. Only a
        // wrapper around a link to our own action handler, with nothing nested further, is shown.
        let (layers, unwrapped) = LinkUnwrapper.unwrap("https://link.invalid" + request.uri.string)
        guard layers.count == 2, layers[0].kind == .mobileLinkWrapper, layers[0].innerParameter == "link",
            case .success(let parts) = unwrapped, let host = parts.host?.lowercased(), parts.path == ActionCodeLink.actionPath,
            let domain = settings.linkDomains.first(where: { $0.host == host && $0.port == parts.port.flatMap { Int($0) } }),
            let link = ActionCodeLink.parse(parts.string)
        else { return outcome(.invalid, language) }
        let record: ActionCodeRecord
        do {
            record = try await completer.check(code: link.oobCode, tenantID: link.tenantID ?? "")
        } catch {
            return failure(error, templates.language(requested: link.languageCode, acceptLanguage: acceptLanguage))
        }
        let pageLanguage = templates.language(requested: record.languageCode ?? link.languageCode, acceptLanguage: acceptLanguage)
        guard record.mode == link.mode else { return outcome(.invalid, pageLanguage) }
        let appSettings = AppSettings(json: record.appSettings)
        // Every URL on this page is rebuilt from what was stored with the code: the wrapper's own
        // parameters (a continueUrl appended to the link, say) never reach the page.
        let webLink = ActionCodeLink(
            mode: record.mode, oobCode: link.oobCode, apiKey: settings.project.apiKey,
            continueURL: record.continueURL.flatMap { policy.evaluate($0).url }, languageCode: record.languageCode,
            tenantID: record.tenantID
        ).webLink(on: domain)
        let userAgent = request.headers[.userAgent] ?? ""
        let onAndroid = userAgent.contains("Android")
        let onIOS = !onAndroid && (userAgent.contains("iPhone") || userAgent.contains("iPad") || userAgent.contains("iPod"))
        let appName = settings.project.appName
        var values = ["appName": appName]
        var view = MobileLinkView(
            frame: templates.frame(pageLanguage, title: templates.text("links.title", pageLanguage, values), appName: appName),
            intro: templates.text("links.intro", pageLanguage, values), webLink: webLink,
            continueWeb: templates.text("links.continueWeb", pageLanguage), openApp: templates.text("links.openApp", pageLanguage),
            appStore: templates.text("links.appStore", pageLanguage), playStore: templates.text("links.playStore", pageLanguage))
        let apple = apps.appleApps.first { $0.bundleID == appSettings.iOSBundleId } ?? apps.appleApps.first
        let android =
            apps.androidApps.first { $0.packageName == appSettings.androidPackageName } ?? apps.androidApps.first
        if let apple, let storeID = apple.appStoreID {
            view.smartBanner = "app-id=\(storeID), app-argument=\(webLink)"
            if !onAndroid { view.appStoreLink = "https://apps.apple.com/app/id" + storeID }
        }
        if let android, !onIOS { view.playStoreLink = "https://play.google.com/store/apps/details?id=" + android.packageName }
        // Checked again here: a code issued before versions were checked may carry free text.
        if onAndroid, let android, let minimum = appSettings.androidMinimumVersion, !minimum.isEmpty, minimum.utf8.count <= 10,
            minimum.utf8.allSatisfy({ (0x30...0x39).contains($0) })
        {
            // The link asks for a newer app than the one that may be installed: update first.
            values["version"] = minimum
            view.frame.title = templates.text("minimumVersion.title", pageLanguage, values)
            view.intro = templates.text("minimumVersion.intro", pageLanguage, values)
            view.update = (
                "https://play.google.com/store/apps/details?id=" + android.packageName,
                templates.text("minimumVersion.update", pageLanguage)
            )
            view.playStoreLink = nil
            return html(templates.render(view), status: .ok)
        }
        if onAndroid, let android, let query = webLink.split(separator: "?", maxSplits: 1).last {
            view.appLink =
                "intent://\(domain.description)\(ActionCodeLink.actionPath)?\(query)#Intent;scheme=\(domain.scheme);package=\(android.packageName);"
                + "S.browser_fallback_url=\(PercentEncoding.encodeComponent(webLink));end"
        } else if onIOS, let bundle = appSettings.iOSBundleId, apps.appleApps.contains(where: { $0.bundleID == bundle }) {
            // A universal link to the page's own domain stays in Safari; the custom scheme that
            // Firebase Dynamic Links used (the bundle ID) hands the link to the app.
            view.appLink = "\(bundle)://google/link/?deep_link_id=\(PercentEncoding.encodeComponent(webLink))"
        }
        return html(templates.render(view), status: .ok)
    }

    // MARK: Outcomes

    /// The pages that end a flow without a form.
    enum Outcome: String {
        case expired, used, invalid, unavailable, form, notFound
        /// Upstream's answers (upstream mode): the link may have worked before an answer was lost,
        /// the account is disabled, too many attempts.
        case maybeDone, disabled, tooMany
    }

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
        default: outcomePage(.invalid, language)
        }
    }

    func outcome(_ outcome: Outcome, _ language: String, status: HTTPResponse.Status = .badRequest) -> Response {
        outcomePage(outcome, language, status: status).response
    }

    func outcomePage(_ outcome: Outcome, _ language: String, status: HTTPResponse.Status = .badRequest) -> PageAnswer {
        resultPage(
            status: status, language: language, title: "error.\(outcome.rawValue).title", body: "error.\(outcome.rawValue).body",
            values: ["appName": settings.project.appName])
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

    // MARK: Remembered device

    /// The cookie that lets a browser which already proved an address sign in with that address's
    /// next link without typing it again (Firebase's web SDK keeps the address in local storage for
    /// the same reason). It holds an HMAC of the address, never the address.
    static let deviceCookieName = "actionlinks_device"

    /// How long a remembered device stays remembered.
    static let deviceLifetime: Int64 = 30 * 86_400

    /// `<expiry>.<HMAC(form key, "device|" + tenant + "|" + address + "|" + expiry)>`: the cookie is
    /// bound to the tenant and the address, and the server refuses it after its expiry whatever the
    /// browser does with `Max-Age`.
    func deviceToken(email: String, tenantID: String, expires: Int64) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("device|\(tenantID)|\(email)|\(expires)".utf8), using: formKey)
        return "\(expires)." + Base64URL.encode(Data(mac))
    }

    func isRememberedDevice(_ request: Request, email: String, tenantID: String, now: Int64 = Int64(Date().timeIntervalSince1970)) -> Bool {
        guard let value = request.cookies[Self.deviceCookieName]?.value else { return false }
        let parts = value.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[0].utf8.count <= 12, let expires = Int64(parts[0]), expires > now,
            expires <= now + Self.deviceLifetime
        else { return false }
        return ConstantTime.equal(Array(value.utf8), Array(deviceToken(email: email, tenantID: tenantID, expires: expires).utf8))
    }

    /// `HttpOnly`, only for `/__/auth/`, `SameSite=Lax` (sent when a link is tapped in a webmail),
    /// `Secure` unless the server itself is a plain-HTTP development server on loopback.
    func deviceCookie(email: String, tenantID: String, context: ServerRequestContext) -> String {
        let expires = Int64(Date().timeIntervalSince1970) + Self.deviceLifetime
        return "\(Self.deviceCookieName)=\(deviceToken(email: email, tenantID: tenantID, expires: expires)); Path=/__/auth/; "
            + "Max-Age=\(Self.deviceLifetime); HttpOnly; SameSite=Lax" + (context.isSecure ? "; Secure" : "")
    }

    // MARK: Forms

    /// `<seconds>.<HMAC(form key, "form|" + code + "|" + mode + "|" + seconds)>`: ties a form to its
    /// code, its mode and its time.
    func formToken(code: String, mode: ActionCodeLink.Mode, now: Int64) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("form|\(code)|\(mode.rawValue)|\(now)".utf8), using: formKey)
        return "\(now)." + Base64URL.encode(Data(mac))
    }

    func verifyFormToken(_ token: String, code: String, mode: ActionCodeLink.Mode) -> Bool {
        let parts = token.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, let issued = Int64(parts[0]) else { return false }
        let now = Int64(Date().timeIntervalSince1970)
        // Compared without subtracting: `issued` is the client's number, and `now - Int64.min` traps.
        guard issued <= now + 60, issued >= now - Self.formLifetime else { return false }
        let expected = formToken(code: code, mode: mode, now: issued)
        return ConstantTime.equal(Array(token.utf8), Array(expected.utf8))
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
struct PageAnswer: Sendable {
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
}

/// The fields the action form posts (`application/x-www-form-urlencoded`; unknown ones are ignored).
struct ConfirmForm: Decodable, Sendable {
    var mode: String?
    var oobCode: String?
    var lang: String?
    /// The form token.
    var form: String?
    var email: String?
    var password: String?
    var passwordAgain: String?
    /// `1` when the form was shown to a remembered device.
    var remembered: String?
    /// In upstream mode: the link's API key, tenant and continue URL, and `1` on a retry;
    /// `resetPassword` when a recovered address asks for a password reset.
    var step: String?
    var apiKey: String?
    var tenantId: String?
    var continueUrl: String?
    var retried: String?
}
