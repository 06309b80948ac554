import ActionLinks
import Foundation
import Logging

// A web page's flow, completed on the server.

extension FederatedSignInService {
    /// A web page's OpenID Connect flow, completed here with the provider's `code`.
    func completeWebPage(_ flow: FederatedFlow, code: String?, refusal: String?) async -> String {
        if let refusal { return Self.webPageFragment(flow, [("error", refusal)]) }
        return await completeWebPage(flow, what: "federated sign-in") { () async throws(ActionError) -> ProviderAssertion in
            guard let code else { throw ActionError(.invalidIDPResponse, "the provider sent no code") }
            return try await self.exchange(code: code, flow: flow).0
        }
    }

    /// A web page's flow (OpenID Connect or SAML), completed here: the flow is consumed,
    /// `assertion` checks what the provider sent, and the page gets a one-time custom token in the
    /// fragment, or `error=<auth/...>` (with `email` and `pendingToken` when the address belongs to
    /// another account).
    func completeWebPage(
        _ flow: FederatedFlow, what: String, assertion: () async throws(ActionError) -> ProviderAssertion
    ) async -> String {
        do throws(ActionError) {
            try await flows.consume(flow)
            let assertion = try await assertion()
            let tenant = try await accountService.tenants.policy(for: flow.tenantID)
            switch try await apply(assertion, tenant: tenant, mode: .signIn(autoCreate: true)) {
            case .signedIn(let user):
                let token = try await tokens.handOffToken(accountID: user.account.localID, tenantID: flow.tenantID, now: clock.now)
                return Self.webPageFragment(flow, [("customToken", token)])
            case .needConfirmation:
                return Self.webPageFragment(
                    flow,
                    [
                        ("error", "auth/account-exists-with-different-credential"), ("email", assertion.email ?? ""),
                        ("pendingToken", pending.token(for: assertion, tenantID: flow.tenantID, now: clock.now)),
                    ])
            }
        } catch {
            logger.info("\(what) for a web page refused", metadata: ["error": "\(error)"])
            return Self.webPageFragment(flow, [("error", Self.authCode(error.code))])
        }
    }

    /// The web page's return URL with `items` in its fragment.
    static func webPageFragment(_ flow: FederatedFlow, _ items: [(String, String)]) -> String {
        URLText.url(flow.returnTo, fragment: items.map { "\($0.0)=\(PercentEncoding.encodeComponent($0.1))" }.joined(separator: "&"))
    }

    /// Firebase's client error code for a REST code (`EMAIL_EXISTS` → `auth/email-exists`).
    package static func authCode(_ code: ActionError.Code) -> String {
        "auth/" + code.rawValue.lowercased().replacingOccurrences(of: "_", with: "-")
    }
}
