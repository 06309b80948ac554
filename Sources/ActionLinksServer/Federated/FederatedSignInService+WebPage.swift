import ActionLinks
import Foundation
import Logging

// A web page's flow, completed on the server.

extension FederatedSignInService {
    /// A web page's flow, completed here: the page gets a one-time custom token in the fragment,
    /// or `error=<auth/...>` (with `email` and `pendingToken` when the address belongs to another
    /// account).
    func completeWebPage(_ flow: FederatedFlow, code: String?, refusal: String?) async -> String {
        func fragment(_ items: [(String, String)]) -> String {
            URLText.url(
                flow.returnTo, fragment: items.map { "\($0.0)=\(PercentEncoding.encodeComponent($0.1))" }.joined(separator: "&"))
        }
        if let refusal { return fragment([("error", refusal)]) }
        do throws(ActionError) {
            guard let code else { throw ActionError(.invalidIDPResponse, "the provider sent no code") }
            guard try await store.call({ try await self.flows.consumeFlow(stateHash: flow.stateHash, now: self.clock.now) }) else {
                throw ActionError(.invalidIDPResponse, "the sign-in was already used")
            }
            let (assertion, _) = try await exchange(code: code, flow: flow)
            let tenant = try await accountService.tenants.policy(for: flow.tenantID)
            let outcome = try await apply(assertion, tenant: tenant, mode: .signIn(autoCreate: true))
            switch outcome {
            case .signedIn(let user):
                let token = try await tokens.handOffToken(accountID: user.account.localID, tenantID: flow.tenantID, now: clock.now)
                return fragment([("customToken", token)])
            case .needConfirmation:
                return fragment([
                    ("error", "auth/account-exists-with-different-credential"), ("email", assertion.email ?? ""),
                    ("pendingToken", pending.token(for: assertion, tenantID: flow.tenantID, now: clock.now)),
                ])
            }
        } catch {
            logger.info("federated sign-in for a web page refused", metadata: ["error": "\(error)"])
            return fragment([("error", Self.authCode(error.code))])
        }
    }

    /// Firebase's client error code for a REST code (`EMAIL_EXISTS` → `auth/email-exists`).
    static func authCode(_ code: ActionError.Code) -> String {
        "auth/" + code.rawValue.lowercased().replacingOccurrences(of: "_", with: "-")
    }
}
