import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// The action pages' flow in upstream mode: the project this server fronts checks each code on GET
/// (without consuming it) and applies it on POST; the pages, their languages, the form-token,
/// `Origin` and continue-URL rules are ours (``ActionPages``). Nothing about a code is stored here,
/// so the form carries the link's API key, tenant and continue URL back (each checked again on POST).
struct UpstreamActionFlow: ActionFlow {
    /// The pages, rendered as in every mode.
    let pages: ActionPages
    /// The project this server fronts, which checks and applies every code.
    let upstream: UpstreamClient
    /// Sends links through this domain (the recovered address's password reset), with the
    /// project's codes.
    let issuer: CodeIssuer
    /// The front's own policy (email-enumeration protection) for the project and its tenants.
    let tenants: TenantDirectory
    /// The fronted project's password policies, read from it and kept a while.
    let policies: UpstreamPasswordPolicies
    /// Ties the reset offer to the recovered code and address.
    let resetOfferTokens: SignedToken

    init(pages: ActionPages, upstream: UpstreamClient, services: LinkDomainServices) {
        self.pages = pages
        self.upstream = upstream
        issuer = services.issuer
        tenants = services.tenants
        policies = UpstreamPasswordPolicies(upstream: upstream, clock: services.clock)
        resetOfferTokens = SignedToken(.resetOffer, formKey: services.keys.formKey)
    }

    func landing(_ request: Request) async -> Response {
        let acceptLanguage = request.headers[.acceptLanguage]
        let language = pages.templates.language(
            requested: request.uri.queryParameters["lang"].map(String.init), acceptLanguage: acceptLanguage)
        // A mode with no page here (revertSecondFactorAddition, or one Google adds later) is
        // Google's own handler's, which stays up: the query goes on exactly as it came.
        if let mode = request.uri.queryParameters["mode"], !ActionPages.upstreamPageModes.contains(where: { $0.rawValue == mode }) {
            let handler =
                (upstream.settings.authDomainOrigin ?? "https://\(upstream.settings.projectID).firebaseapp.com") + "/__/auth/action"
            return Response(status: .seeOther, headers: [.location: handler + "?" + (request.uri.query ?? "")])
        }
        guard let link = ActionCodeLink.parse("https://link.invalid" + request.uri.string), let apiKey = link.apiKey,
            upstream.settings.accepts(apiKey: apiKey), ActionPages.upstreamPageModes.contains(link.mode)
        else { return pages.outcome(.invalid, language) }
        let answer: UpstreamClient.CodeAnswer
        do throws(ActionError) {
            answer = try await upstream.check(code: link.oobCode, apiKey: apiKey, tenantID: link.tenantID)
        } catch {
            return pages.failure(error, language)
        }
        guard answer.requestType == link.mode.requestType else { return pages.outcome(.invalid, language) }
        let pageLanguage = pages.templates.language(requested: link.languageCode, acceptLanguage: acceptLanguage)
        if link.mode == .signIn {
            // The app's own Firebase SDK completes the sign-in with Firebase on the continue URL,
            // as Firebase's hosted page does; without an allowed continue URL there is nowhere to go.
            guard let continueURL = link.continueURL, let url = pages.policy.evaluate(continueURL).url else {
                return pages.outcome(.invalid, pageLanguage)
            }
            var items = [("apiKey", apiKey), ("oobCode", link.oobCode), ("mode", "signIn"), ("lang", pageLanguage)]
            if let tenant = link.tenantID, !tenant.isEmpty { items.append(("tenantId", tenant)) }
            return Response(status: .seeOther, headers: [.location: URLText.url(url, adding: items)])
        }
        var state = ActionPages.FormState()
        state.upstreamFields = Self.fields(link, apiKey: apiKey)
        let passwords = link.mode == .resetPassword ? await upstreamPolicy(link) : nil
        return pages.formPage(
            for: Self.record(link, answer), code: link.oobCode, language: pageLanguage, state: state, passwords: passwords
        )
        .response
    }

    func confirm(_ request: Request, context: ServerRequestContext) async -> Response {
        // The body was collected (and its size checked) by RequestBodyLimitMiddleware.
        let fields = (try? URLEncodedFormDecoder().decode(ConfirmForm.self, from: String(buffer: context.body)))
        let language = pages.templates.language(requested: fields?.lang, acceptLanguage: request.headers[.acceptLanguage])
        if let fields, fields.step == "resetPassword" {
            return await offeredReset(request, fields: fields, context: context, language: language)
        }
        guard let fields, let code = fields.oobCode, let mode = fields.mode.flatMap(ActionCodeLink.Mode.init(rawValue:)),
            ActionPages.upstreamPageModes.contains(mode), mode != .signIn, let token = fields.form, let apiKey = fields.apiKey,
            upstream.settings.accepts(apiKey: apiKey)
        else { return pages.outcome(.invalid, language) }
        guard pages.isSameSite(request), pages.verifyFormToken(token, code: code, mode: mode) else {
            return pages.outcome(.form, language, status: .forbidden)
        }
        let tenantID = fields.tenantId.flatMap { $0.isEmpty ? nil : $0 }
        let link = ActionCodeLink(
            mode: mode, oobCode: code, apiKey: apiKey, continueURL: fields.continueUrl, languageCode: fields.lang, tenantID: tenantID)
        var state = ActionPages.FormState()
        state.upstreamFields = Self.fields(link, apiKey: apiKey)
        do throws(ActionError) {
            let done: UpstreamClient.CodeAnswer
            if mode == .resetPassword {
                // Upstream's pages.policy, checked here before the password is sent: what upstream would
                // refuse is answered on the form without a call.
                let password = fields.password ?? ""
                let passwords = await upstreamPolicy(link)
                state.passwordError = pages.passwordProblem(password, passwords, language)
                if state.passwordError == nil, password != fields.passwordAgain {
                    state.passwordAgainError = pages.templates.text("passwordsDiffer", language)
                }
                if state.hasError { return try await form(link, state: state, language: language) }
                done = try await upstream.resetPassword(code: code, newPassword: password, apiKey: apiKey, tenantID: tenantID)
            } else {
                done = try await upstream.apply(code: code, apiKey: apiKey, tenantID: tenantID)
            }
            var values = ["email": EmailAddress.masked(done.email ?? ""), "appName": pages.settings.project.appName]
            if let newEmail = done.newEmail { values["newEmail"] = EmailAddress.masked(newEmail) }
            // Checked again now: the allow-list may have changed since the page was shown.
            let continueLink = link.continueURL.flatMap { pages.policy.evaluate($0).url }.map {
                (url: $0, label: pages.templates.text("continue", language))
            }
            // As Firebase's own page does, a recovered address is offered a password reset at once.
            let offer = (mode == .recoverEmail ? done.email : nil).map { email in
                ResultView.ResetOffer(
                    oobCode: code, token: resetOfferToken(code: code, email: email),
                    apiKey: apiKey, tenantID: tenantID, email: email, label: pages.templates.text("recoverEmail.offerReset", language))
            }
            return pages.resultPage(
                status: .ok, language: language, title: "\(mode.rawValue).done.title", body: "\(mode.rawValue).done.body", values: values,
                continueLink: continueLink, resetOffer: offer
            ).response
        } catch let refusal where refusal.code == .weakPassword || refusal.code == .passwordDoesNotMeetRequirements {
            // Upstream's pages.policy is stricter than the one read a while ago: what it says is missing,
            // in the page's language (the code was not used).
            let missing = PasswordPolicy.Requirement.parse(detail: refusal.code == .weakPassword ? nil : refusal.detail)
            state.passwordError =
                missing.isEmpty
                ? pages.templates.text("passwordRefused", language, ["appName": pages.settings.project.appName])
                : pages.unmetRules(missing, language)
            do throws(ActionError) {
                return try await form(link, state: state, language: language)
            } catch {
                return pages.failure(error, language)
            }
        } catch let refusal where refusal.code == .invalidOOBCode && fields.retried == "1" {
            // The first attempt got no answer, and the code no longer works: that attempt may well
            // have been applied before the answer was lost.
            return pages.outcome(.maybeDone, language, status: .ok)
        } catch let refusal where refusal.code == .invalidOOBCode {
            return pages.outcome(.used, language)
        } catch let refusal where refusal.code == .unavailable {
            // Nothing is known to have changed: the same form again, which says so and retries.
            state.notice = pages.templates.text("upstream.unavailable", language, ["appName": pages.settings.project.appName])
            state.upstreamFields?.retried = true
            state.passwordError = nil
            state.passwordAgainError = nil
            return pages.formPage(
                for: Self.record(link, UpstreamClient.CodeAnswer(requestType: mode.requestType)), code: code, language: language,
                state: state, passwords: mode == .resetPassword ? await upstreamPolicy(link) : nil, status: .serviceUnavailable
            ).response
        } catch {
            return pages.failure(error, language)
        }
    }

    /// The password reset a recovered address asked for on the recovery's pages.result page: mailed with
    /// our pages.templates and send limits when there is a service account, else by upstream itself.
    private func offeredReset(_ request: Request, fields: ConfirmForm, context: ServerRequestContext, language: String) async -> Response {
        guard fields.mode == ActionCodeLink.Mode.recoverEmail.rawValue, let code = fields.oobCode, let email = fields.email,
            let apiKey = fields.apiKey, upstream.settings.accepts(apiKey: apiKey), let token = fields.form
        else { return pages.outcome(.invalid, language) }
        guard pages.isSameSite(request), verifyResetOfferToken(token, code: code, email: email) else {
            return pages.outcome(.form, language, status: .forbidden)
        }
        let tenantID = fields.tenantId.flatMap { $0.isEmpty ? nil : $0 }
        do throws(ActionError) {
            if upstream.settings.hasServiceAccount {
                var asked = CodeIssuer.IssueRequest(requestType: ActionCodeLink.Mode.resetPassword.requestType)
                asked.email = email
                let caller = Caller(isAdmin: false, clientAddress: context.clientAddress, locale: language, apiKey: apiKey)
                _ = try await issuer.issue(asked, caller: caller, tenant: tenants.fronted(tenantID ?? ""))
            } else {
                try await upstream.sendPasswordReset(email: email, apiKey: apiKey, tenantID: tenantID)
            }
        } catch {
            return pages.failure(error, language)
        }
        return pages.result(
            status: .ok, language: language, title: "resetSent.title", body: "resetSent.body",
            values: ["email": EmailAddress.masked(email), "appName": pages.settings.project.appName])
    }

    /// A token that ties the reset offer to the recovered code and its address
    /// (``SignedToken/Purpose/resetOffer``).
    func resetOfferToken(code: String, email: String) -> String {
        resetOfferTokens.make(bound: [code, email], now: pages.clock.now)
    }

    func verifyResetOfferToken(_ token: String, code: String, email: String) -> Bool {
        resetOfferTokens.verify(token, bound: [code, email], now: pages.clock.now) != nil
    }

    /// The form for `link` again (a password refused), with what upstream says about the code now.
    private func form(_ link: ActionCodeLink, state: ActionPages.FormState, language: String) async throws(ActionError) -> Response {
        let answer = try await upstream.check(code: link.oobCode, apiKey: link.apiKey ?? "", tenantID: link.tenantID)
        let passwords = link.mode == .resetPassword ? await upstreamPolicy(link) : nil
        return pages.formPage(
            for: Self.record(link, answer), code: link.oobCode, language: language, state: state, passwords: passwords, status: .badRequest
        ).response
    }

    /// The password pages.policy upstream enforces for `link`'s API key and tenant (kept a few minutes).
    private func upstreamPolicy(_ link: ActionCodeLink) async -> PasswordPolicy {
        await policies.policy(apiKey: link.apiKey ?? "", tenantID: link.tenantID)
    }

    /// The browser fallback of a mobile link in upstream mode: a wrapper around a link to this
    /// domain's own action page goes on to that page (same origin, so never an open redirect).
    func mobileLink(_ request: Request, context: ServerRequestContext) async -> Response {
        let language = pages.templates.language(requested: nil, acceptLanguage: request.headers[.acceptLanguage])
        let (layers, unwrapped) = LinkUnwrapper.unwrap("https://link.invalid" + request.uri.string)
        guard layers.count == 2, layers[0].kind == .mobileLinkWrapper, layers[0].innerParameter == "link",
            case .success(let parts) = unwrapped, let host = parts.host?.lowercased(), parts.path == ActionCodeLink.actionPath,
            pages.settings.linkDomains.contains(where: { $0.host == host && $0.port == parts.port.flatMap { Int($0) } }),
            let link = ActionCodeLink.parse(parts.string), let apiKey = link.apiKey
        else { return pages.outcome(.invalid, language) }
        let target = ActionCodeLink(
            mode: link.mode, oobCode: link.oobCode, apiKey: apiKey, continueURL: link.continueURL, languageCode: link.languageCode,
            tenantID: link.tenantID)
        return Response(status: .seeOther, headers: [.location: ActionCodeLink.actionPath + "?" + Self.query(of: target)])
    }

    private static func query(of link: ActionCodeLink) -> String {
        var items = [("mode", link.mode.rawValue), ("oobCode", link.oobCode), ("apiKey", link.apiKey ?? "")]
        if let continueURL = link.continueURL { items.append(("continueUrl", continueURL)) }
        if let language = link.languageCode { items.append(("lang", language)) }
        if let tenant = link.tenantID { items.append(("tenantId", tenant)) }
        return items.map { "\(PercentEncoding.encodeComponent($0.0))=\(PercentEncoding.encodeComponent($0.1))" }.joined(separator: "&")
    }

    private static func fields(_ link: ActionCodeLink, apiKey: String) -> ActionFormView.UpstreamFields {
        ActionFormView.UpstreamFields(
            apiKey: apiKey, tenantID: link.tenantID.flatMap { $0.isEmpty ? nil : $0 }, continueURL: link.continueURL, retried: false)
    }

    /// What the page shows of a code upstream described (nothing of it is stored).
    private static func record(_ link: ActionCodeLink, _ answer: UpstreamClient.CodeAnswer) -> ActionCodeRecord {
        ActionCodeRecord(
            hash: Data(), mode: link.mode, tenantID: link.tenantID ?? "", accountID: nil, email: answer.email ?? "",
            newEmail: answer.newEmail, continueURL: link.continueURL, languageCode: link.languageCode, createdAt: .epoch, expiresAt: .epoch)
    }
}
