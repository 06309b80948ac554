/// What people may do with their own accounts, and how much the answers tell (`users`).
public struct UserSettings: Sendable, Hashable {
    /// Whether people may create their own accounts (`signUp`, an email link for a new address,
    /// a first federated sign-in); when false only the admin API creates them
    /// (`ADMIN_RESTRICTED_OPERATION` otherwise).
    public var selfServiceSignUp = true
    /// Whether people may delete their own accounts (`accounts:delete` with an ID token).
    public var selfServiceDelete = true
    /// Whether answers hide which addresses have accounts (Firebase's email enumeration
    /// protection): on by default in production, off on a development server, as on Firebase's emulator.
    public var emailEnumerationProtection = true
    /// Whether an address belongs to one account at most (Firebase's default); when false each
    /// sign-in provider may create its own account for the same address.
    public var oneAccountPerEmail = true

    /// Creates user settings.
    public init(
        selfServiceSignUp: Bool = true, selfServiceDelete: Bool = true, emailEnumerationProtection: Bool = true,
        oneAccountPerEmail: Bool = true
    ) {
        self.selfServiceSignUp = selfServiceSignUp
        self.selfServiceDelete = selfServiceDelete
        self.emailEnumerationProtection = emailEnumerationProtection
        self.oneAccountPerEmail = oneAccountPerEmail
    }
}

extension UserSettings {
    /// `users` as written: nil where neither the file nor the environment gives a value, so that
    /// defaults that depend on other sections (and the deprecated `signUp`) can be applied after.
    struct Section: Decodable {
        var selfServiceSignUp: Bool?
        var selfServiceDelete: Bool?
        var emailEnumerationProtection: Bool?
        var oneAccountPerEmail: Bool?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case selfServiceSignUp, selfServiceDelete, emailEnumerationProtection, oneAccountPerEmail
        }

        init(from decoder: any Decoder) throws {
            let users = try decoder.container(keyedBy: CodingKeys.self)
            selfServiceSignUp = try users.boolean(.selfServiceSignUp)
            selfServiceDelete = try users.boolean(.selfServiceDelete)
            emailEnumerationProtection = try users.boolean(.emailEnumerationProtection)
            oneAccountPerEmail = try users.boolean(.oneAccountPerEmail)
        }
    }
}
