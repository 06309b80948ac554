/// Limits on how often links are sent (`limits`); answers look the same whether or not an address exists.
public struct LimitSettings: Sendable, Hashable {
    /// Sends to one address per hour.
    public var sendsPerAddressPerHour = 10
    /// Sends requested by one client IP per hour.
    public var sendsPerIPPerHour = 100
}

extension LimitSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case sendsPerAddressPerHour, sendsPerIPPerHour
    }

    /// Reads `limits`.
    public init(from decoder: any Decoder) throws {
        let limits = try decoder.container(keyedBy: CodingKeys.self)
        sendsPerAddressPerHour = try limits.integer(.sendsPerAddressPerHour, in: 1...1_000_000) ?? sendsPerAddressPerHour
        sendsPerIPPerHour = try limits.integer(.sendsPerIPPerHour, in: 1...100_000_000) ?? sendsPerIPPerHour
    }
}
