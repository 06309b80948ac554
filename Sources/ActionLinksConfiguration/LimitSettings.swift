import ActionLinksHeaders

/// Limits on how often links are sent and sign-ins may fail (`limits`); answers look the same
/// whether or not an address exists.
public struct LimitSettings: Sendable, Hashable {
    /// Sends to one address per hour.
    public var sendsPerAddressPerHour = 10
    /// Sends requested by one client IP per hour.
    public var sendsPerIPPerHour = 100
    /// Failed sign-ins (wrong password) to one account per hour; beyond it the account's sign-ins
    /// are refused until the hour has passed.
    public var signInFailuresPerAccountPerHour = 10
    /// Failed sign-ins from one client IP per hour, whatever the account.
    public var signInFailuresPerIPPerHour = 100
    /// Sign-in code exchanges (`signInCodes:exchange`) for one address per hour, whatever the
    /// tenant; beyond it every exchange for the address is refused until the hour has passed.
    public var signInCodeExchangesPerAddressPerHour = 20
    /// Sign-in code exchanges from one client IP per hour, whatever the address.
    public var signInCodeExchangesPerIPPerHour = 100
    /// Wrong sign-in codes for one address in a UTC day, whatever the tenant and however many mails
    /// brought new codes; beyond it the address's exchanges are refused until the day is over.
    public var signInCodeFailuresPerAddressPerDay = 10
    /// Wrong sign-in codes for one address in a 30-day window (counted from the Unix epoch): the
    /// bound over a year. At the defaults at most 14 windows touch a year, so 840 wrong guesses:
    /// 1 - (1 - 10^-6)^840 < 0.085% of taking a 6-digit code (docs/SIGN-IN-CODES.md, "The rules").
    public var signInCodeFailuresPerAddressPer30Days = 60
    /// The length of the IPv6 prefix a client is counted under for the per-IP limits (64: one
    /// host usually holds a whole /64, and would otherwise have 2^64 buckets). IPv4 addresses count
    /// one by one.
    public var ipv6PrefixLength = 64
    /// The project's daily quota of mailed links per mode (`limits.dailyQuotas`), as Firebase's
    /// (Spark: 5 sign-in links, 150 resets, 1,000 verifications and address changes a day); none by
    /// default.
    public var dailyQuotas = DailyQuotas()
    /// The project's daily quota of links returned to the admin (`returnOobLink`) per mode
    /// (`limits.dailyLinkQuotas`; Spark: 20,000 sign-in, 1,500 reset, 10,000 verification links);
    /// none by default.
    public var dailyLinkQuotas = DailyQuotas()
}

/// How many links of each mode the project may send (or generate) in a UTC day; `nil`: no quota.
public struct DailyQuotas: Sendable, Hashable {
    /// Email sign-in links.
    public var signIn: Int?
    /// Password reset links.
    public var resetPassword: Int?
    /// Email verification links.
    public var verifyEmail: Int?
    /// Verify-and-change-email links.
    public var verifyAndChangeEmail: Int?
}

extension DailyQuotas: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case signIn, resetPassword, verifyEmail, verifyAndChangeEmail
    }

    /// Reads `limits.dailyQuotas` or `limits.dailyLinkQuotas`: whole numbers from 0 (nothing may
    /// be sent) to a billion.
    public init(from decoder: any Decoder) throws {
        let quotas = try decoder.container(keyedBy: CodingKeys.self)
        let range = 0...1_000_000_000
        signIn = try quotas.integer(.signIn, in: range)
        resetPassword = try quotas.integer(.resetPassword, in: range)
        verifyEmail = try quotas.integer(.verifyEmail, in: range)
        verifyAndChangeEmail = try quotas.integer(.verifyAndChangeEmail, in: range)
    }
}

extension LimitSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case sendsPerAddressPerHour, sendsPerIPPerHour, signInFailuresPerAccountPerHour, signInFailuresPerIPPerHour
        case dailyQuotas, dailyLinkQuotas
        case signInCodeExchangesPerAddressPerHour, signInCodeExchangesPerIPPerHour
        case signInCodeFailuresPerAddressPerDay, signInCodeFailuresPerAddressPer30Days, ipv6PrefixLength
    }

    /// Reads `limits`.
    public init(from decoder: any Decoder) throws {
        let limits = try decoder.container(keyedBy: CodingKeys.self)
        sendsPerAddressPerHour = try limits.integer(.sendsPerAddressPerHour, in: 1...1_000_000) ?? sendsPerAddressPerHour
        sendsPerIPPerHour = try limits.integer(.sendsPerIPPerHour, in: 1...100_000_000) ?? sendsPerIPPerHour
        signInFailuresPerAccountPerHour =
            try limits.integer(.signInFailuresPerAccountPerHour, in: 1...1_000_000) ?? signInFailuresPerAccountPerHour
        signInFailuresPerIPPerHour = try limits.integer(.signInFailuresPerIPPerHour, in: 1...100_000_000) ?? signInFailuresPerIPPerHour
        dailyQuotas = try limits.decode(DailyQuotas.self, forKey: .dailyQuotas)
        dailyLinkQuotas = try limits.decode(DailyQuotas.self, forKey: .dailyLinkQuotas)
        signInCodeExchangesPerAddressPerHour =
            try limits.integer(.signInCodeExchangesPerAddressPerHour, in: 1...1_000_000) ?? signInCodeExchangesPerAddressPerHour
        signInCodeExchangesPerIPPerHour =
            try limits.integer(.signInCodeExchangesPerIPPerHour, in: 1...100_000_000) ?? signInCodeExchangesPerIPPerHour
        signInCodeFailuresPerAddressPerDay =
            try limits.integer(.signInCodeFailuresPerAddressPerDay, in: 1...1_000_000) ?? signInCodeFailuresPerAddressPerDay
        signInCodeFailuresPerAddressPer30Days =
            try limits.integer(.signInCodeFailuresPerAddressPer30Days, in: 1...10_000_000) ?? signInCodeFailuresPerAddressPer30Days
        ipv6PrefixLength = try limits.integer(.ipv6PrefixLength, in: 32...128) ?? ipv6PrefixLength
    }
}

extension LimitSettings {
    /// The key a client's address is counted under by the per-IP limits: an IPv4 address (an
    /// IPv4-mapped IPv6 one too) as it is, an IPv6 address as its `ipv6PrefixLength` block
    /// (`2001:db8:1:2::/64`), anything else (a proxy's obfuscated `_hidden`) as given.
    public func clientBucket(_ address: String) -> String {
        guard let parsed = IPAddress(address) else { return address }
        if parsed.isIPv4 { return parsed.description }
        return IPNetwork(address: parsed, prefixLength: ipv6PrefixLength).description
    }
}
