import ActionLinksConfiguration
import Foundation

/// Firebase's account rules for a provider's assertion, as one unit of work over a tenant's
/// accounts (a pure function of what it reads, see ``AccountTransaction``).
struct AccountRules: Sendable {
    var assertion: ProviderAssertion
    /// Which providers vouch for which addresses.
    var trust: ProviderTrust
    var oneAccountPerEmail: Bool
    var selfServiceSignUp: Bool
    /// The ID of an account this sign-in creates.
    var newID: String
    /// Where the sign-in completes, what it proved, and in which tenant.
    var completion: SignInCompletion
    var factor: FirstFactor
    var tenant: TenantPolicy

    enum Decision: Sendable {
        case signedIn(SignedInUser)
        case needConfirmation([String])
    }

    func apply(_ mode: FederatedAccounts.Mode, in tx: any AccountTransaction) throws -> Decision {
        let now = tx.now
        var keys: [AccountKey] = [.federated(providerID: assertion.providerID, rawID: assertion.rawID)]
        if let email = assertion.email { keys.append(.email(email)) }
        if case .link(let id) = mode { keys.append(.id(id)) }
        try tx.prefetch(keys)
        let linked = try tx.account(providerID: assertion.providerID, rawID: assertion.rawID)
        switch mode {
        case .link(let accountID):
            var user = try tx.existingAccount(id: accountID)
            if user.disabled { throw ActionError.userDisabled }
            if linked != nil { throw ActionError(.federatedUserIDAlreadyLinked) }
            if oneAccountPerEmail, let email = assertion.email, let owner = try tx.account(email: email), owner.localID != user.localID {
                throw ActionError.emailExists
            }
            user.federatedIdentities.append(assertion.identity)
            if oneAccountPerEmail, user.email == nil, let email = assertion.email {
                user.email = email
                user.emailVerified = assertion.emailVerified
            } else if user.email != nil, user.email == assertion.email, assertion.emailVerified {
                user.emailVerified = true
            }
            return try signIn(user, isNew: false, in: tx)
        case .signIn(let autoCreate):
            if var account = linked {
                if account.disabled { throw ActionError.userDisabled }
                if let index = account.federatedIdentities.firstIndex(where: {
                    $0.providerID == assertion.providerID && $0.rawID == assertion.rawID
                }) {
                    account.federatedIdentities[index] = assertion.identity
                }
                return try signIn(account, isNew: false, in: tx)
            }
            if oneAccountPerEmail, let email = assertion.email, var owner = try tx.account(email: email) {
                guard trust.proves(assertion) else {
                    var providers: [String] = []
                    for identity in owner.federatedIdentities where !providers.contains(identity.providerID) {
                        providers.append(identity.providerID)
                    }
                    return .needConfirmation(providers)
                }
                if owner.disabled { throw ActionError.userDisabled }
                if !owner.emailVerified {
                    // Whoever set up the unproven account (perhaps not the address's owner) loses
                    // every way in that the provider does not vouch for, and every session.
                    owner.passwordHash = nil
                    owner.passwordUpdatedAt = nil
                    owner.federatedIdentities.removeAll { !trust.vouches(providerID: $0.providerID, email: email) }
                    owner.validSince = now.seconds
                    owner.displayName = assertion.displayName
                    owner.photoURL = assertion.photoURL
                    owner.screenName = assertion.screenName
                } else {
                    owner.displayName = owner.displayName ?? assertion.displayName
                    owner.photoURL = owner.photoURL ?? assertion.photoURL
                    owner.screenName = owner.screenName ?? assertion.screenName
                }
                owner.emailVerified = true
                owner.federatedIdentities.append(assertion.identity)
                return try signIn(owner, isNew: false, in: tx)
            }
            guard autoCreate else { throw ActionError.userNotFound }
            guard selfServiceSignUp else {
                throw ActionError(.adminOnlyOperation, "signing up is turned off for this project; an administrator creates accounts")
            }
            var account = Account(
                localID: newID, tenantID: tx.tenantID, displayName: assertion.displayName, photoURL: assertion.photoURL, createdAt: now,
                federatedIdentities: [assertion.identity], screenName: assertion.screenName)
            if oneAccountPerEmail, let email = assertion.email {
                account.email = email
                account.emailVerified = assertion.emailVerified
            }
            return try signIn(account, isNew: true, in: tx)
        }
    }

    private func signIn(_ account: Account, isNew: Bool, in tx: any AccountTransaction) throws -> Decision {
        .signedIn(try completion.complete(account, isNew: isNew, by: factor, tenant: tenant, in: tx))
    }
}

/// Which providers vouch for which addresses (Firebase's trusted providers): Apple for every
/// address (it relays or verifies them), the well-known providers for their own mail domains, and
/// each configured provider (OpenID Connect or SAML) for its `trustedEmailDomains`.
struct ProviderTrust: Sendable {
    /// The domains each well-known provider is the mail provider of.
    static let builtIn: [String: Set<String>] = [
        "google.com": ["gmail.com"], "yahoo.com": ["yahoo.com"], "microsoft.com": ["outlook.com", "hotmail.com"],
    ]

    /// Each provider's domains: the well-known ones' and the configured ones'.
    let domains: [String: Set<String>]

    init(settings: ServiceSettings) {
        var domains = Self.builtIn
        for provider in settings.providers { domains[provider.id, default: []].formUnion(provider.trustedEmailDomains) }
        for provider in settings.samlProviders { domains[provider.id, default: []].formUnion(provider.trustedEmailDomains) }
        self.domains = domains
    }

    /// Whether `providerID` vouches for addresses like `email`.
    func vouches(providerID: String, email: String) -> Bool {
        if providerID == "apple.com" { return true }
        guard let domain = email.split(separator: "@").last.map(String.init) else { return false }
        return domains[providerID]?.contains(domain) == true
    }

    /// Whether an assertion proves the address it carries: a provider that vouches for it, and
    /// `email_verified: true`.
    func proves(_ assertion: ProviderAssertion) -> Bool {
        guard let email = assertion.email, assertion.emailVerified else { return false }
        return vouches(providerID: assertion.providerID, email: email)
    }
}
