import ActionLinks
import ActionLinksConfiguration
import ActionLinksHeaders
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

// MARK: /__/auth/action: the form's post

extension ActionPages {
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
                    if devices.isRemembered(request, email: record.email, tenantID: record.tenantID, now: clock.now) {
                        email = record.email
                    }
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
                    let target = URLText.url(continueLink.url, fragment: "customToken=" + token)
                    response = .redirect(to: target)
                }
                response.setCookie(
                    devices.cookie(email: done.record.email, tenantID: done.record.tenantID, secure: context.isSecure, now: clock.now))
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
    struct FormState: Equatable {
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
        for record: ActionCodeRecord, code: String, language: String, state: FormState, status: HTTPResponse.Status = .ok,
        signInCode: String? = nil
    ) -> PageAnswer {
        // Fronting a Firebase project, the page's text masks the addresses (the password form's
        // hidden username keeps the full one, for password managers).
        let shown = upstream == nil ? { $0 } : EmailAddress.masked
        let values = FormValues(
            code: code, formToken: formToken(code: code, mode: record.mode), email: record.email, shownEmail: shown(record.email),
            shownNewEmail: record.newEmail.map(shown), signInCode: signInCode)
        // A form shown for the first time differs from one code to the next only by `values`.
        if state == FormState(remembered: state.remembered),
            let page = cachedForm(mode: record.mode, language: language, remembered: state.remembered, values: values)
        {
            return PageAnswer(status: status, body: page)
        }
        return PageAnswer(
            status: status, body: templates.render(formView(mode: record.mode, values: values, language: language, state: state)))
    }

    /// The form of `mode` with a code's `values`: the view ``formPage(for:code:language:state:status:)`` renders.
    func formView(mode: ActionCodeLink.Mode, values: FormValues, language: String, state: FormState) -> ActionFormView {
        let modeName = mode.rawValue
        var texts = ["appName": settings.project.appName, "email": values.shownEmail]
        if let newEmail = values.shownNewEmail { texts["newEmail"] = newEmail }
        let minimum = String(settings.passwords.minimumLength)
        var view = ActionFormView(
            frame: templates.frame(
                language, title: templates.text("\(modeName).title", language, texts), appName: settings.project.appName),
            intro: templates.text("\(modeName).intro", language, texts), button: templates.text("\(modeName).button", language, texts),
            mode: modeName, oobCode: values.code, formToken: values.formToken, email: values.email, minimumLength: minimum,
            errorLabel: templates.text("errorLabel", language))
        if mode == .signIn {
            if state.remembered {
                view.remembered = true
                view.intro = templates.text("signIn.knownIntro", language, texts)
            } else {
                view.emailField = .init(
                    label: templates.text("emailLabel", language), help: templates.text("emailHelp", language),
                    value: state.emailValue.flatMap { $0.isEmpty ? nil : $0 }, error: state.emailError)
            }
        }
        view.upstreamFields = state.upstreamFields
        view.signInCode = values.signInCode.map { (line: templates.text("signInCode.line", language), code: $0) }
        if let notice = state.notice { view.intro = notice }
        if mode == .resetPassword {
            view.passwordFields = .init(
                label: templates.text("passwordLabel", language), help: templates.text("passwordHelp", language, ["minimum": minimum]),
                againLabel: templates.text("passwordAgainLabel", language), error: state.passwordError, againError: state.passwordAgainError
            )
        }
        return view
    }

    /// A token that ties a form to its code and mode (``SignedToken/Purpose/form``).
    func formToken(code: String, mode: ActionCodeLink.Mode) -> String {
        formTokens.make(bound: [code, mode.rawValue], now: clock.now)
    }

    func verifyFormToken(_ token: String, code: String, mode: ActionCodeLink.Mode) -> Bool {
        formTokens.verify(token, bound: [code, mode.rawValue], now: clock.now) != nil
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
