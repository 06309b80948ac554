import ActionLinks

/// How long a code stays valid, per mode (`codes.lifetimes`).
public struct CodeSettings: Sendable, Hashable {
    /// Lifetimes in seconds.
    public var lifetimes: [ActionCodeLink.Mode: Int] = [
        .signIn: 3600, .resetPassword: 3600, .verifyEmail: 72 * 3600, .recoverEmail: 72 * 3600,
        .verifyAndChangeEmail: 72 * 3600, .revertSecondFactorAddition: 72 * 3600,
    ]

    /// The lifetime of a code for `mode`, in seconds.
    public func lifetime(of mode: ActionCodeLink.Mode) -> Int { lifetimes[mode] ?? 3600 }
}

extension CodeSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case lifetimes
    }

    /// A mode's name as a key of `codes.lifetimes`.
    struct ModeKey: CodingKey, CaseIterable {
        let mode: ActionCodeLink.Mode
        static var allCases: [ModeKey] { ActionCodeLink.Mode.allCases.map(ModeKey.init(mode:)) }
        var stringValue: String { mode.rawValue }
        var intValue: Int? { nil }
        init(mode: ActionCodeLink.Mode) { self.mode = mode }
        init?(stringValue: String) {
            guard let mode = ActionCodeLink.Mode(rawValue: stringValue) else { return nil }
            self.mode = mode
        }
        init?(intValue: Int) { nil }
    }

    /// Reads `codes`.
    public init(from decoder: any Decoder) throws {
        let lifetimes = try decoder.container(keyedBy: CodingKeys.self).nestedContainer(keyedBy: ModeKey.self, forKey: .lifetimes)
        for key in ModeKey.allCases {
            if let seconds = try lifetimes.duration(key) { self.lifetimes[key.mode] = seconds }
        }
    }
}
