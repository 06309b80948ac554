import ActionLinksConfiguration

/// The password policy (`passwords`): the API's errors and the page's inline messages both come
/// from here.
public struct PasswordPolicy: Sendable, Hashable {
    let settings: PasswordSettings

    /// Why the policy refuses a new password.
    enum Problem: Equatable {
        case missing
        case tooShort(minimum: Int)
        case tooLong(maximum: Int)
    }

    /// What the policy has against `password`, or `nil` when it accepts it.
    func problem(_ password: String) -> Problem? {
        if password.isEmpty { return .missing }
        if password.count < settings.minimumLength { return .tooShort(minimum: settings.minimumLength) }
        if password.count > settings.maximumLength { return .tooLong(maximum: settings.maximumLength) }
        return nil
    }

    /// Throws Firebase's error for a password the policy refuses.
    func check(_ password: String) throws(ActionError) {
        switch problem(password) {
        case nil: return
        case .missing: throw ActionError(.missingPassword)
        case .tooShort(let minimum): throw ActionError(.weakPassword, "Password should be at least \(minimum) characters")
        case .tooLong(let maximum): throw ActionError(.weakPassword, "Password should be at most \(maximum) characters")
        }
    }
}
