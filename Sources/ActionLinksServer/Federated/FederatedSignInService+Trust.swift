import ActionLinksConfiguration

// Trust: which providers vouch for which addresses.

extension FederatedSignInService {
    /// The domains each well-known provider is the mail provider of (Firebase's trusted providers).
    static let builtInTrustedDomains: [String: Set<String>] = [
        "google.com": ["gmail.com"], "yahoo.com": ["yahoo.com"], "microsoft.com": ["outlook.com", "hotmail.com"],
    ]

    /// Whether `providerID` vouches for addresses like `email`: Apple for every address (it relays
    /// or verifies them), the well-known providers for their own mail domains, and each provider for
    /// its configured `trustedEmailDomains`.
    static func vouches(providerID: String, email: String, settings: ServiceSettings) -> Bool {
        if providerID == "apple.com" { return true }
        guard let domain = email.split(separator: "@").last.map(String.init) else { return false }
        if builtInTrustedDomains[providerID]?.contains(domain) == true { return true }
        if settings.samlProviders.first(where: { $0.id == providerID })?.trustedEmailDomains.contains(domain) == true { return true }
        return settings.providers.first { $0.id == providerID }?.trustedEmailDomains.contains(domain) == true
    }

    /// Whether an assertion proves the address it carries: a provider that vouches for it, and
    /// `email_verified: true`.
    func isTrusted(_ assertion: ProviderAssertion) -> Bool {
        guard let email = assertion.email, assertion.emailVerified else { return false }
        return Self.vouches(providerID: assertion.providerID, email: email, settings: settings)
    }
}
