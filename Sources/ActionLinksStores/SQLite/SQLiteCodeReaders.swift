import ActionLinks
import ActionLinksDomain
import Foundation
import GRDBSQLite
import Synchronization

/// The landing page's code lookup (``SQLiteCodeStore/lookupNow(hashes:now:)``) on the caller's
/// thread, on SQLite connections of its own: each one has the lookup's statement prepared once, so a
/// page costs one `sqlite3_step`, where GRDB's pool would take a reader, enter its queue and decode
/// a `Row` (about a third of a page's CPU went there).
///
/// A connection is taken from the idle ones (or opened) for one lookup and given back after it, so
/// one is never used by two threads at once; there are as many as lookups ever ran at the same time
/// (one per event loop thread). Each is read-only. A statement run outside a transaction is its own
/// read transaction, which in WAL mode starts from the latest commit: a code issued or consumed by a
/// commit that returned before the lookup began is seen issued or consumed. The statement is reset
/// after each lookup, so no connection holds a snapshot (or holds back a checkpoint) between pages.
final class SQLiteCodeReaders: Sendable {
    /// The database file.
    let path: String
    /// Connections not in use.
    private let idle = Mutex<[Connection]>([])

    init(path: String) {
        self.path = path
    }

    /// The code stored under one of `hashes`, as ``SQLiteCodeStore/lookup(_:hashes:now:)`` reads it.
    func lookup(hashes: [Data], now: Timestamp) throws(SQLiteReadError) -> CodeLookup {
        let connection: Connection
        if let ready = idle.withLock({ $0.popLast() }) { connection = ready } else { connection = try Connection(path: path) }
        defer { idle.withLock { $0.append(connection) } }
        return try connection.lookup(hashes: hashes, now: now)
    }

    /// One read-only connection and its prepared lookups; used by one thread at a time (it is in
    /// ``SQLiteCodeReaders/idle`` or with the one lookup that took it).
    final class Connection: @unchecked Sendable {
        let database: OpaquePointer
        /// The lookup's statement for each number of hashes (one per code key still accepted).
        private var statements: [Int: OpaquePointer] = [:]

        init(path: String) throws(SQLiteReadError) {
            var database: OpaquePointer?
            // NOMUTEX: the connection is never used by two threads at once.
            let opened = sqlite3_open_v2(path, &database, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
            guard opened == SQLITE_OK, let database else {
                let error = SQLiteReadError(code: opened, database, "cannot open \(path) for reading")
                sqlite3_close_v2(database)
                throw error
            }
            self.database = database
            // As the pool's connections: wait for a lock as long as they do, and keep as many pages.
            sqlite3_busy_timeout(database, 10_000)
            sqlite3_exec(database, "PRAGMA cache_size = -\(SQLiteDatabase.cacheKiB)", nil, nil, nil)
        }

        deinit {
            for statement in statements.values { sqlite3_finalize(statement) }
            sqlite3_close_v2(database)
        }

        func lookup(hashes: [Data], now: Timestamp) throws(SQLiteReadError) -> CodeLookup {
            guard !hashes.isEmpty else { return .invalid }
            let statement = try prepared(count: hashes.count)
            // Reset whatever happens: a statement left stepped would keep its read transaction open.
            defer {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            }
            for (index, hash) in hashes.enumerated() {
                let bound = hash.withUnsafeBytes { bytes in
                    // SQLITE_TRANSIENT: SQLite copies the bytes, which live only in this closure.
                    sqlite3_bind_blob(statement, Int32(index + 1), bytes.baseAddress, Int32(bytes.count), Self.transient)
                }
                guard bound == SQLITE_OK else { throw SQLiteReadError(code: bound, database, "cannot bind a code hash") }
            }
            switch sqlite3_step(statement) {
            case SQLITE_ROW: break
            case SQLITE_DONE: return .invalid
            case let code: throw SQLiteReadError(code: code, database, "cannot read the codes table")
            }
            // A consumed or retired code is refused whatever else it holds.
            if sqlite3_column_type(statement, 11) != SQLITE_NULL || sqlite3_column_type(statement, 13) != SQLITE_NULL {
                return .invalid
            }
            guard let modeName = Self.text(statement, 1), let mode = ActionCodeLink.Mode(rawValue: modeName),
                let tenantID = Self.text(statement, 2), let email = Self.text(statement, 4)
            else { return .invalid }
            let record = ActionCodeRecord(
                hash: Self.blob(statement, 0), mode: mode, tenantID: tenantID, accountID: Self.text(statement, 3), email: email,
                newEmail: Self.text(statement, 5), continueURL: Self.text(statement, 6), languageCode: Self.text(statement, 7),
                appSettings: Self.text(statement, 8), createdAt: Timestamp(milliseconds: sqlite3_column_int64(statement, 9)),
                expiresAt: Timestamp(milliseconds: sqlite3_column_int64(statement, 10)), consumedAt: nil,
                consumedBy: Self.text(statement, 12)
            )
            return record.expiresAt > now ? .live(record) : .expired(record)
        }

        /// The lookup for `count` hashes, prepared on first use.
        private func prepared(count: Int) throws(SQLiteReadError) -> OpaquePointer {
            if let statement = statements[count] { return statement }
            let placeholders = Array(repeating: "?", count: count).joined(separator: ", ")
            // The columns of SQLiteCodeStore.lookup, in its order.
            let sql = """
                SELECT hash, mode, tenant_id, account_id, email, new_email, continue_url, language_code, app_settings,
                       created_at, expires_at, consumed_at, consumed_by, retired_at
                FROM codes WHERE hash IN (\(placeholders))
                """
            var statement: OpaquePointer?
            // PERSISTENT: the statement is kept for the connection's life.
            let code = sqlite3_prepare_v3(database, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
            guard code == SQLITE_OK, let statement else { throw SQLiteReadError(code: code, database, "cannot prepare the code lookup") }
            statements[count] = statement
            return statement
        }

        /// SQLite's `SQLITE_TRANSIENT` (a C macro Swift does not import).
        static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

        /// A text column, or `nil` when it is NULL.
        static func text(_ statement: OpaquePointer, _ column: Int32) -> String? {
            guard let bytes = sqlite3_column_text(statement, column) else { return nil }
            return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
        }

        /// A blob column (empty when NULL).
        static func blob(_ statement: OpaquePointer, _ column: Int32) -> Data {
            guard let bytes = sqlite3_column_blob(statement, column) else { return Data() }
            return Data(bytes: bytes, count: Int(sqlite3_column_bytes(statement, column)))
        }
    }
}

/// A failed read on a ``SQLiteCodeReaders`` connection: SQLite's result code and message.
struct SQLiteReadError: Error, CustomStringConvertible {
    var code: Int32
    var description: String

    init(code: Int32, _ database: OpaquePointer?, _ what: String) {
        self.code = code
        let message = database.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
        description = "SQLite error \(code) (\(message)): \(what)"
    }
}
