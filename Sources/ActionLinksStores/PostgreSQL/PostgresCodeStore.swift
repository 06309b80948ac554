import ActionLinks
import ActionLinksDomain
import Foundation
import NIOCore
import PostgresNIO

/// ``CodeStore`` on PostgreSQL, shared by every instance.
///
/// The statements on the request path are prepared once per connection (`PostgresPreparedStatement`).
/// Consumption is one `UPDATE … RETURNING`: PostgreSQL's row lock makes a concurrent second
/// consumer re-check `consumed_at IS NULL` after the first commits, so it finds nothing.
public struct PostgresCodeStore: CodeStore, LinkIssuingInOneWrite {
    let database: PostgresStore

    public func issue(_ record: ActionCodeRecord) async throws {
        try await database.issues.submit(CodeIssue(record: record))
    }

    /// ``LinkIssuingInOneWrite/issueLink(_:completion:)``: the stages counted in order (each its own
    /// statement, so what a stage counted stays counted, as separate calls leave it), the account
    /// looked up, and the code with its sign-in code and its mail in the next batched statement:
    /// one round trip and one commit for all, shared with concurrent requests
    /// (``issueBatch(_:database:)``).
    package func issueLink(
        _ write: LinkIssueWrite, completion: @escaping @Sendable (Result<LinkIssueWrite.Outcome, any Error>) -> Void
    ) {
        Task {
            do {
                completion(.success(try await issueLink(write)))
            } catch {
                completion(.failure(error))
            }
        }
    }

    func issueLink(_ write: LinkIssueWrite) async throws -> LinkIssueWrite.Outcome {
        for (index, stage) in write.stages.enumerated() {
            let counts = try await countEvents(keys: stage.limits.map(\.key), windowStart: stage.windowStart)
            if zip(counts, stage.limits).contains(where: { $0 > $1.maximum }) { return .overLimit(stage: index) }
        }
        var record = write.record
        if write.looksUpAccount {
            record.accountID = try await database.accounts.account(email: record.email, tenantID: record.tenantID)?.localID
        }
        switch write.decide(record.accountID) {
        case .failure(let refusal):
            return .refused(refusal)
        case .success(let deliver):
            // Only a link that goes out has its mail: with enumeration protection, an address
            // without an account has its code stored as any other, and gets no mail.
            try await database.issues.submit(CodeIssue(record: record, signInCode: write.signInCode, mail: deliver ? write.mail : nil))
            return .stored(deliver: deliver)
        }
    }

    /// Issues one code. The function `actionlinks_issue_code` takes a transaction-scoped advisory
    /// lock on (tenant, address, mode), retires the live code and inserts the new one, so issues for
    /// one address from several instances take turns. The unique index `codes_one_live` stays as a
    /// safety net; a violation of it would be retried. A sign-in code and a mail go in one
    /// transaction with it, as the batch writes them: no link is answered, and no live code retired
    /// for it, without its mail stored.
    static func issueOne(_ issue: CodeIssue, database: PostgresStore) async throws {
        guard issue.signInCode != nil || issue.mail != nil else {
            try await database.retrying(["23505"]) {
                try await database.withConnection { connection in try await Self.issue(connection, issue.record, database: database) }
            }
            return
        }
        try await database.transaction(retryOn: ["23505"]) { connection in
            try await Self.issue(connection, issue.record, database: database)
            if let signInCode = issue.signInCode { try await PostgresSignInCodeStore.issue(connection, signInCode, database: database) }
            if let mail = issue.mail { try await PostgresMailOutboxStore.enqueue(connection, mail, database: database) }
        }
    }

    /// Issues the codes of concurrent requests, and their sign-in codes and mails, with one
    /// statement: one round trip and one commit for all of them (``GroupCommit``). The rows go in
    /// (tenant, address, mode) order, so two batches (of this instance or another) take their
    /// advisory locks in the same order and cannot deadlock; codes for one address keep their
    /// order of arrival. A sign-in code comes with its link's code, so its row is written by a
    /// batch that already holds that code's advisory lock (tenant, address, sign-in), after every
    /// lock of its codes: two batches never wait for one sign-in code's row. If the statement
    /// fails, each code is issued on its own, so that each request gets its own outcome.
    static func issueBatch(_ issues: [CodeIssue], database: PostgresStore) async -> [Result<Void, any Error>] {
        guard issues.count > 1 || issues[0].signInCode != nil || issues[0].mail != nil else {
            return [await outcome { try await issueOne(issues[0], database: database) }]
        }
        let ordered = issues.enumerated().sorted { a, b in
            let (x, y) = (a.element.record, b.element.record)
            if x.tenantID != y.tenantID { return x.tenantID < y.tenantID }
            if x.email != y.email { return x.email < y.email }
            if x.mode != y.mode { return x.mode.rawValue < y.mode.rawValue }
            return a.offset < b.offset
        }.map(\.element)
        do {
            try await database.retrying(["23505", "40P01"]) {
                try await database.withConnection { connection in
                    for try await _ in try await connection.execute(IssueCodes(ordered), logger: database.logger) {}
                }
            }
            return issues.map { _ in .success(()) }
        } catch {
            var outcomes: [Result<Void, any Error>] = []
            for issue in issues { outcomes.append(await outcome { try await issueOne(issue, database: database) }) }
            return outcomes
        }
    }

    public func lookup(hashes: [Data], now: Timestamp) async throws -> CodeLookup {
        guard !hashes.isEmpty else { return .invalid }
        let row = try await database.withConnection { connection in
            try await connection.execute(LookupCode(hashes: hashes), logger: database.logger).first { _ in true }
        }
        guard let row, let record = row.record else { return .invalid }
        if record.consumedAt != nil || row.retiredAt != nil { return .invalid }
        return record.expiresAt > now ? .live(record) : .expired(record)
    }

    public func consume(hashes: [Data], modes: Set<ActionCodeLink.Mode>, now: Timestamp, by consumer: String) async throws
        -> CodeConsumption
    {
        guard !hashes.isEmpty, !modes.isEmpty else { return .invalid }
        return try await database.withConnection { connection in
            try await Self.consume(connection, hashes: hashes, modes: modes, now: now, by: consumer, database: database)
        }
    }

    /// Consumes a live code with one statement (on its own, or inside a caller's transaction).
    static func consume(
        _ connection: PostgresConnection, hashes: [Data], modes: Set<ActionCodeLink.Mode>, now: Timestamp, by consumer: String,
        database: PostgresStore
    ) async throws -> CodeConsumption {
        guard !hashes.isEmpty, !modes.isEmpty else { return .invalid }
        let modeNames = modes.map(\.rawValue)
        if let row = try await connection.execute(
            ConsumeCode(now: now, consumer: consumer, hashes: hashes, modes: modeNames), logger: database.logger
        ).first(where: { _ in true }), let record = row.record {
            return .consumed(record)
        }
        let expired = try await connection.query(
            """
            SELECT 1 FROM codes WHERE hash = ANY(\(hashes.map(PostgresCodeStore.buffer))) AND coalesce(consumed_at, retired_at) IS NULL
              AND expires_at <= \(now) AND mode = ANY(\(modeNames))
            """, logger: database.logger
        ).decode(Int32.self).first { _ in true }
        return expired != nil ? .expired : .invalid
    }

    /// Issues a code (inside a caller's transaction, or on its own).
    static func issue(_ connection: PostgresConnection, _ record: ActionCodeRecord, database: PostgresStore) async throws {
        // Rows are read to the end: errors arrive with the result.
        for try await _ in try await connection.execute(IssueCode(record: record), logger: database.logger) {}
    }

    /// What `body` did, as a result.
    static func outcome(_ body: () async throws -> Void) async -> Result<Void, any Error> {
        do {
            try await body()
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    @discardableResult
    public func retireCodes(tenantID: String, email: String, now: Timestamp) async throws -> Int {
        try await database.withConnection { connection in
            try await Self.retire(connection, tenantID: tenantID, emails: [email], now: now, database: database)
        }
    }

    public func countEvents(keys: [String], windowStart: Timestamp) async throws -> [Int] {
        guard !keys.isEmpty else { return [] }
        // Rows are locked in key order, so two instances counting overlapping keys cannot deadlock.
        let sorted = Array(Set(keys)).sorted()
        let counts = try await database.withConnection { connection in
            var counts: [String: Int] = [:]
            for try await (key, count) in try await connection.execute(
                CountEvents(keys: sorted, windowStart: windowStart), logger: database.logger)
            {
                counts[key] = count
            }
            return counts
        }
        return keys.map { counts[$0] ?? 0 }
    }

    public func uncountEvents(keys: [String], windowStart: Timestamp) async throws {
        guard !keys.isEmpty else { return }
        // One key a statement, so no statement holds two row locks (nothing to deadlock with
        // countEvents, which locks in key order).
        try await database.withConnection { connection in
            for key in Set(keys).sorted() {
                try await connection.query(
                    "UPDATE event_counts SET count = count - 1 WHERE key = \(key) AND window_start = \(windowStart) AND count > 0",
                    logger: database.logger)
            }
        }
    }

    @discardableResult
    public func purge(before cutoff: Timestamp, countsBefore countCutoff: Timestamp, longCountsBefore longCountCutoff: Timestamp)
        async throws -> Int
    {
        try await database.withConnection(bounded: false) { connection in
            var removed = 0
            // In batches, so that no single statement holds many row locks for long.
            while true {
                let batch = try await connection.query(
                    Self.purgeStatements(before: cutoff, countsBefore: countCutoff, longCountsBefore: longCountCutoff)[0],
                    logger: database.logger
                ).collect().count
                removed += batch
                if batch < 5000 { break }
            }
            try await connection.query(
                Self.purgeStatements(before: cutoff, countsBefore: countCutoff, longCountsBefore: longCountCutoff)[1],
                logger: database.logger)
            return removed
        }
    }

    /// The purge's statements (a batch of codes, then the event counts), each with an index for
    /// every condition (`SchemaTests` plans them).
    static func purgeStatements(before cutoff: Timestamp, countsBefore countCutoff: Timestamp, longCountsBefore longCountCutoff: Timestamp)
        -> [PostgresQuery]
    {
        let prefix = EventLimit.longWindowPrefix
        return [
            """
            WITH doomed AS (
                SELECT hash FROM codes WHERE expires_at < \(cutoff) OR consumed_at < \(cutoff) OR retired_at < \(cutoff) LIMIT 5000
            )
            DELETE FROM codes WHERE hash IN (SELECT hash FROM doomed) RETURNING 1
            """,
            """
            DELETE FROM event_counts
            WHERE window_start < \(countCutoff) AND (key NOT LIKE \(prefix) || '%' OR window_start < \(longCountCutoff))
            """,
        ]
    }

    static func buffer(_ data: Data) -> ByteBuffer { ByteBuffer(bytes: data) }

    /// Retires the outstanding codes of the addresses (inside a caller's transaction).
    static func retire(_ connection: PostgresConnection, tenantID: String, emails: [String], now: Timestamp, database: PostgresStore)
        async throws -> Int
    {
        // One statement per address: `email = ANY(...)` was seen to be planned as a scan of every
        // live code of the tenant instead of an index lookup on (tenant, email).
        var retired = 0
        for email in emails {
            retired += try await connection.query(
                """
                UPDATE codes SET retired_at = \(now)
                WHERE tenant_id = \(tenantID) AND email = \(email) AND consumed_at IS NULL AND retired_at IS NULL
                RETURNING 1
                """, logger: database.logger
            ).collect().count
        }
        return retired
    }
}

// MARK: - Prepared statements

/// The columns of a code row, as every statement that reads one selects them.
let codeColumns = PostgresColumns.select(PostgresColumns.codes)

/// A `codes` row as read, by its columns' names (with a prefix where a statement renames them).
struct CodeRow: Sendable {
    var record: ActionCodeRecord?
    var retiredAt: Timestamp?

    init(_ row: PostgresRow) throws { try self.init(PostgresNamedRow(row)) }

    init(_ row: PostgresNamedRow) throws {
        retiredAt = try row("retired_at")
        guard let mode = ActionCodeLink.Mode(rawValue: try row("mode")) else { record = nil; return }
        record = ActionCodeRecord(
            hash: Data(try row("hash", as: ByteBuffer.self).readableBytesView), mode: mode, tenantID: try row("tenant_id"),
            accountID: try row("account_id"), email: try row("email"), newEmail: try row("new_email"),
            continueURL: try row("continue_url"), languageCode: try row("language_code"), appSettings: try row("app_settings"),
            createdAt: try row("created_at"), expiresAt: try row("expires_at"), consumedAt: try row("consumed_at"),
            consumedBy: try row("consumed_by"))
    }
}

struct IssueCode: PostgresPreparedStatement {
    static let name = "actionlinks_issue_code_v1"
    static let sql = "SELECT actionlinks_issue_code($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
    typealias Row = Void
    var record: ActionCodeRecord

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 11)
        bindings.append(ByteBuffer(bytes: record.hash))
        bindings.append(record.mode.rawValue)
        bindings.append(record.tenantID)
        bindings.append(record.accountID)
        bindings.append(record.email)
        bindings.append(record.newEmail)
        bindings.append(record.continueURL)
        bindings.append(record.languageCode)
        bindings.append(record.appSettings)
        bindings.append(record.createdAt)
        bindings.append(record.expiresAt)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws {}
}

/// A code to issue, with the sign-in code of its link when it has one (a sign-in link's), and its
/// link's mail when the link goes out.
struct CodeIssue: Sendable {
    var record: ActionCodeRecord
    var signInCode: SignInCodeRecord? = nil
    var mail: OutboxMail? = nil
}

/// Issues several codes in one statement, in the order given, with `actionlinks_issue_code` for
/// each, then stores their sign-in codes (replacing each address's) and their mails, in the same
/// transaction.
///
/// The codes are a `SELECT` that the statement reads to the end (a `WITH` query that nothing reads
/// would not run); the sign-in codes and the mails are data-modifying `WITH`s, which PostgreSQL
/// runs to completion after the statement's own query: once every code's advisory lock is held.
/// Two sign-in codes of one address in a batch would make the upsert touch its row twice (an
/// error), so only the last one given is written, as separate statements would have left it.
struct IssueCodes: PostgresPreparedStatement {
    static let name = "actionlinks_issue_codes_v4"
    static let sql = """
        WITH mailed AS (
            INSERT INTO mail_outbox (id, sealed, code_hash, created_at, expires_at, due_at, attempts, leased_until, leased_by)
            SELECT o.id, o.sealed, nullif(o.code_hash, ''::bytea), o.created_at, o.expires_at, o.due_at, o.attempts, NULL, NULL
            FROM unnest($19::text[], $20::bytea[], $21::bytea[], $22::int8[], $23::int8[], $24::int8[], $25::int4[])
                AS o(id, sealed, code_hash, created_at, expires_at, due_at, attempts)
        ), signed AS (
            INSERT INTO sign_in_codes (tenant_id, email, mac, sealed_link, attempts, created_at, expires_at, used_at, link_hash)
            SELECT s.tenant_id, s.email, s.mac, s.sealed_link, 0, s.created_at, s.expires_at, NULL, nullif(s.link_hash, ''::bytea)
            FROM unnest($12::text[], $13::text[], $14::bytea[], $15::bytea[], $16::int8[], $17::int8[], $18::bytea[]) WITH ORDINALITY
                AS s(tenant_id, email, mac, sealed_link, created_at, expires_at, link_hash, position)
            ORDER BY s.position
            ON CONFLICT (tenant_id, email) DO UPDATE SET
                mac = excluded.mac, sealed_link = excluded.sealed_link, attempts = 0, created_at = excluded.created_at,
                expires_at = excluded.expires_at, used_at = NULL, link_hash = excluded.link_hash
        )
        SELECT actionlinks_issue_code(r.hash, r.mode, r.tenant_id, r.account_id, r.email, r.new_email, r.continue_url,
                                      r.language_code, r.app_settings, r.created_at, r.expires_at)
        FROM unnest($1::bytea[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                    $10::int8[], $11::int8[]) WITH ORDINALITY
            AS r(hash, mode, tenant_id, account_id, email, new_email, continue_url, language_code, app_settings, created_at, expires_at,
                 position)
        ORDER BY r.position
        """
    typealias Row = Void
    var records: [ActionCodeRecord]
    /// The sign-in codes, the last of each address only.
    var signInCodes: [SignInCodeRecord]
    /// The mails of the links that go out.
    var mails: [OutboxMail]

    init(_ issues: [CodeIssue]) {
        records = issues.map(\.record)
        mails = issues.compactMap(\.mail)
        var last: [String: Int] = [:]
        let given = issues.compactMap(\.signInCode)
        for (index, code) in given.enumerated() { last[code.tenantID + "\u{0}" + code.email] = index }
        signInCodes = given.enumerated().filter { last[$0.element.tenantID + "\u{0}" + $0.element.email] == $0.offset }.map(\.element)
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 25)
        bindings.append(records.map { ByteBuffer(bytes: $0.hash) })
        bindings.append(records.map(\.mode.rawValue))
        bindings.append(records.map(\.tenantID))
        bindings.append(NullableTexts(records.map(\.accountID)))
        bindings.append(records.map(\.email))
        bindings.append(NullableTexts(records.map(\.newEmail)))
        bindings.append(NullableTexts(records.map(\.continueURL)))
        bindings.append(NullableTexts(records.map(\.languageCode)))
        bindings.append(NullableTexts(records.map(\.appSettings)))
        bindings.append(records.map(\.createdAt.milliseconds))
        bindings.append(records.map(\.expiresAt.milliseconds))
        bindings.append(signInCodes.map(\.tenantID))
        bindings.append(signInCodes.map(\.email))
        bindings.append(signInCodes.map { ByteBuffer(bytes: $0.mac) })
        bindings.append(signInCodes.map { ByteBuffer(bytes: $0.sealedLink) })
        bindings.append(signInCodes.map(\.createdAt.milliseconds))
        bindings.append(signInCodes.map(\.expiresAt.milliseconds))
        // bytea[] holds no NULLs here: an empty hash stands for none.
        bindings.append(signInCodes.map { ByteBuffer(bytes: $0.linkHash ?? Data()) })
        bindings.append(mails.map(\.id))
        bindings.append(mails.map { ByteBuffer(bytes: $0.sealed) })
        // As the link hashes: an empty hash stands for none.
        bindings.append(mails.map { ByteBuffer(bytes: $0.codeHash ?? Data()) })
        bindings.append(mails.map(\.createdAt.milliseconds))
        bindings.append(mails.map(\.expiresAt.milliseconds))
        bindings.append(mails.map(\.dueAt.milliseconds))
        bindings.append(mails.map { Int32($0.attempts) })
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws {}
}

/// A `text[]` that may hold NULLs (postgres-nio's arrays cannot), in the binary array format.
struct NullableTexts: PostgresNonThrowingEncodable {
    var values: [String?]

    init(_ values: [String?]) { self.values = values }

    static var psqlType: PostgresDataType { .textArray }
    static var psqlFormat: PostgresFormat { .binary }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeInteger(values.isEmpty ? 0 : 1, as: UInt32.self)  // dimensions
        buffer.writeInteger(values.contains(nil) ? 1 : 0, as: Int32.self)  // has NULLs
        buffer.writeInteger(PostgresDataType.text.rawValue)
        guard !values.isEmpty else { return }
        buffer.writeInteger(Int32(values.count))
        buffer.writeInteger(1, as: Int32.self)  // lower bound
        for value in values {
            guard let value else {
                buffer.writeInteger(-1, as: Int32.self)
                continue
            }
            buffer.writeInteger(Int32(value.utf8.count))
            buffer.writeString(value)
        }
    }
}

struct LookupCode: PostgresPreparedStatement {
    static let name = "actionlinks_lookup_code_v1"
    static let sql = "SELECT \(codeColumns) FROM codes WHERE hash = ANY($1)"
    typealias Row = CodeRow
    var hashes: [Data]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(hashes.map(PostgresCodeStore.buffer))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> CodeRow { try CodeRow(row) }
}

/// Consumes by primary key. "Neither consumed nor retired" is written `coalesce(consumed_at,
/// retired_at) IS NULL` on purpose: spelt `consumed_at IS NULL AND retired_at IS NULL`, it matches
/// the predicate of the partial index `codes_one_live`, and the planner was seen to scan that whole
/// index (every live code) instead of looking the hash up (1.6 ms at 4,000 live codes, and growing).
struct ConsumeCode: PostgresPreparedStatement {
    static let name = "actionlinks_consume_code_v1"
    static let sql = """
        UPDATE codes SET consumed_at = $1, consumed_by = $2
        WHERE hash = ANY($3) AND coalesce(consumed_at, retired_at) IS NULL AND expires_at > $1 AND mode = ANY($4)
        RETURNING \(codeColumns)
        """
    typealias Row = CodeRow
    var now: Timestamp
    var consumer: String
    var hashes: [Data]
    var modes: [String]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(now)
        bindings.append(consumer)
        bindings.append(hashes.map(PostgresCodeStore.buffer))
        bindings.append(modes)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> CodeRow { try CodeRow(row) }
}

struct CountEvents: PostgresPreparedStatement {
    static let name = "actionlinks_count_events_v1"
    static let sql = """
        INSERT INTO event_counts (key, window_start, count)
        SELECT key, $2, 1 FROM unnest($1::text[]) WITH ORDINALITY AS keys(key, position) ORDER BY position
        ON CONFLICT (key, window_start) DO UPDATE SET count = event_counts.count + 1
        RETURNING key, count
        """
    typealias Row = (String, Int)
    var keys: [String]
    var windowStart: Timestamp

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(keys)
        bindings.append(windowStart)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> (String, Int) {
        let (key, count) = try row.decode((String, Int32).self)
        return (key, Int(count))
    }
}
