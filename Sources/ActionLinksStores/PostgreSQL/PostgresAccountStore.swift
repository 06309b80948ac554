import ActionLinks
import ActionLinksDomain
import Foundation
import NIOCore
import PostgresNIO

/// ``AccountStore`` on PostgreSQL, shared by every instance.
///
/// A transaction locks every account row a unit of work reads (`SELECT … FOR UPDATE`), so two
/// instances changing one account apply one change after the other. The unit of work runs against
/// rows loaded into memory (``PostgresAccountTransaction``): when it asks for one that is not
/// loaded, the rows are loaded in the same database transaction and it runs again; its changes are
/// written when it returns. A clash on a unique index (an address another instance took a moment
/// ago) runs the whole transaction again, and the unit of work then sees the other account.
public struct PostgresAccountStore: AccountStore {
    let database: PostgresStore

    public func account(id localID: String, tenantID: String) async throws -> Account? {
        try await database.withConnection { connection in
            try await Self.accounts(
                connection, "tenant_id = \(tenantID) AND local_id = \(localID)", tenantID: tenantID, lock: false, database: database
            ).first
        }
    }

    public func account(email: String, tenantID: String) async throws -> Account? {
        try await database.withConnection { connection in
            guard
                var account = try await connection.execute(AccountByEmail(email: email, tenantID: tenantID), logger: database.logger)
                    .first(where: { _ in true })
            else { return nil }
            account.federatedIdentities =
                try await Self.identities(connection, tenantID: tenantID, localIDs: [account.localID], database: database)[
                    account.localID] ?? []
            return account
        }
    }

    public func transaction<T: Sendable>(
        tenantID: String, now: Timestamp, _ work: @escaping @Sendable (any AccountTransaction) throws -> T
    ) async throws -> T {
        let database = database
        do {
            return try await database.transaction { connection in
                let unit = PostgresAccountTransaction(tenantID: tenantID, now: now)
                // Each run either finishes or names rows it lacks; a unit of work reads a handful of
                // keys, so this bound is only a guard against one that never settles.
                for _ in 0..<16 {
                    unit.restart()
                    let outcome = Result { try work(unit) }
                    if !unit.missing.isEmpty || !unit.missingCodes.isEmpty {
                        try await unit.load(connection, database: database)
                        continue
                    }
                    let result = try outcome.get()
                    try await unit.apply(connection, database: database)
                    return result
                }
                throw StoreInconsistency(description: "a unit of work kept asking for rows it had not read")
            }
        } catch let error as PostgresStoreError where error.sqlState == "23505" {
            throw Self.clash(error.constraint) ?? error
        }
    }

    /// The store error a unique index's name stands for.
    static func clash(_ constraint: String?) -> AccountStoreError? {
        switch constraint {
        case "accounts_email": .emailExists
        case "accounts_phone": .phoneNumberExists
        case "accounts_pkey": .localIDExists
        case "account_providers_pkey": .federatedIdentityExists
        default: nil
        }
    }

    public func session(hash: Data) async throws -> (session: Session, account: Account)? {
        // One prepared statement, one round trip: every token refresh reads this.
        try await database.withConnection { connection in
            var found: (session: Session, account: Account)?
            for try await row in try await connection.execute(SessionWithAccount(hash: hash), logger: database.logger) {
                if found == nil { found = (row.session, row.account) }
                if let identity = row.identity { found?.account.federatedIdentities.append(identity) }
            }
            return found
        }
    }

    public func endedSession(hash: Data) async throws -> EndedSession? {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT tenant_id, account_id FROM revoked_sessions WHERE hash = \(ByteBuffer(bytes: hash))
                UNION ALL SELECT tenant_id, NULL FROM deleted_sessions WHERE hash = \(ByteBuffer(bytes: hash))
                """, logger: database.logger)
            for try await (tenantID, accountID) in rows.decode((String, String?).self) {
                return accountID.map { .revoked(tenantID: tenantID, accountID: $0) } ?? .ofDeletedAccount
            }
            return nil
        }
    }

    /// The purge of ``purgeEndedSessions(before:)``, each through its time's index (v15).
    static func purgeStatements(before cutoff: Timestamp) -> [PostgresQuery] {
        [
            "DELETE FROM revoked_sessions WHERE revoked_at < \(cutoff) RETURNING 1",
            "DELETE FROM deleted_sessions WHERE deleted_at < \(cutoff) RETURNING 1",
        ]
    }

    public func purgeEndedSessions(before cutoff: Timestamp) async throws -> Int {
        try await database.withConnection { connection in
            var removed = 0
            for statement in Self.purgeStatements(before: cutoff) {
                removed += try await connection.query(statement, logger: database.logger).collect().count
            }
            return removed
        }
    }

    public func recordRefresh(accountID: String, tenantID: String, at time: Timestamp) async throws {
        try await database.withConnection { connection in
            try await connection.query(
                "UPDATE accounts SET last_refresh_at = \(time) WHERE tenant_id = \(tenantID) AND local_id = \(accountID)",
                logger: database.logger)
        }
    }

    public func accounts(tenantID: String, after localID: String?, limit: Int) async throws -> [Account] {
        try await database.withConnection { connection in
            try await Self.accounts(
                connection, "tenant_id = \(tenantID) AND local_id > \(localID ?? "") ORDER BY local_id LIMIT \(Int64(limit))",
                tenantID: tenantID, lock: false,
                database: database)
        }
    }

    public func accounts(tenantID: String, descending: Bool, offset: Int, limit: Int) async throws -> [Account] {
        try await database.withConnection { connection in
            try await Self.accounts(
                connection,
                """
                tenant_id = \(tenantID) ORDER BY local_id \(unescaped: descending ? "DESC" : "ASC") \
                LIMIT \(Int64(max(limit, 0))) OFFSET \(Int64(max(offset, 0)))
                """,
                tenantID: tenantID, lock: false, database: database)
        }
    }

    public func countAccounts(tenantID: String) async throws -> Int {
        try await database.withConnection { connection in
            // count(*) over the tenant's range of the primary key (an index-only scan), not a kept
            // count as SQLite has (v11 there): a count row is one every sign-up's transaction
            // holds until it commits, and the batched email-link sign-ins (256 to a transaction,
            // 4 at once) then waited on each other's, and deadlocked: confirm fell from about 5,000
            // to 42 a second in scripts/bench.sh, even spread over 16 shards.
            let rows = try await connection.query("SELECT count(*) FROM accounts WHERE tenant_id = \(tenantID)", logger: database.logger)
            for try await count in rows.decode(Int64.self) { return Int(count) }
            return 0
        }
    }

    public func deleteAllAccounts(tenantID: String) async throws {
        try await database.transaction { connection in
            try await connection.query("DELETE FROM accounts WHERE tenant_id = \(tenantID)", logger: database.logger)
            try await connection.query("DELETE FROM account_providers WHERE tenant_id = \(tenantID)", logger: database.logger)
            try await connection.query("DELETE FROM refresh_tokens WHERE tenant_id = \(tenantID)", logger: database.logger)
            try await connection.query("DELETE FROM revoked_sessions WHERE tenant_id = \(tenantID)", logger: database.logger)
            try await connection.query("DELETE FROM deleted_sessions WHERE tenant_id = \(tenantID)", logger: database.logger)
        }
    }

    // MARK: - Rows

    /// The tenant's accounts matching `condition` (the SQL after `WHERE`, which names the tenant),
    /// with their federated identities; locked for the transaction when `lock`.
    static func accounts(
        _ connection: PostgresConnection, _ condition: PostgresQuery, tenantID: String, lock: Bool, database: PostgresStore
    ) async throws -> [Account] {
        let query = PostgresQuery(
            unsafeSQL: "SELECT \(PostgresColumns.select(PostgresColumns.accounts)) FROM accounts WHERE " + condition.sql
                + (lock ? " FOR UPDATE" : ""),
            binds: condition.binds)
        var accounts: [Account] = []
        for try await row in try await connection.query(query, logger: database.logger) {
            accounts.append(try Account(PostgresNamedRow(row)))
        }
        let identities = try await Self.identities(connection, tenantID: tenantID, localIDs: accounts.map(\.localID), database: database)
        for index in accounts.indices { accounts[index].federatedIdentities = identities[accounts[index].localID] ?? [] }
        return accounts
    }

    /// The federated identities of these accounts, by account.
    static func identities(_ connection: PostgresConnection, tenantID: String, localIDs: [String], database: PostgresStore) async throws
        -> [String: [FederatedIdentity]]
    {
        guard !localIDs.isEmpty else { return [:] }
        var identities: [String: [FederatedIdentity]] = [:]
        let rows = try await connection.query(
            """
            SELECT local_id, \(unescaped: PostgresColumns.select(PostgresColumns.accountProviders)) FROM account_providers
            WHERE tenant_id = \(tenantID) AND local_id = ANY(\(localIDs)) ORDER BY provider_id, raw_id
            """, logger: database.logger)
        for try await row in rows {
            let named = PostgresNamedRow(row)
            guard let identity = try FederatedIdentity(named) else { continue }
            identities[try named("local_id", as: String.self), default: []].append(identity)
        }
        return identities
    }
}

/// A unit of work over rows loaded into memory (see ``PostgresAccountStore``): reads come from what
/// was loaded, a read of anything else records the key and fails the run, and writes are recorded
/// and applied in order once a run finishes.
final class PostgresAccountTransaction: AccountTransaction {
    let tenantID: String
    let now: Timestamp

    /// The rows as the database has them (locked), by account ID.
    private var loaded: [String: Account] = [:]
    /// The keys whose every matching row is in `loaded`.
    private var known: Set<AccountKey> = []
    /// The code rows loaded, by hash (`nil`: no such code).
    private var loadedCodes: [Data: CodeRow?] = [:]

    /// The accounts as this run sees them: `loaded` with the run's own writes.
    private var accounts: [String: Account] = [:]
    private var consumed: Set<Data> = []
    private(set) var missing: Set<AccountKey> = []
    private(set) var missingCodes: Set<Data> = []

    enum Change {
        case insert(Account)
        case update(Account)
        case delete(String)
        case consume(Data, String)
        case issue(ActionCodeRecord)
        case retire([String])
        case session(Session)
        case enqueue(OutboxMail)
    }
    private var changes: [Change] = []

    /// A run asked for rows that are not loaded.
    struct NeedsRows: Error {}

    init(tenantID: String, now: Timestamp) {
        self.tenantID = tenantID
        self.now = now
    }

    /// Starts a run from the rows as loaded.
    func restart() {
        accounts = loaded
        consumed = []
        changes = []
        missing = []
        missingCodes = []
    }

    private func require(_ key: AccountKey) throws {
        guard known.contains(key) else {
            missing.insert(key)
            throw NeedsRows()
        }
    }

    func prefetch(_ keys: [AccountKey]) throws {
        let unknown = keys.filter { !known.contains($0) }
        guard unknown.isEmpty else {
            missing.formUnion(unknown)
            throw NeedsRows()
        }
    }

    func account(id localID: String) throws -> Account? {
        try require(.id(localID))
        return accounts[localID]
    }

    func account(email: String) throws -> Account? {
        try require(.email(email))
        return accounts.values.first { $0.email == email }
    }

    func account(phoneNumber: String) throws -> Account? {
        try require(.phoneNumber(phoneNumber))
        return accounts.values.first { $0.phoneNumber == phoneNumber }
    }

    func account(providerID: String, rawID: String) throws -> Account? {
        try require(.federated(providerID: providerID, rawID: rawID))
        return accounts.values.first { $0.federatedIdentities.contains { $0.providerID == providerID && $0.rawID == rawID } }
    }

    func accounts(providerEmail email: String) throws -> [Account] {
        try require(.providerEmail(email))
        return accounts.values.filter { $0.federatedIdentities.contains { $0.email == email } }.sorted { $0.localID < $1.localID }
    }

    func insert(_ account: Account) throws {
        guard account.tenantID == tenantID else { throw StoreInconsistency(description: "an account written in another tenant") }
        // A new ID is known to be free only if it was looked up; an unknown one is checked by the
        // primary key when the change is applied.
        if known.contains(.id(account.localID)), accounts[account.localID] != nil { throw AccountStoreError.localIDExists }
        accounts[account.localID] = account
        changes.append(.insert(account))
    }

    func update(_ account: Account) throws {
        guard account.tenantID == tenantID else { throw StoreInconsistency(description: "an account written in another tenant") }
        try require(.id(account.localID))
        guard accounts[account.localID] != nil else { throw AccountStoreError.accountNotFound }
        accounts[account.localID] = account
        changes.append(.update(account))
    }

    func delete(id localID: String) throws {
        accounts[localID] = nil
        changes.append(.delete(localID))
    }

    func code(hashes: [Data]) throws -> CodeLookup {
        guard !hashes.isEmpty else { return .invalid }
        let unknown = hashes.filter { loadedCodes[$0] == nil }
        guard unknown.isEmpty else {
            missingCodes.formUnion(unknown)
            throw NeedsRows()
        }
        guard let row = hashes.lazy.compactMap({ self.loadedCodes[$0] ?? nil }).first, let record = row.record else { return .invalid }
        if record.consumedAt != nil || row.retiredAt != nil || consumed.contains(record.hash) { return .invalid }
        return record.expiresAt > now ? .live(record) : .expired(record)
    }

    func consume(_ record: ActionCodeRecord, by consumer: String) throws {
        consumed.insert(record.hash)
        changes.append(.consume(record.hash, consumer))
    }

    func issue(_ record: ActionCodeRecord) throws { changes.append(.issue(record)) }

    func retireCodes(emails: [String]) throws { changes.append(.retire(emails)) }

    func addSession(_ session: Session) throws { changes.append(.session(session)) }

    func enqueue(_ mail: OutboxMail) throws { changes.append(.enqueue(mail)) }

    // MARK: Loading and writing

    /// Loads (and locks) the rows the last run asked for.
    func load(_ connection: PostgresConnection, database: PostgresStore) async throws {
        var ids: Set<String> = []
        for key in missing {
            let condition: PostgresQuery
            switch key {
            case .id(let localID): condition = "tenant_id = \(tenantID) AND local_id = \(localID)"
            case .email(let email): condition = "tenant_id = \(tenantID) AND email = \(email)"
            case .phoneNumber(let phone): condition = "tenant_id = \(tenantID) AND phone_number = \(phone)"
            case .federated(let providerID, let rawID):
                condition = """
                    tenant_id = \(tenantID) AND local_id IN (SELECT local_id FROM account_providers
                        WHERE tenant_id = \(tenantID) AND provider_id = \(providerID) AND raw_id = \(rawID))
                    """
            case .providerEmail(let email):
                condition = """
                    tenant_id = \(tenantID) AND local_id IN (SELECT local_id FROM account_providers
                        WHERE tenant_id = \(tenantID) AND email = \(email))
                    """
            }
            for account in try await PostgresAccountStore.accounts(
                connection, condition, tenantID: tenantID, lock: true, database: database)
            {
                loaded[account.localID] = account
                ids.insert(account.localID)
            }
            known.insert(key)
        }
        for id in ids { known.insert(.id(id)) }
        if !missingCodes.isEmpty {
            let hashes = Array(missingCodes)
            for hash in hashes { loadedCodes[hash] = .some(nil) }
            let rows = try await connection.query(
                "SELECT \(unescaped: PostgresColumns.select(PostgresColumns.codes)) FROM codes WHERE hash = ANY(\(hashes.map(PostgresCodeStore.buffer))) FOR UPDATE",
                logger: database.logger)
            for try await row in rows {
                let code = try CodeRow(row)
                if let hash = code.record?.hash { loadedCodes[hash] = code }
            }
        }
    }

    /// Writes the last run's changes, in order.
    func apply(_ connection: PostgresConnection, database: PostgresStore) async throws {
        let logger = database.logger
        for change in changes {
            switch change {
            case .insert(let account):
                try await connection.query(
                    """
                    INSERT INTO accounts (\(unescaped: PostgresColumns.accounts.joined(separator: ", ")))
                    VALUES (\(account.localID), \(account.tenantID), \(account.email), \(account.emailVerified), \(account.passwordHash),
                            \(account.passwordUpdatedAt), \(account.displayName), \(account.photoURL), \(account.phoneNumber),
                            \(account.disabled), \(account.createdAt), \(account.lastLoginAt), \(account.lastRefreshAt), \(account.validSince),
                            \(account.customAttributes), \(account.initialEmail), \(account.emailLinkSignin), \(account.customAuth),
                            \(account.screenName), \(SecondFactor.json(account.secondFactors)))
                    """, logger: logger)
                try await writeIdentities(account, connection, logger: logger)
            case .update(let account):
                try await connection.query(
                    """
                    UPDATE accounts SET email = \(account.email), email_verified = \(account.emailVerified),
                        password_hash = \(account.passwordHash), password_updated_at = \(account.passwordUpdatedAt),
                        display_name = \(account.displayName), photo_url = \(account.photoURL), phone_number = \(account.phoneNumber),
                        disabled = \(account.disabled), created_at = \(account.createdAt), last_login_at = \(account.lastLoginAt),
                        last_refresh_at = \(account.lastRefreshAt), valid_since = \(account.validSince),
                        custom_attributes = \(account.customAttributes), initial_email = \(account.initialEmail),
                        email_link_signin = \(account.emailLinkSignin), custom_auth = \(account.customAuth),
                        screen_name = \(account.screenName), mfa = \(SecondFactor.json(account.secondFactors))
                    WHERE tenant_id = \(tenantID) AND local_id = \(account.localID)
                    """, logger: logger)
                try await connection.query(
                    "DELETE FROM account_providers WHERE tenant_id = \(tenantID) AND local_id = \(account.localID)", logger: logger)
                try await writeIdentities(account, connection, logger: logger)
            case .delete(let localID):
                try await connection.query("DELETE FROM accounts WHERE tenant_id = \(tenantID) AND local_id = \(localID)", logger: logger)
                try await connection.query(
                    "DELETE FROM account_providers WHERE tenant_id = \(tenantID) AND local_id = \(localID)", logger: logger)
                try await connection.query(
                    """
                    WITH live AS (DELETE FROM refresh_tokens WHERE tenant_id = \(tenantID) AND account_id = \(localID) RETURNING hash),
                    revoked AS (DELETE FROM revoked_sessions WHERE tenant_id = \(tenantID) AND account_id = \(localID) RETURNING hash)
                    INSERT INTO deleted_sessions (hash, tenant_id, deleted_at)
                    SELECT hash, \(tenantID), \(now) FROM (SELECT hash FROM live UNION ALL SELECT hash FROM revoked) AS gone
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
            case .consume(let hash, let consumer):
                let updated = try await connection.query(
                    """
                    UPDATE codes SET consumed_at = \(now), consumed_by = \(consumer)
                    WHERE hash = \(ByteBuffer(bytes: hash)) AND coalesce(consumed_at, retired_at) IS NULL RETURNING 1
                    """, logger: logger
                ).collect().count
                // "Neither consumed nor retired" as `coalesce`, as in ``ConsumeCode``: spelt as the
                // partial index `codes_one_live`'s predicate, it let the planner, on statistics older
                // than a burst of issues, walk that whole index instead of the primary key (23 ms and
                // 32k buffers per confirm at 60k codes; the PostgreSQL confirm bench at 150/s).
                // The row was read and locked in this transaction, so nothing else can have consumed it.
                guard updated == 1 else {
                    throw StoreInconsistency(description: "a code read live in this transaction was not consumed")
                }
            case .issue(let record):
                try await PostgresCodeStore.issue(connection, record, database: database)
            case .retire(let emails):
                _ = try await PostgresCodeStore.retire(connection, tenantID: tenantID, emails: emails, now: now, database: database)
            case .session(let session):
                try await connection.query(
                    """
                    INSERT INTO refresh_tokens (hash, tenant_id, account_id, created_at, sign_in_provider, auth_time, claims)
                    VALUES (\(ByteBuffer(bytes: session.hash)), \(session.tenantID), \(session.accountID), \(session.createdAt),
                            \(session.signInProvider), \(session.authTime), \(session.claims))
                    """, logger: logger)
            case .enqueue(let mail):
                try await PostgresMailOutboxStore.enqueue(connection, mail, database: database)
            }
        }
    }

    private func writeIdentities(_ account: Account, _ connection: PostgresConnection, logger: Logger) async throws {
        for identity in account.federatedIdentities {
            try await connection.query(
                """
                INSERT INTO account_providers (tenant_id, provider_id, raw_id, local_id, email, display_name, photo_url, screen_name)
                VALUES (\(tenantID), \(identity.providerID), \(identity.rawID), \(account.localID), \(identity.email),
                        \(identity.displayName), \(identity.photoURL), \(identity.screenName))
                """, logger: logger)
        }
    }
}

// MARK: - Rows and prepared statements

/// A session with its account and the account's federated identities (one row per identity, or
/// one row without), for a token refresh: the account's columns by their names, the session's
/// with `session_`, the identity's with `provider_`.
struct SessionWithAccount: PostgresPreparedStatement {
    static let name = "actionlinks_session_with_account_v1"
    static let sql = """
        SELECT \(PostgresColumns.select(PostgresColumns.accounts, from: "a.")),
               \(PostgresColumns.select(PostgresColumns.refreshTokens, from: "r.", as: "session_")),
               \(PostgresColumns.select(PostgresColumns.accountProviders, from: "p.", as: "provider_"))
        FROM refresh_tokens r
        JOIN accounts a ON a.tenant_id = r.tenant_id AND a.local_id = r.account_id
        LEFT JOIN account_providers p ON p.tenant_id = a.tenant_id AND p.local_id = a.local_id
        WHERE r.hash = $1
        ORDER BY p.provider_id, p.raw_id
        """

    struct Row {
        var session: Session
        var account: Account
        var identity: FederatedIdentity?
    }

    var hash: Data

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(ByteBuffer(bytes: hash))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let named = PostgresNamedRow(row)
        let account = try Account(named)
        let session = try Session(named.prefixed("session_"), hash: hash, tenantID: account.tenantID, accountID: account.localID)
        return Row(session: session, account: account, identity: try FederatedIdentity(named.prefixed("provider_")))
    }
}

struct AccountByEmail: PostgresPreparedStatement {
    static let name = "actionlinks_account_by_email_v2"
    static let sql = "SELECT \(PostgresColumns.select(PostgresColumns.accounts)) FROM accounts WHERE tenant_id = $1 AND email = $2"
    typealias Row = Account
    var email: String
    var tenantID: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(tenantID)
        bindings.append(email)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Account { try Account(PostgresNamedRow(row)) }
}
