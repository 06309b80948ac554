import ActionLinks
import ActionLinksConfiguration
import Crypto
import Foundation
import Logging

/// Accounts as the API sees them: who an ID token names, and accounts the admin creates.
public final class AccountService: Sendable {
    let accounts: any AccountStore
    let tokens: TokenIssuer
    let passwords: PasswordHasher
    let passwordPolicy: PasswordPolicy
    let store: StoreGateway
    let clock: any ServiceClock

    init(
        accounts: any AccountStore, tokens: TokenIssuer, passwords: PasswordHasher, passwordPolicy: PasswordPolicy, store: StoreGateway,
        clock: any ServiceClock
    ) {
        self.clock = clock
        self.accounts = accounts
        self.tokens = tokens
        self.passwords = passwords
        self.passwordPolicy = passwordPolicy
        self.store = store
    }

    /// The account an ID token names, if the token is valid and not revoked.
    public func account(fromIDToken token: String, tenantID: String, now: Timestamp) async throws(ActionError) -> Account {
        guard let claims = tokens.verify(token, now: now) else { throw ActionError.invalidIDToken }
        let id = claims.sub
        let tokenTenant = claims.firebase.tenant ?? ""
        guard tokenTenant == tenantID else { throw ActionError(.tenantIDMismatch) }
        guard let account = try await store.call({ try await self.accounts.account(id: id, tenantID: tenantID) }) else {
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
            guard let valid = EmailAddress.canonical(email) else { throw ActionError.invalidEmail }
            canonical = valid
        }
        var hash: String?
        if let password {
            try passwordPolicy.check(password)
            do { hash = try await passwords.hash(password) } catch { throw ActionError(.internalError, "the password could not be hashed") }
        }
        if let localID, localID.isEmpty || localID.utf8.count > 128 { throw ActionError(.invalidLocalID) }
        let now = clock.now
        let account = Account(
            localID: localID ?? Secrets.accountID(), tenantID: tenantID, email: canonical, emailVerified: emailVerified, passwordHash: hash,
            passwordUpdatedAt: hash == nil ? nil : now, displayName: displayName, createdAt: now)
        do {
            try await accounts.create(account)
        } catch AccountStoreError.emailExists {
            throw ActionError.emailExists
        } catch {
            throw store.unavailable(error)
        }
        return account
    }

    /// The accounts with these IDs, then with these addresses (each once, in that order).
    func lookup(ids: [String], emails: [String], tenantID: String) async throws(ActionError) -> [Account] {
        var found: [Account] = []
        for id in ids {
            if let account = try await store.call({ try await self.accounts.account(id: id, tenantID: tenantID) }) { found.append(account) }
        }
        for email in emails {
            guard let canonical = EmailAddress.canonical(email) else { continue }
            if let account = try await store.call({ try await self.accounts.account(email: canonical, tenantID: tenantID) }),
                !found.contains(where: { $0.localID == account.localID })
            {
                found.append(account)
            }
        }
        return found
    }
}
