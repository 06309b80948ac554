import ActionLinks
import Foundation
import GRDB

/// ``AccountStore`` on the embedded SQLite database.
public struct SQLiteAccountStore: AccountStore {
    let pool: DatabasePool

    public func account(id localID: String, tenantID: String) async throws -> Account? {
        try await pool.read { db in try Self.fetch(db, id: localID, tenantID: tenantID) }
    }

    public func account(email: String, tenantID: String) async throws -> Account? {
        // On the writer's connection, outside any transaction: this lookup comes right before a code
        // is written (every sendOobCode), and a reader connection must throw its page cache away
        // whenever the writer has committed since its last read, which under a stream of issues is
        // every time. The writer's cache is always current, and the statement sees the latest commit
        // just as a reader would.
        try await pool.writeWithoutTransaction { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM accounts WHERE tenant_id = ? AND email = ?"), arguments: [tenantID, email]
            )
            .map(Self.account)
        }
    }

    public func create(_ account: Account) async throws {
        try await pool.write { db in
            if let email = account.email,
                try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM accounts WHERE tenant_id = ? AND email = ?", arguments: [account.tenantID, email]) == true
            {
                throw AccountStoreError.emailExists
            }
            try Self.insert(db, account)
        }
    }

    public func signInWithEmailLink(email: String, tenantID: String, newAccountID: String, createIfMissing: Bool, now: Timestamp)
        async throws -> EmailLinkSignIn?
    {
        try await pool.write { db in
            try Self.signIn(db, email: email, tenantID: tenantID, newAccountID: newAccountID, createIfMissing: createIfMissing, now: now)
        }
    }

    public func resetPassword(accountID: String, tenantID: String, passwordHash: String, now: Timestamp) async throws -> Account {
        try await pool.write { db in
            try Self.resetPassword(db, accountID: accountID, tenantID: tenantID, passwordHash: passwordHash, now: now)
        }
    }

    public func verifyEmail(accountID: String, tenantID: String, email: String, now: Timestamp) async throws -> Account {
        try await pool.write { db in try Self.verifyEmail(db, accountID: accountID, tenantID: tenantID, email: email) }
    }

    public func changeEmail(accountID: String, tenantID: String, from oldEmail: String, to newEmail: String, now: Timestamp) async throws
        -> Account
    {
        try await pool.write { db in
            try Self.changeEmail(db, accountID: accountID, tenantID: tenantID, from: oldEmail, to: newEmail, now: now)
        }
    }

    public func complete(hashes: [Data], modes: Set<ActionCodeLink.Mode>, effect: CodeEffect, now: Timestamp, by consumer: String)
        async throws -> CodeCompletion
    {
        // One write transaction: an error thrown by the effect rolls the consumption back with it.
        try await pool.write { db in
            let record: ActionCodeRecord
            switch try SQLiteCodeStore.consume(db, hashes: hashes, modes: modes, now: now, by: consumer) {
            case .consumed(let consumed): record = consumed
            case .expired: return .expired
            case .invalid: return .invalid
            }
            let tenantID = record.tenantID
            switch effect {
            case .signIn(let newAccountID, let createIfMissing, let refreshTokenHash):
                guard
                    let signIn = try Self.signIn(
                        db, email: record.email, tenantID: tenantID, newAccountID: newAccountID, createIfMissing: createIfMissing, now: now)
                else { throw AccountStoreError.signUpNotAllowed }
                try Self.addRefreshToken(db, hash: refreshTokenHash, accountID: signIn.account.localID, tenantID: tenantID, now: now)
                return .completed(
                    CompletedAction(
                        record: record, account: signIn.account, isNewUser: signIn.isNewUser,
                        removedUnverifiedPassword: signIn.removedUnverifiedPassword))
            case .setPassword(let hash):
                guard let accountID = record.accountID else { throw AccountStoreError.accountNotFound }
                let account = try Self.resetPassword(db, accountID: accountID, tenantID: tenantID, passwordHash: hash, now: now)
                return .completed(CompletedAction(record: record, account: account))
            case .verifyEmail:
                guard let accountID = record.accountID else { throw AccountStoreError.accountNotFound }
                let account = try Self.verifyEmail(db, accountID: accountID, tenantID: tenantID, email: record.email)
                return .completed(CompletedAction(record: record, account: account))
            case .changeEmail(let recoveryHash, let recoveryExpiresAt):
                guard let accountID = record.accountID, let newEmail = record.newEmail else { throw AccountStoreError.emailChanged }
                let account = try Self.changeEmail(db, accountID: accountID, tenantID: tenantID, from: record.email, to: newEmail, now: now)
                try SQLiteCodeStore.issue(db, record.recovery(hash: recoveryHash, now: now, expiresAt: recoveryExpiresAt))
                return .completed(CompletedAction(record: record, account: account))
            case .restoreEmail:
                guard let accountID = record.accountID, let changedTo = record.newEmail else { throw AccountStoreError.emailChanged }
                let account = try Self.changeEmail(
                    db, accountID: accountID, tenantID: tenantID, from: changedTo, to: record.email, now: now)
                return .completed(CompletedAction(record: record, account: account))
            }
        }
    }

    // MARK: - Inside a transaction

    static func signIn(_ db: Database, email: String, tenantID: String, newAccountID: String, createIfMissing: Bool, now: Timestamp) throws
        -> EmailLinkSignIn?
    {
        guard
            var account = try Row.fetchOne(
                db, sql: "SELECT * FROM accounts WHERE tenant_id = ? AND email = ?", arguments: [tenantID, email]
            ).map(Self.account)
        else {
            guard createIfMissing else { return nil }
            let account = Account(
                localID: newAccountID, tenantID: tenantID, email: email, emailVerified: true, createdAt: now, lastLoginAt: now)
            try Self.insert(db, account)
            return EmailLinkSignIn(account: account, isNewUser: true, removedUnverifiedPassword: false)
        }
        let removed = account.completeEmailLinkSignIn(now: now)
        if removed { try Self.revokeSessions(db, accountID: account.localID, tenantID: tenantID) }
        try Self.update(db, account)
        return EmailLinkSignIn(account: account, isNewUser: false, removedUnverifiedPassword: removed)
    }

    static func resetPassword(_ db: Database, accountID: String, tenantID: String, passwordHash: String, now: Timestamp) throws -> Account {
        guard var account = try Self.fetch(db, id: accountID, tenantID: tenantID) else { throw AccountStoreError.accountNotFound }
        account.passwordHash = passwordHash
        account.passwordUpdatedAt = now
        account.emailVerified = true
        account.validSince = now / 1000
        try Self.update(db, account)
        try Self.revokeSessions(db, accountID: accountID, tenantID: tenantID)
        if let email = account.email { _ = try SQLiteCodeStore.retire(db, tenantID: tenantID, emails: [email], now: now) }
        return account
    }

    static func verifyEmail(_ db: Database, accountID: String, tenantID: String, email: String) throws -> Account {
        guard var account = try Self.fetch(db, id: accountID, tenantID: tenantID) else { throw AccountStoreError.accountNotFound }
        guard account.email == email else { throw AccountStoreError.emailChanged }
        account.emailVerified = true
        try Self.update(db, account)
        return account
    }

    static func changeEmail(_ db: Database, accountID: String, tenantID: String, from oldEmail: String, to newEmail: String, now: Timestamp)
        throws
        -> Account
    {
        guard var account = try Self.fetch(db, id: accountID, tenantID: tenantID) else { throw AccountStoreError.accountNotFound }
        guard account.email == oldEmail else { throw AccountStoreError.emailChanged }
        if try Bool.fetchOne(
            db, sql: "SELECT 1 FROM accounts WHERE tenant_id = ? AND email = ? AND local_id <> ?",
            arguments: [tenantID, newEmail, accountID])
            == true
        {
            throw AccountStoreError.emailExists
        }
        account.email = newEmail
        account.emailVerified = true
        account.validSince = now / 1000
        try Self.update(db, account)
        try Self.revokeSessions(db, accountID: accountID, tenantID: tenantID)
        _ = try SQLiteCodeStore.retire(db, tenantID: tenantID, emails: [oldEmail, newEmail], now: now)
        return account
    }

    static func addRefreshToken(_ db: Database, hash: Data, accountID: String, tenantID: String, now: Timestamp) throws {
        try db.execute(
            sql: "INSERT INTO refresh_tokens (hash, tenant_id, account_id, created_at) VALUES (?, ?, ?, ?)",
            arguments: [hash, tenantID, accountID, now])
    }

    public func addRefreshToken(hash: Data, accountID: String, tenantID: String, now: Timestamp) async throws {
        try await pool.write { db in try Self.addRefreshToken(db, hash: hash, accountID: accountID, tenantID: tenantID, now: now) }
    }

    public func accountForRefreshToken(hash: Data) async throws -> Account? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT accounts.* FROM refresh_tokens
                    JOIN accounts ON accounts.tenant_id = refresh_tokens.tenant_id AND accounts.local_id = refresh_tokens.account_id
                    WHERE refresh_tokens.hash = ?
                    """,
                arguments: [hash]
            ).map(Self.account)
        }
    }

    static func revokeSessions(_ db: Database, accountID: String, tenantID: String) throws {
        try db.execute(sql: "DELETE FROM refresh_tokens WHERE tenant_id = ? AND account_id = ?", arguments: [tenantID, accountID])
    }

    static func fetch(_ db: Database, id: String, tenantID: String) throws -> Account? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM accounts WHERE tenant_id = ? AND local_id = ?"), arguments: [tenantID, id])
            .map(account)
    }

    static func insert(_ db: Database, _ account: Account) throws {
        try db.execute(
            sql: """
                INSERT INTO accounts (local_id, tenant_id, email, email_verified, password_hash, password_updated_at, display_name,
                                      disabled, created_at, last_login_at, valid_since)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                account.localID, account.tenantID, account.email, account.emailVerified, account.passwordHash, account.passwordUpdatedAt,
                account.displayName, account.disabled, account.createdAt, account.lastLoginAt, account.validSince,
            ])
    }

    static func update(_ db: Database, _ account: Account) throws {
        try db.execute(
            sql: """
                UPDATE accounts SET email = ?, email_verified = ?, password_hash = ?, password_updated_at = ?, display_name = ?,
                                    disabled = ?, last_login_at = ?, valid_since = ?
                WHERE tenant_id = ? AND local_id = ?
                """,
            arguments: [
                account.email, account.emailVerified, account.passwordHash, account.passwordUpdatedAt, account.displayName,
                account.disabled, account.lastLoginAt, account.validSince, account.tenantID, account.localID,
            ])
    }

    static func account(_ row: Row) -> Account {
        Account(
            localID: row["local_id"], tenantID: row["tenant_id"], email: row["email"], emailVerified: row["email_verified"],
            passwordHash: row["password_hash"], passwordUpdatedAt: row["password_updated_at"], displayName: row["display_name"],
            disabled: row["disabled"], createdAt: row["created_at"], lastLoginAt: row["last_login_at"], validSince: row["valid_since"])
    }
}
