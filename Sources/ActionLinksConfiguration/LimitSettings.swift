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
}

extension LimitSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case sendsPerAddressPerHour, sendsPerIPPerHour, signInFailuresPerAccountPerHour, signInFailuresPerIPPerHour
        case signInCodeExchangesPerAddressPerHour, signInCodeExchangesPerIPPerHour
    }

    /// Reads `limits`.
    public init(from decoder: any Decoder) throws {
        let limits = try decoder.container(keyedBy: CodingKeys.self)
        sendsPerAddressPerHour = try limits.integer(.sendsPerAddressPerHour, in: 1...1_000_000) ?? sendsPerAddressPerHour
        sendsPerIPPerHour = try limits.integer(.sendsPerIPPerHour, in: 1...100_000_000) ?? sendsPerIPPerHour
        signInFailuresPerAccountPerHour =
            try limits.integer(.signInFailuresPerAccountPerHour, in: 1...1_000_000) ?? signInFailuresPerAccountPerHour
        signInFailuresPerIPPerHour = try limits.integer(.signInFailuresPerIPPerHour, in: 1...100_000_000) ?? signInFailuresPerIPPerHour
        signInCodeExchangesPerAddressPerHour =
            try limits.integer(.signInCodeExchangesPerAddressPerHour, in: 1...1_000_000) ?? signInCodeExchangesPerAddressPerHour
        signInCodeExchangesPerIPPerHour =
            try limits.integer(.signInCodeExchangesPerIPPerHour, in: 1...100_000_000) ?? signInCodeExchangesPerIPPerHour
    }
}
