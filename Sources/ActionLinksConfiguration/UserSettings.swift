import Foundation

/// What people may do with their own accounts, and how much the answers tell (`users`).
public struct UserSettings: Sendable, Hashable {
    /// Whether people may create their own accounts (`signUp`, an email link for a new address,
    /// a first federated sign-in); when false only the admin API creates them
    /// (`ADMIN_ONLY_OPERATION` otherwise).
    public var selfServiceSignUp = true
    /// Whether people may delete their own accounts (`accounts:delete` with an ID token).
    public var selfServiceDelete = true
    /// Whether answers hide which addresses have accounts (Firebase's email enumeration
    /// protection): on by default in production, off on a development server, as on Firebase's emulator.
    public var emailEnumerationProtection = true
    /// Whether an address belongs to one account at most (Firebase's default); when false each
    /// sign-in provider may create its own account for the same address.
    public var oneAccountPerEmail = true
    /// How recent a client's sign-in must be (its ID token's `auth_time`, in seconds) for a
    /// production server to change its password or address, or delete it (Firebase's
    /// `CREDENTIAL_TOO_OLD_LOGIN_AGAIN` after five minutes; the app then reauthenticates). A
    /// development server does not check, as Firebase's emulator does not.
    public var recentSignInSeconds = 300
    /// How many password hashes (scrypt, 16 MiB each) run at once: one per core by default.
    public var passwordHashConcurrency = ProcessInfo.processInfo.activeProcessorCount
    /// How many more may wait for a turn; beyond it a password call is answered 503 `UNAVAILABLE`
    /// with `Retry-After` instead of waiting.
    public var passwordHashQueue = 64
    /// log2 of scrypt's N for new password hashes (`users.passwordHashLogRounds`, 4 to 15; r is 8):
    /// 14, OWASP's 16 MiB choice. Each hash keeps its parameters, so a change applies to passwords
    /// set after it and every older hash still verifies.
    public var passwordHashLogRounds = 14
    /// scrypt's p for new password hashes (`users.passwordHashParallelism`, 1 to 16): 5, OWASP's
    /// choice with N = 2^14. Firebase's own hashes are N = 2^14, r = 8, p = 1.
    public var passwordHashParallelism = 5

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
        var recentSignInSeconds: Int?
        var passwordHashConcurrency: Int?
        var passwordHashQueue: Int?
        var passwordHashLogRounds: Int?
        var passwordHashParallelism: Int?
        /// A cost below Firebase's own hashes (N = 2^14, r = 8, p = 1), which a production server
        /// warns of: every password hash it stores would be cheaper to guess than Firebase's.
        var belowFirebaseCost: DecodingProblem?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case selfServiceSignUp, selfServiceDelete, emailEnumerationProtection, oneAccountPerEmail, recentSignInSeconds,
                passwordHashConcurrency, passwordHashQueue, passwordHashLogRounds, passwordHashParallelism
        }

        init(from decoder: any Decoder) throws {
            let users = try decoder.container(keyedBy: CodingKeys.self)
            selfServiceSignUp = try users.boolean(.selfServiceSignUp)
            selfServiceDelete = try users.boolean(.selfServiceDelete)
            emailEnumerationProtection = try users.boolean(.emailEnumerationProtection)
            oneAccountPerEmail = try users.boolean(.oneAccountPerEmail)
            recentSignInSeconds = try users.integer(.recentSignInSeconds, in: 1...86_400)
            passwordHashConcurrency = try users.integer(.passwordHashConcurrency, in: 1...64)
            passwordHashQueue = try users.integer(.passwordHashQueue, in: 0...100_000)
            passwordHashLogRounds = try users.integer(.passwordHashLogRounds, in: 4...15)
            passwordHashParallelism = try users.integer(.passwordHashParallelism, in: 1...16)
            // The server's ceiling for any hash it runs: N·r·p at most 2^21 (the memory, 128·N·r,
            // is at most 32 MiB with N ≤ 2^15).
            let logRounds = passwordHashLogRounds ?? UserSettings().passwordHashLogRounds
            let parallelism = passwordHashParallelism ?? UserSettings().passwordHashParallelism
            if (1 << logRounds) * 8 * parallelism > 1 << 21 {
                throw users.problem(
                    passwordHashParallelism == nil ? .passwordHashLogRounds : .passwordHashParallelism,
                    "scrypt with N = 2^\(logRounds), r = 8 and p = \(parallelism) is too slow to run per sign-in: N·r·p is at most 2^21")
            }
            if logRounds < 14 {
                belowFirebaseCost = users.problem(
                    .passwordHashLogRounds,
                    "\(logRounds) makes password hashes cheaper to guess than Firebase's own (N = 2^14, r = 8, p = 1); use 14 or more in production"
                )
            }
        }
    }
}
