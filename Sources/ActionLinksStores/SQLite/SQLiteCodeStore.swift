import ActionLinks
import ActionLinksDomain
import Foundation
import GRDB

/// ``CodeStore`` on the embedded SQLite database.
public struct SQLiteCodeStore: CodeStore, ImmediateCodeLookup, LinkIssuingInOneWrite {
    let pool: DatabasePool
    /// Where issues and send counts go: the ones of concurrent requests commit together.
    let batches: SQLiteBatchedWrites
    /// Where ``lookupNow(hashes:now:)`` reads.
    let readers: SQLiteCodeReaders

    public func issue(_ record: ActionCodeRecord) async throws {
        try await batches.write { db in try Self.issue(db, record) }
    }

    /// ``LinkIssuingInOneWrite/issueLink(_:completion:)``: one job of the next batched write.
    package func issueLink(
        _ write: LinkIssueWrite, completion: @escaping @Sendable (Result<LinkIssueWrite.Outcome, any Error>) -> Void
    ) {
        batches.write({ db in try Self.issueLink(db, write) }, completion: completion)
    }

    /// A link's writes (inside a caller's transaction): what each stage counts stays counted
    /// whatever comes after it, as separate calls would leave it.
    static func issueLink(_ db: Database, _ write: LinkIssueWrite) throws -> LinkIssueWrite.Outcome {
        for (index, stage) in write.stages.enumerated() {
            let counts = try countEvents(db, keys: stage.limits.map(\.key), windowStart: stage.windowStart)
            if zip(counts, stage.limits).contains(where: { $0 > $1.maximum }) { return .overLimit(stage: index) }
        }
        var record = write.record
        if write.looksUpAccount {
            record.accountID = try String.fetchOne(
                db.cachedStatement(sql: "SELECT local_id FROM accounts WHERE tenant_id = ? AND email = ?"),
                arguments: [record.tenantID, record.email])
        }
        switch write.decide(record.accountID) {
        case .failure(let refusal):
            return .refused(refusal)
        case .success(let deliver):
            try issue(db, record)
            if let signInCode = write.signInCode { try SQLiteSignInCodeStore.issue(db, signInCode) }
            // Only a link that goes out has its mail: with enumeration protection, an address
            // without an account has its code stored as any other, and gets no mail.
            if deliver, let mail = write.mail { try SQLiteMailOutboxStore.enqueue(db, mail) }
            return .stored(deliver: deliver)
        }
    }

    /// Retires the live code of the record's tenant, address and mode and stores the record (inside a
    /// caller's transaction).
    static func issue(_ db: Database, _ record: ActionCodeRecord) throws {
        // Cached statements: these run on every request, so they are prepared once per connection.
        try db.cachedStatement(
            sql: """
                UPDATE codes SET retired_at = ?
                WHERE tenant_id = ? AND email = ? AND mode = ? AND consumed_at IS NULL AND retired_at IS NULL
                """
        ).execute(arguments: [record.createdAt, record.tenantID, record.email, record.mode.rawValue])
        try db.cachedStatement(
            sql: """
                INSERT INTO codes (hash, mode, tenant_id, account_id, email, new_email, continue_url, language_code,
                                   app_settings, created_at, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(
            arguments: [
                record.hash, record.mode.rawValue, record.tenantID, record.accountID, record.email, record.newEmail,
                record.continueURL, record.languageCode, record.appSettings, record.createdAt, record.expiresAt,
            ])
    }

    public func lookup(hashes: [Data], now: Timestamp) async throws -> CodeLookup {
        guard !hashes.isEmpty else { return .invalid }
        return try await pool.read { db in try Self.lookup(db, hashes: hashes, now: now) }
    }

    /// ``lookup(hashes:now:)`` on the caller's thread: one step of a statement prepared once on a
    /// connection of ``SQLiteCodeReaders``, a read of a WAL database that never waits for a writer
    /// (the landing page's fast path runs it on the event loop).
    package func lookupNow(hashes: [Data], now: Timestamp) throws -> CodeLookup {
        try readers.lookup(hashes: hashes, now: now)
    }

    static func lookup(_ db: Database, hashes: [Data], now: Timestamp) throws -> CodeLookup {
        let placeholders = Array(repeating: "?", count: hashes.count).joined(separator: ", ")
        // The columns by position (every landing page reads one row: names cost a search each).
        let statement = try db.cachedStatement(
            sql: """
                SELECT hash, mode, tenant_id, account_id, email, new_email, continue_url, language_code, app_settings,
                       created_at, expires_at, consumed_at, consumed_by, retired_at
                FROM codes WHERE hash IN (\(placeholders))
                """)
        guard let row = try Row.fetchOne(statement, arguments: StatementArguments(hashes)),
            let mode = ActionCodeLink.Mode(rawValue: row[1])
        else { return .invalid }
        let record = ActionCodeRecord(
            hash: row[0], mode: mode, tenantID: row[2], accountID: row[3], email: row[4], newEmail: row[5], continueURL: row[6],
            languageCode: row[7], appSettings: row[8], createdAt: row[9], expiresAt: row[10], consumedAt: row[11], consumedBy: row[12])
        if record.consumedAt != nil || row[13] as Int64? != nil { return .invalid }
        return record.expiresAt > now ? .live(record) : .expired(record)
    }

    public func consume(hashes: [Data], modes: Set<ActionCodeLink.Mode>, now: Timestamp, by consumer: String) async throws
        -> CodeConsumption
    {
        guard !hashes.isEmpty, !modes.isEmpty else { return .invalid }
        return try await pool.write { db in try Self.consume(db, hashes: hashes, modes: modes, now: now, by: consumer) }
    }

    /// Consumes a live code (inside a caller's transaction).
    static func consume(_ db: Database, hashes: [Data], modes: Set<ActionCodeLink.Mode>, now: Timestamp, by consumer: String) throws
        -> CodeConsumption
    {
        guard !hashes.isEmpty, !modes.isEmpty else { return .invalid }
        let hashList = Array(repeating: "?", count: hashes.count).joined(separator: ", ")
        let modeList = Array(repeating: "?", count: modes.count).joined(separator: ", ")
        var arguments: StatementArguments = [now, consumer]
        arguments += StatementArguments(hashes)
        arguments += [now]
        arguments += StatementArguments(modes.map(\.rawValue))
        // One statement decides: two concurrent consumers can never both see the row unconsumed.
        if let row = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    UPDATE codes SET consumed_at = ?, consumed_by = ?
                    WHERE hash IN (\(hashList)) AND consumed_at IS NULL AND retired_at IS NULL AND expires_at > ?
                      AND mode IN (\(modeList))
                    RETURNING *
                    """),
            arguments: arguments), let record = Self.record(row)
        {
            return .consumed(record)
        }
        let expired = try Bool.fetchOne(
            db,
            sql: """
                SELECT 1 FROM codes WHERE hash IN (\(hashList)) AND consumed_at IS NULL AND retired_at IS NULL
                  AND expires_at <= ? AND mode IN (\(modeList))
                """,
            arguments: StatementArguments(hashes) + [now] + StatementArguments(modes.map(\.rawValue)))
        return expired == true ? .expired : .invalid
    }

    @discardableResult
    public func retireCodes(tenantID: String, email: String, now: Timestamp) async throws -> Int {
        try await pool.write { db in try Self.retire(db, tenantID: tenantID, emails: [email], now: now) }
    }

    public func countEvents(keys: [String], windowStart: Timestamp) async throws -> [Int] {
        try await batches.write { db in try Self.countEvents(db, keys: keys, windowStart: windowStart) }
    }

    /// Counts one more event under each key and returns the counts (inside a caller's transaction).
    static func countEvents(_ db: Database, keys: [String], windowStart: Timestamp) throws -> [Int] {
        try keys.map { key in
            try Int.fetchOne(
                db.cachedStatement(
                    sql: """
                        INSERT INTO event_counts (key, window_start, count) VALUES (?, ?, 1)
                        ON CONFLICT (key, window_start) DO UPDATE SET count = count + 1
                        RETURNING count
                        """),
                arguments: [key, windowStart]) ?? 0
        }
    }

    public func uncountEvents(keys: [String], windowStart: Timestamp) async throws {
        try await batches.write { db in try Self.uncountEvents(db, keys: keys, windowStart: windowStart) }
    }

    /// Takes back one event under each key, never below zero (inside a caller's transaction).
    static func uncountEvents(_ db: Database, keys: [String], windowStart: Timestamp) throws {
        for key in keys {
            try db.cachedStatement(sql: "UPDATE event_counts SET count = count - 1 WHERE key = ? AND window_start = ? AND count > 0")
                .execute(arguments: [key, windowStart])
        }
    }

    @discardableResult
    public func purge(before cutoff: Timestamp, countsBefore countCutoff: Timestamp, longCountsBefore longCountCutoff: Timestamp)
        async throws -> Int
    {
        try await pool.write { db in
            try db.execute(sql: Self.purgeStatements[0], arguments: [cutoff, cutoff, cutoff])
            let codes = db.changesCount
            try db.execute(
                sql: Self.purgeStatements[1], arguments: [countCutoff, EventLimit.longWindowPrefix, longCountCutoff])
            return codes
        }
    }

    /// The purge's statements, each with an index for every condition (`SchemaTests` plans them).
    static let purgeStatements = [
        "DELETE FROM codes WHERE expires_at < ? OR consumed_at < ? OR retired_at < ?",
        // The few long windows' counts are read, not deleted, while their window lasts.
        "DELETE FROM event_counts WHERE window_start < ? AND (key NOT LIKE ? || '%' OR window_start < ?)",
    ]

    /// Retires the outstanding codes of the addresses (inside a caller's transaction).
    static func retire(_ db: Database, tenantID: String, emails: [String], now: Timestamp) throws -> Int {
        var count = 0
        for email in emails {
            try db.execute(
                sql: "UPDATE codes SET retired_at = ? WHERE tenant_id = ? AND email = ? AND consumed_at IS NULL AND retired_at IS NULL",
                arguments: [now, tenantID, email])
            count += db.changesCount
        }
        return count
    }

    static func record(_ row: Row) -> ActionCodeRecord? {
        guard let mode = ActionCodeLink.Mode(rawValue: row["mode"]) else { return nil }
        return ActionCodeRecord(
            hash: row["hash"], mode: mode, tenantID: row["tenant_id"], accountID: row["account_id"], email: row["email"],
            newEmail: row["new_email"], continueURL: row["continue_url"], languageCode: row["language_code"],
            appSettings: row["app_settings"], createdAt: row["created_at"], expiresAt: row["expires_at"],
            consumedAt: row["consumed_at"], consumedBy: row["consumed_by"])
    }
}

/// The writes of concurrent requests in one transaction (``GroupCommit``): with `synchronous =
/// FULL`, each commit waits for the disk, and one commit for many writes is what lets issuing keep
/// up. Each write runs in a savepoint of its own, so one that fails (and only that one) is rolled
/// back and gets its error; the others commit. Nobody is answered before the commit is on disk.
final class SQLiteBatchedWrites: Sendable {
    typealias Job = @Sendable (Database) throws -> any Sendable
    let batches: GroupCommit<Job, any Sendable>

    init(pool: DatabasePool, maximumBatch: Int = 256) {
        // GRDB's synchronous write runs on the calling thread when the writer is free: the batch
        // goes from the arrival to the commit with no hop between threads.
        batches = GroupCommit(maximumBatch: maximumBatch, threadName: "SQLite writer") { jobs in
            do {
                return try pool.write { db in
                    jobs.map { job in
                        var outcome: Result<any Sendable, any Error> = .failure(GroupCommitError.noOutcome)
                        do {
                            try db.inSavepoint {
                                outcome = .success(try job(db))
                                return .commit
                            }
                        } catch {
                            outcome = .failure(error)
                        }
                        return outcome
                    }
                }
            } catch {
                // The commit failed: none of the batch was written.
                return jobs.map { _ in .failure(error) }
            }
        }
    }

    /// Runs `body` in the next batch's transaction and returns its result once that has committed.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        // The job returns what `body` returned, so the cast cannot fail.
        try await batches.submit { db in try body(db) } as! T
    }

    /// Runs `body` in the next batch's transaction and tells `completion` its result once that has
    /// committed, on the thread that wrote it.
    func write<T: Sendable>(
        _ body: @escaping @Sendable (Database) throws -> T, completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        // The job returns what `body` returned, so the cast cannot fail.
        batches.submit({ db in try body(db) }, completion: { completion($0.map { $0 as! T }) })
    }
}
