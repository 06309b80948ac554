/// The password policy (`passwords`): Firebase's password policy (Identity Platform's
/// `passwordPolicyConfig`) with this server's length limits.
///
/// How the keys relate (docs/ARCHITECTURE.md §6, docs/CONFIGURATION.md):
///
/// - Whatever the policy, a password of fewer than 6 characters is refused with Firebase's
///   `WEAK_PASSWORD : Password should be at least 6 characters`, as Google's backend and the Auth
///   emulator refuse it.
/// - `enforcement: off` (the default) is the policy as it was before `enforcement` existed: a
///   password shorter than `minimumLength` or longer than `maximumLength` is refused with
///   `WEAK_PASSWORD`, and the four character rules are published (`GET /v2/passwordPolicy`, with
///   `enforcementState: OFF`) but not enforced. `minimumLength: 6` with `off` is Firebase's "off".
/// - `enforcement: enforce` refuses a password that misses any rule, the lengths included, with
///   `PASSWORD_DOES_NOT_MEET_REQUIREMENTS : Missing password requirements: [...]`, every missing
///   rule in Google's words.
///
/// Lengths count UTF-16 code units, as the JavaScript SDK's `validatePassword`, the browser's
/// `minlength` and the emulator count them.
public struct PasswordSettings: Sendable, Hashable {
    /// Whether the rules are enforced (`passwords.enforcement`).
    public enum Enforcement: String, Sendable, Hashable, CaseIterable {
        /// Every rule; a password that misses one gets `PASSWORD_DOES_NOT_MEET_REQUIREMENTS`.
        case enforce
        /// The length limits only, with `WEAK_PASSWORD`, as before the policy had rules.
        case off
    }

    /// The fewest characters a password may have (Firebase's floor is 6, and always applies).
    public var minimumLength = 8
    /// The most characters a password may have (scrypt cost grows with it).
    public var maximumLength = 4096
    /// A lower-case ASCII letter (a–z) is required.
    public var requireLowercase = false
    /// An upper-case ASCII letter (A–Z) is required.
    public var requireUppercase = false
    /// An ASCII digit (0–9) is required.
    public var requireNumeric = false
    /// One of Firebase's non-alphanumeric characters is required (``nonAlphanumericCharacters``).
    public var requireNonAlphanumeric = false
    /// Whether the rules are enforced.
    public var enforcement = Enforcement.off

    /// The fewest characters Firebase's backend takes whatever the policy (`WEAK_PASSWORD` below it).
    public static let floor = 6
    /// The characters that count as non-alphanumeric, Firebase's list (Identity Platform's
    /// password-policy documentation; `allowedNonAlphanumericCharacters`).
    public static let nonAlphanumericCharacters: [Character] = [
        "^", "$", "*", ".", "[", "]", "{", "}", "(", ")", "?", "\"", "!", "@", "#", "%", "&", "/", "\\", ",", ">", "<", "'", ":",
        ";", "|", "_", "~", "`",
    ]

    /// A policy; every value left out is the default.
    public init(
        minimumLength: Int = 8, maximumLength: Int = 4096, requireLowercase: Bool = false, requireUppercase: Bool = false,
        requireNumeric: Bool = false, requireNonAlphanumeric: Bool = false, enforcement: Enforcement = .off
    ) {
        self.minimumLength = minimumLength
        self.maximumLength = maximumLength
        self.requireLowercase = requireLowercase
        self.requireUppercase = requireUppercase
        self.requireNumeric = requireNumeric
        self.requireNonAlphanumeric = requireNonAlphanumeric
        self.enforcement = enforcement
    }
}

extension PasswordSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case minimumLength, maximumLength, requireLowercase, requireUppercase, requireNumeric, requireNonAlphanumeric, enforcement
    }

    /// Reads `passwords`.
    public init(from decoder: any Decoder) throws {
        try self.init(from: decoder, inheriting: PasswordSettings())
    }

    /// Reads a `passwords` mapping whose missing keys keep `base`'s values (a tenant's keep the project's).
    init(from decoder: any Decoder, inheriting base: PasswordSettings) throws {
        self = base
        let passwords = try decoder.container(keyedBy: CodingKeys.self)
        let minimum = try passwords.integer(.minimumLength, in: Self.floor...128)
        minimumLength = minimum ?? minimumLength
        if let maximum = try passwords.integer(.maximumLength, in: minimumLength...4096) {
            maximumLength = maximum
        } else if minimumLength > maximumLength {
            throw passwords.problem(.minimumLength, "expected at most maximumLength (\(maximumLength)); got '\(minimumLength)'")
        }
        requireLowercase = try passwords.boolean(.requireLowercase) ?? requireLowercase
        requireUppercase = try passwords.boolean(.requireUppercase) ?? requireUppercase
        requireNumeric = try passwords.boolean(.requireNumeric) ?? requireNumeric
        requireNonAlphanumeric = try passwords.boolean(.requireNonAlphanumeric) ?? requireNonAlphanumeric
        enforcement = try passwords.choice(.enforcement, as: Enforcement.self) ?? enforcement
    }
}
