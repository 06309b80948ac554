import Foundation

// Applying the account rules to an assertion (see ``AccountRules``).

extension FederatedSignInService {
    /// How the assertion is used.
    enum RulesMode: Sendable {
        /// Sign in (or up, unless `autoCreate` is false: a reauthentication).
        case signIn(autoCreate: Bool)
        /// Link to the signed-in user.
        case link(accountID: String)
    }

    /// Applies the account rules in one transaction and, when someone is signed in, starts the session.
    func apply(_ assertion: ProviderAssertion, tenant: TenantPolicy, mode: RulesMode) async throws(ActionError) -> Outcome {
        let now = clock.now
        let newSession = tokens.newSession(
            accountID: "", tenantID: tenant.tenantID, signInProvider: assertion.providerID, claims: assertion.samlSessionClaims, now: now)
        let rules = AccountRules(
            assertion: assertion, trust: trust, oneAccountPerEmail: settings.users.oneAccountPerEmail,
            selfServiceSignUp: tenant.selfServiceSignUp, newID: Secrets.accountID(), session: newSession.session)
        let decision = try await store.call {
            try await self.accounts.transaction(tenantID: tenant.tenantID, now: now) { tx in try rules.apply(mode, in: tx) }
        }
        switch decision {
        case .signedIn(let account, let isNew):
            var session = newSession
            session.session.accountID = account.localID
            return .signedIn(SignedInUser(account: account, session: session, isNewUser: isNew))
        case .needConfirmation(let providers):
            return .needConfirmation(verifiedProviders: providers)
        }
    }
}
