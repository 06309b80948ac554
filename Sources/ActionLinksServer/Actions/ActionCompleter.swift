import ActionLinks
import ActionLinksConfiguration
import Crypto
import Foundation
import Logging

/// Looks codes up and completes them (DESIGN §2, steps 3 to 5): a GET only looks; completing
/// consumes the code and applies what it does to its account in one store transaction.
public final class ActionCompleter: Sendable {
    let settings: ServiceSettings
    let codes: any CodeStore
    let accounts: any AccountStore
    let keys: ServerKeys
    let passwords: PasswordHasher
    let passwordPolicy: PasswordPolicy
    let tokens: TokenIssuer
    let issuer: CodeIssuer
    let metrics: ServerMetrics
    let store: StoreGateway
    let clock: any ServiceClock
    let logger: Logger

    init(
        settings: ServiceSettings, codes: any CodeStore, accounts: any AccountStore, keys: ServerKeys, passwords: PasswordHasher,
        passwordPolicy: PasswordPolicy, tokens: TokenIssuer, issuer: CodeIssuer, metrics: ServerMetrics, store: StoreGateway,
        clock: any ServiceClock, logger: Logger
    ) {
        self.clock = clock
        self.settings = settings
        self.codes = codes
        self.accounts = accounts
        self.keys = keys
        self.passwords = passwords
        self.passwordPolicy = passwordPolicy
        self.tokens = tokens
        self.issuer = issuer
        self.metrics = metrics
        self.store = store
        self.logger = logger
    }

    /// Looks a code up without consuming it (GET of a link, `accounts:resetPassword` with only `oobCode`).
    public func check(code: String, tenantID: String? = nil) async throws(ActionError) -> ActionCodeRecord {
        // Each refusal is counted once: a request stops at its first one.
        guard Self.isWellFormedCode(code) else { throw refusal(expired: false) }
        switch try await store.call({ try await self.codes.lookup(hashes: self.keys.codeHashes(code), now: self.clock.now) }) {
        case .live(let record):
            if let tenantID, tenantID != record.tenantID { throw refusal(expired: false) }
            return record
        case .expired: throw refusal(expired: true)
        case .invalid: throw refusal(expired: false)
        }
    }

    /// Counts a refused code and gives its error: `EXPIRED_OOB_CODE` or `INVALID_OOB_CODE`.
    private func refusal(expired: Bool) -> ActionError {
        if expired {
            metrics.codeExpired()
            return ActionError.expiredCode
        }
        metrics.codeInvalid()
        return ActionError.invalidCode
    }

    /// What completing a code did.
    public struct Completion: Sendable {
        /// The consumed code.
        public var record: ActionCodeRecord
        /// The account afterwards.
        public var account: Account
        /// For sign-in: whether the account was created, and the session's tokens.
        public var isNewUser = false
        /// The ID token of a sign-in.
        public var idToken: String?
        /// The refresh token of a sign-in.
        public var refreshToken: String?
    }

    /// Sets a new password with a `resetPassword` code. The password is checked before the code is
    /// consumed, so a rejected password leaves the link usable.
    public func resetPassword(code: String, newPassword: String, tenantID: String?, consumer: String) async throws(ActionError)
        -> Completion
    {
        try passwordPolicy.check(newPassword)
        let record = try await check(code: code, tenantID: tenantID)
        guard record.mode == .resetPassword else { throw ActionError.invalidCode }
        guard let accountID = record.accountID else { throw ActionError.invalidCode }
        let hash: String
        do {
            hash = try await passwords.hash(newPassword)
        } catch {
            throw ActionError(.internalError, "the password could not be hashed")
        }
        let done = try await complete(code: code, modes: [.resetPassword], effect: .setPassword(hash: hash), consumer: consumer)
        logger.info("password reset", metadata: ["account": "\(accountID)"])
        return Completion(record: done.record, account: done.account)
    }

    /// Completes an email-link sign-in: `email` must be the address the link was sent to.
    public func signIn(code: String, email: String, tenantID: String?, consumer: String) async throws(ActionError) -> Completion {
        guard !email.isEmpty else { throw ActionError.missingEmail }
        guard let canonical = EmailAddress.canonical(email) else { throw ActionError.invalidEmail }
        let record = try await check(code: code, tenantID: tenantID)
        guard record.mode == .signIn else { throw ActionError.invalidCode }
        guard canonical == record.email else {
            throw ActionError(.invalidEmail, "The email provided does not match the sign-in email address.")
        }
        let now = clock.now
        let refresh = Secrets.token()
        let done = try await complete(
            code: code, modes: [.signIn],
            effect: .signIn(
                newAccountID: Secrets.accountID(), createIfMissing: settings.signUpAllowed, refreshTokenHash: Self.refreshTokenHash(refresh)
            ),
            consumer: consumer, now: now)
        if done.removedUnverifiedPassword {
            logger.notice(
                "sign-in link removed an unverified password and revoked sessions", metadata: ["account": "\(done.account.localID)"])
        }
        return Completion(
            record: done.record, account: done.account, isNewUser: done.isNewUser,
            idToken: tokens.idToken(for: done.account, signInProvider: "password", now: now), refreshToken: refresh)
    }

    /// Applies a `verifyEmail`, `verifyAndChangeEmail` or `recoverEmail` code; with `expectedMode`,
    /// only a code of that mode (a page that said "verify" never restores an address).
    public func apply(code: String, expectedMode: ActionCodeLink.Mode? = nil, tenantID: String?, consumer: String) async throws(ActionError)
        -> Completion
    {
        let record = try await check(code: code, tenantID: tenantID)
        guard [.verifyEmail, .verifyAndChangeEmail, .recoverEmail].contains(record.mode),
            expectedMode == nil || expectedMode == record.mode,
            record.accountID != nil
        else {
            throw ActionError.invalidCode
        }
        let effect: CodeEffect
        var recoveryCode: String?
        switch record.mode {
        case .verifyEmail:
            effect = .verifyEmail
        case .verifyAndChangeEmail:
            let code = Secrets.token()
            recoveryCode = code
            effect = .changeEmail(
                recoveryHash: keys.newCodeHash(code),
                recoveryExpiresAt: clock.now + Timestamp(settings.codes.lifetime(of: .recoverEmail)) * 1000
            )
        default:
            effect = .restoreEmail
        }
        let done = try await complete(code: code, modes: [record.mode], effect: effect, consumer: consumer)
        if let recoveryCode { await issuer.announceRecovery(code: recoveryCode, change: done.record) }
        return Completion(record: done.record, account: done.account)
    }

    /// Consumes the code and applies `effect` to its account in one store transaction.
    private func complete(
        code: String, modes: Set<ActionCodeLink.Mode>, effect: CodeEffect, consumer: String, now: Timestamp? = nil
    ) async throws(ActionError) -> CompletedAction {
        let now = now ?? clock.now
        let outcome = try await store.call {
            try await self.accounts.complete(hashes: self.keys.codeHashes(code), modes: modes, effect: effect, now: now, by: consumer)
        }
        switch outcome {
        case .completed(let done):
            metrics.codeConsumed(done.record.mode)
            return done
        case .expired: throw refusal(expired: true)
        case .invalid: throw refusal(expired: false)
        }
    }

    /// Whether `code` has the shape of a code this server issues (43 base64url characters).
    static func isWellFormedCode(_ code: String) -> Bool {
        code.utf8.count == 43
            && code.utf8.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == UInt8(ascii: "-")
                    || $0 == UInt8(ascii: "_")
            }
    }

    static func refreshTokenHash(_ token: String) -> Data {
        Data(SHA256.hash(data: Data(token.utf8)))
    }
}
