import ActionLinksDomain
import Foundation
import GRDB

/// The embedded store: one SQLite file in WAL mode (concurrent readers, one writer), with the schema
/// brought up to date by versioned migrations when it opens.
public final class SQLiteDatabase: Sendable {
    /// The connection pool.
    let pool: DatabasePool
    /// The writes that concurrent requests make most (issues, send counts, refresh times), committed in batches.
    let batches: SQLiteBatchedWrites
    /// The landing page's lookups, on connections of their own (``SQLiteCodeReaders``).
    let codeReaders: SQLiteCodeReaders

    /// Opens (creating if needed) the database at `path` and runs the migrations it has not run yet.
    ///
    /// The file is private to the server's user (0600, its folder 0700 when made here). SQLite
    /// gives the `-wal` and `-shm` files it creates the mode of the database file, so they follow.
    public init(path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try PrivateFiles.makeDirectory(directory)
        }
        // SQLite would create the file 0644; an empty file is a new database to it.
        if try !PrivateFiles.createFile(path) {
            for file in [path, path + "-wal", path + "-shm"] { try PrivateFiles.restrict(file) }
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        // Each connection (the writer and up to five readers) keeps its own page cache, 2 MiB by
        // default; pages it drops are still in the operating system's file cache, one pread away.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -\(Self.cacheKiB)") }
        pool = try DatabasePool(path: path, configuration: configuration)
        batches = SQLiteBatchedWrites(pool: pool)
        // FULL: each commit reaches the disk before it returns, so a consumed code stays consumed
        // through a power cut (NORMAL in WAL mode may roll the last commits back, letting a code
        // be used twice). Every write goes through the pool's one writer connection, which lives
        // as long as the pool; it is set here because GRDB sets NORMAL when it turns on WAL, after
        // `prepareDatabase` has run.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        try Self.migrator.migrate(pool)
        codeReaders = SQLiteCodeReaders(path: path)
    }

    /// The page cache of each connection, in KiB.
    static let cacheKiB = 512

    /// The code store on this database.
    public var codes: SQLiteCodeStore { SQLiteCodeStore(pool: pool, batches: batches, readers: codeReaders) }
    /// The account store on this database.
    public var accounts: SQLiteAccountStore { SQLiteAccountStore(pool: pool, batches: batches) }
    /// The tenant store on this database.
    public var tenants: SQLiteTenantStore { SQLiteTenantStore(pool: pool) }
    /// The sign-in code store on this database.
    public var signInCodes: SQLiteSignInCodeStore { SQLiteSignInCodeStore(batches: batches) }
    /// The mail outbox on this database.
    public var outbox: SQLiteMailOutboxStore { SQLiteMailOutboxStore(pool: pool, batches: batches) }
}

/// A ``Timestamp`` is an `INTEGER` column of milliseconds.
extension Timestamp: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { milliseconds.databaseValue }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> Timestamp? {
        Int64.fromDatabaseValue(value).map(Timestamp.init(milliseconds:))
    }
}
