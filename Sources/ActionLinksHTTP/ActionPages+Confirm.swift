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

// MARK: /__/auth/action: the form's post

extension ActionPages {
    func confirm(_ request: Request, context: ServerRequestContext) async -> Response {
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
                // The code's tenant decides the policy; the completer checks it again before consuming.
                let record = try await completer.check(code: code)
                let passwords = try await passwordPolicy(for: record)
                let password = fields.password ?? ""
                state.passwordError = passwordProblem(password, passwords, language)
                if state.passwordError == nil, password != fields.passwordAgain {
                    state.passwordAgainError = templates.text("passwordsDiffer", language)
                }
                if state.hasError {
                    return form(for: record, code: code, language: language, state: state, passwords: passwords, status: .badRequest)
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
                // An account with a second factor gets no token: the web app finishes the sign-in
                // with the pending credential (`mfaSignIn:finalize`), as after any first factor.
                if let continueLink {
                    let fragment: String
                    if let pending = done.signedIn?.pendingSecondFactor {
                        fragment =
                            "error=auth%2Fmulti-factor-auth-required&mfaPendingCredential="
                            + PercentEncoding.encodeComponent(pending.credential)
                    } else {
                        fragment =
                            "customToken="
                            + (try await tokens.handOffToken(
                                accountID: done.account.localID, tenantID: done.record.tenantID, now: Timestamp.now))
                    }
                    response = .redirect(to: URLText.url(continueLink.url, fragment: fragment))
                }
                response.setCookie(
                    devices.cookie(email: done.record.email, tenantID: done.record.tenantID, secure: context.isSecure, now: clock.now))
            }
            return response
        } catch let error where error.code == .invalidEmail || error.code == .missingEmail {
            guard let record = try? await completer.check(code: code) else { return outcome(.invalid, language) }
            state.emailError = templates.text(error.code == .missingEmail ? "emailMissing" : "signIn.emailMismatch", language)
            return form(for: record, code: code, language: language, state: state, status: .badRequest)
        } catch let error where PasswordPolicy.refusals.contains(error.code) {
            // The policy changed between the page's check and the completer's.
            guard let record = try? await completer.check(code: code), let passwords = try? await passwordPolicy(for: record) else {
                return outcome(.invalid, language)
            }
            state.passwordError =
                passwordProblem(fields.password ?? "", passwords, language) ?? templates.text("passwordMissing", language)
            return form(for: record, code: code, language: language, state: state, passwords: passwords, status: .badRequest)
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
        /// On a second-factor revert's page: the factor's name and enrolment date, as shown.
        var factor: ShownFactor?
        var hasError: Bool { emailError != nil || passwordError != nil || passwordAgainError != nil }
    }

    /// A second factor as a revert page shows it.
    struct ShownFactor: Equatable {
        /// Its display name, or the words for an unnamed one.
        var name: String
        /// When it was enrolled, to the minute, in UTC.
        var enrolledAt: String
    }

    /// A factor as a revert page shows it: its name (or the words for an unnamed one) and its
    /// enrolment, to the minute, in UTC.
    func shownFactor(_ factor: SecondFactor, _ language: String) -> ShownFactor {
        let name = factor.displayName.flatMap { $0.isEmpty ? nil : $0 } ?? templates.text("revertSecondFactorAddition.unnamed", language)
        // The API's time of it (`2026-12-07T22:26:05.123Z`), to the minute.
        let time = UserRecord.rfc3339(factor.enrolledAt).prefix(16)
        return ShownFactor(name: name, enrolledAt: time.replacingOccurrences(of: "T", with: " ") + " UTC")
    }

    /// The password policy of a code's tenant (the project's for the project's codes).
    func passwordPolicy(for record: ActionCodeRecord) async throws(ActionError) -> PasswordPolicy {
        try await tenants.policy(for: record.tenantID).passwords
    }

    /// Why `passwords` refuses a new password, in `language`, or `nil` when it accepts it: every
    /// rule it misses when the policy is enforced, else the length it is outside of.
    func passwordProblem(_ password: String, _ passwords: PasswordPolicy, _ language: String) -> String? {
        let settings = passwords.settings
        switch passwords.problem(password) {
        case nil: return nil
        case .missing: return templates.text("passwordMissing", language)
        case .unmet(let missing): return unmetRules(missing, language)
        case .belowFloor where passwords.enforced: return unmetRules(passwords.unmet(password), language)
        case .belowFloor, .tooShort: return templates.text("passwordTooShort", language, ["minimum": String(settings.minimumLength)])
        case .tooLong(let maximum): return templates.text("passwordTooLong", language, ["maximum": String(maximum)])
        }
    }

    /// "It still needs ..." with `missing`'s rules, in `language`.
    func unmetRules(_ missing: [PasswordPolicy.Requirement], _ language: String) -> String {
        templates.text("passwordUnmet", language, ["rules": ruleList(missing, language)])
    }

    /// Rules as a list in `language`'s words.
    func ruleList(_ rules: [PasswordPolicy.Requirement], _ language: String) -> String {
        rules.map { rule in
            switch rule {
            case .minimumLength(let count): templates.text("passwordRule.minimumLength", language, ["minimum": String(count)])
            case .maximumLength(let count): templates.text("passwordRule.maximumLength", language, ["maximum": String(count)])
            case .lowercase: templates.text("passwordRule.lowercase", language)
            case .uppercase: templates.text("passwordRule.uppercase", language)
            case .numeric: templates.text("passwordRule.numeric", language)
            case .nonAlphanumeric:
                templates.text(
                    "passwordRule.nonAlphanumeric", language,
                    ["symbols": PasswordSettings.nonAlphanumericCharacters.map(String.init).joined(separator: " ")])
            }
        }.joined(separator: templates.text("listSeparator", language))
    }

    /// The policy as the form states it: its lengths, and its character rules when it enforces any.
    func passwordStatement(_ passwords: PasswordPolicy, _ language: String) -> (help: String, rules: String?) {
        let settings = passwords.settings
        let lengths = ["minimum": String(settings.minimumLength), "maximum": String(settings.maximumLength)]
        let help = templates.text(settings.maximumLength < 4096 ? "passwordHelpRange" : "passwordHelp", language, lengths)
        let characters = passwords.requirements.filter {
            switch $0 {
            case .minimumLength, .maximumLength: false
            default: true
            }
        }
        guard passwords.enforced, !characters.isEmpty else { return (help, nil) }
        return (help, templates.text("passwordHelpRules", language, ["rules": ruleList(characters, language)]))
    }

    func form(
        for record: ActionCodeRecord, code: String, language: String, state: FormState, passwords: PasswordPolicy? = nil,
        status: HTTPResponse.Status = .ok
    ) -> Response {
        formPage(for: record, code: code, language: language, state: state, passwords: passwords, status: status).response
    }

    /// The form for `record`; a new-password form states `passwords` (the project's when not given).
    func formPage(
        for record: ActionCodeRecord, code: String, language: String, state: FormState, passwords: PasswordPolicy? = nil,
        status: HTTPResponse.Status = .ok, signInCode: String? = nil
    ) -> PageAnswer {
        // Fronting a Firebase project, the page's text masks the addresses (the password form's
        // hidden username keeps the full one, for password managers).
        let shown = masksAddresses ? EmailAddress.masked : { $0 }
        let values = FormValues(
            code: code, formToken: formToken(code: code, mode: record.mode), email: record.email, shownEmail: shown(record.email),
            shownNewEmail: record.newEmail.map(shown), signInCode: signInCode)
        let passwords = record.mode == .resetPassword ? passwords ?? tenants.project.passwords : nil
        // A form shown for the first time differs from one code to the next only by `values`.
        if state == FormState(remembered: state.remembered),
            let page = cachedForm(
                mode: record.mode, language: language, remembered: state.remembered, passwords: passwords?.settings, values: values)
        {
            return PageAnswer(status: status, body: page)
        }
        return PageAnswer(
            status: status,
            body: templates.render(
                formView(mode: record.mode, values: values, language: language, state: state, passwords: passwords?.settings)))
    }

    /// The form of `mode` with a code's `values`: the view ``formPage(for:code:language:state:passwords:status:)``
    /// renders; a new-password form states `passwords`.
    func formView(
        mode: ActionCodeLink.Mode, values: FormValues, language: String, state: FormState, passwords: PasswordSettings? = nil
    ) -> ActionFormView {
        let modeName = mode.rawValue
        var texts = ["appName": settings.project.appName, "email": values.shownEmail]
        if let newEmail = values.shownNewEmail { texts["newEmail"] = newEmail }
        if let factor = state.factor {
            texts["factor"] = factor.name
            texts["enrolledAt"] = factor.enrolledAt
        }
        let passwords = PasswordPolicy(settings: passwords ?? settings.passwords)
        let minimum = String(passwords.settings.minimumLength)
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
            let statement = passwordStatement(passwords, language)
            view.passwordFields = .init(
                label: templates.text("passwordLabel", language), help: statement.help,
                againLabel: templates.text("passwordAgainLabel", language), error: state.passwordError,
                againError: state.passwordAgainError,
                rules: statement.rules)
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
