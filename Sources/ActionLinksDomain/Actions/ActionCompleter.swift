import ActionLinks
import ActionLinksConfiguration
import Crypto
import Foundation
import Logging

/// Looks codes up and completes them (docs/ARCHITECTURE.md §2, steps 3 to 5): a GET only looks;
/// completing consumes the code and applies what it does to its account in one store transaction.
public final class ActionCompleter: Sendable {
    let settings: ServiceSettings
    let codes: any CodeStore
    let accounts: any AccountStore
    let keys: ServerKeys
    let passwords: PasswordHasher
    let tokens: TokenService
    let completion: SignInCompletion
    let accountService: AccountService
    let issuer: CodeIssuer
    let metrics: ServerMetrics
    let store: StoreGateway
    let clock: any ServiceClock
    let logger: Logger
    /// `accounts`, when it completes an email-link sign-in in one statement.
    let oneStatement: (any OneStatementEmailLinkSignIn)?

    init(
        settings: ServiceSettings, codes: any CodeStore, accounts: any AccountStore, keys: ServerKeys, passwords: PasswordHasher,
        tokens: TokenService, completion: SignInCompletion, accountService: AccountService, issuer: CodeIssuer, metrics: ServerMetrics,
        store: StoreGateway, clock: any ServiceClock, logger: Logger
    ) {
        self.settings = settings
        self.codes = codes
        self.accounts = accounts
        self.keys = keys
        self.passwords = passwords
        self.tokens = tokens
        self.completion = completion
        self.accountService = accountService
        self.issuer = issuer
        self.metrics = metrics
        self.store = store
        self.clock = clock
        self.logger = logger
        oneStatement = accounts as? any OneStatementEmailLinkSignIn
    }

    /// Looks a code up without consuming it (GET of a link, `accounts:resetPassword` with only
    /// `oobCode`); with `tenantID`, only a code of that tenant.
    public func check(code: String, tenantID: String? = nil) async throws(ActionError) -> ActionCodeRecord {
        // Each refusal is counted once: a request stops at its first one.
        guard Self.isWellFormedCode(code) else { throw refusal(expired: false) }
        return try checked(
            try await store.call({ try await self.codes.lookup(hashes: self.keys.codeHashes(code), now: self.clock.now) }),
            tenantID: tenantID)
    }

    /// ``check(code:tenantID:)`` on a store that answers on the caller's thread, for the event-loop
    /// fast path of the landing page.
    package func checkNow(code: String, tenantID: String? = nil, in codes: any ImmediateCodeLookup) throws(ActionError) -> ActionCodeRecord
    {
        guard Self.isWellFormedCode(code) else { throw refusal(expired: false) }
        let lookup: CodeLookup
        do {
            lookup = try codes.lookupNow(hashes: keys.codeHashes(code), now: clock.now)
        } catch {
            throw store.unavailable(error)
        }
        return try checked(lookup, tenantID: tenantID)
    }

    /// The record of a live code (of `tenantID` when given), or the refusal.
    private func checked(_ lookup: CodeLookup, tenantID: String?) throws(ActionError) -> ActionCodeRecord {
        switch lookup {
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
        /// For an email-link sign-in: the session and whether the account was made by it.
        public var signedIn: SignedInUser?
        /// For an email change: the `recoverEmail` code left for the old address.
        public var recoveryCode: String?
    }

    /// Consumes the code (of one of `modes`) and applies `effect` to its account in one store
    /// transaction; a refused effect leaves the code live.
    private func complete(
        code: String, tenantID: String, modes: Set<ActionCodeLink.Mode>, consumer: String, now: Timestamp,
        effect: @escaping @Sendable (any AccountTransaction, ActionCodeRecord) throws -> (Account, SignedInUser?)
    ) async throws(ActionError) -> Completion {
        let hashes = keys.codeHashes(code)
        enum Outcome: Sendable {
            case done(ActionCodeRecord, Account, SignedInUser?)
            case expired, invalid
        }
        let outcome = try await store.call {
            try await self.accounts.transaction(tenantID: tenantID, now: now) { tx -> Outcome in
                let record: ActionCodeRecord
                switch try tx.code(hashes: hashes) {
                case .live(let live) where modes.contains(live.mode) && live.tenantID == tenantID: record = live
                case .expired(let expired) where modes.contains(expired.mode): return .expired
                default: return .invalid
                }
                // Consumed first: an effect that retires the account's codes must not retire this
                // one under it; an effect that throws undoes the consumption with everything else.
                try tx.consume(record, by: consumer)
                let (account, signedIn) = try effect(tx, record)
                return .done(record, account, signedIn)
            }
        }
        switch outcome {
        case .done(let record, let account, let signedIn):
            metrics.codeConsumed(record.mode)
            return Completion(record: record, account: account, signedIn: signedIn)
        case .expired: throw refusal(expired: true)
        case .invalid: throw refusal(expired: false)
        }
    }

    // MARK: - Password reset

    /// Sets a new password with a `resetPassword` code. The password is checked before the code is
    /// consumed, so a rejected password leaves the link usable. The address is verified (the link
    /// proved it), every session is revoked and the account's other codes are retired.
    public func resetPassword(code: String, newPassword: String, tenant: TenantPolicy? = nil, consumer: String) async throws(ActionError)
        -> Completion
    {
        let record = try await check(code: code, tenantID: tenant?.tenantID)
        let policy = try await resolved(tenant, record)
        try policy.checkEnabled()
        guard policy.allowPasswordSignup else { throw ActionError(.passwordLoginDisabled) }
        try policy.passwords.check(newPassword)
        guard record.mode == .resetPassword, record.accountID != nil else { throw ActionError.invalidCode }
        let hash = try await SignInService.hashing { try await self.passwords.hash(newPassword) }
        let done = try await complete(code: code, tenantID: record.tenantID, modes: [.resetPassword], consumer: consumer, now: clock.now) {
            tx, record in
            var account = try Self.owner(of: record, tx)
            // The address's owner has just proved it. On an account whose address was never
            // verified, whoever linked a provider need not be that owner: the providers go, as
            // docs/ARCHITECTURE.md §6 has it for a sign-in link. (A verified account keeps them; the
            // emulator unlinks them on every reset.)
            if !account.emailVerified { account.federatedIdentities.removeAll() }
            account.passwordHash = hash
            account.passwordUpdatedAt = tx.now
            account.emailVerified = true
            account.validSince = tx.now.seconds
            try tx.update(account)
            try tx.retireCodes(emails: [record.email])
            return (account, nil)
        }
        logger.info("password reset", metadata: ["account": "\(done.account.localID)"])
        return done
    }

    /// What `accounts:resetPassword` tells of a code: its mode and, except for an email sign-in
    /// code, its addresses; for a `revertSecondFactorAddition` code, the factor it removes.
    public struct Disclosure: Sendable {
        public var mode: ActionCodeLink.Mode
        public var email: String?
        public var newEmail: String?
        /// The second factor a `revertSecondFactorAddition` code removes.
        public var factor: SecondFactor?
    }

    /// `accounts:resetPassword`, in `tenant` (enabled, resolved by the route; a code of another
    /// tenant is refused only when the call `named` one): with `newPassword`, the password reset
    /// (``resetPassword(code:newPassword:tenant:consumer:)``); without, what the code is, consuming
    /// nothing. The tenant must allow passwords (`PASSWORD_LOGIN_DISABLED`), then the code is
    /// required (`MISSING_OOB_CODE`).
    package func resetPassword(code: String?, newPassword: String?, tenant: TenantPolicy, named: Bool, consumer: String)
        async throws(ActionError) -> Disclosure
    {
        guard tenant.allowPasswordSignup else { throw ActionError(.passwordLoginDisabled) }
        guard let code, !code.isEmpty else { throw ActionError.missingCode }
        let scope = named ? tenant : nil
        if let newPassword {
            let done = try await resetPassword(code: code, newPassword: newPassword, tenant: scope, consumer: consumer)
            return Disclosure(mode: .resetPassword, email: done.record.email)
        }
        let record = try await check(code: code, tenantID: scope?.tenantID)
        // As Firebase does, an email sign-in code does not tell whom it was sent to: whoever holds
        // a forwarded link must still type the address.
        guard record.mode != .signIn else { return Disclosure(mode: record.mode) }
        if record.mode == .revertSecondFactorAddition {
            return Disclosure(mode: record.mode, email: record.email, factor: try await revertedFactor(of: record))
        }
        return Disclosure(mode: record.mode, email: record.email, newEmail: record.newEmail)
    }

    /// The tenant a call named, else the code's own.
    private func resolved(_ tenant: TenantPolicy?, _ record: ActionCodeRecord) async throws(ActionError) -> TenantPolicy {
        if let tenant { return tenant }
        return try await accountService.tenants.policy(for: record.tenantID)
    }

    /// The account a code acts on, if it still has the address the code was sent to.
    static func owner(of record: ActionCodeRecord, _ tx: any AccountTransaction) throws -> Account {
        guard let accountID = record.accountID, let account = try tx.account(id: accountID), account.email == record.email else {
            throw ActionError.invalidCode
        }
        return account
    }

    // MARK: - Email-link sign-in

    /// Completes an email-link sign-in: `email` must be the address the link was sent to. Without a
    /// signed-in user it signs in the account with that address, creating it if there is none (when
    /// sign-up is on); an account whose address was never proven loses its password and every
    /// session (whoever set them never owned the address). With `user` (an ID token) it links the
    /// address to that user (an anonymous user keeps its ID), unless another account has it.
    public func signIn(code: String, email: String?, user: AccountService.User? = nil, tenant given: TenantPolicy?, consumer: String)
        async throws(ActionError) -> Completion
    {
        guard let email, !email.isEmpty else { throw ActionError.missingEmail }
        guard let canonical = EmailAddress.canonical(email) else { throw ActionError.invalidEmail }
        // On a store that can, without a signed-in user and with a tenant that allows it, all of
        // the below is one statement (one round trip instead of eight); the same checks in the same
        // order. Not where a second factor may be asked for: that is ``SignInCompletion``'s to say.
        if user == nil, let given, given.enableEmailLinkSignin, !given.multiFactor.challengesEnrolledAccounts,
            (try? given.checkEnabled()) != nil, let oneStatement
        {
            return try await signInInOneStatement(code: code, email: canonical, tenant: given, consumer: consumer, store: oneStatement)
        }
        let record = try await check(code: code, tenantID: given?.tenantID)
        let tenant = try await resolved(given, record)
        try tenant.checkEnabled()
        guard tenant.enableEmailLinkSignin else { throw ActionError(.operationNotAllowed) }
        guard record.mode == .signIn else { throw ActionError.invalidCode }
        guard canonical == record.email else {
            throw ActionError(.invalidEmail, "The email provided does not match the sign-in email address.")
        }
        let now = clock.now
        let newID = Secrets.accountID()
        // A signed-in user's session links the address and keeps its second factor; anyone else
        // proves the address, and an account with a second factor is asked for it.
        let factor = user.map { FirstFactor.continuing($0, provider: "password") } ?? FirstFactor(provider: "password", rule: .ask)
        let canCreate = tenant.selfServiceSignUp
        let done = try await complete(code: code, tenantID: record.tenantID, modes: [.signIn], consumer: consumer, now: now) { tx, record in
            let owner = try tx.account(email: record.email)
            var account: Account
            var isNew = false
            if let user {
                guard var current = try tx.account(id: user.account.localID) else { throw AccountStoreError.accountNotFound }
                if current.disabled { throw ActionError.userDisabled }
                if let owner, owner.localID != current.localID { throw ActionError.emailExists }
                if current.email != record.email {
                    current.email = record.email
                }
                current.emailVerified = true
                account = current
            } else if var existing = owner {
                if existing.disabled { throw ActionError.userDisabled }
                if !existing.emailVerified {
                    // Whoever set the account up never proved they own the address (perhaps an
                    // anonymous session that named it, perhaps someone with a password or a provider
                    // of their own): every way in they had goes, and every session.
                    existing.passwordHash = nil
                    existing.passwordUpdatedAt = nil
                    existing.federatedIdentities.removeAll()
                    existing.validSince = tx.now.seconds
                }
                existing.emailVerified = true
                account = existing
            } else {
                guard canCreate else {
                    throw ActionError(.adminOnlyOperation, "signing up is turned off for this project; an administrator creates accounts")
                }
                account = Account(localID: newID, tenantID: record.tenantID, email: record.email, emailVerified: true, createdAt: tx.now)
                isNew = true
            }
            account.emailLinkSignin = true
            let signedIn = try self.completion.complete(account, isNew: isNew, by: factor, tenant: tenant, in: tx)
            return (signedIn.account, signedIn)
        }
        return done
    }

    /// `accounts:signInWithEmailLink`, in `tenant` (enabled, resolved by the route), which must
    /// allow email-link sign-in (`OPERATION_NOT_ALLOWED`); with `idToken`, for the user it names
    /// (whose tenant is then the sign-in's), then the address (`MISSING_EMAIL`) and the code
    /// (`MISSING_OOB_CODE`) are required. The session's tokens come with it.
    package func signInWithEmailLink(
        code: String?, email: String?, idToken: String?, bodyTenant: String?, tenant named: TenantPolicy, caller: Caller,
        consumer: String
    ) async throws(ActionError) -> (user: SignedInUser, tokens: SignedInUser.Tokens?) {
        var tenant = named
        guard tenant.enableEmailLinkSignin else { throw ActionError(.operationNotAllowed) }
        var user: AccountService.User?
        if let idToken {
            user = try await accountService.user(idToken: idToken, caller: caller, bodyTenant: bodyTenant)
            tenant = user?.tenant ?? tenant
        }
        guard let email, !email.isEmpty else { throw ActionError.missingEmail }
        guard let code, !code.isEmpty else { throw ActionError.missingCode }
        let done = try await signIn(code: code, email: email, user: user, tenant: tenant, consumer: consumer)
        guard let signedIn = done.signedIn else { throw ActionError(.internalError, "the sign-in made no session") }
        return (signedIn, try await signedIn.tokens(tokens, now: clock.now))
    }

    /// ``signIn(code:email:user:tenant:consumer:)`` without a user, for an enabled `tenant` that
    /// allows email-link sign-in, on a store that makes the checks ``check(code:tenantID:)``,
    /// `signIn` and its unit of work make, in their order, and applies what the unit of work
    /// applies, in one statement (``OneStatementEmailLinkSignIn``).
    private func signInInOneStatement(
        code: String, email: String, tenant: TenantPolicy, consumer: String, store oneStatement: any OneStatementEmailLinkSignIn
    )
        async throws(ActionError) -> Completion
    {
        guard Self.isWellFormedCode(code) else { throw refusal(expired: false) }
        let now = clock.now
        let newID = Secrets.accountID()
        // The tenant asks for no second factor (the caller checked), so the session is started here.
        var newSession = completion.newSession(
            for: Account(localID: newID, tenantID: tenant.tenantID, createdAt: now), by: FirstFactor(provider: "password", rule: .ask),
            now: now)
        let hashes = keys.codeHashes(code)
        let session = newSession.session
        let outcome = try await store.call {
            try await oneStatement.emailLinkSignIn(
                hashes: hashes, tenantID: tenant.tenantID, email: email, now: now, consumer: consumer, newID: newID,
                canCreate: tenant.selfServiceSignUp, session: session)
        }
        switch outcome {
        case .signedIn(let record, let account, let isNew):
            newSession.session.accountID = account.localID
            metrics.codeConsumed(record.mode)
            return Completion(
                record: record, account: account, signedIn: SignedInUser(account: account, isNewUser: isNew, step: .session(newSession)))
        case .invalid: throw refusal(expired: false)
        case .expired: throw refusal(expired: true)
        case .wrongMode: throw ActionError.invalidCode
        case .emailMismatch: throw ActionError(.invalidEmail, "The email provided does not match the sign-in email address.")
        case .disabled: throw ActionError.userDisabled
        case .adminOnly:
            throw ActionError(.adminOnlyOperation, "signing up is turned off for this project; an administrator creates accounts")
        }
    }

    // MARK: - Verification, change and recovery

    /// Applies a `verifyEmail`, `verifyAndChangeEmail`, `recoverEmail` or
    /// `revertSecondFactorAddition` code; with `expectedMode`, only a code of that mode (a page that
    /// said "verify" never restores an address).
    public func apply(code: String, expectedMode: ActionCodeLink.Mode? = nil, tenant: TenantPolicy? = nil, consumer: String)
        async throws(ActionError) -> Completion
    {
        let record = try await check(code: code, tenantID: tenant?.tenantID)
        let policy = try await resolved(tenant, record)
        try policy.checkEnabled()
        if record.mode == .revertSecondFactorAddition, expectedMode == nil || expectedMode == record.mode {
            return try await revertSecondFactor(code: code, record: record, consumer: consumer)
        }
        guard [.verifyEmail, .verifyAndChangeEmail, .recoverEmail].contains(record.mode),
            expectedMode == nil || expectedMode == record.mode, record.accountID != nil
        else {
            throw ActionError.invalidCode
        }
        let now = clock.now
        let recoveryCode = Secrets.token()
        let recoveryHash = keys.newCodeHash(recoveryCode)
        let recoveryExpiry = now + .seconds(settings.codes.lifetime(of: .recoverEmail))
        let recoveryMail =
            record.mode == .verifyAndChangeEmail
            ? try issuer.recoveryLetter(code: recoveryCode, hash: recoveryHash, expiresAt: recoveryExpiry, for: record, now: now) : nil
        var done = try await complete(code: code, tenantID: record.tenantID, modes: [record.mode], consumer: consumer, now: now) {
            tx, record in
            switch record.mode {
            case .verifyEmail:
                var account = try Self.owner(of: record, tx)
                account.emailVerified = true
                try tx.update(account)
                return (account, nil)
            case .verifyAndChangeEmail:
                guard let newEmail = record.newEmail else { throw ActionError.invalidCode }
                var account = try Self.owner(of: record, tx)
                if let taken = try tx.account(email: newEmail), taken.localID != account.localID { throw ActionError.emailExists }
                if account.initialEmail == nil { account.initialEmail = account.email }
                account.email = newEmail
                account.emailVerified = true
                account.validSince = tx.now.seconds
                try tx.update(account)
                try tx.retireCodes(emails: [record.email, newEmail])
                // The old address can undo the change: its code and its mail are stored with the change.
                try tx.issue(record.recovery(hash: recoveryHash, now: tx.now, expiresAt: recoveryExpiry))
                if let recoveryMail { try tx.enqueue(recoveryMail) }
                return (account, nil)
            default:
                guard let accountID = record.accountID, let changedTo = record.newEmail,
                    var account = try tx.account(id: accountID), account.email == changedTo
                else { throw ActionError.invalidCode }
                if let taken = try tx.account(email: record.email), taken.localID != account.localID { throw ActionError.emailExists }
                account.email = record.email
                account.emailVerified = true
                account.validSince = tx.now.seconds
                try tx.update(account)
                try tx.retireCodes(emails: [record.email, changedTo])
                return (account, nil)
            }
        }
        if done.record.mode == .verifyAndChangeEmail {
            done.recoveryCode = recoveryCode
            issuer.announceRecovery(code: recoveryCode, for: done.record)
        }
        return done
    }

    // MARK: - Second-factor revert

    /// The second factor a `revertSecondFactorAddition` code removes: the factor of its account
    /// enrolled at the instant the code was issued (``SecondFactorService/finishEnrollment(_:sessionInfo:code:displayName:caller:)``
    /// writes both with one timestamp, unique among the account's factors), so the code needs no
    /// field of its own. A factor already gone (withdrawn, or removed by this code) or an account
    /// that no longer has the address is `INVALID_OOB_CODE`.
    public func revertedFactor(of record: ActionCodeRecord) async throws(ActionError) -> SecondFactor {
        guard record.mode == .revertSecondFactorAddition, let accountID = record.accountID else { throw ActionError.invalidCode }
        let account = try await store.call { try await self.accounts.account(id: accountID, tenantID: record.tenantID) }
        guard let account, account.email == record.email, let factor = Self.factor(of: record, in: account) else {
            throw ActionError.invalidCode
        }
        return factor
    }

    /// The factor of `account` that `record` (a `revertSecondFactorAddition` code) names.
    static func factor(of record: ActionCodeRecord, in account: Account) -> SecondFactor? {
        account.secondFactors.first { $0.enrolledAt == record.createdAt }
    }

    /// Consumes a live `revertSecondFactorAddition` code (`record`) and, in its transaction,
    /// removes the factor it names and revokes every session of the account (someone else may have
    /// added the factor: its owner should reset the password next).
    private func revertSecondFactor(code: String, record: ActionCodeRecord, consumer: String) async throws(ActionError) -> Completion {
        let done = try await complete(
            code: code, tenantID: record.tenantID, modes: [.revertSecondFactorAddition], consumer: consumer, now: clock.now
        ) { tx, record in
            var account = try Self.owner(of: record, tx)
            guard let factor = Self.factor(of: record, in: account) else { throw ActionError.invalidCode }
            account.secondFactors.removeAll { $0.enrollmentID == factor.enrollmentID }
            // Every device goes, the enrolment's own too, even when it signed in this very second.
            account.revokeEverySession(at: tx.now)
            try tx.update(account)
            return (account, nil)
        }
        logger.info("second factor removed by its enrolment notice", metadata: ["account": "\(done.account.localID)"])
        return done
    }

    /// Whether `code` has the shape of a code this server issues (43 base64url characters).
    static func isWellFormedCode(_ code: String) -> Bool {
        code.utf8.count == 43
            && code.utf8.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == UInt8(ascii: "-")
                    || $0 == UInt8(ascii: "_")
            }
    }
}
