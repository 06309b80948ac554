import ActionLinks
import ActionLinksConfiguration
import Crypto
import Foundation
import Logging

/// The life of a code (DESIGN §2, §6): issue, look up, consume and apply. The REST API and the pages
/// both go through here, so a link behaves the same whichever way it is completed.
public final class ActionService: Sendable {
    let settings: ServiceSettings
    let policy: ContinueURLPolicy
    let apps: AppsConfiguration
    let codes: any CodeStore
    let accounts: any AccountStore
    let keys: ServerKeys
    let passwords: PasswordHasher
    let tokens: TokenIssuer
    let mailer: Mailer
    let listing: IssuedLinkListing?
    let origins: WebOrigins
    let metrics: ServerMetrics
    let logger: Logger

    /// A service over the given stores, keys and mail delivery.
    public init(
        configuration: ActionLinksConfiguration, codes: any CodeStore, accounts: any AccountStore, keys: ServerKeys,
        passwords: PasswordHasher = PasswordHasher(), mailer: Mailer, metrics: ServerMetrics = ServerMetrics(), logger: Logger
    ) {
        settings = configuration.service
        policy = configuration.continueURLs
        apps = configuration.apps
        self.codes = codes
        self.accounts = accounts
        self.keys = keys
        self.passwords = passwords
        self.mailer = mailer
        tokens = TokenIssuer(key: keys.signingKey, projectID: configuration.service.project.id)
        listing = configuration.service.emulatorListing ? IssuedLinkListing() : nil
        origins = WebOrigins(settings: configuration.service, policy: configuration.continueURLs)
        self.metrics = metrics
        self.logger = logger
    }

    // MARK: Issue

    /// What a caller asks for when it asks for a link.
    public struct IssueRequest: Sendable {
        /// The mode of the link.
        public var mode: ActionCodeLink.Mode
        /// The address (for the admin, or a public password-reset or sign-in request).
        public var email: String?
        /// The new address (`verifyAndChangeEmail`).
        public var newEmail: String?
        /// An ID token that names the account (public `verifyEmail` and `verifyAndChangeEmail` requests).
        public var idToken: String?
        /// The tenant ("" for the project).
        public var tenantID = ""
        /// The continue URL, checked against the allow-list.
        public var continueURL: String?
        /// The language of the email and the landing page.
        public var languageCode: String?
        /// Whether the app completes the action itself (mobile link when an app is named).
        public var canHandleCodeInApp = false
        /// The iOS app's bundle ID.
        public var iOSBundleID: String?
        /// The Android app's package name.
        public var androidPackageName: String?
        /// Whether the Android fallback should offer to install the app.
        public var androidInstallApp = false
        /// The lowest Android app version that can handle the link.
        public var androidMinimumVersion: String?
        /// The link domain to build the link on (one of the configured ones).
        public var linkDomain: String?
        /// The admin asked (may learn whether an address exists; may have the link returned).
        public var isAdmin = false
        /// Return the link instead of emailing it (admin only).
        public var returnLink = false
        /// The client's address, for the per-IP send limit.
        public var clientAddress: String?

        /// A request for a `mode` link.
        public init(mode: ActionCodeLink.Mode) { self.mode = mode }
    }

    /// A link that was issued.
    public struct IssuedLink: Sendable {
        /// The link to open.
        public var link: String
        /// The code in it.
        public var code: String
        /// The address it was sent (or is for), in canonical form.
        public var email: String
        /// Whether it was sent (or returned): `false` when the address has no account, so nothing
        /// went out; the caller answers exactly as if it had.
        public var delivered: Bool
    }

    /// Issues a code and returns the link (`returnLink`) or emails it. When the address has no
    /// account nothing is sent (``IssuedLink/delivered`` is `false`) and the caller answers exactly
    /// as if it had been.
    public func issue(_ request: IssueRequest) async throws(ActionError) -> IssuedLink {
        let now = Timestamp.now
        if request.returnLink, !request.isAdmin { throw ActionError.insufficientPermission }
        let domain = try linkDomain(request.linkDomain)
        let continueURL = try checkedContinueURL(request.continueURL, required: request.mode == .signIn)
        var email: String
        var newEmail: String?
        var account: Account?

        switch request.mode {
        case .resetPassword, .signIn:
            guard let given = request.email, !given.isEmpty else { throw ActionError.missingEmail }
            guard let canonical = Self.canonicalEmail(given) else { throw ActionError.invalidEmail }
            email = canonical
        case .verifyEmail, .verifyAndChangeEmail:
            if let idToken = request.idToken {
                account = try await self.account(fromIDToken: idToken, tenantID: request.tenantID, now: now)
                guard let address = account?.email else { throw ActionError.missingEmail }
                email = address
            } else if request.isAdmin, let given = request.email {
                guard let canonical = Self.canonicalEmail(given) else { throw ActionError.invalidEmail }
                email = canonical
            } else if request.email != nil {
                throw ActionError(.missingIDToken, "a verification link for a signed-in user needs idToken")
            } else {
                throw ActionError.missingEmail
            }
            if request.mode == .verifyAndChangeEmail {
                guard let given = request.newEmail, !given.isEmpty else { throw ActionError(.missingNewEmail) }
                guard let canonical = Self.canonicalEmail(given) else { throw ActionError(.invalidNewEmail) }
                newEmail = canonical
            }
        case .recoverEmail, .revertSecondFactorAddition:
            throw ActionError(.invalidRequestType, "\(request.mode.requestType) links are sent by the server itself, not on request")
        }

        if !request.isAdmin {
            try await checkSendLimits(addresses: [email] + (newEmail.map { [$0] } ?? []), clientAddress: request.clientAddress, now: now)
        }

        if account == nil { account = try await storeCall { try await self.accounts.account(email: email, tenantID: request.tenantID) } }
        // An address with no account gets no mail, but the same answer, byte for byte, after the same
        // work: a code is stored (for no account, so it can never be completed, and never shown to
        // anyone), counted and its message rendered. Only the admin learns that nothing was sent.
        var deliver = true
        if account == nil, request.mode != .signIn || !settings.signUpAllowed {
            if request.isAdmin { throw ActionError.emailNotFound }
            deliver = false
        }
        if let newEmail, let taken = try await storeCall({ try await self.accounts.account(email: newEmail, tenantID: request.tenantID) }),
            taken.localID != account?.localID
        {
            throw ActionError.emailExists
        }

        var appSettings = AppSettings()
        appSettings.iOSBundleId = request.iOSBundleID
        appSettings.androidPackageName = request.androidPackageName
        appSettings.androidMinimumVersion = request.androidMinimumVersion
        if request.androidInstallApp { appSettings.androidInstallApp = "true" }
        if request.canHandleCodeInApp { appSettings.canHandleCodeInApp = "true" }

        let code = Secrets.token()
        let record = ActionCodeRecord(
            hash: keys.newCodeHash(code), mode: request.mode, tenantID: request.tenantID, accountID: account?.localID, email: email,
            newEmail: newEmail, continueURL: continueURL, languageCode: request.languageCode,
            appSettings: appSettings.json,
            createdAt: now, expiresAt: now + Timestamp(settings.codes.lifetime(of: request.mode)) * 1000)
        try await storeCall { try await self.codes.issue(record) }
        metrics.codeIssued(request.mode)

        let action = ActionCodeLink(
            mode: request.mode, oobCode: code, apiKey: settings.project.apiKey, continueURL: continueURL,
            languageCode: request.languageCode,
            tenantID: request.tenantID.isEmpty ? nil : request.tenantID)
        let mobile = request.canHandleCodeInApp && (request.iOSBundleID != nil || request.androidPackageName != nil)
        let link = mobile ? action.mobileLink(on: domain) : action.webLink(on: domain)
        let recipient = newEmail ?? email
        guard deliver else {
            _ = mailer.render(
                mode: request.mode, to: recipient, link: link, languageCode: request.languageCode, appName: settings.project.appName)
            return IssuedLink(link: link, code: code, email: recipient, delivered: false)
        }
        listing?.record(email: recipient, mode: request.mode, code: code, link: link)
        if !request.returnLink {
            await mailer.send(
                mode: request.mode, to: recipient, link: link, languageCode: request.languageCode, appName: settings.project.appName)
        }
        return IssuedLink(link: link, code: code, email: recipient, delivered: true)
    }

    /// Lists and mails the `recoverEmail` code that a completed email change stored (in its own
    /// transaction) for the old address.
    func announceRecovery(code: String, change: ActionCodeRecord) async {
        metrics.codeIssued(.recoverEmail)
        let link = ActionCodeLink(
            mode: .recoverEmail, oobCode: code, apiKey: settings.project.apiKey, languageCode: change.languageCode,
            tenantID: change.tenantID.isEmpty ? nil : change.tenantID
        ).webLink(on: settings.linkDomains[0])
        listing?.record(email: change.email, mode: .recoverEmail, code: code, link: link)
        await mailer.send(
            mode: .recoverEmail, to: change.email, link: link, languageCode: change.languageCode, appName: settings.project.appName)
    }

    // MARK: Look up and complete

    /// Looks a code up without consuming it (GET of a link, `accounts:resetPassword` with only `oobCode`).
    public func check(code: String, tenantID: String? = nil) async throws(ActionError) -> ActionCodeRecord {
        // Each refusal is counted once: a request stops at its first one.
        guard Self.isWellFormedCode(code) else {
            metrics.codeInvalid()
            throw ActionError.invalidCode
        }
        switch try await storeCall({ try await self.codes.lookup(hashes: self.keys.codeHashes(code), now: .now) }) {
        case .live(let record):
            if let tenantID, tenantID != record.tenantID {
                metrics.codeInvalid()
                throw ActionError.invalidCode
            }
            return record
        case .expired:
            metrics.codeExpired()
            throw ActionError.expiredCode
        case .invalid:
            metrics.codeInvalid()
            throw ActionError.invalidCode
        }
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
        try checkPasswordPolicy(newPassword)
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
        guard let canonical = Self.canonicalEmail(email) else { throw ActionError.invalidEmail }
        let record = try await check(code: code, tenantID: tenantID)
        guard record.mode == .signIn else { throw ActionError.invalidCode }
        guard canonical == record.email else {
            throw ActionError(.invalidEmail, "The email provided does not match the sign-in email address.")
        }
        let now = Timestamp.now
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
                recoveryHash: keys.newCodeHash(code), recoveryExpiresAt: .now + Timestamp(settings.codes.lifetime(of: .recoverEmail)) * 1000
            )
        default:
            effect = .restoreEmail
        }
        let done = try await complete(code: code, modes: [record.mode], effect: effect, consumer: consumer)
        if let recoveryCode { await announceRecovery(code: recoveryCode, change: done.record) }
        return Completion(record: done.record, account: done.account)
    }

    /// Consumes the code and applies `effect` to its account in one store transaction.
    private func complete(
        code: String, modes: Set<ActionCodeLink.Mode>, effect: CodeEffect, consumer: String, now: Timestamp = .now
    ) async throws(ActionError) -> CompletedAction {
        let outcome = try await storeCall {
            try await self.accounts.complete(hashes: self.keys.codeHashes(code), modes: modes, effect: effect, now: now, by: consumer)
        }
        switch outcome {
        case .completed(let done):
            metrics.codeConsumed(done.record.mode)
            return done
        case .expired:
            metrics.codeExpired()
            throw ActionError.expiredCode
        case .invalid:
            metrics.codeInvalid()
            throw ActionError.invalidCode
        }
    }

    // MARK: Accounts

    /// The account an ID token names, if the token is valid and not revoked.
    public func account(fromIDToken token: String, tenantID: String, now: Timestamp) async throws(ActionError) -> Account {
        guard let claims = tokens.verify(token, now: now) else { throw ActionError.invalidIDToken }
        let id = claims.sub
        let tokenTenant = claims.firebase.tenant ?? ""
        guard tokenTenant == tenantID else { throw ActionError(.tenantIDMismatch) }
        guard let account = try await storeCall({ try await self.accounts.account(id: id, tenantID: tenantID) }) else {
            throw ActionError.userNotFound
        }
        if claims.iat < account.validSince { throw ActionError(.tokenExpired) }
        return account
    }

    /// Creates an account (admin), hashing its password.
    public func createAccount(
        email: String?, password: String?, emailVerified: Bool, displayName: String?, localID: String?, tenantID: String
    )
        async throws(ActionError) -> Account
    {
        var canonical: String?
        if let email {
            guard let valid = Self.canonicalEmail(email) else { throw ActionError.invalidEmail }
            canonical = valid
        }
        var hash: String?
        if let password {
            try checkPasswordPolicy(password)
            do { hash = try await passwords.hash(password) } catch { throw ActionError(.internalError, "the password could not be hashed") }
        }
        if let localID, localID.isEmpty || localID.utf8.count > 128 { throw ActionError(.invalidLocalID) }
        let now = Timestamp.now
        let account = Account(
            localID: localID ?? Secrets.accountID(), tenantID: tenantID, email: canonical, emailVerified: emailVerified, passwordHash: hash,
            passwordUpdatedAt: hash == nil ? nil : now, displayName: displayName, createdAt: now)
        do {
            try await accounts.create(account)
        } catch AccountStoreError.emailExists {
            throw ActionError.emailExists
        } catch {
            throw unavailable(error)
        }
        return account
    }

    /// Why the password policy (`passwords`) refuses a new password.
    enum PasswordProblem: Equatable {
        case missing
        case tooShort(minimum: Int)
        case tooLong(maximum: Int)
    }

    /// What the policy has against `password`, or `nil` when it accepts it (the API's error and the
    /// page's inline message both come from here).
    func passwordProblem(_ password: String) -> PasswordProblem? {
        let policy = settings.passwords
        if password.isEmpty { return .missing }
        if password.count < policy.minimumLength { return .tooShort(minimum: policy.minimumLength) }
        if password.count > policy.maximumLength { return .tooLong(maximum: policy.maximumLength) }
        return nil
    }

    func checkPasswordPolicy(_ password: String) throws(ActionError) {
        switch passwordProblem(password) {
        case nil: return
        case .missing: throw ActionError(.missingPassword)
        case .tooShort(let minimum): throw ActionError(.weakPassword, "Password should be at least \(minimum) characters")
        case .tooLong(let maximum): throw ActionError(.weakPassword, "Password should be at most \(maximum) characters")
        }
    }

    // MARK: Checks

    func linkDomain(_ requested: String?) throws(ActionError) -> LinkDomain {
        guard let requested, !requested.isEmpty else { return settings.linkDomains[0] }
        guard let domain = try? LinkDomain(requested),
            let known = settings.linkDomains.first(where: { $0.host == domain.host && $0.port == domain.port })
        else {
            throw ActionError(.invalidHostingLinkDomain, "The provided link domain is not configured for this project.")
        }
        return known
    }

    /// The re-serialised, allow-listed continue URL; `nil` when none was given.
    func checkedContinueURL(_ given: String?, required: Bool) throws(ActionError) -> String? {
        guard let given, !given.isEmpty else {
            if required { throw ActionError(.missingContinueURI, "A continue URL must be provided in the request.") }
            return nil
        }
        switch policy.evaluate(given) {
        case .allowed(let url): return url
        case .rejected(let rejection):
            if rejection.code == .notAllowed {
                throw ActionError(.unauthorizedDomain, "Domain not allowlisted by project")
            }
            throw ActionError(.invalidContinueURI, "The continue URL provided in the request is invalid: \(rejection.message)")
        }
    }

    /// Counts a send against every address it involves (the requester's and the recipient's, in
    /// canonical form and whatever the tenant: one mailbox is one mailbox) and the client's IP, and
    /// refuses it when any of them is over its hourly limit.
    func checkSendLimits(addresses: [String], clientAddress: String?, now: Timestamp) async throws(ActionError) {
        let hour: Timestamp = 3_600_000
        var keys: [String] = []
        for address in addresses where !keys.contains("address:" + address) { keys.append("address:" + address) }
        let addressCount = keys.count
        if let clientAddress { keys.append("ip:" + clientAddress) }
        let counts = try await storeCall { try await self.codes.countEvents(keys: keys, windowStart: now - now % hour) }
        if counts.prefix(addressCount).contains(where: { $0 > settings.limits.sendsPerAddressPerHour }) {
            throw ActionError.tooManyAttempts
        }
        if counts.count > addressCount, counts[addressCount] > settings.limits.sendsPerIPPerHour { throw ActionError.tooManyAttempts }
    }

    /// The tenant a call names, checked: "" for the project itself; `INVALID_TENANT_ID` for an ID
    /// that cannot be one, `TENANT_NOT_FOUND` for one that is not configured.
    public func knownTenant(_ id: String?) throws(ActionError) -> String {
        guard let id, !id.isEmpty else { return "" }
        guard ServiceSettings.isWellFormedTenantID(id) else {
            throw ActionError(.invalidTenantID, "a tenant ID is 1 to 64 letters, digits and hyphens")
        }
        guard settings.tenants.contains(id) else { throw ActionError(.tenantNotFound, "There is no tenant with this ID.") }
        return id
    }

    /// Runs a store call, turning a store failure into `UNAVAILABLE` (logged without secrets).
    func storeCall<T>(_ body: () async throws -> T) async throws(ActionError) -> T {
        do {
            return try await body()
        } catch let error as ActionError {
            throw error
        } catch AccountStoreError.emailExists {
            throw ActionError.emailExists
        } catch AccountStoreError.accountNotFound {
            throw ActionError.userNotFound
        } catch AccountStoreError.emailChanged {
            throw ActionError.invalidCode
        } catch AccountStoreError.signUpNotAllowed {
            throw ActionError(.adminOnlyOperation, "signing up is turned off for this project")
        } catch {
            throw unavailable(error)
        }
    }

    func unavailable(_ error: any Error) -> ActionError {
        logger.error("store call failed", metadata: ["error": "\(error)"])
        return ActionError(.unavailable, ActionError.unavailable.detail, cause: error)
    }

    /// The canonical form of an address (trimmed, lower-cased), or `nil` when it is not one.
    public static func canonicalEmail(_ text: String) -> String? {
        let email = text.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard email.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64, !parts[1].isEmpty,
            !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), !parts[1].contains(".."),
            email.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && !"<>()[]\\,;:\"".unicodeScalars.contains($0) })
        else { return nil }
        return email
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
