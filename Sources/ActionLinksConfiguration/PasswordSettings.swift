/// The password policy (`passwords`).
public struct PasswordSettings: Sendable, Hashable {
    /// The fewest characters a password may have (Firebase's default is 6).
    public var minimumLength = 8
    /// The most characters a password may have (scrypt cost grows with it).
    public var maximumLength = 4096
}

extension PasswordSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case minimumLength, maximumLength
    }

    /// Reads `passwords`.
    public init(from decoder: any Decoder) throws {
        try self.init(from: decoder, inheriting: PasswordSettings())
    }

    /// Reads a `passwords` mapping whose missing keys keep `base`'s values (a tenant's keep the project's).
    init(from decoder: any Decoder, inheriting base: PasswordSettings) throws {
        self = base
        let passwords = try decoder.container(keyedBy: CodingKeys.self)
        let minimum = try passwords.integer(.minimumLength, in: 6...128)
        minimumLength = minimum ?? minimumLength
        if let maximum = try passwords.integer(.maximumLength, in: minimumLength...4096) {
            maximumLength = maximum
        } else if minimumLength > maximumLength {
            throw passwords.problem(.minimumLength, "expected at most maximumLength (\(maximumLength)); got '\(minimumLength)'")
        }
    }
}
