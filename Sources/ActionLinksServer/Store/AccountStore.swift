import ActionLinks
import Foundation

/// An account: what the handlers change and `accounts:lookup` returns.
public struct Account: Sendable, Hashable {
    /// The account's ID (`localId`).
    public var localID: String
    /// The tenant ("" for the project itself).
    public var tenantID: String
    /// The canonical email address.
    public var email: String?
    /// Whether the address was proven by a link.
    public var emailVerified: Bool
    /// The scrypt hash of the password (PHC string), if the account has one.
    public var passwordHash: String?
    /// When the password was last set.
    public var passwordUpdatedAt: Timestamp?
    /// The display name.
    public var displayName: String?
    /// Whether sign-in is refused.
    public var disabled: Bool
    /// When the account was created.
    public var createdAt: Timestamp
    /// When the account last signed in.
    public var lastLoginAt: Timestamp?
    /// Tokens issued before this time (seconds, as in an ID token's `auth_time`) are revoked.
    public var validSince: Int64

    /// Creates an account value.
    public init(
        localID: String, tenantID: String = "", email: String?, emailVerified: Bool = false, passwordHash: String? = nil,
        passwordUpdatedAt: Timestamp? = nil, displayName: String? = nil, disabled: Bool = false, createdAt: Timestamp,
        lastLoginAt: Timestamp? = nil, validSince: Int64 = 0
    ) {
        self.localID = localID
        self.tenantID = tenantID
        self.email = email
        self.emailVerified = emailVerified
        self.passwordHash = passwordHash
        self.passwordUpdatedAt = passwordUpdatedAt
        self.displayName = displayName
        self.disabled = disabled
        self.createdAt = createdAt
        self.lastLoginAt = lastLoginAt
        self.validSince = validSince
    }
}

extension Account {
    /// What an email-link sign-in does to an existing account, the same in every store: the address
    /// is verified and the sign-in recorded; an unverified password is removed and sessions before
    /// now are void. Returns whether a password was removed (the store then deletes the sessions).
    mutating func completeEmailLinkSignIn(now: Timestamp) -> Bool {
        var removed = false
        if !emailVerified, passwordHash != nil {
            // Whoever set that password never proved they own the address: it goes, and so do their sessions.
            passwordHash = nil
            passwordUpdatedAt = nil
            validSince = now / 1000
            removed = true
        }
        emailVerified = true
        lastLoginAt = now
        return removed
    }
}

/// Why an account operation was refused.
public enum AccountStoreError: Error, Hashable, Sendable {
    /// Another account of the tenant already has the address.
    case emailExists
    /// The account does not exist (any more).
    case accountNotFound
    /// The account's address changed since the link was issued.
    case emailChanged
    /// A sign-in link for an address with no account, and sign-up is turned off.
    case signUpNotAllowed
}

/// What completing a code does to its account, applied in the transaction that consumes the code.
public enum CodeEffect: Sendable, Hashable {
    /// `resetPassword`: sets this password hash, verifies the address, revokes sessions and retires
    /// the account's codes.
    case setPassword(hash: String)
    /// `signIn`: signs in with the code's address (creating the account when `createIfMissing`) and
    /// records the session's refresh token.
    case signIn(newAccountID: String, createIfMissing: Bool, refreshTokenHash: Data)
    /// `verifyEmail`: verifies the address, if it is still the account's.
    case verifyEmail
    /// `verifyAndChangeEmail`: moves the account to the code's new address and stores the
    /// `recoverEmail` code (its hash and expiry) that lets the old address undo it.
    case changeEmail(recoveryHash: Data, recoveryExpiresAt: Timestamp)
    /// `recoverEmail`: moves the account back from the code's new address to its old one.
    case restoreEmail
}

/// A code that was consumed and applied, in one transaction.
public struct CompletedAction: Sendable, Hashable {
    /// The consumed code.
    public var record: ActionCodeRecord
    /// The account afterwards.
    public var account: Account
    /// For a sign-in: whether the account was created by it.
    public var isNewUser = false
    /// For a sign-in: whether an unverified password was removed and earlier sessions revoked.
    public var removedUnverifiedPassword = false
}

/// What completing a code did.
public enum CodeCompletion: Sendable, Hashable {
    /// The code was consumed and its effect applied; no other call will ever do either.
    case completed(CompletedAction)
    /// The code was issued but its lifetime is over (`EXPIRED_OOB_CODE`); nothing changed.
    case expired
    /// The code is unknown, used, retired or of another mode (`INVALID_OOB_CODE`); nothing changed.
    case invalid
}

/// What signing in with an email link did.
public struct EmailLinkSignIn: Sendable, Hashable {
    /// The account after sign-in.
    public var account: Account
    /// Whether the account was created by this sign-in.
    public var isNewUser: Bool
    /// Whether an unverified password was removed and earlier sessions revoked.
    public var removedUnverifiedPassword: Bool
}

/// Where accounts and their sessions live. Each method is one transaction: an account is never
/// left half-changed, and the codes it retires are retired in the same transaction.
public protocol AccountStore: Sendable {
    /// The account with `localID`.
    func account(id localID: String, tenantID: String) async throws -> Account?
    /// The account with the canonical address `email`.
    func account(email: String, tenantID: String) async throws -> Account?
    /// Adds an account; throws ``AccountStoreError/emailExists`` if the address is taken.
    func create(_ account: Account) async throws

    /// Completes an email-link sign-in: creates the account when there is none (if `createIfMissing`),
    /// marks the address verified, and, when the account had an unverified password, removes it and
    /// revokes every session (an impostor who registered the address first loses access).
    func signInWithEmailLink(email: String, tenantID: String, newAccountID: String, createIfMissing: Bool, now: Timestamp) async throws
        -> EmailLinkSignIn?

    /// Sets a new password hash, marks the address verified, revokes every session and retires every
    /// outstanding code of the account.
    func resetPassword(accountID: String, tenantID: String, passwordHash: String, now: Timestamp) async throws -> Account

    /// Marks the address verified if it is still `email`.
    func verifyEmail(accountID: String, tenantID: String, email: String, now: Timestamp) async throws -> Account

    /// Changes the address from `oldEmail` to `newEmail` (verified), revokes sessions and retires every
    /// outstanding code of both addresses.
    func changeEmail(accountID: String, tenantID: String, from oldEmail: String, to newEmail: String, now: Timestamp) async throws
        -> Account

    /// Consumes a live code of one of `modes` and applies `effect` to its account in one transaction:
    /// a crash leaves either both done or neither, and an effect that fails (the address was taken
    /// meanwhile, say) leaves the code unconsumed.
    func complete(hashes: [Data], modes: Set<ActionCodeLink.Mode>, effect: CodeEffect, now: Timestamp, by consumer: String) async throws
        -> CodeCompletion

    /// Records a refresh token's hash for a session.
    func addRefreshToken(hash: Data, accountID: String, tenantID: String, now: Timestamp) async throws
    /// The account a refresh token belongs to, if the token was not revoked.
    func accountForRefreshToken(hash: Data) async throws -> Account?
}
