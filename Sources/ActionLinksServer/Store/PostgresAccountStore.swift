import ActionLinks
import Foundation
import NIOCore
import PostgresNIO

/// ``AccountStore`` on PostgreSQL, shared by every instance.
///
/// Each change is one transaction that first locks the account row (`SELECT … FOR UPDATE`), so two
/// instances changing one account at once apply one change after the other, never a mix. Codes
/// retired by a change are retired in the same transaction.
public struct PostgresAccountStore: AccountStore {
    let database: PostgresStore

    public func account(id localID: String, tenantID: String) async throws -> Account? {
        try await database.withConnection { connection in
            try await connection.execute(AccountByID(localID: localID, tenantID: tenantID), logger: database.logger).first { _ in true }
        }
    }

    public func account(email: String, tenantID: String) async throws -> Account? {
        try await database.withConnection { connection in
            try await connection.execute(AccountByEmail(email: email, tenantID: tenantID), logger: database.logger).first { _ in true }
        }
    }

    public func create(_ account: Account) async throws {
        do {
            try await database.withConnection { connection in
                try await Self.insert(connection, account, database: database)
            }
        } catch let error as PostgresStoreError where error.sqlState == "23505" && error.constraint == "accounts_email" {
            throw AccountStoreError.emailExists
        }
    }

    public func signInWithEmailLink(email: String, tenantID: String, newAccountID: String, createIfMissing: Bool, now: Timestamp)
        async throws -> EmailLinkSignIn?
    {
        // A unique violation means another instance created the account a moment ago: the
        // transaction runs again (``PostgresStore/transaction(retryOn:_:)``) and signs into that one.
        try await database.transaction { connection in
            try await Self.signIn(
                connection, email: email, tenantID: tenantID, newAccountID: newAccountID, createIfMissing: createIfMissing, now: now,
                database: database)
        }
    }

    public func resetPassword(accountID: String, tenantID: String, passwordHash: String, now: Timestamp) async throws -> Account {
        try await database.transaction { connection in
            try await Self.resetPassword(
                connection, accountID: accountID, tenantID: tenantID, passwordHash: passwordHash, now: now, database: database)
        }
    }

    public func verifyEmail(accountID: String, tenantID: String, email: String, now: Timestamp) async throws -> Account {
        try await database.transaction { connection in
            try await Self.verifyEmail(connection, accountID: accountID, tenantID: tenantID, email: email, database: database)
        }
    }

    public func changeEmail(accountID: String, tenantID: String, from oldEmail: String, to newEmail: String, now: Timestamp) async throws
        -> Account
    {
        try await Self.mappingEmailExists {
            try await database.transaction(retryOn: ["40001", "40P01"]) { connection in
                try await Self.changeEmail(
                    connection, accountID: accountID, tenantID: tenantID, from: oldEmail, to: newEmail, now: now, database: database)
            }
        }
    }

    public func complete(hashes: [Data], modes: Set<ActionCodeLink.Mode>, effect: CodeEffect, now: Timestamp, by consumer: String)
        async throws -> CodeCompletion
    {
        let database = database
        // One transaction: an error thrown by the effect rolls the consumption back with it, and a
        // retried transaction (a concurrent sign-up won the address) consumes again from scratch.
        return try await Self.mappingEmailExists {
            try await database.transaction { connection in
                let record: ActionCodeRecord
                switch try await PostgresCodeStore.consume(
                    connection, hashes: hashes, modes: modes, now: now, by: consumer, database: database)
                {
                case .consumed(let consumed): record = consumed
                case .expired: return .expired
                case .invalid: return .invalid
                }
                let tenantID = record.tenantID
                switch effect {
                case .signIn(let newAccountID, let createIfMissing, let refreshTokenHash):
                    guard
                        let signIn = try await Self.signIn(
                            connection, email: record.email, tenantID: tenantID, newAccountID: newAccountID,
                            createIfMissing: createIfMissing, now: now,
                            database: database)
                    else { throw AccountStoreError.signUpNotAllowed }
                    try await Self.addRefreshToken(
                        connection, hash: refreshTokenHash, accountID: signIn.account.localID, tenantID: tenantID, now: now,
                        database: database)
                    return .completed(
                        CompletedAction(
                            record: record, account: signIn.account, isNewUser: signIn.isNewUser,
                            removedUnverifiedPassword: signIn.removedUnverifiedPassword))
                case .setPassword(let hash):
                    guard let accountID = record.accountID else { throw AccountStoreError.accountNotFound }
                    let account = try await Self.resetPassword(
                        connection, accountID: accountID, tenantID: tenantID, passwordHash: hash, now: now, database: database)
                    return .completed(CompletedAction(record: record, account: account))
                case .verifyEmail:
                    guard let accountID = record.accountID else { throw AccountStoreError.accountNotFound }
                    let account = try await Self.verifyEmail(
                        connection, accountID: accountID, tenantID: tenantID, email: record.email, database: database)
                    return .completed(CompletedAction(record: record, account: account))
                case .changeEmail(let recoveryHash, let recoveryExpiresAt):
                    guard let accountID = record.accountID, let newEmail = record.newEmail else { throw AccountStoreError.emailChanged }
                    let account = try await Self.changeEmail(
                        connection, accountID: accountID, tenantID: tenantID, from: record.email, to: newEmail, now: now, database: database
                    )
                    try await PostgresCodeStore.issue(
                        connection, record.recovery(hash: recoveryHash, now: now, expiresAt: recoveryExpiresAt), database: database)
                    return .completed(CompletedAction(record: record, account: account))
                case .restoreEmail:
                    guard let accountID = record.accountID, let changedTo = record.newEmail else { throw AccountStoreError.emailChanged }
                    let account = try await Self.changeEmail(
                        connection, accountID: accountID, tenantID: tenantID, from: changedTo, to: record.email, now: now,
                        database: database)
                    return .completed(CompletedAction(record: record, account: account))
                }
            }
        }
    }

    /// Runs `body`, reporting a clash on the unique address index as ``AccountStoreError/emailExists``.
    static func mappingEmailExists<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PostgresStoreError where error.sqlState == "23505" && error.constraint == "accounts_email" {
            throw AccountStoreError.emailExists
        }
    }

    public func addRefreshToken(hash: Data, accountID: String, tenantID: String, now: Timestamp) async throws {
        try await database.withConnection { connection in
            try await Self.addRefreshToken(connection, hash: hash, accountID: accountID, tenantID: tenantID, now: now, database: database)
        }
    }

    public func accountForRefreshToken(hash: Data) async throws -> Account? {
        try await database.withConnection { connection in
            try await connection.query(
                """
                SELECT \(unescaped: accountColumns(prefix: "accounts.")) FROM refresh_tokens
                JOIN accounts ON accounts.tenant_id = refresh_tokens.tenant_id AND accounts.local_id = refresh_tokens.account_id
                WHERE refresh_tokens.hash = \(ByteBuffer(bytes: hash))
                """, logger: database.logger
            ).first { _ in true }.map(accountFromRow)
        }
    }

    // MARK: - Inside a transaction

    static func signIn(
        _ connection: PostgresConnection, email: String, tenantID: String, newAccountID: String, createIfMissing: Bool, now: Timestamp,
        database: PostgresStore
    ) async throws -> EmailLinkSignIn? {
        guard var account = try await Self.lockedAccount(connection, email: email, tenantID: tenantID, database: database) else {
            guard createIfMissing else { return nil }
            let account = Account(
                localID: newAccountID, tenantID: tenantID, email: email, emailVerified: true, createdAt: now, lastLoginAt: now)
            try await Self.insert(connection, account, database: database)
            return EmailLinkSignIn(account: account, isNewUser: true, removedUnverifiedPassword: false)
        }
        let removed = account.completeEmailLinkSignIn(now: now)
        if removed { try await Self.revokeSessions(connection, accountID: account.localID, tenantID: tenantID, database: database) }
        try await Self.update(connection, account, database: database)
        return EmailLinkSignIn(account: account, isNewUser: false, removedUnverifiedPassword: removed)
    }

    static func resetPassword(
        _ connection: PostgresConnection, accountID: String, tenantID: String, passwordHash: String, now: Timestamp, database: PostgresStore
    ) async throws -> Account {
        guard var account = try await Self.lockedAccount(connection, id: accountID, tenantID: tenantID, database: database) else {
            throw AccountStoreError.accountNotFound
        }
        account.passwordHash = passwordHash
        account.passwordUpdatedAt = now
        account.emailVerified = true
        account.validSince = now / 1000
        try await Self.update(connection, account, database: database)
        try await Self.revokeSessions(connection, accountID: accountID, tenantID: tenantID, database: database)
        if let email = account.email {
            _ = try await PostgresCodeStore.retire(connection, tenantID: tenantID, emails: [email], now: now, database: database)
        }
        return account
    }

    static func verifyEmail(_ connection: PostgresConnection, accountID: String, tenantID: String, email: String, database: PostgresStore)
        async throws -> Account
    {
        guard var account = try await Self.lockedAccount(connection, id: accountID, tenantID: tenantID, database: database) else {
            throw AccountStoreError.accountNotFound
        }
        guard account.email == email else { throw AccountStoreError.emailChanged }
        account.emailVerified = true
        try await Self.update(connection, account, database: database)
        return account
    }

    static func changeEmail(
        _ connection: PostgresConnection, accountID: String, tenantID: String, from oldEmail: String, to newEmail: String, now: Timestamp,
        database: PostgresStore
    ) async throws -> Account {
        guard var account = try await Self.lockedAccount(connection, id: accountID, tenantID: tenantID, database: database) else {
            throw AccountStoreError.accountNotFound
        }
        guard account.email == oldEmail else { throw AccountStoreError.emailChanged }
        account.email = newEmail
        account.emailVerified = true
        account.validSince = now / 1000
        // The unique index on (tenant, email) refuses the address if another account has it,
        // including one that took it a moment ago on another instance.
        try await Self.update(connection, account, database: database)
        try await Self.revokeSessions(connection, accountID: accountID, tenantID: tenantID, database: database)
        _ = try await PostgresCodeStore.retire(connection, tenantID: tenantID, emails: [oldEmail, newEmail], now: now, database: database)
        return account
    }

    static func addRefreshToken(
        _ connection: PostgresConnection, hash: Data, accountID: String, tenantID: String, now: Timestamp, database: PostgresStore
    ) async throws {
        try await connection.query(
            """
            INSERT INTO refresh_tokens (hash, tenant_id, account_id, created_at)
            VALUES (\(ByteBuffer(bytes: hash)), \(tenantID), \(accountID), \(now))
            """, logger: database.logger)
    }

    static func lockedAccount(_ connection: PostgresConnection, id: String, tenantID: String, database: PostgresStore) async throws
        -> Account?
    {
        try await connection.query(
            "SELECT \(unescaped: accountColumns()) FROM accounts WHERE tenant_id = \(tenantID) AND local_id = \(id) FOR UPDATE",
            logger: database.logger
        ).first { _ in true }.map(accountFromRow)
    }

    static func lockedAccount(_ connection: PostgresConnection, email: String, tenantID: String, database: PostgresStore) async throws
        -> Account?
    {
        try await connection.query(
            "SELECT \(unescaped: accountColumns()) FROM accounts WHERE tenant_id = \(tenantID) AND email = \(email) FOR UPDATE",
            logger: database.logger
        ).first { _ in true }.map(accountFromRow)
    }

    static func revokeSessions(_ connection: PostgresConnection, accountID: String, tenantID: String, database: PostgresStore) async throws
    {
        try await connection.query(
            "DELETE FROM refresh_tokens WHERE tenant_id = \(tenantID) AND account_id = \(accountID)", logger: database.logger)
    }

    static func insert(_ connection: PostgresConnection, _ account: Account, database: PostgresStore) async throws {
        try await connection.query(
            """
            INSERT INTO accounts (local_id, tenant_id, email, email_verified, password_hash, password_updated_at, display_name,
                                  disabled, created_at, last_login_at, valid_since)
            VALUES (\(account.localID), \(account.tenantID), \(account.email), \(account.emailVerified), \(account.passwordHash),
                    \(account.passwordUpdatedAt), \(account.displayName), \(account.disabled), \(account.createdAt), \(account.lastLoginAt),
                    \(account.validSince))
            """, logger: database.logger)
    }

    static func update(_ connection: PostgresConnection, _ account: Account, database: PostgresStore) async throws {
        try await connection.query(
            """
            UPDATE accounts SET email = \(account.email), email_verified = \(account.emailVerified), password_hash = \(account.passwordHash),
                                password_updated_at = \(account.passwordUpdatedAt), display_name = \(account.displayName),
                                disabled = \(account.disabled), last_login_at = \(account.lastLoginAt), valid_since = \(account.validSince)
            WHERE tenant_id = \(account.tenantID) AND local_id = \(account.localID)
            """, logger: database.logger)
    }
}

// MARK: - Rows and prepared statements

/// The columns of an account row, in the order ``accountFromRow(_:)`` reads them.
func accountColumns(prefix: String = "") -> String {
    [
        "local_id", "tenant_id", "email", "email_verified", "password_hash", "password_updated_at", "display_name", "disabled",
        "created_at",
        "last_login_at", "valid_since",
    ].map { prefix + $0 }.joined(separator: ", ")
}

func accountFromRow(_ row: PostgresRow) throws -> Account {
    let (
        localID, tenantID, email, emailVerified, passwordHash, passwordUpdatedAt, displayName, disabled, createdAt, lastLoginAt, validSince
    ) =
        try row.decode((String, String, String?, Bool, String?, Int64?, String?, Bool, Int64, Int64?, Int64).self)
    return Account(
        localID: localID, tenantID: tenantID, email: email, emailVerified: emailVerified, passwordHash: passwordHash,
        passwordUpdatedAt: passwordUpdatedAt, displayName: displayName, disabled: disabled, createdAt: createdAt, lastLoginAt: lastLoginAt,
        validSince: validSince)
}

struct AccountByEmail: PostgresPreparedStatement {
    static let name = "actionlinks_account_by_email_v1"
    static let sql = "SELECT \(accountColumns()) FROM accounts WHERE tenant_id = $1 AND email = $2"
    typealias Row = Account
    var email: String
    var tenantID: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(tenantID)
        bindings.append(email)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Account { try accountFromRow(row) }
}

struct AccountByID: PostgresPreparedStatement {
    static let name = "actionlinks_account_by_id_v1"
    static let sql = "SELECT \(accountColumns()) FROM accounts WHERE tenant_id = $1 AND local_id = $2"
    typealias Row = Account
    var localID: String
    var tenantID: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(tenantID)
        bindings.append(localID)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Account { try accountFromRow(row) }
}
