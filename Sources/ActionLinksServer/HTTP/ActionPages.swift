import ActionLinks
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The pages of `/__/auth/action` and `/__/auth/links`: a GET only shows (mail scanners fetch every
/// link), a POST with a valid form token consumes and applies.
struct ActionPages: Sendable {
    let service: ActionService
    let templates: PageTemplates
    /// How long a rendered form can be submitted.
    static let formLifetime: Int64 = 3600

    // MARK: /__/auth/action

    func action(_ request: Request, context: ServerRequestContext) async -> Response {
        switch request.method {
        case .head: return Response(status: .ok, headers: Self.pageHeaders)
        case .get: return await landing(request)
        case .post: return await confirm(request, context: context)
        default: return Response(status: .methodNotAllowed, headers: [.allow: "GET, HEAD, POST"])
        }
    }

    func landing(_ request: Request) async -> Response {
        let language = self.language(request.uri.queryParameters["lang"].map(String.init), request)
        guard let link = ActionCodeLink.parse("https://link.invalid" + request.uri.string),
            link.apiKey == nil || link.apiKey == service.settings.project.apiKey
        else { return failure(.invalidCode, language) }
        let record: ActionCodeRecord
        do {
            record = try await service.check(code: link.oobCode, tenantID: link.tenantID ?? "")
        } catch {
            return failure(error, language)
        }
        guard record.mode == link.mode else { return failure(.invalidCode, language) }
        return form(for: record, code: link.oobCode, language: self.language(link.languageCode ?? record.languageCode, request), error: nil)
    }

    func confirm(_ request: Request, context: ServerRequestContext) async -> Response {
        var request = request
        let fields: [String: String]
        do {
            fields = Self.formFields(try await request.collectBody(upTo: service.settings.server.maximumBodyBytes))
        } catch {
            return page("result", status: .contentTooLarge, language: "en", title: "error.form.title", body: "error.form.body", values: [:])
        }
        let language = self.language(fields["lang"], request)
        guard let code = fields["oobCode"], let modeText = fields["mode"], let mode = ActionCodeLink.Mode(rawValue: modeText),
            let token = fields["form"]
        else { return failure(.invalidCode, language) }
        guard isSameSite(request), verifyFormToken(token, code: code) else {
            return page("result", status: .forbidden, language: language, title: "error.form.title", body: "error.form.body", values: [:])
        }
        let consumer = "page " + (context.clientAddress ?? "?")
        do {
            let done: ActionService.Completion
            switch mode {
            case .signIn:
                done = try await service.signIn(code: code, email: fields["email"] ?? "", tenantID: nil, consumer: consumer)
            case .resetPassword:
                let password = fields["password"] ?? ""
                if password != fields["passwordAgain"] {
                    let record = try await service.check(code: code)
                    return form(for: record, code: code, language: language, error: templates.text("passwordsDiffer", language), status: .badRequest)
                }
                done = try await service.resetPassword(code: code, newPassword: password, tenantID: nil, consumer: consumer)
            case .verifyEmail, .verifyAndChangeEmail, .recoverEmail:
                done = try await service.apply(code: code, expectedMode: mode, tenantID: nil, consumer: consumer)
            case .revertSecondFactorAddition:
                return failure(.invalidCode, language)
            }
            var values = ["email": done.account.email ?? done.record.email, "appName": service.settings.project.appName]
            if let newEmail = done.record.newEmail { values["newEmail"] = newEmail }
            var extra: [String: Any] = [:]
            // Redirect targets are checked again now: the allow-list may have changed since the link was issued.
            if let stored = done.record.continueURL, let url = service.policy.evaluate(stored).url {
                extra["continueURL"] = url
                extra["continueLabel"] = templates.text("continue", language)
            }
            return page("result", status: .ok, language: language, title: "\(mode.rawValue).done.title", body: "\(mode.rawValue).done.body", values: values, extra: extra)
        } catch let error where error.code == "INVALID_EMAIL" || error.code == "WEAK_PASSWORD" || error.code == "MISSING_PASSWORD" || error.code == "MISSING_EMAIL" {
            guard let record = try? await service.check(code: code) else { return failure(.invalidCode, language) }
            let message =
                error.code == "INVALID_EMAIL" || error.code == "MISSING_EMAIL"
                ? templates.text("signIn.emailMismatch", language)
                : templates.text("passwordHelp", language, ["minimum": String(service.settings.passwords.minimumLength)])
            return form(for: record, code: code, language: language, error: message, status: .badRequest, emailValue: fields["email"])
        } catch {
            return failure(error, language)
        }
    }

    func form(
        for record: ActionCodeRecord, code: String, language: String, error: String?, status: HTTPResponse.Status = .ok, emailValue: String? = nil
    ) -> Response {
        let mode = record.mode.rawValue
        var values = ["appName": service.settings.project.appName, "email": record.email]
        if let newEmail = record.newEmail { values["newEmail"] = newEmail }
        let minimum = String(service.settings.passwords.minimumLength)
        var context: [String: Any] = [
            "title": templates.text("\(mode).title", language, values), "intro": templates.text("\(mode).intro", language, values),
            "button": templates.text("\(mode).button", language, values), "appName": service.settings.project.appName, "mode": mode,
            "oobCode": code, "formToken": formToken(code: code, now: Int64(Date().timeIntervalSince1970)), "email": record.email,
            "minimumLength": minimum,
        ]
        if let error { context["error"] = error }
        if record.mode == .signIn {
            context["askEmail"] = true
            context["emailLabel"] = templates.text("emailLabel", language)
            context["emailHelp"] = templates.text("emailHelp", language)
            if let emailValue { context["emailValue"] = emailValue }
        }
        if record.mode == .resetPassword {
            context["askPassword"] = true
            context["passwordLabel"] = templates.text("passwordLabel", language)
            context["passwordHelp"] = templates.text("passwordHelp", language, ["minimum": minimum])
            context["passwordAgainLabel"] = templates.text("passwordAgainLabel", language)
        }
        return html(templates.page("action", language: language, context: context), status: status)
    }

    // MARK: /__/auth/links

    /// The browser fallback of a mobile link: only an inner link to our own action handler is shown.
    func mobileLink(_ request: Request, context: ServerRequestContext) async -> Response {
        guard request.method == .get || request.method == .head else { return Response(status: .methodNotAllowed, headers: [.allow: "GET, HEAD"]) }
        if request.method == .head { return Response(status: .ok, headers: Self.pageHeaders) }
        let language = self.language(nil, request)
        guard let inner = request.uri.queryParameters["link"].flatMap({ PercentEncoding.decode(String($0)) }),
            let parts = try? URLParts(inner), let host = parts.host,
            service.settings.linkDomains.contains(where: { $0.host == host.lowercased() && $0.port == parts.port.flatMap { Int($0) } }),
            parts.path == ActionCodeLink.actionPath, let link = ActionCodeLink.parse(inner)
        else { return failure(.invalidCode, language) }
        let domain = service.settings.linkDomains.first { $0.host == host.lowercased() } ?? service.settings.linkDomains[0]
        let webLink = link.webLink(on: domain)
        let pageLanguage = self.language(link.languageCode, request)
        let values = ["appName": service.settings.project.appName]
        var context: [String: Any] = [
            "title": templates.text("links.title", pageLanguage, values), "intro": templates.text("links.intro", pageLanguage, values),
            "appName": service.settings.project.appName, "webLink": webLink, "openApp": templates.text("links.openApp", pageLanguage),
            "continueWeb": templates.text("links.continueWeb", pageLanguage), "appStore": templates.text("links.appStore", pageLanguage),
            "playStore": templates.text("links.playStore", pageLanguage),
        ]
        if let apple = service.apps.appleApps.first, let storeID = apple.appStoreID {
            context["appStoreLink"] = "https://apps.apple.com/app/id" + storeID
            context["smartBanner"] = "app-id=\(storeID), app-argument=\(webLink)"
        }
        if let android = service.apps.androidApps.first {
            context["playStoreLink"] = "https://play.google.com/store/apps/details?id=" + android.packageName
            if request.headers[.userAgent]?.contains("Android") == true, let query = webLink.split(separator: "?", maxSplits: 1).last {
                context["appLink"] =
                    "intent://\(domain.description)\(ActionCodeLink.actionPath)?\(query)#Intent;scheme=\(domain.scheme);package=\(android.packageName);"
                    + "S.browser_fallback_url=\(PercentEncoding.encodeComponent(webLink));end"
            }
        }
        return html(templates.page("links", language: pageLanguage, context: context), status: .ok)
    }

    // MARK: Outcomes

    func notFound(_ request: Request) -> Response {
        page("result", status: .notFound, language: language(nil, request), title: "error.notFound.title", body: "error.notFound.body", values: [:])
    }

    func failure(_ error: FirebaseError, _ language: String) -> Response {
        let values = ["appName": service.settings.project.appName]
        switch error.code {
        case "EXPIRED_OOB_CODE": return page("result", status: .gone, language: language, title: "error.expired.title", body: "error.expired.body", values: values)
        case "UNAVAILABLE":
            return page("result", status: .serviceUnavailable, language: language, title: "error.unavailable.title", body: "error.unavailable.body", values: values)
        default: return page("result", status: .badRequest, language: language, title: "error.invalid.title", body: "error.invalid.body", values: values)
        }
    }

    func page(
        _ name: String, status: HTTPResponse.Status, language: String, title: String, body: String, values: [String: String], extra: [String: Any] = [:]
    ) -> Response {
        var context = extra
        context["title"] = templates.text(title, language, values)
        context["body"] = templates.text(body, language, values)
        context["appName"] = service.settings.project.appName
        return html(templates.page(name, language: language, context: context), status: status)
    }

    func html(_ text: String, status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: Self.pageHeaders, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// DESIGN §9: no referrer (the URL holds a code), never cached or indexed, no framing, no scripts.
    static let pageHeaders: HTTPFields = [
        .contentType: "text/html; charset=utf-8", .referrerPolicy: "no-referrer", .cacheControl: "no-store", .xRobotsTag: "noindex",
        .contentSecurityPolicy: "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        .xFrameOptions: "DENY", .xContentTypeOptions: "nosniff",
    ]

    // MARK: Language

    /// `lang` if there are strings for it, then `Accept-Language`, then English.
    func language(_ requested: String?, _ request: Request) -> String {
        if let requested, !requested.isEmpty {
            let chosen = templates.language(requested)
            if chosen != "en" || requested.lowercased().hasPrefix("en") { return chosen }
        }
        if let header = request.headers[.acceptLanguage] {
            let ranked = header.split(separator: ",").compactMap { item -> (String, Double)? in
                let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                guard let tag = parts.first, !tag.isEmpty, tag != "*" else { return nil }
                let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
                return (tag, quality)
            }.sorted { $0.1 > $1.1 }
            for (tag, _) in ranked {
                let chosen = templates.language(tag)
                if chosen != "en" || tag.lowercased().hasPrefix("en") { return chosen }
            }
        }
        return "en"
    }

    // MARK: Forms

    /// `<seconds>.<HMAC(form key, "form|" + code + "|" + seconds)>`: ties a form to its code and its time.
    func formToken(code: String, now: Int64) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("form|\(code)|\(now)".utf8), using: service.keys.formKey)
        return "\(now)." + Base64URL.encode(Data(mac))
    }

    func verifyFormToken(_ token: String, code: String) -> Bool {
        let parts = token.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, let issued = Int64(parts[0]) else { return false }
        let now = Int64(Date().timeIntervalSince1970)
        guard issued <= now + 60, now - issued <= Self.formLifetime else { return false }
        let expected = formToken(code: code, now: issued)
        return ConstantTime.equal(Array(token.utf8), Array(expected.utf8))
    }

    /// Refuses a form posted from another site: `Sec-Fetch-Site` when the browser sends it, else `Origin`.
    func isSameSite(_ request: Request) -> Bool {
        if let site = request.headers[.secFetchSite] { return site == "same-origin" || site == "none" }
        guard let origin = request.headers[.origin], origin != "null" else { return true }
        guard let host = request.head.authority else { return false }
        return origin == "https://" + host || origin == "http://" + host
    }

    /// `application/x-www-form-urlencoded` fields (`+` is a space); malformed ones are left out.
    static func formFields(_ buffer: ByteBuffer) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(buffer: buffer).split(separator: "&") {
            let item = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentEncoding.decode(item[0].replacingOccurrences(of: "+", with: " ")),
                let value = PercentEncoding.decode((item.count > 1 ? item[1] : "").replacingOccurrences(of: "+", with: " "))
            else { continue }
            fields[name] = value
        }
        return fields
    }
}
