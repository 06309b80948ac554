import ActionLinks
import ActionLinksConfiguration
import Foundation
import Logging

/// Accounts as the API sees them: who an ID token names (and whether it still may act), lookups,
/// listing, deletion, and the sign-in methods of an address.
public final class AccountService: Sendable {
    let accounts: any AccountStore
    let tokens: TokenService
    let tenants: TenantDirectory
    let store: StoreGateway
    let clock: any ServiceClock

    init(accounts: any AccountStore, tokens: TokenService, tenants: TenantDirectory, store: StoreGateway, clock: any ServiceClock) {
        self.accounts = accounts
        self.tokens = tokens
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
    func user(idToken: String, caller: Caller, bodyTenant: String?, allowDisabled: Bool = false) async throws(ActionError) -> User {
        let claims = try await tokens.verifyIDToken(idToken, now: clock.now)
        let tenant = try await caller.tenant(body: bodyTenant, token: claims.firebase.tenant ?? "", tenants: tenants)
        if !caller.isAdmin { try tenant.checkEnabled() }
        let account = try await account(for: claims, tenantID: tenant.tenantID, allowDisabled: allowDisabled)
        return User(account: account, claims: claims, tenant: tenant)
    }

    /// The tenant an ID token names, if it verifies now (`nil` for the project's).
    func tenant(ofIDToken idToken: String?) async -> String? {
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
    func lookup(ids: [String], emails: [String], phoneNumbers: [String], federated: [FederatedIdentity], tenantID: String)
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

    /// Deletes one account (`accounts:delete`).
    func delete(localID: String, tenantID: String) async throws(ActionError) {
        try await store.call {
            try await self.accounts.transaction(tenantID: tenantID, now: self.clock.now) { tx in
                _ = try tx.existingAccount(id: localID)
                try tx.delete(id: localID)
            }
        }
    }

    /// One account `accounts:batchDelete` left alone, and why.
    struct BatchDeleteError: Encodable, Sendable {
        var index: Int
        var localId: String
        var message: String
    }

    /// Deletes up to 1000 accounts at once; without `force`, only disabled ones. Unknown IDs count
    /// as deleted.
    func batchDelete(localIDs: [String], force: Bool, tenantID: String) async throws(ActionError) -> [BatchDeleteError] {
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
                    try tx.delete(id: localID)
                }
                return errors
            }
        }
    }

    /// A page of the tenant's accounts by ID (`accounts:batchGet`): up to `maximum` after `token`,
    /// and the token of the next page when this one is full.
    func page(tenantID: String, maximum: Int, after token: String?) async throws(ActionError) -> (accounts: [Account], next: String?) {
        let found = try await store.call { try await self.accounts.accounts(tenantID: tenantID, after: token, limit: maximum) }
        return (found, found.count >= maximum ? found.last?.localID : nil)
    }

    /// A window of the tenant's accounts by ID (`accounts:query`): up to `limit` after the first
    /// `offset`, ascending or `descending`.
    func window(tenantID: String, descending: Bool, offset: Int, limit: Int) async throws(ActionError) -> [Account] {
        try await store.call {
            try await self.accounts.accounts(tenantID: tenantID, descending: descending, offset: offset, limit: limit)
        }
    }

    /// How many accounts the tenant has.
    func count(tenantID: String) async throws(ActionError) -> Int {
        try await store.call { try await self.accounts.countAccounts(tenantID: tenantID) }
    }

    /// What `accounts:createAuthUri` knows of an address: whether an account has it (as its own
    /// address or a provider's) and how that account signs in.
    struct AddressMethods: Sendable {
        var registered: Bool
        var allProviders: [String]
        var signInMethods: [String]
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
