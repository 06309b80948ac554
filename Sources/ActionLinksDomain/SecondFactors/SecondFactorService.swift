import ActionLinksConfiguration
import Crypto
import Foundation
import Logging

/// Authenticator apps as a second factor (TOTP, RFC 6238), as Identity Platform's v2 API has them
/// for the JS, iOS and Android SDKs: enrolment (`mfaEnrollment:start`, `:finalize`, `:withdraw`)
/// and the second step of a sign-in (`mfaSignIn:finalize`), which completes at
/// ``SignInCompletion`` like every first factor.
///
/// Secrets are sealed (``Sealing``) in the account, never stored in clear; an enrolment in progress
/// is a sealed, ten-minute `sessionInfo` and a sign-in that waits is a sealed, ten-minute, single-use
/// pending credential, so neither needs a table. A code is accepted within the tenant's
/// `adjacentIntervals` steps and once (only a later step than the factor's last); wrong codes count
/// toward the same hourly limits as wrong passwords, per account and per client.
package struct SecondFactorService: Sendable {
    let settings: ServiceSettings
    let accounts: any AccountStore
    let codes: any CodeStore
    let accountService: AccountService
    let completion: SignInCompletion
    let secrets: Sealing
    let enrollments: Sealing
    let store: StoreGateway
    /// Writes the enrolment's notice: its `revertSecondFactorAddition` code and mail.
    let issuer: CodeIssuer
    let clock: any ServiceClock
    let logger: Logger

    /// How long an enrolment waits for its first code (`finalizeEnrollmentTime`).
    static let enrollmentLifetime: Duration = .seconds(600)

    init(
        settings: ServiceSettings, accounts: any AccountStore, codes: any CodeStore, accountService: AccountService,
        completion: SignInCompletion, formKey: SymmetricKey, store: StoreGateway, issuer: CodeIssuer, clock: any ServiceClock,
        logger: Logger
    ) {
        self.settings = settings
        self.accounts = accounts
        self.codes = codes
        self.accountService = accountService
        self.completion = completion
        secrets = Sealing(formKey: formKey, purpose: "actionlinks totp secret v1")
        enrollments = Sealing(formKey: formKey, purpose: "actionlinks totp enrollment v1")
        self.store = store
        self.issuer = issuer
        self.clock = clock
        self.logger = logger
    }

    // MARK: - Enrolment

    /// What `mfaEnrollment:start` answers (`totpSessionInfo`).
    package struct EnrollmentStart: Sendable {
        /// The shared secret, base32 without padding (what an `otpauth://` URL carries).
        package var sharedSecretKey: String
        /// The sealed enrolment, echoed back by `:finalize`.
        package var sessionInfo: String
        /// When the enrolment must be finished by.
        package var finalizeBy: Timestamp
    }

    /// An enrolment in progress, as its `sessionInfo` seals it.
    struct Enrollment: Codable, Sendable {
        var account: String
        var tenant: String
        var secret: String
        var issued: Int64
    }

    /// `mfaEnrollment:start` with `totpEnrollmentInfo`: a new secret for `user`, who must be
    /// allowed to enrol (``checkEnrollable(_:caller:)``).
    package func startEnrollment(_ user: AccountService.User, caller: Caller) throws(ActionError) -> EnrollmentStart {
        try checkEnrollable(user, caller: caller)
        if user.account.secondFactors.count >= SecondFactor.limit { throw Self.limitExceeded }
        let now = clock.now
        let secret = Base32.encode(TOTP.newSecret())
        let enrollment = Enrollment(account: user.account.localID, tenant: user.account.tenantID, secret: secret, issued: now.milliseconds)
        guard let sealed = try? enrollments.seal(enrollment, context: user.account.localID) else {
            throw ActionError(.internalError, "the enrolment could not be sealed")
        }
        return EnrollmentStart(sharedSecretKey: secret, sessionInfo: Base64URL.encode(sealed), finalizeBy: now + Self.enrollmentLifetime)
    }

    /// `mfaEnrollment:finalize` with `totpVerificationInfo`: the first code from the app proves
    /// the secret; the factor is stored (its secret sealed), every other session is revoked (as
    /// Firebase does on enrolment), and a new session that signed in with the factor is started.
    /// In the same transaction, the account's address is sent a notice (in the caller's language)
    /// with a `revertSecondFactorAddition` link that removes the factor
    /// (``ActionCompleter/revertedFactor(of:)``: its code was issued when the factor was enrolled).
    package func finishEnrollment(
        _ user: AccountService.User, sessionInfo: String?, code: String?, displayName: String?, caller: Caller
    ) async throws(ActionError) -> SignedInUser {
        try checkEnrollable(user, caller: caller)
        guard let code, !code.isEmpty else { throw ActionError(.missingVerificationCode) }
        guard let sessionInfo, !sessionInfo.isEmpty else { throw ActionError(.missingSessionInfo) }
        let now = clock.now
        guard let sealed = Base64URL.decode(sessionInfo),
            let enrollment = enrollments.open(Enrollment.self, sealed, context: user.account.localID),
            enrollment.tenant == user.account.tenantID, let secret = Base32.decode(enrollment.secret)
        else { throw ActionError(.invalidSessionInfo, "The enrolment's sessionInfo is invalid or of another user.") }
        guard now.milliseconds - enrollment.issued < Int64(Self.enrollmentLifetime.components.seconds) * 1000 else {
            throw ActionError(.sessionExpired, "The enrolment expired; start it again.")
        }
        let step = try await checkedCode(
            code, secret: secret, lastUsedStep: nil, account: user.account, tenant: user.tenant, caller: caller, now: now)
        let enrollmentID = Secrets.accountID()
        guard let sealedSecret = try? seal(secret, account: user.account, enrollmentID: enrollmentID) else {
            throw ActionError(.internalError, "the secret could not be sealed")
        }
        let factor = SecondFactor(
            enrollmentID: enrollmentID, displayName: displayName, enrolledAt: now, sealedSecret: sealedSecret, lastUsedStep: step)
        let session = FirstFactor(provider: user.claims.firebase.signInProvider, rule: .proven(identifier: enrollmentID))
        let tenant = user.tenant
        let notice = issuer.noticeCode(.revertSecondFactorAddition, now: now)
        let issuer = issuer
        let signedIn = try await store.call {
            try await self.accounts.transaction(tenantID: tenant.tenantID, now: now) { tx -> (SignedInUser, ActionCodeRecord) in
                var account = try tx.existingAccount(id: user.account.localID)
                if account.disabled { throw ActionError.userDisabled }
                if account.secondFactors.count >= SecondFactor.limit { throw Self.limitExceeded }
                guard let email = account.email else {
                    throw ActionError(.unverifiedEmail, "Need to verify email first before enrolling second factors.")
                }
                // The notice's code names its factor by the instant of enrolment (its `createdAt` is
                // the factor's `enrolledAt`): no two factors of one account share that instant.
                var factor = factor
                while account.secondFactors.contains(where: { $0.enrolledAt == factor.enrolledAt }) {
                    factor.enrolledAt = Timestamp(milliseconds: factor.enrolledAt.milliseconds + 1)
                }
                account.secondFactors.append(factor)
                account.validSince = tx.now.seconds
                try tx.update(account)
                let record = ActionCodeRecord(
                    hash: notice.hash, mode: .revertSecondFactorAddition, tenantID: account.tenantID, accountID: account.localID,
                    email: email, languageCode: caller.locale, createdAt: factor.enrolledAt, expiresAt: notice.expiresAt)
                try tx.issue(record)
                try tx.enqueue(
                    try issuer.noticeLetter(code: notice.code, hash: notice.hash, expiresAt: notice.expiresAt, for: record, now: now))
                return (try self.completion.continueSession(of: account, by: session, in: tx), record)
            }
        }
        issuer.announceNotice(code: notice.code, for: signedIn.1)
        return signedIn.0
    }

    /// `mfaEnrollment:withdraw`: removes the factor `enrollmentID` from `user`'s account. New
    /// tokens come back, unless the caller's session signed in with that very factor: then every
    /// session is revoked (the user signs in again with another factor) and `nil` comes back.
    package func withdraw(_ user: AccountService.User, enrollmentID: String?, caller: Caller) async throws(ActionError) -> SignedInUser? {
        guard let enrollmentID, !enrollmentID.isEmpty else { throw ActionError(.missingMFAEnrollmentID) }
        try accountService.checkRecentSignIn(user, caller: caller)
        let now = clock.now
        let revokes = user.claims.firebase.secondFactorIdentifier == enrollmentID
        let session = FirstFactor.continuing(user)
        return try await store.call {
            try await self.accounts.transaction(tenantID: user.tenant.tenantID, now: now) { tx -> SignedInUser? in
                var account = try tx.existingAccount(id: user.account.localID)
                guard let index = account.secondFactors.firstIndex(where: { $0.enrollmentID == enrollmentID }) else {
                    throw ActionError(.mfaEnrollmentNotFound)
                }
                account.secondFactors.remove(at: index)
                // Every session goes, the caller's own and any other that signed in with the factor,
                // even in this very second.
                if revokes { account.revokeEverySession(at: tx.now) }
                try tx.update(account)
                return revokes ? nil : try self.completion.continueSession(of: account, by: session, in: tx)
            }
        }
    }

    /// Whether `user` may enrol a TOTP factor: the tenant allows it (`OPERATION_NOT_ALLOWED`), the
    /// session signed in with a factor that can have a second one (`UNSUPPORTED_FIRST_FACTOR`), the
    /// address is verified (`UNVERIFIED_EMAIL`), and the sign-in is recent.
    func checkEnrollable(_ user: AccountService.User, caller: Caller) throws(ActionError) {
        guard user.tenant.multiFactor.allowsTOTPEnrollment else {
            throw ActionError(.operationNotAllowed, "TOTP based MFA not enabled.")
        }
        if ["anonymous", "custom", "phone", "gc.apple.com"].contains(user.claims.firebase.signInProvider) || user.account.isAnonymous {
            throw ActionError(.unsupportedFirstFactor, "MFA is not available for the given first factor.")
        }
        guard user.account.email != nil, user.account.emailVerified else {
            throw ActionError(.unverifiedEmail, "Need to verify email first before enrolling second factors.")
        }
        try accountService.checkRecentSignIn(user, caller: caller)
    }

    static let limitExceeded = ActionError(.secondFactorLimitExceeded, "An account has at most \(SecondFactor.limit) second factors.")

    // MARK: - Sign-in

    /// `mfaSignIn:finalize` with `totpVerificationInfo`: the code of the factor `enrollmentID`
    /// completes the sign-in a first factor began (`pendingCredential`), in `tenant`. The
    /// credential is used once: a second finalize with it is refused, even with another code.
    package func finishSignIn(
        pendingCredential: String?, enrollmentID: String?, code: String?, tenant: TenantPolicy, caller: Caller
    ) async throws(ActionError) -> SignedInUser {
        guard let pendingCredential, !pendingCredential.isEmpty else {
            throw ActionError(.missingCredential, "Please set MFA Pending Credential.")
        }
        guard let enrollmentID, !enrollmentID.isEmpty else {
            throw ActionError(.missingMFAEnrollmentID, "No second factor identifier is provided.")
        }
        let now = clock.now
        let pending = try completion.pending.open(pendingCredential, tenantID: tenant.tenantID, now: now)
        guard let account = try await store.call({ try await self.accounts.account(id: pending.account, tenantID: pending.tenant) }) else {
            throw ActionError(.invalidMFAPendingCredential, "The pending credential's account is gone.")
        }
        guard let factor = account.secondFactors.first(where: { $0.enrollmentID == enrollmentID }) else {
            throw ActionError(.mfaEnrollmentNotFound)
        }
        guard let code, !code.isEmpty else { throw ActionError(.missingVerificationCode) }
        guard let secret = open(factor, of: account) else {
            logger.error("a second factor's secret does not open", metadata: ["localId": "\(account.localID)"])
            throw ActionError(.internalError, "the second factor could not be read")
        }
        let step = try await checkedCode(
            code, secret: secret, lastUsedStep: factor.lastUsedStep, account: account, tenant: tenant, caller: caller, now: now)
        // Used once: the first finalize that gets here with a right code takes the credential.
        let uses = try await store.call {
            try await self.codes.countEvents(keys: ["mfa-pending:" + pending.nonce], windowStart: Timestamp(milliseconds: pending.issued))
        }
        guard uses.first == 1 else {
            throw ActionError(.invalidMFAPendingCredential, "The pending credential was already used; sign in again.")
        }
        let session = FirstFactor(provider: pending.provider, claims: pending.claims, rule: .proven(identifier: enrollmentID))
        return try await store.call {
            try await self.accounts.transaction(tenantID: tenant.tenantID, now: now) { tx in
                var current = try tx.existingAccount(id: account.localID)
                if current.disabled { throw ActionError.userDisabled }
                // The account may have changed since the first factor (revoked sessions included):
                // a credential from before then no longer signs in.
                guard current.validSince <= pending.issued / 1000 else {
                    throw ActionError(.invalidMFAPendingCredential, "The account changed since the first factor; sign in again.")
                }
                guard let index = current.secondFactors.firstIndex(where: { $0.enrollmentID == enrollmentID }) else {
                    throw ActionError(.mfaEnrollmentNotFound)
                }
                // Two finalizes with one code at once: only one step advances.
                if let last = current.secondFactors[index].lastUsedStep, step <= last {
                    throw ActionError(.invalidVerificationCode, "The code was already used; wait for the next one.")
                }
                current.secondFactors[index].lastUsedStep = step
                return try self.completion.complete(current, isNew: false, by: session, tenant: tenant, in: tx)
            }
        }
    }

    // MARK: - Codes

    /// The step at which `code` is `secret`'s, within the tenant's window and after
    /// `lastUsedStep`; a wrong code is `INVALID_CODE` and counts toward the sign-in failure limits
    /// (per account and per client, as a wrong password: `TOO_MANY_ATTEMPTS_TRY_LATER` beyond).
    func checkedCode(
        _ code: String, secret: [UInt8], lastUsedStep: Int64?, account: Account, tenant: TenantPolicy, caller: Caller, now: Timestamp
    ) async throws(ActionError) -> Int64 {
        let attempts = FailedAttempts(limits: settings.limits, codes: codes, store: store)
        return try await attempts.counting(
            key: "mfa-failure:account:\(account.tenantID):\(account.localID)", client: caller.clientAddress, now: now,
            isWrongGuess: { $0.code == .invalidVerificationCode }
        ) { () async throws(ActionError) -> Int64 in
            guard let step = TOTP.matchingStep(code, secret: secret, now: now.seconds, adjacentIntervals: tenant.multiFactor.window) else {
                throw ActionError(.invalidVerificationCode, "The verification code is invalid.")
            }
            if let lastUsedStep, step <= lastUsedStep {
                throw ActionError(.invalidVerificationCode, "The code was already used; wait for the next one.")
            }
            return step
        }
    }

    // MARK: - Secrets

    /// The sealing context of a factor's secret: its tenant, account and enrolment.
    static func context(account: Account, enrollmentID: String) -> String {
        account.tenantID + "/" + account.localID + "/" + enrollmentID
    }

    func seal(_ secret: [UInt8], account: Account, enrollmentID: String) throws -> String {
        Base64URL.encode(try secrets.seal(bytes: Data(secret), context: Self.context(account: account, enrollmentID: enrollmentID)))
    }

    /// The factor's secret, or `nil` when it does not open (another server key, a damaged value).
    func open(_ factor: SecondFactor, of account: Account) -> [UInt8]? {
        guard let sealed = Base64URL.decode(factor.sealedSecret) else { return nil }
        return secrets.open(bytes: sealed, context: Self.context(account: account, enrollmentID: factor.enrollmentID)).map { Array($0) }
    }
}
