import ActionLinksConfiguration
import Foundation

/// The password policy of the project or a tenant (`passwords`, a tenant's own, or in upstream
/// mode the fronted project's as `GET /v2/passwordPolicy` reads it): the one place a password is
/// judged. The REST API's errors, the pages' messages and the policy the API serves all come from
/// here. How `enforcement` and the lengths relate: ``PasswordSettings``.
public struct PasswordPolicy: Sendable, Hashable {
    package let settings: PasswordSettings

    /// One rule of the policy, in the order Google lists missing ones.
    package enum Requirement: Hashable, Sendable {
        case minimumLength(Int)
        case maximumLength(Int)
        case lowercase
        case uppercase
        case numeric
        case nonAlphanumeric

        /// How Google's backend names the rule in `PASSWORD_DOES_NOT_MEET_REQUIREMENTS`.
        var googlePhrase: String {
            switch self {
            case .minimumLength(let count): "Password must contain at least \(count) characters"
            case .maximumLength(let count): "Password may contain at most \(count) characters"
            case .lowercase: "Password must contain a lower case character"
            case .uppercase: "Password must contain an upper case character"
            case .numeric: "Password must contain a numeric character"
            case .nonAlphanumeric: "Password must contain a non-alphanumeric character"
            }
        }

        /// The rule Google's phrase names, or nil for a phrase this server does not know.
        init?(googlePhrase phrase: String) {
            let phrase = phrase.trimmingCharacters(in: .whitespaces)
            if let requirement = [Self.lowercase, .uppercase, .numeric, .nonAlphanumeric].first(where: { $0.googlePhrase == phrase }) {
                self = requirement
                return
            }
            for (prefix, make) in [
                ("Password must contain at least ", Self.minimumLength), ("Password may contain at most ", Self.maximumLength),
            ] where phrase.hasPrefix(prefix) && phrase.hasSuffix(" characters") {
                guard let count = Int(phrase.dropFirst(prefix.count).dropLast(" characters".count)) else { return nil }
                self = make(count)
                return
            }
            return nil
        }

        /// The rules Google lists in a `PASSWORD_DOES_NOT_MEET_REQUIREMENTS` detail
        /// (`Missing password requirements: [a, b]`), in its order; unknown phrases are left out.
        package static func parse(detail: String?) -> [Requirement] {
            guard let detail, let open = detail.firstIndex(of: "["), let close = detail.lastIndex(of: "]"), open < close else { return [] }
            return detail[detail.index(after: open)..<close].split(separator: ",").compactMap { Requirement(googlePhrase: String($0)) }
        }
    }

    /// Why the policy refuses a new password.
    package enum Problem: Equatable {
        /// No password at all (`MISSING_PASSWORD`).
        case missing
        /// Shorter than Firebase's floor of 6, whatever the policy (`WEAK_PASSWORD`).
        case belowFloor
        /// `enforcement: off`: outside the length limits (`WEAK_PASSWORD`, as before the policy had rules).
        case tooShort(minimum: Int)
        case tooLong(maximum: Int)
        /// `enforcement: enforce`: every rule the password misses (`PASSWORD_DOES_NOT_MEET_REQUIREMENTS`).
        case unmet([Requirement])
    }

    /// Whether the rules are enforced.
    package var enforced: Bool { settings.enforcement == .enforce }

    /// The rules of the policy, in Google's order (enforced or not).
    package var requirements: [Requirement] {
        var rules: [Requirement] = [.minimumLength(settings.minimumLength), .maximumLength(settings.maximumLength)]
        if settings.requireLowercase { rules.append(.lowercase) }
        if settings.requireUppercase { rules.append(.uppercase) }
        if settings.requireNumeric { rules.append(.numeric) }
        if settings.requireNonAlphanumeric { rules.append(.nonAlphanumeric) }
        return rules
    }

    /// Every rule of the policy `password` misses, in Google's order (whether enforced or not).
    package func unmet(_ password: String) -> [Requirement] {
        let length = password.utf16.count
        var has = (lower: false, upper: false, digit: false, other: false)
        for scalar in password.unicodeScalars {
            switch scalar.value {
            case 0x61...0x7A: has.lower = true
            case 0x41...0x5A: has.upper = true
            case 0x30...0x39: has.digit = true
            default: if scalar.isASCII, Self.nonAlphanumeric.contains(Character(scalar)) { has.other = true }
            }
        }
        return requirements.filter {
            switch $0 {
            case .minimumLength(let minimum): length < minimum
            case .maximumLength(let maximum): length > maximum
            case .lowercase: !has.lower
            case .uppercase: !has.upper
            case .numeric: !has.digit
            case .nonAlphanumeric: !has.other
            }
        }
    }

    private static let nonAlphanumeric = Set(PasswordSettings.nonAlphanumericCharacters)

    /// What the policy has against `password`, or `nil` when it accepts it.
    package func problem(_ password: String) -> Problem? {
        if password.isEmpty { return .missing }
        let length = password.utf16.count
        if length < PasswordSettings.floor { return .belowFloor }
        if enforced {
            let missing = unmet(password)
            return missing.isEmpty ? nil : .unmet(missing)
        }
        if length < settings.minimumLength { return .tooShort(minimum: settings.minimumLength) }
        if length > settings.maximumLength { return .tooLong(maximum: settings.maximumLength) }
        return nil
    }

    /// The codes of the errors ``check(_:)`` throws.
    package static let refusals: Set<ActionError.Code> = [.missingPassword, .weakPassword, .passwordDoesNotMeetRequirements]

    /// Throws Firebase's error for a password the policy refuses.
    func check(_ password: String) throws(ActionError) {
        guard let problem = problem(password) else { return }
        throw Self.error(problem)
    }

    /// Firebase's error for `problem`, in Google's words.
    static func error(_ problem: Problem) -> ActionError {
        switch problem {
        case .missing: ActionError(.missingPassword)
        case .belowFloor: ActionError(.weakPassword, "Password should be at least \(PasswordSettings.floor) characters")
        case .tooShort(let minimum): ActionError(.weakPassword, "Password should be at least \(minimum) characters")
        case .tooLong(let maximum): ActionError(.weakPassword, "Password should be at most \(maximum) characters")
        case .unmet(let missing):
            ActionError(
                .passwordDoesNotMeetRequirements,
                "Missing password requirements: [" + missing.map(\.googlePhrase).joined(separator: ", ") + "]")
        }
    }

    /// Makes the value from each of its fields.
    package init(settings: PasswordSettings) {
        self.settings = settings
    }
}

// MARK: - Google's shapes of a policy

/// `GET /v2/passwordPolicy`'s answer (Identity Toolkit v2 `PasswordPolicy`): what the JS SDK's
/// `validatePassword` reads, and what a front reads from the project it fronts. A requirement's
/// boolean is there only when it is required (absent means not required, as Google answers).
package struct PasswordPolicyResponse: Codable, Sendable, Equatable {
    var customStrengthOptions: CustomStrengthOptions?
    var allowedNonAlphanumericCharacters: [String]?
    /// `ENFORCE`, `OFF` (or `ENFORCEMENT_STATE_UNSPECIFIED`, which the SDKs read as `OFF`).
    var enforcementState: String?
    var forceUpgradeOnSignin: Bool?
    var schemaVersion: Int?

    /// The policy as this server serves it.
    package init(_ policy: PasswordPolicy) {
        let settings = policy.settings
        customStrengthOptions = CustomStrengthOptions(settings)
        allowedNonAlphanumericCharacters = PasswordSettings.nonAlphanumericCharacters.map(String.init)
        enforcementState = policy.enforced ? "ENFORCE" : "OFF"
        forceUpgradeOnSignin = false
        schemaVersion = 1
    }

    /// The policy a project that serves this answer enforces, as a front checks it: with
    /// `ENFORCE` its rules (a minimum below Firebase's floor, or none, is the floor); otherwise
    /// only Firebase's floor, which Google's backend applies to every password.
    var enforcedPolicy: PasswordPolicy {
        guard enforcementState == "ENFORCE" else { return Self.floorPolicy }
        return PasswordPolicy(settings: (customStrengthOptions ?? CustomStrengthOptions()).settings(enforcement: .enforce))
    }

    /// What Google's backend takes whatever a project's policy: 6 characters or more.
    static let floorPolicy = PasswordPolicy(settings: PasswordSettings(minimumLength: PasswordSettings.floor, maximumLength: 4096))
}

/// Google's `CustomStrengthOptions`, the same in the v2 `PasswordPolicy` and in the admin API's
/// `passwordPolicyConfig`: a boolean is given only for a rule that is required.
struct CustomStrengthOptions: Codable, Sendable, Hashable {
    var minPasswordLength: Int?
    var maxPasswordLength: Int?
    var containsLowercaseCharacter: Bool?
    var containsUppercaseCharacter: Bool?
    var containsNumericCharacter: Bool?
    var containsNonAlphanumericCharacter: Bool?

    init() {}

    /// The options of a policy (every length given, the required rules `true`).
    init(_ settings: PasswordSettings) {
        minPasswordLength = settings.minimumLength
        maxPasswordLength = settings.maximumLength
        containsLowercaseCharacter = settings.requireLowercase ? true : nil
        containsUppercaseCharacter = settings.requireUppercase ? true : nil
        containsNumericCharacter = settings.requireNumeric ? true : nil
        containsNonAlphanumericCharacter = settings.requireNonAlphanumeric ? true : nil
    }

    /// The policy these options describe: a minimum below Firebase's floor, or none, is the floor;
    /// no maximum is 4096 (the most a password may have here).
    func settings(enforcement: PasswordSettings.Enforcement) -> PasswordSettings {
        let minimum = max(minPasswordLength ?? PasswordSettings.floor, PasswordSettings.floor)
        return PasswordSettings(
            minimumLength: minimum, maximumLength: max(maxPasswordLength ?? 4096, minimum),
            requireLowercase: containsLowercaseCharacter ?? false, requireUppercase: containsUppercaseCharacter ?? false,
            requireNumeric: containsNumericCharacter ?? false, requireNonAlphanumeric: containsNonAlphanumericCharacter ?? false,
            enforcement: enforcement)
    }
}

/// A tenant's `passwordPolicyConfig`, as Identity Toolkit's admin API v2 takes and shows it
/// (`GoogleCloudIdentitytoolkitAdminV2PasswordPolicyConfig`, what firebase-admin's
/// `passwordPolicyConfig` becomes), and as the tenant store keeps it.
package struct PasswordPolicyConfig: Codable, Sendable, Hashable {
    package struct Version: Codable, Sendable, Hashable {
        var customStrengthOptions: CustomStrengthOptions?
        /// Output only: 1.
        var schemaVersion: Int?
    }
    /// `ENFORCE`, `OFF` or `PASSWORD_POLICY_ENFORCEMENT_STATE_UNSPECIFIED` (off).
    package var passwordPolicyEnforcementState: String?
    /// Exactly one version: the rules.
    package var passwordPolicyVersions: [Version]?
    /// Whether sign-in needs a compliant password: this server never checks a password at sign-in,
    /// so only `false` is taken.
    package var forceUpgradeOnSignin: Bool?

    static let states = ["ENFORCE", "OFF", "PASSWORD_POLICY_ENFORCEMENT_STATE_UNSPECIFIED"]

    package init() {}

    /// The configuration of a policy from the configuration file.
    init(_ settings: PasswordSettings) {
        passwordPolicyEnforcementState = settings.enforcement == .enforce ? "ENFORCE" : "OFF"
        passwordPolicyVersions = [Version(customStrengthOptions: CustomStrengthOptions(settings), schemaVersion: 1)]
        forceUpgradeOnSignin = false
    }

    /// The policy, or Firebase's `INVALID_ARGUMENT` naming the field that cannot be one (Google's
    /// limits: a minimum from 6 to 30, a maximum from the minimum to 4096, one version).
    func settings() throws(ActionError) -> PasswordSettings {
        let name = "passwordPolicyConfig"
        if let state = passwordPolicyEnforcementState, !Self.states.contains(state) {
            throw ActionError.invalidArgument(
                "\(name).passwordPolicyEnforcementState: expected one of \(Self.states.joined(separator: ", ")); got '\(state)'")
        }
        if forceUpgradeOnSignin == true {
            throw ActionError.notImplemented(
                "\(name).forceUpgradeOnSignin: this server does not check passwords at sign-in; only false is taken")
        }
        guard let versions = passwordPolicyVersions, !versions.isEmpty else {
            return CustomStrengthOptions().settings(enforcement: passwordPolicyEnforcementState == "ENFORCE" ? .enforce : .off)
        }
        guard versions.count == 1 else { throw ActionError.invalidArgument("\(name).passwordPolicyVersions: expected exactly one version") }
        let options = versions[0].customStrengthOptions ?? CustomStrengthOptions()
        let path = "\(name).passwordPolicyVersions[0].customStrengthOptions"
        if let minimum = options.minPasswordLength, !(PasswordSettings.floor...30).contains(minimum) {
            throw ActionError.invalidArgument("\(path).minPasswordLength: expected 6 to 30; got \(minimum)")
        }
        let minimum = options.minPasswordLength ?? PasswordSettings.floor
        if let maximum = options.maxPasswordLength, !(minimum...4096).contains(maximum) {
            throw ActionError.invalidArgument("\(path).maxPasswordLength: expected \(minimum) to 4096; got \(maximum)")
        }
        return options.settings(enforcement: passwordPolicyEnforcementState == "ENFORCE" ? .enforce : .off)
    }
}
