import ActionLinks
import ActionLinksConfiguration

/// What `accounts:update` asks, decoded: by the signed-in user (`idToken`), the admin (`localId`),
/// or anyone holding an action code (`oobCode`).
package struct AccountUpdateRequest: Sendable {
    /// A provider identity the admin links (`linkProviderUserInfo`).
    package struct LinkedIdentity: Sendable {
        var providerID: String?
        var rawID: String?
        var email: String?
        var displayName: String?
        var photoURL: String?

        /// Makes the value from each of its fields.
        package init(
            providerID: String? = nil, rawID: String? = nil, email: String? = nil, displayName: String? = nil, photoURL: String? = nil
        ) {
            self.providerID = providerID
            self.rawID = rawID
            self.email = email
            self.displayName = displayName
            self.photoURL = photoURL
        }
    }

    var idToken: String?
    var oobCode: String?
    var localID: String?
    /// The tenant the body named (`tenantId`).
    var bodyTenant: String?
    var email: String?
    var password: String?
    /// `.some(nil)` deletes (a JSON `null`, as the JS SDK's `updateProfile` sends it).
    var displayName: String??
    var photoURL: String??
    var deleteAttributes: [String] = []
    var deleteProviders: [String] = []
    var linkIdentity: LinkedIdentity?
    var disableUser: Bool?
    var emailVerified: Bool?
    var phoneNumber: String?
    var customAttributes: String?
    /// Whether the call carried `validSince` at all: the user's own (any value) revokes their
    /// other sessions now.
    var revokesSessions = false
    /// The admin's `validSince`, `createdAt` and `lastLoginAt`.
    var validSince: Int64?
    var createdAt: Timestamp?
    var lastLoginAt: Timestamp?
    /// The admin's `mfa`: `nil` when absent, its `enrollments` (none for `{}`) when present.
    var secondFactors: [SecondFactorEntry]?

    /// Makes the value from each of its fields.
    package init(
        idToken: String? = nil, oobCode: String? = nil, localID: String? = nil, bodyTenant: String? = nil, email: String? = nil,
        password: String? = nil, displayName: String?? = nil, photoURL: String?? = nil, deleteAttributes: [String] = [],
        deleteProviders: [String] = [], linkIdentity: LinkedIdentity? = nil, disableUser: Bool? = nil, emailVerified: Bool? = nil,
        phoneNumber: String? = nil, customAttributes: String? = nil, revokesSessions: Bool = false, validSince: Int64? = nil,
        createdAt: Timestamp? = nil, lastLoginAt: Timestamp? = nil, secondFactors: [SecondFactorEntry]? = nil
    ) {
        self.idToken = idToken
        self.oobCode = oobCode
        self.localID = localID
        self.bodyTenant = bodyTenant
        self.email = email
        self.password = password
        self.displayName = displayName
        self.photoURL = photoURL
        self.deleteAttributes = deleteAttributes
        self.deleteProviders = deleteProviders
        self.linkIdentity = linkIdentity
        self.disableUser = disableUser
        self.emailVerified = emailVerified
        self.phoneNumber = phoneNumber
        self.customAttributes = customAttributes
        self.revokesSessions = revokesSessions
        self.validSince = validSince
        self.createdAt = createdAt
        self.lastLoginAt = lastLoginAt
        self.secondFactors = secondFactors
    }
}

/// `accounts:update`: who may change what (Firebase production's rules, the emulator's on a
/// development server), then one transaction (``AccountService/update(localID:tenant:changes:session:isAdmin:recovery:languageCode:recoveryLetter:)``).
package struct AccountUpdater: Sendable {
    let accounts: AccountService
    let completer: ActionCompleter
    let issuer: CodeIssuer
    let signIn: SignInService
    let tokens: TokenService
    let settings: ServiceSettings
    let clock: any ServiceClock

    /// What an update answers: the account, its new address, and a new session's tokens when
    /// the update revoked the old ones.
    package struct Done: Sendable {
        package var account: Account
        package var newEmail: String?
        package var tokens: SignedInUser.Tokens?
    }

    package func update(_ request: AccountUpdateRequest, caller: Caller, tenant named: TenantPolicy) async throws(ActionError) -> Done {
        var tenant = named
        if !caller.isAdmin {
            guard request.idToken != nil || request.oobCode != nil else {
                throw ActionError(.invalidRequestType, "Unsupported request parameters.")
            }
            if request.customAttributes != nil || request.secondFactors != nil { throw ActionError.insufficientPermission }
        } else if request.localID == nil, request.oobCode == nil {
            throw ActionError(.missingLocalID)
        }
        if let claims = request.customAttributes { try AccountService.checkCustomAttributes(claims) }
        if let entries = request.secondFactors { try SecondFactorEntry.check(entries) }
        if let code = request.oobCode {
            let namesTenant = (request.bodyTenant ?? caller.pathTenant)?.isEmpty == false
            let done = try await completer.apply(code: code, tenant: namesTenant ? tenant : nil, consumer: caller.consumer)
            return Done(account: done.account, newEmail: done.record.mode == .verifyAndChangeEmail ? done.account.email : nil)
        }
        let localID: String
        var session: FirstFactor?
        if caller.isAdmin, let id = request.localID {
            localID = id
        } else {
            let user = try await accounts.user(idToken: request.idToken ?? "", caller: caller, bodyTenant: request.bodyTenant)
            if request.disableUser != nil { throw ActionError(.operationNotAllowed) }
            if request.password != nil || request.email != nil { try accounts.checkRecentSignIn(user, caller: caller) }
            localID = user.account.localID
            session = FirstFactor.continuing(user)
            tenant = user.tenant
        }
        let changes = try await changes(request, caller: caller, tenant: tenant)
        let recovery = issuer.recoveryCode(now: clock.now)
        let issuer = self.issuer
        let recoveryLetter: @Sendable (ActionCodeRecord, Timestamp) throws -> OutboxMail = { change, now in
            try issuer.recoveryLetter(code: recovery.code, hash: recovery.hash, expiresAt: recovery.expiresAt, for: change, now: now)
        }
        var updated = try await accounts.update(
            localID: localID, tenant: tenant, changes: changes, session: session, isAdmin: caller.isAdmin,
            recovery: recovery, languageCode: caller.locale, recoveryLetter: recoveryLetter)
        if !caller.isAdmin, request.revokesSessions, updated.signedIn == nil {
            updated = try await accounts.update(
                localID: localID, tenant: tenant, changes: AccountChanges(validSince: clock.now.seconds), session: session,
                isAdmin: true, recovery: recovery, languageCode: caller.locale, recoveryLetter: recoveryLetter)
        }
        if let (code, change) = updated.recovery { await issuer.announceRecovery(code: code, for: change) }
        return Done(
            account: updated.account, newEmail: updated.newEmail, tokens: try await updated.signedIn?.requiredTokens(tokens, now: clock.now)
        )
    }

    /// The changes `request` asks for that `caller` may make.
    private func changes(_ request: AccountUpdateRequest, caller: Caller, tenant: TenantPolicy) async throws(ActionError) -> AccountChanges
    {
        var changes = AccountChanges()
        if let email = request.email {
            guard let canonical = EmailAddress.canonical(email) else { throw ActionError.invalidEmail }
            // With email-enumeration protection Firebase production refuses a client's direct
            // change of address (the JS SDK documents `updateEmail`'s auth/operation-not-allowed):
            // its EMAIL_EXISTS would say whether the address has an account. The verified change
            // (sendOobCode VERIFY_AND_CHANGE_EMAIL) is the way; the emulator allows it.
            if !caller.isAdmin, tenant.emailEnumerationProtection, !settings.server.development {
                throw ActionError(
                    .operationNotAllowed,
                    "with email-enumeration protection the address is changed by a verified link (verifyBeforeUpdateEmail)")
            }
            changes.email = canonical
        }
        if let password = request.password {
            try tenant.passwords.check(password)
            changes.passwordHash = try await signIn.hashed(password)
        }
        changes.displayName = request.displayName
        changes.photoURL = request.photoURL
        changes.deleteAttributes = request.deleteAttributes
        changes.deleteProviders = request.deleteProviders
        if let link = request.linkIdentity {
            // Firebase production takes it from the admin only (the emulator from anyone): from a
            // client it would plant an identity nobody proved, and that identity's next sign-in
            // would land in this account.
            guard caller.isAdmin || settings.server.development else { throw ActionError.insufficientPermission }
            guard let provider = link.providerID, !provider.isEmpty else { throw ActionError(.missingProviderID) }
            guard let raw = link.rawID, !raw.isEmpty else { throw ActionError(.missingRawID) }
            changes.linkIdentity = FederatedIdentity(
                providerID: provider, rawID: raw, email: link.email.flatMap(EmailAddress.canonical), displayName: link.displayName,
                photoURL: link.photoURL)
        }
        if caller.isAdmin {
            changes.disabled = request.disableUser
            changes.emailVerified = request.emailVerified
            if let phone = request.phoneNumber {
                guard PhoneNumber.isValid(phone) else { throw ActionError(.invalidPhoneNumber, "Invalid format.") }
                changes.phoneNumber = phone
            }
            changes.customAttributes = request.customAttributes
            changes.validSince = request.validSince
            changes.createdAt = request.createdAt
            changes.lastLoginAt = request.lastLoginAt
            changes.secondFactors = request.secondFactors
        } else if request.revokesSessions {
            changes.validSince = clock.now.seconds
        }
        return changes
    }
}
