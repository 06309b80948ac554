import ActionLinksConfiguration
import Foundation
import Logging
import NIOSSL
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The shared store: one PostgreSQL database that every `actionlinks serve` instance behind a load
/// balancer uses, through a postgres-nio connection pool.
///
/// - The pool (``client``) is a long-running service: it reconnects by itself, with backoff, when
///   the server goes away and comes back.
/// - A request never waits longer than `connect_timeout` for a connection: past that it fails with
///   ``PostgresStoreError/unavailable(_:)``, which the handlers answer with 503 `UNAVAILABLE`, so a
///   database outage costs requests that need the store and nothing else.
/// - Every change is one statement or one transaction, so an outage or a crash leaves nothing
///   half-written.
public final class PostgresStore: Sendable {
    /// The connection pool; run it as a service (`services:`) before using the stores.
    public let client: PostgresClient
    /// Where the database is.
    public let location: PostgresLocation
    let logger: Logger
    let connectTimeout: Duration
    /// How long a call may run once it has its connection: twice `statement_timeout` and a second.
    /// PostgreSQL ends a slow statement itself; this bounds a call whose connection died without
    /// the client noticing (seen when the server was stopped under load: a request waited 60 s).
    let callTimeout: Duration
    /// The calls still waiting for a connection, with their deadlines (see ``withConnection(_:)``).
    let waiting = LeaseDeadlines()
    /// Codes being issued: those of concurrent requests go in one statement (``PostgresCodeStore``).
    let issues: GroupCommit<ActionCodeRecord, Void>

    /// Makes the pool for `location`; no connection is opened until the client runs and is used.
    public init(location: PostgresLocation, logger: Logger) throws(PostgresStoreError) {
        self.location = location
        self.logger = logger
        connectTimeout = .milliseconds(Int64(location.connectTimeout * 1000))
        callTimeout = .milliseconds(Int64(location.statementTimeout * 2000) + 1000)

        let tls: PostgresClient.Configuration.TLS
        switch location.tlsMode {
        case .disable:
            tls = .disable
        case .prefer, .require:
            // libpq's meaning: encrypt, but check nothing about the certificate.
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .none
            tls = location.tlsMode == .prefer ? .prefer(configuration) : .require(configuration)
        case .verifyCA, .verifyFull:
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = location.tlsMode == .verifyFull ? .fullVerification : .noHostnameVerification
            if let path = location.rootCertificatePath {
                do {
                    configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(path))
                } catch {
                    throw PostgresStoreError.configuration("store: cannot read sslrootcert \(path): \(error)")
                }
            }
            tls = .require(configuration)
        }
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database, tls: tls)
        configuration.options.connectTimeout = connectTimeout
        configuration.options.maximumConnections = location.poolSize
        configuration.options.minimumConnections = 0
        configuration.options.additionalStartupParameters = [
            ("application_name", location.applicationName),
            ("statement_timeout", "\(Int(location.statementTimeout * 1000))"),
        ]
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        // The batches reach the store through a weak reference: the store owns them.
        let store = WeakReference<PostgresStore>()
        issues = GroupCommit(maximumBatch: 256, concurrency: 4) { records in
            guard let database = store.value else { return records.map { _ in .failure(CancellationError()) } }
            return await PostgresCodeStore.issueBatch(records, database: database)
        }
        waiting.startWatching()
        store.value = self
    }

    deinit { waiting.stopWatching() }

    /// The code store on this database.
    public var codes: PostgresCodeStore { PostgresCodeStore(database: self) }
    /// The account store on this database.
    public var accounts: PostgresAccountStore { PostgresAccountStore(database: self) }
    /// The tenant store on this database.
    public var tenants: PostgresTenantStore { PostgresTenantStore(database: self) }

    // MARK: - Connections

    /// Runs `body` on a pooled connection, failing with ``PostgresStoreError/unavailable(_:)`` when no
    /// connection comes within `connect_timeout` (the pool keeps requests waiting while it cannot
    /// connect; a link domain should answer 503 at once instead).
    ///
    /// Once it has a connection, a `bounded` call that runs past ``callTimeout`` is answered
    /// `UNAVAILABLE` and its work cancelled; purges and migrations, which may rightly run long, pass
    /// `bounded: false`.
    func withConnection<T: Sendable>(bounded: Bool = true, _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws
        -> T
    {
        let race = LeaseRace<T>()
        let location = location
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    race.begin(continuation)
                    // Only the wait for a connection is bounded; a statement that has started runs to
                    // its end (or to statement_timeout) so that its outcome is known. A request still
                    // waiting at the deadline is cancelled and abandoned, not awaited: the pool may
                    // take a while to drop it. One watcher per store checks every deadline (a timer
                    // task per call cost a quarter of the throughput).
                    let ticket = waiting.add(deadline: .now + connectTimeout) {
                        if race.timeOut(
                            PostgresStoreError.unavailable("no PostgreSQL connection within \(self.connectTimeout) (is \(location) up?)"))
                        {
                            race.cancel()
                        }
                    }
                    let work = Task {
                        let result: Result<T, any Error>
                        do {
                            result = .success(
                                try await self.client.withConnection { connection in
                                    // A connection that comes after the caller was told "unavailable"
                                    // runs nothing: no code is consumed for a request that failed.
                                    guard race.leased() else { throw CancellationError() }
                                    self.waiting.remove(ticket)
                                    guard bounded else { return try await body(connection) }
                                    let running = self.waiting.add(deadline: .now + self.callTimeout) {
                                        if race.abandon(
                                            PostgresStoreError.unavailable(
                                                "a PostgreSQL call ran past \(self.callTimeout) (is \(location) up?)"))
                                        {
                                            race.cancel()
                                        }
                                    }
                                    defer { self.waiting.remove(running) }
                                    return try await body(connection)
                                })
                        } catch {
                            result = .failure(error)
                        }
                        self.waiting.remove(ticket)
                        race.finish(result)
                    }
                    race.onCancel { work.cancel() }
                }
            } onCancel: {
                race.cancel()
            }
        } catch let error as PSQLError {
            throw PostgresStoreError(error)
        } catch {
            // The store's own errors and a unit of work's refusals (an ActionError, say) pass as
            // they are; only the database's are described for the log.
            throw error
        }
    }

    /// Runs `body` in a transaction on one connection: committed when it returns, rolled back when it
    /// throws (the caller gets `body`'s own error). Serialization failures, deadlocks and (for
    /// upserts racing another instance) unique violations are retried a few times.
    func transaction<T: Sendable>(
        retryOn retried: Set<String> = PostgresStoreError.retriedStates, bounded: Bool = true,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    )
        async throws -> T
    {
        try await retrying(retried) {
            try await self.withConnection(bounded: bounded) { connection in
                try await connection.query("BEGIN", logger: self.logger)
                do {
                    let result = try await body(connection)
                    try await connection.query("COMMIT", logger: self.logger)
                    return result
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: self.logger)
                    throw error
                }
            }
        }
    }

    /// Runs `body` again (up to five times in all) when it fails with one of the SQL states `retried`.
    func retrying<T: Sendable>(_ retried: Set<String>, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch let error as PostgresStoreError where attempt < 5 && error.sqlState.map(retried.contains) == true {
                attempt += 1
                try await Task.sleep(for: .milliseconds(Int64.random(in: 1...(5 * Int64(attempt)))))
            }
        }
    }

    // MARK: - Migrations

    /// Brings the schema up to date. Several instances starting together migrate once: each takes
    /// the same transaction-scoped advisory lock, so the first applies what is missing and the others
    /// then find nothing to do. Each migration is applied with its version row in that transaction.
    public func migrate() async throws {
        let applied = try await transaction(retryOn: [], bounded: false) { connection in
            // No statement_timeout here: the others wait for the lock while the first migrates, which
            // may take longer on a loaded database (a lock wait cut at 10 s was seen, under a
            // loaded test run, to fail the instance's next statement with 25P02).
            try await connection.query("SET LOCAL statement_timeout = 0", logger: self.logger)
            // The lock's row is read: an error that comes after the row description (a lock wait
            // cancelled) is reported by the rows, not by query() itself.
            _ = try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: self.logger).collect()
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS actionlinks_migrations (
                    version TEXT PRIMARY KEY,
                    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                )
                """, logger: self.logger)
            var done = Set<String>()
            for try await version in try await connection.query("SELECT version FROM actionlinks_migrations", logger: self.logger).decode(
                String.self)
            {
                done.insert(version)
            }
            var applied: [String] = []
            for migration in Self.migrations where !done.contains(migration.version) {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                }
                try await connection.query(
                    "INSERT INTO actionlinks_migrations (version) VALUES (\(migration.version))", logger: self.logger)
                applied.append(migration.version)
            }
            return applied
        }
        for version in applied { logger.notice("applied store migration", metadata: ["version": "\(version)"]) }
    }

    /// The advisory lock key migrations hold ("actionlk" in ASCII).
    static let migrationLock: Int64 = 0x6163_7469_6f6e_6c6b

    /// Named, versioned schema changes, in order; never edit one that has shipped, add the next.
    /// Times are milliseconds since 1970 (`BIGINT`), as in the SQLite store.
    static let migrations: [(version: String, statements: [String])] = [
        (
            "v1: codes, accounts, refresh tokens, event counts",
            [
                """
                CREATE TABLE codes (
                    hash BYTEA PRIMARY KEY,
                    mode TEXT NOT NULL,
                    tenant_id TEXT NOT NULL,
                    account_id TEXT,
                    email TEXT NOT NULL,
                    new_email TEXT,
                    continue_url TEXT,
                    language_code TEXT,
                    app_settings TEXT,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    consumed_at BIGINT,
                    consumed_by TEXT,
                    retired_at BIGINT
                )
                """,
                // One live code per (tenant, address, mode), enforced by the database itself: two
                // instances issuing for the same address at once cannot both leave a live code.
                "CREATE UNIQUE INDEX codes_one_live ON codes (tenant_id, email, mode) WHERE consumed_at IS NULL AND retired_at IS NULL",
                // Issuing: one call per code. The advisory lock makes issues for one address take
                // turns across instances; each statement after it sees what the previous holder
                // committed (READ COMMITTED takes a new snapshot per statement in a volatile function).
                """
                CREATE FUNCTION actionlinks_issue_code(
                    p_hash BYTEA, p_mode TEXT, p_tenant_id TEXT, p_account_id TEXT, p_email TEXT, p_new_email TEXT,
                    p_continue_url TEXT, p_language_code TEXT, p_app_settings TEXT, p_created_at BIGINT, p_expires_at BIGINT
                ) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
                BEGIN
                    PERFORM pg_advisory_xact_lock(hashtextextended(p_tenant_id || chr(31) || p_email || chr(31) || p_mode, 0));
                    UPDATE codes SET retired_at = p_created_at
                    WHERE tenant_id = p_tenant_id AND email = p_email AND mode = p_mode AND consumed_at IS NULL AND retired_at IS NULL;
                    INSERT INTO codes (hash, mode, tenant_id, account_id, email, new_email, continue_url, language_code, app_settings,
                                       created_at, expires_at)
                    VALUES (p_hash, p_mode, p_tenant_id, p_account_id, p_email, p_new_email, p_continue_url, p_language_code,
                            p_app_settings, p_created_at, p_expires_at);
                END
                $$
                """,
                "CREATE INDEX codes_expiry ON codes (expires_at)",
                "CREATE INDEX codes_consumed ON codes (consumed_at) WHERE consumed_at IS NOT NULL",
                "CREATE INDEX codes_retired ON codes (retired_at) WHERE retired_at IS NOT NULL",
                """
                CREATE TABLE accounts (
                    local_id TEXT NOT NULL,
                    tenant_id TEXT NOT NULL,
                    email TEXT,
                    email_verified BOOLEAN NOT NULL DEFAULT false,
                    password_hash TEXT,
                    password_updated_at BIGINT,
                    display_name TEXT,
                    disabled BOOLEAN NOT NULL DEFAULT false,
                    created_at BIGINT NOT NULL,
                    last_login_at BIGINT,
                    valid_since BIGINT NOT NULL DEFAULT 0,
                    PRIMARY KEY (tenant_id, local_id)
                )
                """,
                "CREATE UNIQUE INDEX accounts_email ON accounts (tenant_id, email) WHERE email IS NOT NULL",
                """
                CREATE TABLE refresh_tokens (
                    hash BYTEA PRIMARY KEY,
                    tenant_id TEXT NOT NULL,
                    account_id TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX refresh_tokens_account ON refresh_tokens (tenant_id, account_id)",
                """
                CREATE TABLE event_counts (
                    key TEXT NOT NULL,
                    window_start BIGINT NOT NULL,
                    count INTEGER NOT NULL,
                    PRIMARY KEY (key, window_start)
                )
                """,
            ]
        ),
        (
            "v2: every user field, federated identities, sessions that remember how they signed in, tenants",
            [
                """
                ALTER TABLE accounts ADD COLUMN photo_url TEXT, ADD COLUMN phone_number TEXT, ADD COLUMN last_refresh_at BIGINT,
                    ADD COLUMN custom_attributes TEXT, ADD COLUMN initial_email TEXT,
                    ADD COLUMN email_link_signin BOOLEAN NOT NULL DEFAULT false, ADD COLUMN custom_auth BOOLEAN NOT NULL DEFAULT false
                """,
                "CREATE UNIQUE INDEX accounts_phone ON accounts (tenant_id, phone_number) WHERE phone_number IS NOT NULL",
                """
                CREATE TABLE account_providers (
                    tenant_id TEXT NOT NULL,
                    provider_id TEXT NOT NULL,
                    raw_id TEXT NOT NULL,
                    local_id TEXT NOT NULL,
                    email TEXT,
                    display_name TEXT,
                    photo_url TEXT,
                    CONSTRAINT account_providers_pkey PRIMARY KEY (tenant_id, provider_id, raw_id)
                )
                """,
                "CREATE INDEX account_providers_account ON account_providers (tenant_id, local_id)",
                "CREATE INDEX account_providers_email ON account_providers (tenant_id, email) WHERE email IS NOT NULL",
                """
                ALTER TABLE refresh_tokens ADD COLUMN sign_in_provider TEXT NOT NULL DEFAULT 'password',
                    ADD COLUMN auth_time BIGINT NOT NULL DEFAULT 0, ADD COLUMN claims TEXT
                """,
                """
                CREATE TABLE tenants (
                    tenant_id TEXT PRIMARY KEY,
                    settings TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
            ]
        ),
        ("v3: federated sign-in flows", federatedFlowsSchema),
        (
            "v4: the sessions of deleted accounts",
            [
                """
                CREATE TABLE deleted_sessions (
                    hash BYTEA PRIMARY KEY,
                    tenant_id TEXT NOT NULL,
                    deleted_at BIGINT NOT NULL
                )
                """
            ]
        ),
        ("v5: used SAML assertions", samlAssertionsSchema),
    ]
}

/// A weak reference that is set once its object exists.
final class WeakReference<Object: AnyObject & Sendable>: Sendable {
    private struct Box: @unchecked Sendable { weak var object: Object? }
    private let box = Mutex(Box())

    var value: Object? {
        get { box.withLock { $0.object } }
        set { box.withLock { $0.object = newValue } }
    }
}

/// The deadlines of the calls waiting for a connection, watched by one task that wakes every
/// 100 ms and expires the overdue ones.
final class LeaseDeadlines: Sendable {
    struct Waiting {
        var next = 0
        var deadlines: [Int: (deadline: ContinuousClock.Instant, expire: @Sendable () -> Void)] = [:]
        var watcher: Task<Void, Never>?
    }
    let state = Mutex(Waiting())

    func add(deadline: ContinuousClock.Instant, expire: @escaping @Sendable () -> Void) -> Int {
        state.withLock { state in
            state.next += 1
            state.deadlines[state.next] = (deadline, expire)
            return state.next
        }
    }

    func remove(_ ticket: Int) { _ = state.withLock { $0.deadlines.removeValue(forKey: ticket) } }

    func startWatching() {
        let watcher = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                guard let self else { return }
                let now = ContinuousClock.now
                let overdue = self.state.withLock { state -> [@Sendable () -> Void] in
                    let expired = state.deadlines.filter { $0.value.deadline <= now }
                    for ticket in expired.keys { state.deadlines[ticket] = nil }
                    return expired.map(\.value.expire)
                }
                for expire in overdue { expire() }
            }
        }
        state.withLock { $0.watcher = watcher }
    }

    func stopWatching() { state.withLock { $0.watcher?.cancel() } }
}

/// One store call racing its connection deadline: the first of the result and the deadline (while
/// no connection was leased) resumes the caller, exactly once.
final class LeaseRace<T: Sendable>: Sendable {
    struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var leased = false
        var cancelWork: (@Sendable () -> Void)?
        var cancelled = false
    }
    let state = Mutex(State())

    func begin(_ continuation: CheckedContinuation<T, any Error>) { state.withLock { $0.continuation = continuation } }

    /// Records that a connection came; returns false (run nothing) when the caller has already been
    /// answered with the deadline's error or has gone.
    func leased() -> Bool {
        state.withLock { state in
            guard state.continuation != nil, !state.cancelled else { return false }
            state.leased = true
            return true
        }
    }

    func onCancel(_ cancel: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            state.cancelWork = cancel
            return state.cancelled
        }
        if now { cancel() }
    }

    func cancel() {
        let work = state.withLock { state -> (@Sendable () -> Void)? in
            state.cancelled = true
            return state.cancelWork
        }
        work?()
    }

    func finish(_ result: Result<T, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<T, any Error>? in
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: result)
    }

    /// Resumes the caller with `error` if no result came yet, connection or not; returns whether it
    /// did (the work's result, if it ever comes, is then dropped).
    func abandon(_ error: any Error) -> Bool {
        let continuation = state.withLock { state -> CheckedContinuation<T, any Error>? in
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(throwing: error)
        return continuation != nil
    }

    /// Resumes the caller with `error` if no connection was leased and no result came; returns
    /// whether it did.
    func timeOut(_ error: any Error) -> Bool {
        let continuation = state.withLock { state -> CheckedContinuation<T, any Error>? in
            guard !state.leased else { return nil }
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(throwing: error)
        return continuation != nil
    }
}

/// A failed call to PostgreSQL, described without the statement's values (which hold addresses and
/// code hashes) so that it can be logged.
public struct PostgresStoreError: Error, CustomStringConvertible, Sendable {
    /// What happened, for the log.
    public let description: String
    /// The server's SQLSTATE, when the server answered with an error.
    public let sqlState: String?
    /// The constraint the server named, if any.
    public let constraint: String?

    /// SQL states worth running a transaction again for: serialization failure, deadlock, and a
    /// unique violation from a concurrent insert.
    static let retriedStates: Set<String> = ["40001", "40P01", "23505"]

    static func unavailable(_ message: String) -> PostgresStoreError {
        PostgresStoreError(description: "PostgreSQL unavailable: " + message, sqlState: nil, constraint: nil)
    }

    static func configuration(_ message: String) -> PostgresStoreError {
        PostgresStoreError(description: message, sqlState: nil, constraint: nil)
    }

    init(description: String, sqlState: String?, constraint: String?) {
        self.description = description
        self.sqlState = sqlState
        self.constraint = constraint
    }

    init(_ error: any Error) {
        if let error = error as? PSQLError {
            let state = error.serverInfo?[.sqlState]
            var text = "PostgreSQL error \(error.code)"
            if let state { text += " [\(state)]" }
            if let message = error.serverInfo?[.message] { text += ": " + message }
            if let underlying = error.underlying { text += " (\(underlying))" }
            self.init(description: text, sqlState: state, constraint: error.serverInfo?[.constraintName])
        } else if let error = error as? PostgresStoreError {
            self = error
        } else {
            self.init(description: "PostgreSQL: \(error)", sqlState: nil, constraint: nil)
        }
    }
}
