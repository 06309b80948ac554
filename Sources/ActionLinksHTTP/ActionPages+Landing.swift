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

// MARK: /__/auth/action: the landing page (GET)

extension ActionPages {
    func landing(_ request: Request) async -> Response {
        let acceptLanguage = request.headers[.acceptLanguage]
        switch landingStart(uri: request.uri, acceptLanguage: acceptLanguage) {
        case .page(let page): return page.response
        case .lookUp(let link, let language):
            let record: Result<ActionCodeRecord, ActionError>
            var passwords: PasswordPolicy?
            var factor: SecondFactor?
            do throws(ActionError) {
                let found = try await completer.check(code: link.oobCode, tenantID: link.tenantID ?? "")
                // A new-password form states its tenant's policy (a tenant made through the API: a read).
                if found.mode == .resetPassword { passwords = try await passwordPolicy(for: found) }
                // A revert page shows the factor it removes (a read of the account; gone: invalid).
                if found.mode == .revertSecondFactorAddition, found.mode == link.mode {
                    factor = try await completer.revertedFactor(of: found)
                }
                record = .success(found)
            } catch {
                record = .failure(error)
            }
            return landingPage(
                link: link, lookup: record, language: language, acceptLanguage: acceptLanguage, passwords: passwords, factor: factor
            ) { record in
                devices.isRemembered(request, email: record.email, tenantID: record.tenantID, now: clock.now)
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
            link.apiKey.map({ settings.project.apiKey(matching: $0) != nil }) ?? true
        else { return .page(outcomePage(.invalid, language)) }
        return .lookUp(link, language: language)
    }

    /// The second half: the page for the looked-up code (``ActionCompleter/check(code:tenantID:)``'s
    /// answer); `passwords` is the policy of the code's tenant for a new-password form
    /// (``passwordPolicy(for:)``); `factor` is the second factor a revert code removes
    /// (``ActionCompleter/revertedFactor(of:)``), without which its page is the invalid link's;
    /// `isRemembered` tells whether the browser is a remembered device for the record.
    func landingPage(
        link: ActionCodeLink, lookup: Result<ActionCodeRecord, ActionError>, language: String, acceptLanguage: String?,
        passwords: PasswordPolicy?, factor: SecondFactor? = nil, isRemembered: (ActionCodeRecord) -> Bool
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
            // The link's own key (any of the project's: the one of the client that asked for it).
            let apiKey = link.apiKey ?? settings.project.apiKey
            var items = [("apiKey", apiKey), ("oobCode", link.oobCode), ("mode", "signIn"), ("lang", pageLanguage)]
            if !record.tenantID.isEmpty { items.append(("tenantId", record.tenantID)) }
            return PageAnswer(status: .seeOther, headers: [.location: URLText.url(url, adding: items)], body: nil)
        }
        var state = FormState()
        state.remembered = record.mode == .signIn && isRemembered(record)
        if record.mode == .revertSecondFactorAddition {
            guard let factor else { return outcomePage(.invalid, language) }
            state.factor = shownFactor(factor, pageLanguage)
        }
        // A sign-in link's page shows the code its mail shows, for the app that asked on another device.
        return formPage(
            for: record, code: link.oobCode, language: pageLanguage, state: state, passwords: passwords,
            signInCode: signInCodes.shownCode(oobCode: link.oobCode, record: record, now: clock.now))
    }
}
