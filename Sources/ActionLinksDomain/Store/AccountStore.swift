import ActionLinks
import Foundation

/// Why a store refused a change.
public enum AccountStoreError: Error, Hashable, Sendable {
    /// Another account of the tenant already has the address (`EMAIL_EXISTS`).
    case emailExists
    /// Another account of the tenant already has the phone number (`PHONE_NUMBER_EXISTS`).
    case phoneNumberExists
    /// Another account of the tenant already has the ID (`DUPLICATE_LOCAL_ID`).
    case localIDExists
    /// Another account of the tenant is already linked to this provider identity
    /// (`FEDERATED_USER_ID_ALREADY_LINKED`).
    case federatedIdentityExists
    /// The account does not exist (any more).
    case accountNotFound
}

/// A store that broke one of its own rules (a code read live in a transaction could not be consumed
/// in it): a bug, reported instead of a crash.
public struct StoreInconsistency: Error, CustomStringConvertible, Sendable {
    /// What was found.
    public let description: String

    /// Makes the value from each of its fields.
    package init(description: String) {
        self.description = description
    }
}

/// A key a unit of work reads an account by (``AccountTransaction/prefetch(_:)``).
public enum AccountKey: Hashable, Sendable {
    /// By `localId`.
    case id(String)
    /// By the account's own address.
    case email(String)
    /// By phone number.
    case phoneNumber(String)
    /// By a linked provider identity.
    case federated(providerID: String, rawID: String)
    /// Every account with a linked provider identity that has this address.
    case providerEmail(String)
}

/// One store transaction over a tenant's accounts, the codes that act on them and their sessions:
/// what a service reads and changes in one atomic step. Reads see the transaction's own writes.
///
/// A unit of work (the closure given to ``AccountStore/transaction(tenantID:now:_:)``) is a
/// synchronous function of what it reads, without effects outside the transaction: a store may run
/// it more than once (PostgreSQL runs it again when it asks for rows that were not loaded yet, or
/// after a serialization failure), and only the last run's changes are kept. Hash passwords and
/// sign tokens before or after it, never inside.
public protocol AccountTransaction: AnyObject {
    /// The tenant every account read or written here belongs to.
    var tenantID: String { get }
    /// The time of the transaction.
    var now: Timestamp { get }

    /// Loads many accounts at once before they are read one by one (a batch of 1000 users costs one
    /// round trip, not 1000).
    func prefetch(_ keys: [AccountKey]) throws
    /// The account with `localID`.
    func account(id localID: String) throws -> Account?
    /// The account whose own address is `email` (canonical).
    func account(email: String) throws -> Account?
    /// The account with this phone number.
    func account(phoneNumber: String) throws -> Account?
    /// The account linked to this provider identity.
    func account(providerID: String, rawID: String) throws -> Account?
    /// The accounts with a linked provider identity whose address is `email`.
    func accounts(providerEmail email: String) throws -> [Account]
    /// Adds an account (``AccountStoreError/localIDExists``, ``AccountStoreError/emailExists``, ... when
    /// it clashes with another).
    func insert(_ account: Account) throws
    /// Replaces an existing account, its federated identities included.
    func update(_ account: Account) throws
    /// Deletes an account with its federated identities and sessions.
    func delete(id localID: String) throws

    /// A code by its hashes (``CodeStore/lookup(hashes:now:)``), read for this transaction.
    func code(hashes: [Data]) throws -> CodeLookup
    /// Marks a live code (one ``code(hashes:)`` returned) consumed.
    func consume(_ record: ActionCodeRecord, by consumer: String) throws
    /// Stores a new code, retiring the live one of its address and mode.
    func issue(_ record: ActionCodeRecord) throws
    /// Retires every outstanding code of these addresses.
    func retireCodes(emails: [String]) throws
    /// Records a session (a refresh token's hash).
    func addSession(_ session: Session) throws
    /// Stores a mail in the outbox (``MailOutboxStore/enqueue(_:)``) with the transaction's
    /// changes, so that it goes out if and only if they are kept (the recovery mail an email change
    /// leaves for the old address).
    func enqueue(_ mail: OutboxMail) throws
}

/// Where accounts and their sessions live: reads outside a transaction, and
/// ``transaction(tenantID:now:_:)`` for every change.
public protocol AccountStore: Sendable {
    /// The account with `localID`.
    func account(id localID: String, tenantID: String) async throws -> Account?
    /// The account whose own address is `email` (canonical).
    func account(email: String, tenantID: String) async throws -> Account?

    /// Runs `work` in one transaction over the tenant's accounts: its changes are all kept when it
    /// returns and none when it throws (its error is rethrown). See ``AccountTransaction``.
    func transaction<T: Sendable>(
        tenantID: String, now: Timestamp, _ work: @escaping @Sendable (any AccountTransaction) throws -> T
    ) async throws -> T

    /// The session of a refresh token's hash, with its account (`nil` when either is gone).
    func session(hash: Data) async throws -> (session: Session, account: Account)?
    /// What became of a refresh token's session that ``session(hash:)`` no longer finds: revoked
    /// (raising an account's `validSince` moves the sessions it revokes out), or of an account
    /// since deleted; `nil` when nothing is known of it (never issued, or its tombstone purged).
    /// The tombstones keep the answers the SDKs expect (`TOKEN_EXPIRED`, `USER_NOT_FOUND`: both a
    /// sign-out) rather than `INVALID_REFRESH_TOKEN`, for ``sessionTombstoneLifetime``.
    func endedSession(hash: Data) async throws -> EndedSession?
    /// Deletes the tombstones of sessions that ended before `cutoff` (``endedSession(hash:)``);
    /// how many went.
    func purgeEndedSessions(before cutoff: Timestamp) async throws -> Int
    /// Records that a token was issued or refreshed for the account (`lastRefreshAt`).
    func recordRefresh(accountID: String, tenantID: String, at time: Timestamp) async throws

    /// Up to `limit` accounts of the tenant with IDs after `localID`, by ID (`accounts:batchGet`).
    func accounts(tenantID: String, after localID: String?, limit: Int) async throws -> [Account]
    /// Up to `limit` accounts of the tenant by ID, ascending or `descending`, after the first `offset`
    /// of that order (`accounts:query`): read through the index of IDs, so the cost grows with
    /// `offset + limit`, not with the tenant's accounts.
    func accounts(tenantID: String, descending: Bool, offset: Int, limit: Int) async throws -> [Account]
    /// How many accounts the tenant has.
    func countAccounts(tenantID: String) async throws -> Int
    /// Deletes every account of the tenant, with their sessions (the emulator's reset).
    func deleteAllAccounts(tenantID: String) async throws
}

/// A refresh token's session that no longer refreshes (``AccountStore/endedSession(hash:)``).
public enum EndedSession: Sendable, Equatable {
    /// Revoked by its account's `validSince`; the account may still be there.
    case revoked(tenantID: String, accountID: String)
    /// Its account was deleted.
    case ofDeletedAccount
}

/// How long a revoked session's or a deleted account's session's hash is kept: its refresh answers
/// `TOKEN_EXPIRED` or `USER_NOT_FOUND` for that long, and `INVALID_REFRESH_TOKEN` after (a sign-out
/// all the same, for every SDK). Thirty days, the longest of the server's windows.
public let sessionTombstoneLifetime: Duration = .seconds(30 * 86_400)

extension AccountTransaction {
    /// Deletes `account` (``delete(id:)``) and retires the outstanding codes of its address: a
    /// link mailed before, or its sign-in code, must not outlive the account (a sign-in link would
    /// make a new one).
    func delete(_ account: Account) throws {
        if let email = account.email { try retireCodes(emails: [email]) }
        try delete(id: account.localID)
    }

    /// The account with `localID`, or ``AccountStoreError/accountNotFound``.
    func existingAccount(id localID: String) throws -> Account {
        guard let account = try account(id: localID) else { throw AccountStoreError.accountNotFound }
        return account
    }
}
