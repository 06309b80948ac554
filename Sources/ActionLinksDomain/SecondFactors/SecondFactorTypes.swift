import Foundation

/// A second factor enrolled on an account: an authenticator app (TOTP, RFC 6238). The shared secret
/// is kept sealed (``SecretSealing``), never in clear; `accounts:lookup`, `batchGet` and exports show
/// the factor without it.
public struct SecondFactor: Sendable, Hashable, Codable {
    /// The factor's ID (`mfaEnrollmentId`): 28 random letters and digits.
    public var enrollmentID: String
    /// The name the user gave it (`displayName`).
    public var displayName: String?
    /// When it was enrolled (`enrolledAt`).
    public var enrolledAt: Timestamp
    /// The TOTP shared secret, sealed with the account's ID (base64url of AES-GCM's combined form).
    public var sealedSecret: String
    /// The last time step whose code signed in or enrolled with this factor: a code is used once
    /// (RFC 6238 §5.2), so only later steps are accepted.
    public var lastUsedStep: Int64?

    /// Creates a factor value.
    public init(enrollmentID: String, displayName: String?, enrolledAt: Timestamp, sealedSecret: String, lastUsedStep: Int64? = nil) {
        self.enrollmentID = enrollmentID
        self.displayName = displayName
        self.enrolledAt = enrolledAt
        self.sealedSecret = sealedSecret
        self.lastUsedStep = lastUsedStep
    }

    /// At most this many factors on one account (Firebase's limit: `SECOND_FACTOR_LIMIT_EXCEEDED`).
    public static let limit = 5

    /// The factors as the store keeps them (a JSON array), `nil` for none.
    public static func json(_ factors: [SecondFactor]) -> String? {
        guard !factors.isEmpty else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(factors)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The factors a stored JSON array holds (none for `nil`); throws on a damaged value.
    public static func factors(json: String?) throws -> [SecondFactor] {
        guard let json, !json.isEmpty else { return [] }
        return try JSONDecoder().decode([SecondFactor].self, from: Data(json.utf8))
    }
}

/// A project's or tenant's multi-factor settings, as Identity Platform's `mfa` / `mfaConfig` has
/// them: `state` for the project, and the TOTP provider's own state and `adjacentIntervals`.
public struct MultiFactorPolicy: Sendable, Hashable, Codable {
    /// `DISABLED`, `ENABLED` or `MANDATORY` (Identity Platform's `mfa.state`).
    public enum State: String, Sendable, Hashable, Codable {
        case disabled = "DISABLED"
        case enabled = "ENABLED"
        case mandatory = "MANDATORY"
    }

    /// The project's or tenant's `mfa.state`.
    public var state: State
    /// The TOTP provider's state (`providerConfigs[].state`), `nil` when there is no TOTP entry.
    public var totpState: State?
    /// How many 30-second steps before and after the current one a code may come from (0–10;
    /// `nil`: as given, without `adjacentIntervals`, which means Google's default, 5).
    public var adjacentIntervals: Int?

    /// Google's default `adjacentIntervals`.
    public static let defaultAdjacentIntervals = 5

    /// Nothing enabled (a project that never set `mfa`).
    public static let disabled = MultiFactorPolicy(state: .disabled, totpState: nil, adjacentIntervals: nil)

    /// Creates a policy.
    public init(state: State, totpState: State?, adjacentIntervals: Int?) {
        self.state = state
        self.totpState = totpState
        self.adjacentIntervals = adjacentIntervals
    }

    /// Whether a TOTP factor may be enrolled: a TOTP provider entry that is enabled.
    public var allowsTOTPEnrollment: Bool { totpState == .enabled || totpState == .mandatory }

    /// Whether an account with a factor is asked for it after its first factor: multi-factor
    /// authentication is on for the project or tenant (as the Auth emulator decides), or its TOTP
    /// provider is.
    public var challengesEnrolledAccounts: Bool { state != .disabled || allowsTOTPEnrollment }

    /// The window a TOTP code is accepted in (steps on each side of the current one).
    public var window: Int { adjacentIntervals ?? Self.defaultAdjacentIntervals }
}
