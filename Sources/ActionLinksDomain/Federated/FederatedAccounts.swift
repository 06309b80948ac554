import ActionLinks
import ActionLinksConfiguration
import Crypto
import Foundation
import Logging

/// What becomes of a provider's checked assertion, the same whatever the protocol: Firebase's
/// account rules applied in one transaction (``AccountRules``) and, when someone is signed in, a
/// session; a `pendingToken` to present the assertion again; and a web page's flow completed here.
package struct FederatedAccounts: Sendable {
    let accounts: any AccountStore
    let tenants: TenantDirectory
    let tokens: TokenService
    let completion: SignInCompletion
    /// Which providers vouch for which addresses, from the settings.
    let trust: ProviderTrust
    let oneAccountPerEmail: Bool
    let pending: PendingTokens
    let store: StoreGateway
    let clock: any ServiceClock
    let logger: Logger

    init(
        settings: ServiceSettings, accounts: any AccountStore, tenants: TenantDirectory, tokens: TokenService, completion: SignInCompletion,
        formKey: SymmetricKey, store: StoreGateway, clock: any ServiceClock, logger: Logger
    ) {
        self.accounts = accounts
        self.tenants = tenants
        self.tokens = tokens
        self.completion = completion
        trust = ProviderTrust(settings: settings)
        oneAccountPerEmail = settings.users.oneAccountPerEmail
        pending = PendingTokens(formKey: formKey)
        self.store = store
        self.clock = clock
        self.logger = logger
    }

    /// How the assertion is used.
    enum Mode: Sendable {
        /// Sign in (or up, unless `autoCreate` is false: a reauthentication).
        case signIn(autoCreate: Bool)
        /// Link to the signed-in user.
        case link(accountID: String)
    }

    /// What the account rules decided.
    package enum Outcome: Sendable {
        case signedIn(SignedInUser)
        case needConfirmation(verifiedProviders: [String])
    }

    /// Applies the account rules in one transaction and, when someone is signed in, starts the session.
    /// `linkedBy` is the signed-in user a link is made for (its session's second factor is kept).
    func apply(_ assertion: ProviderAssertion, tenant: TenantPolicy, mode: Mode, linkedBy user: AccountService.User? = nil)
        async throws(ActionError) -> Outcome
    {
        let now = clock.now
        let factor =
            user.map { FirstFactor.continuing($0, provider: assertion.providerID) }
            ?? FirstFactor(provider: assertion.providerID, claims: assertion.samlSessionClaims, rule: .ask)
        let rules = AccountRules(
            assertion: assertion, trust: trust, oneAccountPerEmail: oneAccountPerEmail,
            selfServiceSignUp: tenant.selfServiceSignUp, newID: Secrets.accountID(), completion: completion, factor: factor, tenant: tenant)
        let decision = try await store.call {
            try await self.accounts.transaction(tenantID: tenant.tenantID, now: now) { tx in try rules.apply(mode, in: tx) }
        }
        switch decision {
        case .signedIn(let user):
            return .signedIn(user)
        case .needConfirmation(let providers):
            return .needConfirmation(verifiedProviders: providers)
        }
    }

    /// A web page's flow (OpenID Connect or SAML), completed here: `assertion` consumes the flow
    /// and checks what the provider sent, and the page gets a one-time custom token in the
    /// fragment, or `error=<auth/...>` (with `email` and `pendingToken` when the address belongs to
    /// another account).
    func completeWebPage(
        _ flow: FederatedFlow, what: String, assertion: () async throws(ActionError) -> ProviderAssertion
    ) async -> String {
        do throws(ActionError) {
            let assertion = try await assertion()
            let tenant = try await tenants.policy(for: flow.tenantID)
            switch try await apply(assertion, tenant: tenant, mode: .signIn(autoCreate: true)) {
            case .signedIn(let user):
                // An account with a second factor gets no token: the page finishes the sign-in with
                // the pending credential (`mfaSignIn:finalize`).
                if let pending = user.pendingSecondFactor {
                    return flow.webPageReturn([
                        ("error", "auth/multi-factor-auth-required"), ("mfaPendingCredential", pending.credential),
                    ])
                }
                let token = try await tokens.handOffToken(accountID: user.account.localID, tenantID: flow.tenantID, now: clock.now)
                return flow.webPageReturn([("customToken", token)])
            case .needConfirmation:
                return flow.webPageReturn([
                    ("error", "auth/account-exists-with-different-credential"), ("email", assertion.email ?? ""),
                    ("pendingToken", pending.token(for: assertion, tenantID: flow.tenantID, now: clock.now)),
                ])
            }
        } catch {
            logger.info("\(what) for a web page refused", metadata: ["error": "\(error)"])
            return flow.webPageReturn([("error", FederatedSignInService.authCode(error.code))])
        }
    }
}

extension FederatedFlow {
    /// A web page's return URL with `items` in its fragment.
    func webPageReturn(_ items: [(String, String)]) -> String {
        URLText.url(returnTo, fragment: items.map { "\($0.0)=\(PercentEncoding.encodeComponent($0.1))" }.joined(separator: "&"))
    }
}
