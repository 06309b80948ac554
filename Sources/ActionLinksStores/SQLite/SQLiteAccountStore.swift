import ActionLinks
import ActionLinksDomain
import Foundation
import GRDB

/// ``AccountStore`` on the embedded SQLite database: every transaction is one GRDB write, so a
/// unit of work runs once, against the database itself.
public struct SQLiteAccountStore: AccountStore, ImmediateSessionLookup {
    let pool: DatabasePool
    /// Where the refresh times go: those of concurrent refreshes commit together.
    let batches: SQLiteBatchedWrites

    public func account(id localID: String, tenantID: String) async throws -> Account? {
        try await pool.read { db in try Self.fetchOne(db, "local_id = ?", [tenantID, localID]) }
    }

    public func account(email: String, tenantID: String) async throws -> Account? {
        // On a reader: this lookup comes right before a code is written (every sendOobCode), and on
        // the writer's connection it would wait behind the batch being committed (``SQLiteBatchedWrites``).
        // A reader's page cache is thrown away when the writer has committed since its last read,
        // but with commits batched that is once per batch, and the pages come back from the OS's cache.
        try await pool.read { db in try Self.fetchOne(db, "email = ?", [tenantID, email]) }
    }

    public func transaction<T: Sendable>(
        tenantID: String, now: Timestamp, _ work: @escaping @Sendable (any AccountTransaction) throws -> T
    ) async throws -> T {
        do {
            return try await pool.write { db in try work(SQLiteAccountTransaction(db: db, tenantID: tenantID, now: now)) }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw Self.clash(error) ?? error
        }
    }

    /// The store error a unique-constraint violation stands for.
    static func clash(_ error: DatabaseError) -> AccountStoreError? {
        let message = error.message ?? ""
        if message.contains("accounts.email") { return .emailExists }
        if message.contains("accounts.phone_number") { return .phoneNumberExists }
        if message.contains("account_providers.") { return .federatedIdentityExists }
        if message.contains("accounts.tenant_id, accounts.local_id") || message.contains("accounts.local_id") { return .localIDExists }
        return nil
    }

    public func session(hash: Data) async throws -> (session: Session, account: Account)? {
        try sessionNow(hash: hash)
    }

    /// ``session(hash:)`` on the caller's thread: every token refresh reads this, and a few indexed
    /// reads of a WAL database (which never wait for the writer) cost less than handing them to one
    /// of GRDB's queues and waking the caller again (about a sixth of a refresh's CPU went to that).
    package func sessionNow(hash: Data) throws -> (session: Session, account: Account)? {
        // The synchronous `read`: one snapshot for the session and its account.
        try pool.read { db in
            // The columns by position (names cost a search each).
            let statement = try db.cachedStatement(
                sql: "SELECT tenant_id, account_id, created_at, sign_in_provider, auth_time, claims FROM refresh_tokens WHERE hash = ?")
            guard let row = try Row.fetchOne(statement, arguments: [hash]) else { return nil }
            let session = Session(
                hash: hash, tenantID: row[0], accountID: row[1], createdAt: row[2], signInProvider: row[3], authTime: row[4],
                claims: row[5])
            guard let account = try Self.fetchOne(db, "local_id = ?", [session.tenantID, session.accountID]) else { return nil }
            return (session, account)
        }
    }

    public func endedSession(hash: Data) async throws -> EndedSession? {
        try await pool.read { db in
            if let row = try Row.fetchOne(db, sql: "SELECT tenant_id, account_id FROM revoked_sessions WHERE hash = ?", arguments: [hash]) {
                return .revoked(tenantID: row[0], accountID: row[1])
            }
            let deleted = try Bool.fetchOne(db, sql: "SELECT 1 FROM deleted_sessions WHERE hash = ?", arguments: [hash]) ?? false
            return deleted ? .ofDeletedAccount : nil
        }
    }

    /// The purge of ``purgeEndedSessions(before:)``, each through its time's index (v15).
    static let purgeStatements = [
        "DELETE FROM revoked_sessions WHERE revoked_at < ?",
        "DELETE FROM deleted_sessions WHERE deleted_at < ?",
    ]

    public func purgeEndedSessions(before cutoff: Timestamp) async throws -> Int {
        try await pool.write { db in
            var removed = 0
            for sql in Self.purgeStatements {
                try db.execute(sql: sql, arguments: [cutoff])
                removed += db.changesCount
            }
            return removed
        }
    }

    public func recordRefresh(accountID: String, tenantID: String, at time: Timestamp) async throws {
        try await batches.write { db in
            try db.execute(
                sql: "UPDATE accounts SET last_refresh_at = ? WHERE tenant_id = ? AND local_id = ?", arguments: [time, tenantID, accountID])
        }
    }

    public func accounts(tenantID: String, after localID: String?, limit: Int) async throws -> [Account] {
        try await pool.read { db in
            try Self.fetchAll(db, "local_id > ? ORDER BY local_id LIMIT ?", [tenantID, localID ?? "", limit])
        }
    }

    public func accounts(tenantID: String, descending: Bool, offset: Int, limit: Int) async throws -> [Account] {
        try await pool.read { db in
            try Self.fetchAll(
                db, "true ORDER BY local_id \(descending ? "DESC" : "ASC") LIMIT ? OFFSET ?", [tenantID, max(limit, 0), max(offset, 0)])
        }
    }

    /// The tenant's number of accounts, as the schema's triggers keep it (v11): a read of its
    /// count's row, however many accounts it has.
    static let countStatement = "SELECT coalesce((SELECT count FROM account_counts WHERE tenant_id = ?), 0)"

    public func countAccounts(tenantID: String) async throws -> Int {
        try await pool.read { db in
            try Int.fetchOne(db, sql: Self.countStatement, arguments: [tenantID]) ?? 0
        }
    }

    public func deleteAllAccounts(tenantID: String) async throws {
        try await pool.write { db in
            for table in ["accounts", "account_providers", "refresh_tokens", "revoked_sessions", "deleted_sessions"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE tenant_id = ?", arguments: [tenantID])
            }
        }
    }

    // MARK: - Rows

    /// The accounts matching `condition` (after `tenant_id = ?`), with their federated identities.
    static func fetchAll(_ db: Database, _ condition: String, _ arguments: StatementArguments) throws -> [Account] {
        var accounts = try AccountRow.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM accounts WHERE tenant_id = ? AND " + condition), arguments: arguments
        ).map(\.account)
        for index in accounts.indices {
            accounts[index].federatedIdentities = try identities(db, tenantID: accounts[index].tenantID, localID: accounts[index].localID)
        }
        return accounts
    }

    static func fetchOne(_ db: Database, _ condition: String, _ arguments: StatementArguments) throws -> Account? {
        guard
            var account = try AccountRow.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM accounts WHERE tenant_id = ? AND " + condition), arguments: arguments
            )?.account
        else { return nil }
        account.federatedIdentities = try identities(db, tenantID: account.tenantID, localID: account.localID)
        return account
    }

    static func identities(_ db: Database, tenantID: String, localID: String) throws -> [FederatedIdentity] {
        try Row.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM account_providers WHERE tenant_id = ? AND local_id = ? ORDER BY provider_id, raw_id"),
            arguments: [tenantID, localID]
        ).map {
            FederatedIdentity(
                providerID: $0["provider_id"], rawID: $0["raw_id"], email: $0["email"], displayName: $0["display_name"],
                photoURL: $0["photo_url"], screenName: $0["screen_name"])
        }
    }
}

/// An `accounts` row as a GRDB record: the one place that names the table's columns (the
/// federated identities live in `account_providers`, read and written beside it).
struct AccountRow: FetchableRecord, PersistableRecord {
    static let databaseTableName = "accounts"

    enum Columns: String, ColumnExpression, CaseIterable {
        case localID = "local_id", tenantID = "tenant_id", email, emailVerified = "email_verified", passwordHash = "password_hash"
        case passwordUpdatedAt = "password_updated_at", displayName = "display_name", photoURL = "photo_url"
        case phoneNumber = "phone_number", disabled, createdAt = "created_at", lastLoginAt = "last_login_at"
        case lastRefreshAt = "last_refresh_at", validSince = "valid_since", customAttributes = "custom_attributes"
        case initialEmail = "initial_email", emailLinkSignin = "email_link_signin", customAuth = "custom_auth"
        case screenName = "screen_name", mfa
    }

    var account: Account

    init(_ account: Account) { self.account = account }

    init(row: Row) throws {
        account = Account(
            localID: row[Columns.localID], tenantID: row[Columns.tenantID], email: row[Columns.email],
            emailVerified: row[Columns.emailVerified], passwordHash: row[Columns.passwordHash],
            passwordUpdatedAt: row[Columns.passwordUpdatedAt], displayName: row[Columns.displayName], photoURL: row[Columns.photoURL],
            phoneNumber: row[Columns.phoneNumber], disabled: row[Columns.disabled], createdAt: row[Columns.createdAt],
            lastLoginAt: row[Columns.lastLoginAt], lastRefreshAt: row[Columns.lastRefreshAt], validSince: row[Columns.validSince],
            customAttributes: row[Columns.customAttributes], initialEmail: row[Columns.initialEmail],
            emailLinkSignin: row[Columns.emailLinkSignin], customAuth: row[Columns.customAuth], screenName: row[Columns.screenName],
            secondFactors: try SecondFactor.stored(row[Columns.mfa]))
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.localID] = account.localID
        container[Columns.tenantID] = account.tenantID
        container[Columns.email] = account.email
        container[Columns.emailVerified] = account.emailVerified
        container[Columns.passwordHash] = account.passwordHash
        container[Columns.passwordUpdatedAt] = account.passwordUpdatedAt
        container[Columns.displayName] = account.displayName
        container[Columns.photoURL] = account.photoURL
        container[Columns.phoneNumber] = account.phoneNumber
        container[Columns.disabled] = account.disabled
        container[Columns.createdAt] = account.createdAt
        container[Columns.lastLoginAt] = account.lastLoginAt
        container[Columns.lastRefreshAt] = account.lastRefreshAt
        container[Columns.validSince] = account.validSince
        container[Columns.customAttributes] = account.customAttributes
        container[Columns.initialEmail] = account.initialEmail
        container[Columns.emailLinkSignin] = account.emailLinkSignin
        container[Columns.customAuth] = account.customAuth
        container[Columns.screenName] = account.screenName
        container[Columns.mfa] = SecondFactor.json(account.secondFactors)
    }
}

/// A unit of work inside one GRDB write transaction: reads and writes go straight to the database.
final class SQLiteAccountTransaction: AccountTransaction {
    let db: Database
    let tenantID: String
    let now: Timestamp

    init(db: Database, tenantID: String, now: Timestamp) {
        self.db = db
        self.tenantID = tenantID
        self.now = now
    }

    func prefetch(_ keys: [AccountKey]) throws {}

    func account(id localID: String) throws -> Account? {
        try SQLiteAccountStore.fetchOne(db, "local_id = ?", [tenantID, localID])
    }

    func account(email: String) throws -> Account? {
        try SQLiteAccountStore.fetchOne(db, "email = ?", [tenantID, email])
    }

    func account(phoneNumber: String) throws -> Account? {
        try SQLiteAccountStore.fetchOne(db, "phone_number = ?", [tenantID, phoneNumber])
    }

    func account(providerID: String, rawID: String) throws -> Account? {
        guard
            let localID = try String.fetchOne(
                db, sql: "SELECT local_id FROM account_providers WHERE tenant_id = ? AND provider_id = ? AND raw_id = ?",
                arguments: [tenantID, providerID, rawID])
        else { return nil }
        return try account(id: localID)
    }

    func accounts(providerEmail email: String) throws -> [Account] {
        try String.fetchAll(
            db, sql: "SELECT DISTINCT local_id FROM account_providers WHERE tenant_id = ? AND email = ? ORDER BY local_id",
            arguments: [tenantID, email]
        ).compactMap { try account(id: $0) }
    }

    func insert(_ account: Account) throws {
        guard account.tenantID == tenantID else { throw StoreInconsistency(description: "an account written in another tenant") }
        try AccountRow(account).insert(db)
        try writeIdentities(account)
    }

    func update(_ account: Account) throws {
        guard account.tenantID == tenantID else { throw StoreInconsistency(description: "an account written in another tenant") }
        do {
            try AccountRow(account).update(db)
        } catch RecordError.recordNotFound {
            throw AccountStoreError.accountNotFound
        }
        try db.execute(sql: "DELETE FROM account_providers WHERE tenant_id = ? AND local_id = ?", arguments: [tenantID, account.localID])
        try writeIdentities(account)
    }

    private func writeIdentities(_ account: Account) throws {
        for identity in account.federatedIdentities {
            try db.execute(
                sql: """
                    INSERT INTO account_providers (tenant_id, provider_id, raw_id, local_id, email, display_name, photo_url, screen_name)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    tenantID, identity.providerID, identity.rawID, account.localID, identity.email, identity.displayName, identity.photoURL,
                    identity.screenName,
                ])
        }
    }

    func delete(id localID: String) throws {
        try db.execute(
            sql: """
                INSERT OR IGNORE INTO deleted_sessions (hash, tenant_id, deleted_at)
                SELECT hash, tenant_id, ? FROM refresh_tokens WHERE tenant_id = ? AND account_id = ?
                UNION ALL SELECT hash, tenant_id, ? FROM revoked_sessions WHERE tenant_id = ? AND account_id = ?
                """, arguments: [now, tenantID, localID, now, tenantID, localID])
        let tables = [
            ("accounts", "local_id"), ("account_providers", "local_id"), ("refresh_tokens", "account_id"),
            ("revoked_sessions", "account_id"),
        ]
        for (table, column) in tables {
            try db.execute(sql: "DELETE FROM \(table) WHERE tenant_id = ? AND \(column) = ?", arguments: [tenantID, localID])
        }
    }

    func code(hashes: [Data]) throws -> CodeLookup {
        guard !hashes.isEmpty else { return .invalid }
        let placeholders = Array(repeating: "?", count: hashes.count).joined(separator: ", ")
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT * FROM codes WHERE hash IN (\(placeholders))", arguments: StatementArguments(hashes)),
            let record = SQLiteCodeStore.record(row)
        else { return .invalid }
        if record.consumedAt != nil || row["retired_at"] as Int64? != nil { return .invalid }
        return record.expiresAt > now ? .live(record) : .expired(record)
    }

    func consume(_ record: ActionCodeRecord, by consumer: String) throws {
        try db.execute(
            sql: "UPDATE codes SET consumed_at = ?, consumed_by = ? WHERE hash = ? AND consumed_at IS NULL AND retired_at IS NULL",
            arguments: [now, consumer, record.hash])
        // Read in this transaction, so nothing else can have consumed it since.
        guard db.changesCount == 1 else { throw StoreInconsistency(description: "a code read live in this transaction was not consumed") }
    }

    func issue(_ record: ActionCodeRecord) throws { try SQLiteCodeStore.issue(db, record) }

    func retireCodes(emails: [String]) throws { _ = try SQLiteCodeStore.retire(db, tenantID: tenantID, emails: emails, now: now) }

    func enqueue(_ mail: OutboxMail) throws { try SQLiteMailOutboxStore.enqueue(db, mail) }

    func addSession(_ session: Session) throws {
        try db.execute(
            sql: """
                INSERT INTO refresh_tokens (hash, tenant_id, account_id, created_at, sign_in_provider, auth_time, claims)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                session.hash, session.tenantID, session.accountID, session.createdAt, session.signInProvider, session.authTime,
                session.claims,
            ])
    }
}
