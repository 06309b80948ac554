import ActionLinks

/// How long a code stays valid, per mode (`codes.lifetimes`), and the short code every sign-in
/// mail carries (`codes.signInCode`).
public struct CodeSettings: Sendable, Hashable {
    /// Lifetimes in seconds.
    public var lifetimes: [ActionCodeLink.Mode: Int] = [
        .signIn: 3600, .resetPassword: 3600, .verifyEmail: 72 * 3600, .recoverEmail: 72 * 3600,
        .verifyAndChangeEmail: 72 * 3600, .revertSecondFactorAddition: 72 * 3600,
    ]

    /// The sign-in code beside every sign-in link (`codes.signInCode`).
    public var signInCode = SignInCodeSettings()

    /// The lifetime of a code for `mode`, in seconds.
    public func lifetime(of mode: ActionCodeLink.Mode) -> Int { lifetimes[mode] ?? 3600 }
}

/// The short code beside every sign-in link (`codes.signInCode`): the person types it into the app
/// that asked for the link, which exchanges it for the link (`signInCodes:exchange`).
public struct SignInCodeSettings: Sendable, Hashable {
    /// How many digits (6 to 10); 0 turns sign-in codes off (the mail is what it was without them).
    public var digits = 6
    /// How long a code can be exchanged, in seconds; never longer than the sign-in link's own lifetime.
    public var lifetime = 900
    /// How many wrong tries a code survives; the next try, right or wrong, is refused.
    public var attempts = 5

    /// Whether sign-in mails carry a code.
    public var isEnabled: Bool { digits > 0 }

    /// The defaults: six digits, 15 minutes, five wrong tries.
    public init() {}
}

extension CodeSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case lifetimes, signInCode
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
        let codes = try decoder.container(keyedBy: CodingKeys.self)
        let lifetimes = try codes.nestedContainer(keyedBy: ModeKey.self, forKey: .lifetimes)
        for key in ModeKey.allCases {
            if let seconds = try lifetimes.duration(key) { self.lifetimes[key.mode] = seconds }
        }
        signInCode = try SignInCodeSettings(
            from: try codes.superDecoder(forKey: .signInCode), linkLifetime: lifetime(of: .signIn))
    }
}

extension SignInCodeSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case digits, lifetime, attempts
    }

    /// Reads `codes.signInCode`. A code never outlives its link: a `lifetime` given longer than the
    /// sign-in link's (`codes.lifetimes.signIn`) is refused; the default (15 minutes) is shortened
    /// to the link's when the link lives less.
    init(from decoder: any Decoder, linkLifetime: Int) throws {
        let section = try decoder.container(keyedBy: CodingKeys.self)
        if let scalar = try section.scalar(.digits) {
            guard let text = scalar.text, let value = Int(text), value == 0 || (6...10).contains(value) else {
                throw section.problem(.digits, "expected 0 (no sign-in codes) or a whole number from 6 to 10; got \(scalar.shown)")
            }
            digits = value
        }
        if let seconds = try section.duration(.lifetime, in: 60...86_400, kind: "a lifetime", examples: "10m or 15m") {
            guard seconds <= linkLifetime else {
                let given = try section.scalar(.lifetime)?.shown ?? "'\(seconds)'"
                throw section.problem(
                    .lifetime,
                    "expected at most the sign-in link's own lifetime (codes.lifetimes.signIn: \(KeyedDecodingContainer<CodingKeys>.spelled(linkLifetime))): a code must not outlive its link; got \(given)"
                )
            }
            lifetime = seconds
        } else {
            lifetime = min(lifetime, linkLifetime)
        }
        attempts = try section.integer(.attempts, in: 1...20) ?? attempts
    }
}
