import ActionLinks
import ActionLinksConfiguration
import Foundation
import Logging

/// Accounts as the API sees them: who an ID token names (and whether it still may act), lookups,
/// listing, deletion, and the sign-in methods of an address.
public final class AccountService: Sendable {
    let accounts: any AccountStore
    let tokens: TokenService
    let completion: SignInCompletion
    let tenants: TenantDirectory
    let store: StoreGateway
    let clock: any ServiceClock

    init(
        accounts: any AccountStore, tokens: TokenService, completion: SignInCompletion, tenants: TenantDirectory, store: StoreGateway,
        clock: any ServiceClock
    ) {
        self.accounts = accounts
        self.tokens = tokens
        self.completion = completion
        self.tenants = tenants
        self.store = store
        self.clock = clock
    }

    /// A signed-in user: the account an ID token names, with the token's claims and the tenant.
    public struct User: Sendable {
        public var account: Account
        public var claims: IDTokenClaims
        public var tenant: TenantPolicy
    }

    /// The user an ID token names, checked as Firebase checks it: a valid token
    /// (`INVALID_ID_TOKEN`), of the call's tenant (`TENANT_ID_MISMATCH`), whose account exists
    /// (`USER_NOT_FOUND`), was not revoked since (`TOKEN_EXPIRED`) and is not disabled
    /// (`USER_DISABLED`, unless `allowDisabled`: an admin acting on the user). For a client, the
    /// tenant must be enabled (`PROJECT_DISABLED`): it is the token's when the call named none, so
    /// every caller that takes the tenant from here gets it checked.
    package func user(idToken: String, caller: Caller, bodyTenant: String?, allowDisabled: Bool = false) async throws(ActionError) -> User {
        let claims = try await tokens.verifyIDToken(idToken, now: clock.now)
        let tenant = try await caller.tenant(body: bodyTenant, token: claims.firebase.tenant ?? "", tenants: tenants)
        if !caller.isAdmin { try tenant.checkEnabled() }
        let account = try await account(for: claims, tenantID: tenant.tenantID, allowDisabled: allowDisabled)
        return User(account: account, claims: claims, tenant: tenant)
    }

    /// The tenant an ID token names, if it verifies now (`nil` for the project's).
    package func tenant(ofIDToken idToken: String?) async -> String? {
        try? await tokens.verifyIDToken(idToken ?? "", now: clock.now).firebase.tenant
    }

    /// Firebase production's recent sign-in rule, for a client that changes its password or
    /// address or deletes its account (the admin is never asked, ID token or not): the ID token's sign-in
    /// (`auth_time`, which a refresh keeps) must be at most `users.recentSignInSeconds` old, else
    /// `CREDENTIAL_TOO_OLD_LOGIN_AGAIN` (the SDKs' `requires-recent-login`: the app reauthenticates).
    /// A stolen refresh token alone then cannot lock the owner out or delete the account. An
    /// anonymous account is exempt (it has no other way in to reauthenticate with, and the session
    /// is all it has), and a development server does not check, as Firebase's emulator does not.
    func checkRecentSignIn(_ user: User, caller: Caller) throws(ActionError) {
        let settings = tenants.settings
        guard !caller.isAdmin, !settings.server.development, !user.account.isAnonymous else { return }
        if clock.now.seconds - user.claims.authTime > Int64(settings.users.recentSignInSeconds) {
            throw ActionError(.credentialTooOld, "this change needs a recent sign-in; sign in again (reauthenticate) and retry")
        }
    }

    /// The admin's `createSessionCookie`: a session cookie for the user `idToken` names (required:
    /// `MISSING_ID_TOKEN`), valid for `lifetime` seconds (two weeks when not given; from five
    /// minutes to two weeks, else `INVALID_DURATION`).
    package func sessionCookie(idToken: String?, lifetime requested: Int64?, bodyTenant: String?, caller: Caller) async throws(ActionError)
        -> String
    {
        guard let idToken, !idToken.isEmpty else { throw ActionError(.missingIDToken) }
        let lifetime = requested ?? TokenService.sessionCookieLifetimes.upperBound
        guard TokenService.sessionCookieLifetimes.contains(lifetime) else { throw ActionError(.invalidDuration) }
        let user = try await user(idToken: idToken, caller: caller, bodyTenant: bodyTenant)
        return try await tokens.sessionCookie(from: user.claims, lifetime: lifetime, now: clock.now)
    }

    /// The account of verified claims, if it may still act.
    func account(for claims: IDTokenClaims, tenantID: String, allowDisabled: Bool = false) async throws(ActionError) -> Account {
        guard (claims.firebase.tenant ?? "") == tenantID else { throw ActionError(.tenantIDMismatch) }
        guard let account = try await store.call({ try await self.accounts.account(id: claims.sub, tenantID: tenantID) }) else {
            throw ActionError.userNotFound
        }
        if claims.iat < account.validSince { throw ActionError(.tokenExpired) }
        if account.disabled, !allowDisabled { throw ActionError.userDisabled }
        return account
    }

    /// `accounts:lookup` for the admin: the accounts with these IDs, addresses, phone numbers and
    /// provider identities, each once, in that order (unknown ones are skipped).
    package func lookup(ids: [String], emails: [String], phoneNumbers: [String], federated: [FederatedIdentity], tenantID: String)
        async throws(ActionError) -> [Account]
    {
        let canonicalEmails = emails.compactMap(EmailAddress.canonical)
        return try await store.call {
            try await self.accounts.transaction(tenantID: tenantID, now: self.clock.now) { tx in
                try tx.prefetch(
                    ids.map(AccountKey.id) + canonicalEmails.map(AccountKey.email) + phoneNumbers.map(AccountKey.phoneNumber)
                        + federated.map { .federated(providerID: $0.providerID, rawID: $0.rawID) })
                var found: [Account] = []
                func add(_ account: Account?) {
                    if let account, !found.contains(where: { $0.localID == account.localID }) { found.append(account) }
                }
                for id in ids { add(try tx.account(id: id)) }
                for email in canonicalEmails { add(try tx.account(email: email)) }
                for phone in phoneNumbers { add(try tx.account(phoneNumber: phone)) }
                for identity in federated { add(try tx.account(providerID: identity.providerID, rawID: identity.rawID)) }
                return found
            }
        }
    }

    /// The admin's `accounts:delete`: the account `localID` (required: `MISSING_LOCAL_ID`).
    package func delete(localID: String?, tenantID: String) async throws(ActionError) {
        guard let localID, !localID.isEmpty else { throw ActionError(.missingLocalID) }
        try await store.call {
            try await self.accounts.transaction(tenantID: tenantID, now: self.clock.now) { tx in
                try tx.delete(try tx.existingAccount(id: localID))
            }
        }
    }

    /// A user's `accounts:delete`: their own account, when the tenant lets users delete theirs
    /// (`ADMIN_ONLY_OPERATION`) and after a recent sign-in (``checkRecentSignIn(_:caller:)``).
    package func deleteOwn(_ user: User, caller: Caller) async throws(ActionError) {
        guard user.tenant.selfServiceDelete else {
            throw ActionError(.adminOnlyOperation, "deleting an account is turned off for this project; an administrator deletes accounts")
        }
        try checkRecentSignIn(user, caller: caller)
        try await delete(localID: user.account.localID, tenantID: user.tenant.tenantID)
    }

    /// One account `accounts:batchDelete` left alone, and why.
    package struct BatchDeleteError: Encodable, Sendable {
        var index: Int
        var localId: String
        var message: String
    }

    /// Deletes up to 1000 accounts at once; without `force`, only disabled ones. Unknown IDs count
    /// as deleted.
    package func batchDelete(localIDs: [String], force: Bool, tenantID: String) async throws(ActionError) -> [BatchDeleteError] {
        guard (1...1000).contains(localIDs.count) else { throw ActionError(.localIDListExceedsLimit) }
        return try await store.call {
            try await self.accounts.transaction(tenantID: tenantID, now: self.clock.now) { tx in
                try tx.prefetch(localIDs.map(AccountKey.id))
                var errors: [BatchDeleteError] = []
                for (index, localID) in localIDs.enumerated() {
                    guard let account = try tx.account(id: localID) else { continue }
                    if !account.disabled, !force {
                        errors.append(
                            BatchDeleteError(
                                index: index, localId: localID, message: "NOT_DISABLED : Disable the account before batch deletion."))
                        continue
                    }
                    try tx.delete(account)
                }
                return errors
            }
        }
    }

    /// A page of the tenant's accounts by ID (`accounts:batchGet`): up to `maximum` (20 when not
    /// given, at most 1000) after `token`, and the token of the next page when this one is full.
    package func page(tenantID: String, maximum requested: Int?, after token: String?) async throws(ActionError) -> (
        accounts: [Account], next: String?
    ) {
        let maximum = min(max(requested ?? 20, 1), 1000)
        let found = try await store.call { try await self.accounts.accounts(tenantID: tenantID, after: token, limit: maximum) }
        return (found, found.count >= maximum ? found.last?.localID : nil)
    }

    /// What `accounts:query` asks for.
    package struct Query: Sendable {
        /// Filter expressions (not implemented: refused when given).
        var expression: [ClaimValue]?
        /// `USER_ID` or `SORT_BY_FIELD_UNSPECIFIED` (the same); any other order is refused.
        var sortBy: String?
        var descending = false
        /// Whether the accounts are wanted, or only their number.
        var returnUserInfo = true
        /// At most 500 (and when not given).
        var limit: Int?
        var offset: Int?

        /// Makes the value from each of its fields.
        package init(
            expression: [ClaimValue]? = nil, sortBy: String? = nil, descending: Bool = false, returnUserInfo: Bool = true,
            limit: Int? = nil, offset: Int? = nil
        ) {
            self.expression = expression
            self.sortBy = sortBy
            self.descending = descending
            self.returnUserInfo = returnUserInfo
            self.limit = limit
            self.offset = offset
        }
    }

    /// `accounts:query`: how many accounts the tenant has and, unless only the number is wanted, a
    /// window of them by ID: up to `limit` after the first `offset`, ascending or descending.
    package func query(_ query: Query, tenantID: String) async throws(ActionError) -> (count: Int, accounts: [Account]?) {
        if let expression = query.expression, !expression.isEmpty {
            throw ActionError.notImplemented("expression is not implemented; query by user ID with accounts:lookup")
        }
        if let sort = query.sortBy, !["USER_ID", "SORT_BY_FIELD_UNSPECIFIED"].contains(sort) {
            throw ActionError.notImplemented("Only sorting by USER_ID is implemented.")
        }
        let count = try await store.call { try await self.accounts.countAccounts(tenantID: tenantID) }
        guard query.returnUserInfo else { return (count, nil) }
        let limit = min(max(query.limit ?? 500, 1), 500)
        let offset = max(query.offset ?? 0, 0)
        let window = try await store.call {
            try await self.accounts.accounts(tenantID: tenantID, descending: query.descending, offset: offset, limit: limit)
        }
        return (count, window)
    }

    /// What `accounts:createAuthUri` knows of an address: whether an account has it (as its own
    /// address or a provider's) and how that account signs in.
    package struct AddressMethods: Sendable {
        package var registered: Bool
        package var allProviders: [String]
        package var signInMethods: [String]
    }

    /// `accounts:createAuthUri` for an address (`identifier`, required: `MISSING_IDENTIFIER`), from
    /// a page at `continueURI` (required, `MISSING_CONTINUE_URI`, and absolute with a host,
    /// `INVALID_CONTINUE_URI`): its methods (``methods(email:tenantID:)``), or `nil` when the
    /// tenant protects against email enumeration (then nothing is told).
    package func methods(identifier: String?, continueURI: String?, tenant: TenantPolicy) async throws(ActionError) -> AddressMethods? {
        guard let identifier, !identifier.isEmpty else { throw ActionError(.missingIdentifier) }
        guard let continueURI, !continueURI.isEmpty else { throw ActionError(.missingContinueURI) }
        guard let email = EmailAddress.canonical(identifier) else { throw ActionError(.invalidIdentifier) }
        guard let parts = try? URLParts(continueURI), !parts.scheme.isEmpty, parts.host?.isEmpty == false else {
            throw ActionError(.invalidContinueURI)
        }
        if tenant.emailEnumerationProtection { return nil }
        return try await methods(email: email, tenantID: tenant.tenantID)
    }

    /// With one account per address, the methods of the account that has it; when addresses may
    /// be shared (`users.oneAccountPerEmail: false`), as Firebase answers then, only the address's
    /// own methods (`password`, `emailLink`) of the first such account that has an address, never
    /// a provider's.
    func methods(email: String, tenantID: String) async throws(ActionError) -> AddressMethods {
        let oneAccountPerEmail = tenants.settings.users.oneAccountPerEmail
        return try await store.call {
            try await self.accounts.transaction(tenantID: tenantID, now: self.clock.now) { tx in
                try tx.prefetch([.email(email), .providerEmail(email)])
                let found = [try tx.account(email: email)].compactMap { $0 } + (try tx.accounts(providerEmail: email))
                if oneAccountPerEmail, let account = found.first {
                    return AddressMethods(registered: true, allProviders: account.providerIDs, signInMethods: account.signInMethods)
                }
                if !oneAccountPerEmail, let account = found.first(where: { $0.email != nil }) {
                    let own = account.signInMethods.filter { $0 == "password" || $0 == "emailLink" }
                    return AddressMethods(registered: true, allProviders: own.isEmpty ? [] : ["password"], signInMethods: own)
                }
                return AddressMethods(registered: false, allProviders: [], signInMethods: [])
            }
        }
    }
}
