import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksStores
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle

/// Builds the link domain exactly as `actionlinks serve` runs it, so tests start what production runs.
public enum LinkDomainServer {
    /// The suites a TLS 1.2 client may get (`server.tls`): forward secrecy (ECDHE) and an AEAD
    /// (AES-GCM or ChaCha20-Poly1305) only. TLS 1.3's own suites, all of that kind, are BoringSSL's.
    static let tls12CipherSuites: [NIOTLSCipher] = [
        .TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        .TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, .TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        .TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ]

    /// The listener's TLS: NIOSSL's server defaults (which accept TLS 1.0 and 1.1 and suites without
    /// forward secrecy) narrowed to TLS 1.2 and later with ``tls12CipherSuites``.
    static func tlsConfiguration(certificateChain: [NIOSSLCertificateSource], privateKey: NIOSSLPrivateKey) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: certificateChain, privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuiteValues = tls12CipherSuites
        return configuration
    }

    /// The application for `configuration`, serving the pages and templates in `www`.
    ///
    /// `clock` and `mailTransport` replace the system clock and the configured mail backend (tests
    /// move time by hand and read the mail they sent). `onRunning` receives the URL the server listens on once the socket is bound (with the real
    /// port when the configuration asks for port 0).
    public static func buildApplication(
        configuration: ActionLinksConfiguration, www: String, logger: Logger, clock: any ServiceClock = SystemServiceClock(),
        mailTransport: MailTransport? = nil, onRunning: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> some ApplicationProtocol {
        let settings = configuration.service
        let codes: any CodeStore
        let accounts: any AccountStore
        let tenants: any TenantStore
        let flows: any FederatedFlowStore
        let signInCodes: any SignInCodeStore
        let outbox: any MailOutboxStore
        var storeServices: [any Service] = []
        var postgres: PostgresStore?
        switch settings.store {
        case .sqlite(let path):
            do {
                let database = try SQLiteDatabase(path: path)
                (codes, accounts, tenants) = (database.codes, database.accounts, database.tenants)
                flows = database.federatedFlows
                signInCodes = database.signInCodes
                outbox = database.outbox
            } catch {
                throw ServerStartError("store: cannot open the SQLite database at \(path): \(error)")
            }
        case .postgres(let location):
            do {
                let database = try PostgresStore(location: location, logger: logger)
                (codes, accounts, tenants) = (database.codes, database.accounts, database.tenants)
                flows = database.federatedFlows
                signInCodes = database.signInCodes
                outbox = database.outbox
                storeServices.append(database.client)
                postgres = database
            } catch {
                throw ServerStartError(error.description)
            }
        }
        // What `actionlinks config check --production` finds, said once more at every start.
        if !settings.server.development {
            let hasKeys = (try? ServerKeys.existing(in: settings.dataDirectory)) != nil
            for finding in settings.productionFindings(environment: ProcessInfo.processInfo.environment, dataDirectoryHasKeys: hasKeys) {
                logger.warning("\(finding)")
            }
        }
        let (keys, signingOrigin) = try Self.keys(settings)
        let templates = try await PageTemplates(www: www, defaultLanguage: settings.pages.defaultLanguage)
        let staticFiles = try StaticFiles(www: www)
        let metrics = ServerMetrics()
        let mailer = Mailer(settings: settings.mail, templates: templates, outbox: outbox, formKey: keys.formKey, logger: logger)
        let deliverer: MailDeliverer
        if let mailTransport {
            deliverer = MailDeliverer(
                mailer: mailer, transport: mailTransport, metrics: metrics, storeIsLocal: postgres == nil, clock: clock, logger: logger)
        } else {
            do throws(ActionError) {
                deliverer = try MailDeliverer.configured(
                    mailer: mailer, printsSecrets: settings.mail.logContents.map { $0 == .full } ?? settings.server.development,
                    ehloName: settings.linkDomains[0].host, metrics: metrics, storeIsLocal: postgres == nil, clock: clock, logger: logger)
            } catch {
                throw ServerStartError(error.detail ?? "\(error)")
            }
        }
        let services = LinkDomainServices(
            configuration: configuration, codes: codes, accounts: accounts, tenants: tenants, flows: flows, signInCodes: signInCodes,
            keys: keys, signingKeys: signingOrigin, mailer: mailer, deliverer: deliverer,
            metrics: metrics,
            clock: clock, logger: logger)
        do {
            try await services.signingKeys.refresh(now: clock.now)
        } catch {
            throw ServerStartError("keys: \(error)")
        }
        let associations = try AssociationRoutes(services: services)
        let router = LinkDomainRouter.build(services: services, templates: templates, staticFiles: staticFiles, associations: associations)
        let server: HTTPServerBuilder
        let scheme: String
        let files = associations.prebuilt
        let limits = settings.server
        // The fast paths' handlers, made anew for each connection.
        let fastPaths = Self.fastPaths(
            services: services, templates: templates, files: files, codes: codes, accounts: accounts, metrics: metrics, logger: logger)
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: fastPaths(),
            // The idle timeout is the connection guard's (it hears of the fast paths' answers).
            idleTimeout: nil)
        let timeouts = ConnectionGuard.Timeouts(
            header: .seconds(Int64(limits.headerTimeout)), body: .seconds(Int64(limits.bodyTimeout)),
            idle: .seconds(Int64(limits.idleTimeout)))
        let guarded = HTTPServerBuilder { responder in GuardedHTTP1Channel(responder: responder, configuration: http1, timeouts: timeouts) }
        if let tls = settings.server.tls {
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(tls.certificate).map { NIOSSLCertificateSource.certificate($0) }
                let key = try NIOSSLPrivateKey(file: tls.privateKey, format: .pem)
                server = try .tls(guarded, tlsConfiguration: Self.tlsConfiguration(certificateChain: chain, privateKey: key))
            } catch {
                throw ServerStartError("server.tls: cannot load \(tls.certificate) / \(tls.privateKey): \(error)")
            }
            scheme = "https"
        } else {
            server = guarded
            scheme = "http"
        }
        FileDescriptorLimit.raise(toFit: limits.maximumConnections, logger: logger)
        let storeDescription = settings.store.description
        let domains = settings.linkDomains.map(\.origin).joined(separator: ", ")
        var application = Application(
            router: router, server: server,
            configuration: .init(
                address: .hostname(settings.server.host, port: settings.server.port), serverName: nil,
                availableConnectionsDelegate: MaximumAvailableConnections(limits.maximumConnections, logger: logger)),
            services: storeServices + [
                deliverer, StoragePurge(codes: codes, signInCodes: signInCodes, accounts: accounts, clock: clock, logger: logger),
                KeyRotation(keys: services.signingKeys, serverKeys: keys, clock: clock, logger: logger),
            ] + (services.upstream.map { [$0 as any Service] } ?? []),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? settings.server.port
                let host = settings.server.host.contains(":") ? "[\(settings.server.host)]" : settings.server.host
                let url = "\(scheme)://\(host):\(port)"
                logger.notice("serving \(url) for \(domains); store \(storeDescription)")
                onRunning(url)
            },
            logger: logger)
        if let postgres {
            // The pool runs as a service from here on; the schema is brought up to date before the
            // socket opens, so no request meets an old schema.
            application.beforeServerStarts {
                do {
                    try await postgres.migrate()
                } catch {
                    throw ServerStartError("store: cannot prepare the PostgreSQL database \(postgres.location): \(error)")
                }
                deliverer.storeIsReady()
            }
        } else {
            deliverer.storeIsReady()
        }
        return application
    }

    /// The fast paths' handlers of each new connection, in pipeline order. The association files
    /// are answered on the event loop. With a store that reads on the caller's thread (SQLite), so
    /// is the landing page (its read never waits); the SDKs' token refreshes are answered from the
    /// event loop on every store (at once with SQLite's reads, from a task with PostgreSQL's); with
    /// a code store that makes all of a link's writes in one (both), links are issued from the event
    /// loop too, answered when their write has committed. In upstream mode every code and session
    /// is upstream's: nothing but the files is answered there.
    static func fastPaths(
        services: LinkDomainServices, templates: PageTemplates, files: [String: PrebuiltJSON], codes: any CodeStore,
        accounts: any AccountStore, metrics: ServerMetrics, logger: Logger
    ) -> @Sendable () -> [any RemovableChannelHandler] {
        let settings = services.settings
        let local = services.upstream == nil
        let pages =
            local
            ? (codes as? any ImmediateCodeLookup).map {
                ActionPageFastPath(pages: ActionPages(services: services, templates: templates), codes: $0)
            } : nil
        // The refresh on every store: at once where the session is read on the event loop
        // (SQLite's), from a task running the route's own refresh elsewhere (PostgreSQL's).
        let refresher =
            local
            ? TokenRefreshFastPath(
                signIn: services.signIn, sessions: accounts as? any ImmediateSessionLookup, settings: settings,
                projectID: settings.project.id, logger: logger) : nil
        // Issuing from the event loop wherever the code store writes a link in one call (SQLite's
        // group commit, PostgreSQL's batched statement): all the fast paths are one handler, so a
        // request the router answers pays for one, whichever fast paths the store allows (with a
        // handler each, the issuing handler made a PostgreSQL refresh about 6% dearer).
        let issuing =
            local && codes is any LinkIssuingInOneWrite
            ? SendOobCodeFastPath(
                issuer: services.issuer, tenants: services.tenants, settings: settings, accessTokens: services.serviceAccountTokens,
                logger: logger) : nil
        let routes = ServerFastPaths(association: AssociationFastPath(files: files), page: pages, refresh: refresher, issuing: issuing)
        return { [FastPathHandler(routes, metrics: metrics, logger: logger)] }
    }
}

extension LinkDomainServer {
    /// The keys that hash codes and sign forms, and where the ID-token keys are: a shared key set
    /// (`keys.file` or `keys.json`); else the data directory's, made on first start, except on a
    /// shared store, where instances that each made their own would disagree (a form rendered by
    /// one failing on the next), so its keys must be there already or the start stops.
    static func keys(_ settings: ServiceSettings) throws -> (ServerKeys, SigningKeys.Origin) {
        let idTokens = (settings.dataDirectory as NSString).appendingPathComponent("keys/id-tokens")
        do {
            if let source = settings.keys.source {
                return (ServerKeys(keySet: try source.read()), .keySet(source))
            }
            guard case .postgres = settings.store else {
                return (try ServerKeys(directory: settings.dataDirectory), .directory(idTokens, makes: true))
            }
            guard let existing = try ServerKeys.existing(in: settings.dataDirectory),
                !((try? SigningKeys.files(in: idTokens)) ?? []).isEmpty
            else { throw ServerStartError(Self.sharedKeysMissing) }
            return (existing, .directory(idTokens, makes: false))
        } catch let error as ServerStartError {
            throw error
        } catch {
            throw ServerStartError("keys: \(error)")
        }
    }

    /// What a server on a shared store without shared keys says.
    static let sharedKeysMissing = """
        keys: instances on one PostgreSQL must share their keys (a form, a sign-in code or an ID token made by one \
        must hold on the others), and a server never invents them on a shared store. Make them once: \
        `actionlinks keys init --output keys.json` (or `--from-data-directory <folder>` to keep a data directory's), \
        store that file as one secret (`gcloud secrets create actionlinks-keys --data-file=keys.json`, or \
        `kubectl create secret generic actionlinks-keys --from-file=keys.json`), mount it read-only in every instance \
        and set keys.file (ACTIONLINKS_KEYS_FILE) to its path, or give the JSON in ACTIONLINKS_KEYS_JSON
        """
}

extension KeySettings {
    /// The shared key set this section names, if any.
    var source: KeySetSource? { file.map { .file($0) } ?? json.map { .inline($0) } }
}

/// A problem that stops the server from starting, named by its configuration key.
public struct ServerStartError: Error, CustomStringConvertible {
    /// What is wrong and where.
    public let description: String
    init(_ description: String) { self.description = description }
}

/// The process's limit on open files, which bounds connections as much as `maximumConnections` does.
enum FileDescriptorLimit {
    /// Descriptors kept for everything but connections: the listening socket, database files and
    /// connections, mail pipes, `www/` while it loads.
    static let reserve = 128

    /// Raises the soft limit towards the hard one until `connections` fit, and warns if they cannot.
    static func raise(toFit connections: Int, logger: Logger) {
        var limit = rlimit()
        #if os(Linux)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return }
        let needed = rlim_t(connections + reserve)
        if limit.rlim_cur < needed {
            limit.rlim_cur = min(needed, limit.rlim_max)
            _ = setrlimit(resource, &limit)
            _ = getrlimit(resource, &limit)
        }
        if limit.rlim_cur < needed {
            logger.warning(
                "server.maximumConnections is \(connections) but the process may open only \(limit.rlim_cur) files; raise the limit (ulimit -n, LimitNOFILE=) to at least \(needed) or lower server.maximumConnections"
            )
        }
    }
}

/// Reads the signing keys again every ten minutes: makes a new one when the newest is due for
/// rotation, and takes up keys another process added (`actionlinks keys rotate`). A shared key set
/// in a file is also looked at every ten seconds and read again as soon as it changed (a new
/// secret version: Kubernetes swaps its `..data` link, Cloud Run its mounted file), so a rotation
/// reaches every instance within seconds.
struct KeyRotation: Service {
    let keys: SigningKeys
    /// The code and form keys the server runs with: a set whose other keys changed needs a restart.
    let serverKeys: ServerKeys
    let clock: any ServiceClock
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            var watched: (path: String, identity: FileIdentity?)?
            if case .keySet(.file(let path)) = keys.origin { watched = (path, FileIdentity(path)) }
            var sinceRefresh: Duration = .zero
            while !Task.isCancelled {
                let step: Duration = watched == nil ? .seconds(600) : .seconds(10)
                try await Task.sleep(for: step)
                sinceRefresh += step
                var changed = false
                if let (path, identity) = watched {
                    let now = FileIdentity(path)
                    changed = now != identity
                    watched = (path, now)
                }
                guard changed || sinceRefresh >= .seconds(600) else { continue }
                sinceRefresh = .zero
                do {
                    try await keys.refresh(now: clock.now)
                    if changed { try reportKeySet(at: watched?.path ?? "") }
                } catch {
                    logger.error("reading the signing keys failed; the keys loaded before stay in use", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Logs that a changed key set's ID-token keys are in use, and that its code or form keys,
    /// when those changed too, wait for a restart.
    private func reportKeySet(at path: String) throws {
        let set = try KeySetSource.file(path).read()
        logger.notice("the key set changed: its ID-token keys are in use", metadata: ["file": "\(path)"])
        if !ServerKeys(keySet: set).sameKeys(as: serverKeys) {
            logger.warning(
                "the key set's code or form keys changed: they are used after a restart (the ones in use stay valid until then)",
                metadata: ["file": "\(path)"])
        }
    }
}

/// What tells a file's versions apart: the device, inode, size and change time of what its path
/// resolves to (a swapped symlink resolves to another file).
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let changed: Int

    init?(_ path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        changed = Int(status.st_ctim.tv_sec) &* 1_000_000_000 &+ Int(status.st_ctim.tv_nsec)
    }
}

/// Deletes codes a week after they expired or were used, rate-limit counts once their window is
/// over (the longest is the sign-in codes' 30 days), sign-in codes as soon as they expired or
/// were used (nothing about them is shown afterwards), and the tombstones of revoked sessions and
/// of deleted accounts' sessions after ``sessionTombstoneLifetime``, once an hour.
struct StoragePurge: Service {
    let codes: any CodeStore
    let signInCodes: any SignInCodeStore
    let accounts: any AccountStore
    let clock: any ServiceClock
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            // The first purge waits a minute: services start before the server's start hooks,
            // and with PostgreSQL the schema is made by one of them (the migrations).
            try await Task.sleep(for: .seconds(60))
            while !Task.isCancelled {
                do {
                    try await purgeOnce()
                } catch {
                    logger.warning("purging old codes and sessions failed", metadata: ["error": "\(error)"])
                }
                try await Task.sleep(for: .seconds(3600))
            }
        }
    }

    /// One pass of the hourly purge, by the clock.
    func purgeOnce() async throws {
        let week: Duration = .seconds(7 * 86_400)
        let longestWindow: Duration = .seconds(30 * 86_400)
        let removed = try await codes.purge(
            before: clock.now - week, countsBefore: clock.now - week, longCountsBefore: clock.now - longestWindow)
        if removed > 0 { logger.info("purged old codes", metadata: ["count": "\(removed)"]) }
        let signInCodes = try await signInCodes.purge(before: clock.now)
        if signInCodes > 0 { logger.info("purged old sign-in codes", metadata: ["count": "\(signInCodes)"]) }
        let sessions = try await accounts.purgeEndedSessions(before: clock.now - sessionTombstoneLifetime)
        if sessions > 0 { logger.info("purged the tombstones of ended sessions", metadata: ["count": "\(sessions)"]) }
    }
}
