import ActionLinks
import ActionLinksConfiguration
import Foundation
import Logging

/// Sign-up and sign-in with a password or as an anonymous user, with a custom token, and the
/// token refreshes of the sessions they start (Firebase's `accounts:signUp`,
/// `accounts:signInWithPassword`, `accounts:signInWithCustomToken`, `token`).
public final class SignInService: Sendable {
    let settings: ServiceSettings
    let accounts: any AccountStore
    let codes: any CodeStore
    let accountService: AccountService
    let tokens: TokenService
    let completion: SignInCompletion
    let customTokens: CustomTokenVerifier
    let passwords: PasswordHasher
    let importedPasswords: ImportedPasswordHashes
    let store: StoreGateway
    let clock: any ServiceClock
    let logger: Logger

    init(
        settings: ServiceSettings, accounts: any AccountStore, codes: any CodeStore, accountService: AccountService, tokens: TokenService,
        completion: SignInCompletion, customTokens: CustomTokenVerifier, passwords: PasswordHasher, store: StoreGateway,
        clock: any ServiceClock, logger: Logger
    ) {
        self.settings = settings
        self.accounts = accounts
        self.codes = codes
        self.accountService = accountService
        self.tokens = tokens
        self.completion = completion
        self.customTokens = customTokens
        self.passwords = passwords
        importedPasswords = ImportedPasswordHashes()
        self.store = store
        self.clock = clock
        self.logger = logger
    }

    // MARK: - Sign-up

    /// What `accounts:signUp` asks for.
    package struct SignUp: Sendable {
        package var email: String?
        package var password: String?
        package var displayName: String?
        package var photoURL: String?
        package var phoneNumber: String?
        package var emailVerified: Bool?
        package var disabled: Bool?
        package var localID: String?
        package var idToken: String?
        package var bodyTenant: String?

        /// Makes the value from each of its fields.
        package init(
            email: String? = nil, password: String? = nil, displayName: String? = nil, photoURL: String? = nil, phoneNumber: String? = nil,
            emailVerified: Bool? = nil, disabled: Bool? = nil, localID: String? = nil, idToken: String? = nil, bodyTenant: String? = nil
        ) {
            self.email = email
            self.password = password
            self.displayName = displayName
            self.photoURL = photoURL
            self.phoneNumber = phoneNumber
            self.emailVerified = emailVerified
            self.disabled = disabled
            self.localID = localID
            self.idToken = idToken
            self.bodyTenant = bodyTenant
        }
    }

    /// `accounts:signUp`: a client signs up with an address and a password, anonymously, or adds
    /// an address and a password to the signed-in user (`idToken`); the admin creates any account.
    /// A client gets a session; the admin does not.
    /// `named` is the call's tenant, resolved and enabled (the route requires it).
    package func signUp(_ request: SignUp, tenant named: TenantPolicy, caller: Caller) async throws(ActionError) -> (
        account: Account, session: SignedInUser?
    ) {
        let now = clock.now
        if caller.isAdmin {
            if request.idToken != nil, request.localID != nil { throw ActionError(.unexpectedParameter, "User ID") }
        } else if request.localID != nil {
            throw ActionError(.unexpectedParameter, "User ID")
        }
        var tenant = named
        let withPassword = request.idToken != nil || request.password != nil || request.email != nil
        if !caller.isAdmin {
            if withPassword {
                guard request.email != nil else { throw ActionError.missingEmail }
                guard request.password != nil else { throw ActionError(.missingPassword) }
                guard tenant.allowPasswordSignup else { throw ActionError(.operationNotAllowed) }
            } else {
                guard tenant.enableAnonymousUser else { throw ActionError(.adminOnlyOperation) }
            }
            if request.idToken == nil, !tenant.selfServiceSignUp {
                throw ActionError(.adminOnlyOperation, "signing up is turned off for this project; an administrator creates accounts")
            }
        }
        var email: String?
        if let given = request.email {
            guard let canonical = EmailAddress.canonical(given) else { throw ActionError.invalidEmail }
            email = canonical
        }
        if caller.isAdmin, let localID = request.localID, localID.isEmpty || localID.utf8.count > 128 {
            throw ActionError(.invalidLocalID, "a user ID is 1 to 128 characters")
        }
        var phoneNumber: String?
        if caller.isAdmin, let given = request.phoneNumber {
            guard PhoneNumber.isValid(given) else { throw ActionError(.invalidPhoneNumber, "Invalid format.") }
            phoneNumber = given
        }
        // (With an ID token the account's tenant is the token's, known below: the transaction checks.)
        if let email, request.idToken == nil,
            let existing = try await store.call({ try await self.accounts.account(email: email, tenantID: tenant.tenantID) }),
            existing.localID != request.localID
        {
            // Checked again in the transaction; this answers early, before a password is hashed.
            _ = existing
            throw ActionError.emailExists
        }
        var hash: String?
        if let password = request.password {
            try tenant.passwords.check(password)
            hash = try await hashed(password)
        }
        var signedIn: User?
        if let idToken = request.idToken {
            let user = try await accountService.user(idToken: idToken, caller: caller, bodyTenant: request.bodyTenant)
            // Adding an address and a password to a signed-in account is a change of both.
            if withPassword { try accountService.checkRecentSignIn(user, caller: caller) }
            signedIn = user
            if user.tenant.tenantID != tenant.tenantID {
                // The call named no tenant: the ID token's (enabled: ``AccountService/user``) is
                // checked as a named one would have been.
                tenant = user.tenant
                if !caller.isAdmin, !tenant.allowPasswordSignup { throw ActionError(.operationNotAllowed) }
                if let password = request.password { try tenant.passwords.check(password) }
            }
        }
        // A new account has no second factor to ask for; a signed-in user's keeps its session's.
        let provider = withPassword ? "password" : "anonymous"
        let factor = signedIn.map { FirstFactor.continuing($0, provider: provider) } ?? FirstFactor(provider: provider, rule: .skip)
        let policy = tenant
        let newID = request.localID ?? Secrets.accountID()
        let tenantID = tenant.tenantID
        let isAdmin = caller.isAdmin
        let given = (email: email, phoneNumber: phoneNumber, hash: hash, user: signedIn)
        let result = try await store.call {
            try await self.accounts.transaction(tenantID: tenantID, now: now) { tx -> (Account, SignedInUser?) in
                if let email = given.email, let owner = try tx.account(email: email), owner.localID != given.user?.account.localID {
                    _ = owner
                    throw AccountStoreError.emailExists
                }
                if let phoneNumber = given.phoneNumber, try tx.account(phoneNumber: phoneNumber) != nil {
                    throw AccountStoreError.phoneNumberExists
                }
                var account: Account
                let isNew: Bool
                if let user = given.user {
                    account = try tx.existingAccount(id: user.account.localID)
                    isNew = false
                } else {
                    if try tx.account(id: newID) != nil { throw AccountStoreError.localIDExists }
                    account = Account(localID: newID, tenantID: tenantID, createdAt: now)
                    isNew = true
                }
                if let email = given.email {
                    account.email = email
                    account.emailVerified = isAdmin ? (request.emailVerified ?? false) : false
                }
                if let hash = given.hash {
                    account.passwordHash = hash
                    account.passwordUpdatedAt = now
                    account.validSince = now.seconds
                }
                // An anonymous account takes no profile from a client.
                if isAdmin || withPassword, let name = request.displayName { account.displayName = name }
                if isAdmin {
                    if let photo = request.photoURL { account.photoURL = photo }
                    if let phoneNumber = given.phoneNumber { account.phoneNumber = phoneNumber }
                    if let disabled = request.disabled { account.disabled = disabled }
                    // The admin creates or changes an account; nobody signs in.
                    if isNew { try tx.insert(account) } else { try tx.update(account) }
                    return (account, nil)
                }
                let user = try self.completion.complete(account, isNew: isNew, by: factor, tenant: policy, in: tx)
                return (user.account, user)
            }
        }
        return result
    }

    typealias User = AccountService.User

    // MARK: - Password sign-in

    /// `accounts:signInWithPassword`. With email-enumeration protection every refusal about the
    /// address or the password is `INVALID_LOGIN_CREDENTIALS` (after the same work); without it,
    /// `EMAIL_NOT_FOUND` or `INVALID_PASSWORD`. Failed attempts are limited per address and per
    /// client (`TOO_MANY_ATTEMPTS_TRY_LATER`).
    ///
    /// Each attempt is counted as a failure before its password is hashed (``FailedAttempts``), so
    /// concurrent guesses cannot all pass a limit: of 24 at once against a limit of 10, 10 are
    /// hashed and 14 refused.
    /// `tenant` is the call's, resolved and enabled (the route requires it).
    package func signIn(email given: String?, password: String?, tenant: TenantPolicy, caller: Caller) async throws(ActionError)
        -> SignedInUser
    {
        let now = clock.now
        guard tenant.allowPasswordSignup else { throw ActionError(.passwordLoginDisabled) }
        guard let given else { throw ActionError.missingEmail }
        guard let email = EmailAddress.canonical(given) else { throw ActionError.invalidEmail }
        guard let password, !password.isEmpty else { throw ActionError(.missingPassword) }
        let attempts = FailedAttempts(limits: settings.limits, codes: codes, store: store)
        return try await attempts.counting(
            key: "signin-failure:address:\(tenant.tenantID):\(email)", client: caller.clientAddress, now: now,
            isWrongGuess: { [.invalidLoginCredentials, .invalidPassword, .emailNotFound].contains($0.code) }
        ) { () async throws(ActionError) in
            try await checkedSignIn(email: email, password: password, tenant: tenant, now: now)
        }
    }

    /// The password check of a sign-in whose attempt is counted.
    private func checkedSignIn(email: String, password: String, tenant: TenantPolicy, now: Timestamp) async throws(ActionError)
        -> SignedInUser
    {
        let protection = tenant.emailEnumerationProtection
        let refusal = { @Sendable (unprotected: ActionError.Code) in ActionError(protection ? .invalidLoginCredentials : unprotected) }
        let found = try await store.call { try await self.accounts.account(email: email, tenantID: tenant.tenantID) }
        guard let account = found else {
            // The same scrypt work as for a real account, so time tells nothing either.
            _ = try await verify(password, against: passwords.decoy)
            throw refusal(.emailNotFound)
        }
        // The emulator says USER_DISABLED before looking at the password; a production server only
        // to the account's owner (the right password), so that a wrong one tells nothing more than
        // for an address with no account, after the same scrypt work.
        if account.disabled, settings.server.development { throw ActionError.userDisabled }
        guard let stored = account.passwordHash else {
            _ = try await verify(password, against: passwords.decoy)
            throw refusal(.invalidPassword)
        }
        let matches: Bool
        var rehash: String?
        if let imported = importedPasswords.parse(stored) {
            matches = try await verifyImported(password, against: imported)
            // A migrated password moves to this server's scrypt on its first use.
            if matches { rehash = try await hashed(password) }
        } else if let cost = PasswordHasher.refusal(stored: stored) {
            // Refused at import; one stored before the ceiling existed is never run.
            logger.warning("a stored password hash is not run", metadata: ["localId": "\(account.localID)", "reason": "\(cost)"])
            _ = try await verify(password, against: passwords.decoy)
            matches = false
        } else {
            matches = try await verify(password, against: stored)
        }
        guard matches else { throw refusal(.invalidPassword) }
        if account.disabled { throw ActionError.userDisabled }
        let replacement = rehash
        return try await store.call {
            try await self.accounts.transaction(tenantID: tenant.tenantID, now: now) { tx in
                var current = try tx.existingAccount(id: account.localID)
                if current.disabled { throw ActionError.userDisabled }
                // The password changed while this one was being checked: the old one opens nothing.
                guard current.passwordHash == stored else { throw refusal(.invalidPassword) }
                if let replacement { current.passwordHash = replacement }
                return try self.completion.complete(
                    current, isNew: false, by: FirstFactor(provider: "password", rule: .ask), tenant: tenant, in: tx)
            }
        }
    }

    // MARK: - Custom tokens

    /// `accounts:signInWithCustomToken`: a token a backend minted (`firebase-admin`'s
    /// `create_custom_token`) signs in its `uid`, creating the account the first time.
    /// `tenant` is the call's, resolved and enabled (the route requires it: as Firebase checks,
    /// the tenant first, `PROJECT_DISABLED`, then the token).
    package func signIn(customToken: String?, tenant: TenantPolicy, caller: Caller) async throws(ActionError) -> SignedInUser {
        let now = clock.now
        guard let customToken, !customToken.isEmpty else { throw ActionError(.missingCustomToken) }
        let token = try await customTokens.verify(customToken, now: now)
        if !tenant.tenantID.isEmpty || token.tenantID != nil, (token.tenantID ?? "") != tenant.tenantID {
            throw ActionError(.tenantIDMismatch)
        }
        let uid = token.uid
        // Firebase issues a custom token's tokens directly: the backend that minted it vouches for
        // the user, second factor or not. (This server's own hand-off tokens are minted only after
        // a sign-in completed here, second factor included.)
        let factor = FirstFactor(provider: "custom", claims: token.claims.map { ClaimValue.object($0).json }, rule: .skip)
        return try await store.call {
            try await self.accounts.transaction(tenantID: tenant.tenantID, now: now) { tx in
                if var account = try tx.account(id: uid) {
                    if account.disabled { throw ActionError.userDisabled }
                    account.customAuth = true
                    return try self.completion.complete(account, isNew: false, by: factor, tenant: tenant, in: tx)
                }
                let account = Account(localID: uid, tenantID: tenant.tenantID, createdAt: now, customAuth: true)
                return try self.completion.complete(account, isNew: true, by: factor, tenant: tenant, in: tx)
            }
        }
    }

    // MARK: - Token refresh

    /// What `token` answers: a new ID token for the session, and the same refresh token (refresh
    /// tokens are not used up, so concurrent refreshes never sign a client out).
    package struct Refreshed: Sendable {
        package var idToken: String
        package var refreshToken: String
        package var account: Account
    }

    /// How old `lastRefreshAt` may get before a refresh writes it again (milliseconds).
    static let refreshResolution: Duration = .seconds(60)

    /// `POST /v1/token` with `grant_type=refresh_token`.
    package func refresh(grantType: String?, refreshToken: String?) async throws(ActionError) -> Refreshed {
        let now = clock.now
        guard let grantType, !grantType.isEmpty else { throw ActionError(.missingGrantType) }
        guard grantType == "refresh_token" else { throw ActionError(.invalidGrantType) }
        guard let refreshToken, !refreshToken.isEmpty else { throw ActionError(.missingRefreshToken) }
        let hash = TokenService.refreshTokenHash(refreshToken)
        guard let (session, account) = try await store.call({ try await self.accounts.session(hash: hash) }) else {
            throw try await endedSessionError(hash: hash)
        }
        let tenant = try await accountService.tenants.policy(for: session.tenantID)
        try Self.check(session: session, of: account, in: tenant)
        if Self.recordsRefresh(of: account, now: now) {
            try await store.call { try await self.accounts.recordRefresh(accountID: account.localID, tenantID: account.tenantID, at: now) }
        }
        let idToken = try await tokens.idToken(for: account, session: session, now: now)
        return Refreshed(idToken: idToken, refreshToken: refreshToken, account: account)
    }

    /// ``refresh(grantType:refreshToken:)`` without suspending, for ``TokenRefreshFastPath`` on the
    /// event loop: one synchronous read of the store, the same checks, one signature. `nil`
    /// whenever a refresh needs more than that, and then the route answers it: no such session (its
    /// error, and whether the account was deleted, are the route's to say), a stored tenant, a check
    /// that fails, `lastRefreshAt` to write, or a failing read or signature.
    package func refreshNow(refreshToken: String, sessions: any ImmediateSessionLookup) -> Refreshed? {
        let now = clock.now
        guard let (session, account) = try? sessions.sessionNow(hash: TokenService.refreshTokenHash(refreshToken)),
            let tenant = accountService.tenants.policyNow(for: session.tenantID),
            (try? Self.check(session: session, of: account, in: tenant)) != nil, !Self.recordsRefresh(of: account, now: now),
            let idToken = try? tokens.idTokenNow(for: account, session: session, now: now)
        else { return nil }
        return Refreshed(idToken: idToken, refreshToken: refreshToken, account: account)
    }

    /// The answer to a refresh whose session is no longer stored: a revoked session's is its
    /// account's (a disabled tenant or account first, as for a stored session, then
    /// `TOKEN_EXPIRED`); a deleted account's is `USER_NOT_FOUND` on a production server, as Firebase
    /// production says (the SDKs sign out), `INVALID_REFRESH_TOKEN` on a development one, as the
    /// emulator does, and so is a token nothing is known of.
    private func endedSessionError(hash: Data) async throws(ActionError) -> ActionError {
        switch try await store.call({ try await self.accounts.endedSession(hash: hash) }) {
        case .revoked(let tenantID, let accountID):
            let tenant = try await accountService.tenants.policy(for: tenantID)
            try tenant.checkEnabled()
            let account = try await store.call { try await self.accounts.account(id: accountID, tenantID: tenantID) }
            if account?.disabled == true { return ActionError.userDisabled }
            return ActionError(.tokenExpired)
        case .ofDeletedAccount where !settings.server.development: return ActionError.userNotFound
        case .ofDeletedAccount, nil: return ActionError(.invalidRefreshToken)
        }
    }

    /// Whether a session may be refreshed: its tenant enabled, its account enabled, and not revoked.
    private static func check(session: Session, of account: Account, in tenant: TenantPolicy) throws(ActionError) {
        try tenant.checkEnabled()
        if account.disabled { throw ActionError.userDisabled }
        if session.isRevoked(by: account) { throw ActionError(.tokenExpired) }
    }

    /// Whether a refresh writes `lastRefreshAt`: when it is a minute old or more (Firebase's own
    /// resolution of it), so an hourly refresh always writes it and a burst of refreshes once.
    private static func recordsRefresh(of account: Account, now: Timestamp) -> Bool {
        account.lastRefreshAt.map { now - $0 >= refreshResolution } ?? true
    }

    // MARK: - Passwords

    /// The scrypt hash of a password that passed the policy.
    func hashed(_ password: String) async throws(ActionError) -> String {
        try await Self.hashing { try await self.passwords.hash(password) }
    }

    /// Whether `password` matches this server's hash `stored`.
    func verify(_ password: String, against stored: String) async throws(ActionError) -> Bool {
        try await Self.hashing { try await self.passwords.verify(password, against: stored) }
    }

    /// Whether `password` matches a hash imported from Firebase.
    func verifyImported(_ password: String, against imported: ImportedPasswordHashes.Hash) async throws(ActionError) -> Bool {
        try await Self.hashing { try await self.importedPasswords.verify(password, against: imported, hasher: self.passwords) }
    }

    /// Runs a password hash: a full queue is 503 `UNAVAILABLE` (with `Retry-After`), anything else
    /// an internal error.
    static func hashing<T>(_ body: () async throws -> T) async throws(ActionError) -> T {
        do {
            return try await body()
        } catch is PasswordHasher.Busy {
            throw ActionError(.unavailable, "too many password checks are waiting; try again shortly")
        } catch {
            throw ActionError(.internalError, "the password could not be hashed", cause: error)
        }
    }
}

/// Phone numbers as admins set them: E.164 (`+` and 7 to 15 digits).
enum PhoneNumber {
    static func isValid(_ text: String) -> Bool {
        let digits = text.utf8.dropFirst()
        return text.utf8.first == UInt8(ascii: "+") && (7...15).contains(digits.count) && digits.allSatisfy { (0x30...0x39).contains($0) }
    }
}
