import ActionLinks
import Foundation

/// What `accounts:update` changes on an account, by the signed-in user (`idToken`) or the admin
/// (`localId`).
struct AccountChanges: Sendable {
    var email: String?
    /// The new password's hash (hashed before the transaction).
    var passwordHash: String?
    /// `.some(nil)` deletes (a JSON `null`, as the JS SDK's `updateProfile` sends it).
    var displayName: String??
    var photoURL: String??
    var deleteAttributes: [String] = []
    var deleteProviders: [String] = []
    var linkIdentity: FederatedIdentity?
    // The admin's only:
    var disabled: Bool?
    var emailVerified: Bool?
    var phoneNumber: String?
    var customAttributes: String?
    var validSince: Int64?
    var createdAt: Timestamp?
    var lastLoginAt: Timestamp?
    /// The second factors to keep (`mfa.enrollments`, checked): `nil` keeps them all, none removes
    /// them all (``SecondFactorEntry/kept(_:naming:)``).
    var secondFactors: [SecondFactorEntry]?
}

extension AccountService {
    /// What an update did.
    struct Updated: Sendable {
        var account: Account
        /// The new address, when it changed.
        var newEmail: String?
        /// The session of an update that revoked the old ones (a new password or address).
        var signedIn: SignedInUser?
        /// The `recoverEmail` code left for the old address of a changed one, and that change.
        var recovery: (code: String, change: ActionCodeRecord)?
    }

    /// Applies `changes` to the account `localID` in one transaction. `session` is the caller's
    /// session (the user's own update) or `nil` (the admin's).
    func update(
        localID: String, tenant: TenantPolicy, changes: AccountChanges, session: FirstFactor?, isAdmin: Bool,
        recovery: (code: String, hash: Data, expiresAt: Timestamp), languageCode: String?,
        recoveryLetter: @escaping @Sendable (ActionCodeRecord, Timestamp) throws -> OutboxMail
    ) async throws(ActionError) -> Updated {
        let now = clock.now
        let tenantID = tenant.tenantID
        // A new password, an address change or an explicit revocation starts a new session (which
        // keeps the caller's second factor).
        let continued = session.map { changes.passwordHash != nil ? FirstFactor(provider: "password", rule: $0.rule) : $0 }
        let result = try await store.call {
            try await self.accounts.transaction(tenantID: tenantID, now: now) { tx -> Updated in
                guard var account = try tx.account(id: localID) else { throw ActionError.userNotFound }
                if !isAdmin, account.disabled { throw ActionError.userDisabled }
                let oldEmail = account.email
                var revoke = false
                var newEmail: String?
                if let email = changes.email {
                    newEmail = email
                    if email != account.email {
                        if let owner = try tx.account(email: email), owner.localID != localID { throw ActionError.emailExists }
                        if session?.provider != "anonymous", oldEmail != nil, account.initialEmail == nil {
                            account.initialEmail = oldEmail
                        }
                        account.email = email
                        account.emailVerified = false
                        revoke = true
                    }
                }
                if let hash = changes.passwordHash {
                    account.passwordHash = hash
                    account.passwordUpdatedAt = now
                    revoke = true
                }
                if let name = changes.displayName { account.displayName = name }
                if let photo = changes.photoURL { account.photoURL = photo }
                if isAdmin {
                    if let disabled = changes.disabled { account.disabled = disabled }
                    if let phone = changes.phoneNumber, phone != account.phoneNumber {
                        if try tx.account(phoneNumber: phone) != nil { throw ActionError(.phoneNumberExists) }
                        account.phoneNumber = phone
                    }
                    if let verified = changes.emailVerified { account.emailVerified = verified }
                    if let claims = changes.customAttributes { account.customAttributes = claims == "{}" ? nil : claims }
                    if let created = changes.createdAt { account.createdAt = created }
                    if let login = changes.lastLoginAt { account.lastLoginAt = login }
                    // Removing factors revokes no session (as Firebase's).
                    if let entries = changes.secondFactors {
                        account.secondFactors = try SecondFactorEntry.kept(account.secondFactors, naming: entries)
                    }
                }
                if revoke { account.validSince = now.seconds }
                if isAdmin, let validSince = changes.validSince { account.validSince = validSince }
                for attribute in changes.deleteAttributes {
                    switch attribute {
                    case "DISPLAY_NAME": account.displayName = nil
                    case "PHOTO_URL": account.photoURL = nil
                    case "PASSWORD": account.passwordHash = nil
                    case "EMAIL":
                        account.email = nil
                        account.emailVerified = false
                        account.emailLinkSignin = false
                    default: break
                    }
                }
                for provider in changes.deleteProviders {
                    switch provider {
                    case "password":
                        account.email = nil
                        account.emailVerified = false
                        account.emailLinkSignin = false
                        account.passwordHash = nil
                    case "phone": account.phoneNumber = nil
                    default: account.federatedIdentities.removeAll { $0.providerID == provider }
                    }
                }
                if let identity = changes.linkIdentity {
                    if let owner = try tx.account(providerID: identity.providerID, rawID: identity.rawID), owner.localID != localID {
                        throw ActionError(.federatedUserIDAlreadyLinked)
                    }
                    account.federatedIdentities.removeAll { $0.providerID == identity.providerID }
                    account.federatedIdentities.append(identity)
                }
                try tx.update(account)
                var recoveryRecord: ActionCodeRecord?
                if let oldEmail, account.email != nil, account.email != oldEmail, session?.provider != "anonymous" {
                    // The old address may undo the change (Firebase mails it a recoverEmail link).
                    // An address removed (deleteAttribute EMAIL) is not a change it could undo: as
                    // in the emulator, nothing is mailed.
                    let record = ActionCodeRecord(
                        hash: recovery.hash, mode: .recoverEmail, tenantID: tenantID, accountID: localID, email: oldEmail,
                        newEmail: account.email, languageCode: languageCode, createdAt: now, expiresAt: recovery.expiresAt)
                    try tx.retireCodes(emails: [oldEmail])
                    try tx.issue(record)
                    // Its mail is stored with it, in the outbox (and delivered after the answer).
                    try tx.enqueue(try recoveryLetter(record, tx.now))
                    recoveryRecord = record
                }
                var signedIn: SignedInUser?
                if revoke || (isAdmin && changes.validSince != nil && session != nil), let continued {
                    signedIn = try self.completion.continueSession(of: account, by: continued, in: tx)
                }
                return Updated(
                    account: account, newEmail: newEmail, signedIn: signedIn,
                    recovery: recoveryRecord.map { (recovery.code, $0) })
            }
        }
        return result
    }

    /// Checks developer claims as Firebase does: at most 1000 characters of a JSON object with no
    /// reserved name (`CLAIMS_TOO_LARGE`, `INVALID_CLAIMS`, `FORBIDDEN_CLAIM : <name>`).
    static func checkCustomAttributes(_ text: String) throws(ActionError) {
        guard text.count <= 1000 else { throw ActionError(.claimsTooLarge) }
        guard let object = ClaimValue.object(json: text) else { throw ActionError(.invalidClaims) }
        if let reserved = object.keys.sorted().first(where: IDTokenClaims.reservedNames.contains) {
            throw ActionError(.forbiddenClaim, reserved)
        }
    }
}
