import ActionLinksConfiguration
import ActionLinksDomain
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
    /// Codes being issued, each with its sign-in code if it has one: those of concurrent requests
    /// go in one statement (``PostgresCodeStore``).
    let issues: GroupCommit<CodeIssue, Void>
    /// Email-link sign-ins: those of concurrent requests go in one statement (``PostgresAccountStore``).
    let emailLinkSignIns: GroupCommit<EmailLinkSignIn, EmailLinkSignInOutcome>

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
        var configuration =
            if let socket = location.socketPath {
                // libpq uses no TLS on a Unix socket either: the connection never leaves the machine.
                PostgresClient.Configuration(
                    unixSocketPath: socket, username: location.username, password: location.password, database: location.database)
            } else {
                PostgresClient.Configuration(
                    host: location.host, port: location.port, username: location.username, password: location.password,
                    database: location.database, tls: tls)
            }
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
        issues = GroupCommit(maximumBatch: 256, concurrency: 4) { issues in
            guard let database = store.value else { return issues.map { _ in .failure(CancellationError()) } }
            return await PostgresCodeStore.issueBatch(issues, database: database)
        }
        emailLinkSignIns = GroupCommit(maximumBatch: 128, concurrency: 4) { statements in
            guard let database = store.value else { return statements.map { _ in .failure(CancellationError()) } }
            return await PostgresAccountStore.emailLinkSignInBatch(statements, database: database)
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
    /// The sign-in code store on this database.
    public var signInCodes: PostgresSignInCodeStore { PostgresSignInCodeStore(database: self) }
    /// The mail outbox on this database.
    public var outbox: PostgresMailOutboxStore { PostgresMailOutboxStore(database: self) }
}

/// A ``Timestamp`` is a `bigint` column of milliseconds.
extension Timestamp: PostgresNonThrowingEncodable, PostgresDecodable {
    public static var psqlType: PostgresDataType { .int8 }
    public static var psqlFormat: PostgresFormat { .binary }

    public func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        milliseconds.encode(into: &buffer, context: context)
    }

    public init<JSONDecoder: PostgresJSONDecoder>(
        from buffer: inout ByteBuffer, type: PostgresDataType, format: PostgresFormat, context: PostgresDecodingContext<JSONDecoder>
    ) throws {
        self.init(milliseconds: try Int64(from: &buffer, type: type, format: format, context: context))
    }
}
