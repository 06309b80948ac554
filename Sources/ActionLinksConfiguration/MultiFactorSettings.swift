/// Multi-factor authentication (`mfa`, and a tenant's own `mfa`): Identity Platform's project
/// `mfa` setting (a tenant's `mfaConfig`), with authenticator apps (TOTP) the only second factor
/// this server has.
///
/// - `mfa.state` is the project's (or tenant's) multi-factor state: `DISABLED` (the default),
///   `ENABLED` or `MANDATORY`, Identity Platform's names for it.
/// - `mfa.totp` is the TOTP provider's entry (`providerConfigs[].totpProviderConfig`): given, even
///   empty, the provider is configured, `ENABLED` unless its `state` says otherwise; left out, it
///   is not configured and nobody can enrol an authenticator app.
/// - `mfa.totp.adjacentIntervals` is how many 30-second steps before and after the current one a
///   code may come from (0–10); left out it is not shown, and Google's default, 5, applies.
public struct MultiFactorSettings: Sendable, Hashable {
    /// A multi-factor state, as Identity Platform writes it.
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// Off.
        case disabled = "DISABLED"
        /// On: accounts may enrol and are asked for an enrolled factor.
        case enabled = "ENABLED"
        /// On, and required.
        case mandatory = "MANDATORY"
    }

    /// The TOTP provider (`mfa.totp`): authenticator apps.
    public struct TOTP: Sendable, Hashable {
        /// `mfa.totp.state`; `ENABLED` when the entry is given without one.
        public var state: State
        /// `mfa.totp.adjacentIntervals` (0–10); nil when not given (Google's default, 5, applies).
        public var adjacentIntervals: Int?

        /// A TOTP provider entry.
        public init(state: State = .enabled, adjacentIntervals: Int? = nil) {
            self.state = state
            self.adjacentIntervals = adjacentIntervals
        }
    }

    /// `mfa.state`.
    public var state: State
    /// `mfa.totp`; nil when the TOTP provider is not configured.
    public var totp: TOTP?

    /// Multi-factor settings; the defaults are "off, no provider".
    public init(state: State = .disabled, totp: TOTP? = nil) {
        self.state = state
        self.totp = totp
    }
}

extension MultiFactorSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case state, totp
    }

    /// The keys of `mfa.totp`.
    enum TOTPKeys: String, CodingKey, CaseIterable {
        case state, adjacentIntervals
    }

    /// The keys of `mfa`, as a person writes them: for messages that name them.
    public static let fileKeys = "mfa.state, mfa.totp.state, mfa.totp.adjacentIntervals"

    /// Reads `mfa`.
    public init(from decoder: any Decoder) throws {
        try self.init(from: decoder, inheriting: MultiFactorSettings())
    }

    /// Reads an `mfa` mapping whose missing keys keep `base`'s values (a tenant's keep the project's).
    init(from decoder: any Decoder, inheriting base: MultiFactorSettings) throws {
        self = base
        let mfa = try decoder.container(keyedBy: CodingKeys.self)
        state = try mfa.choice(.state, as: State.self) ?? state
        let section = try mfa.nestedContainer(keyedBy: TOTPKeys.self, forKey: .totp)
        let totpState = try section.choice(.state, as: State.self)
        let adjacentIntervals = try section.integer(.adjacentIntervals, in: 0...10)
        guard mfa.contains(.totp) || totpState != nil || adjacentIntervals != nil else { return }
        var totp = base.totp ?? TOTP()
        totp.state = totpState ?? totp.state
        totp.adjacentIntervals = adjacentIntervals ?? totp.adjacentIntervals
        self.totp = totp
    }
}
