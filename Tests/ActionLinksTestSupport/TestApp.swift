import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import ServiceLifecycle

/// The application `actionlinks serve` builds, run inside the test process on the shipped
/// configuration, with a fresh data directory, `ACTIONLINKS_*` overrides, an in-memory
/// ``Mailbox`` instead of the mail backend, the clock a test chooses (``ManualClock`` to expire
/// codes without sleeping) and captured logs.
///
/// ``router(environment:clock:mail:dataDirectory:_:)`` sends requests straight to the responder
/// (HummingbirdTesting's `.router`: no socket); ``live(environment:clock:mail:dataDirectory:_:)``
/// runs the whole server on a loopback port, connection guard and association fast path
/// included, for tests where the socket matters (raw bytes, slow clients, TLS, the peer address).
/// Every app has its own data directory and port, so suites run in parallel.
public final class TestApp: LinkDomainClient {
    /// Where the app's mail goes.
    public enum MailDelivery: Sendable {
        /// To ``TestApp/mailbox``.
        case mailbox
        /// To the configured backend (`log`, `sendmail`, `webhook` or `smtp`), as in production.
        case configuredBackend
        /// Through `transport`, a test's own (one that fails, or waits).
        case transport(MailTransport)
    }

    enum Transport: Sendable {
        case router(any TestClientProtocol)
        case live(base: String)
    }

    /// The mail the app sent (with ``MailDelivery/mailbox``).
    public let mailbox: Mailbox
    /// What the app logged.
    public let logs: CapturedLogs
    /// The clock the app reads.
    public let clock: any ServiceClock
    /// The app's data directory.
    public let dataDirectory: URL
    /// The configuration the app runs.
    public let configuration: ActionLinksConfiguration
    let transport: Transport

    init(
        mailbox: Mailbox, logs: CapturedLogs, clock: any ServiceClock, dataDirectory: URL, configuration: ActionLinksConfiguration,
        transport: Transport
    ) {
        self.mailbox = mailbox
        self.logs = logs
        self.clock = clock
        self.dataDirectory = dataDirectory
        self.configuration = configuration
        self.transport = transport
    }

    /// `http://127.0.0.1:<port>` (or `https://`), for URLSession, curl and raw sockets; only a live app has one.
    public var base: String {
        guard case .live(let base) = transport else { preconditionFailure("only TestApp.live has a socket") }
        return base
    }

    /// The port a live app listens on.
    public var port: Int { Int(base.split(separator: ":").last ?? "") ?? 0 }

    public func request(_ method: String, _ path: String, body: Data?, headers: [String: String]) async throws -> HTTPReply {
        switch transport {
        case .live(let base):
            return try await HTTPOrigin(base).request(method, path, body: body, headers: headers)
        case .router(let client):
            return try await RouterClient(client).request(method, path, body: body, headers: headers)
        }
    }

    /// Runs `body` against the app, requests going straight to its responder. `config` is another
    /// configuration file than the shipped one (``StrictUpstream/configFile(_:)``).
    public static func router<Value: Sendable>(
        environment: [String: String] = [:], clock: any ServiceClock = SystemServiceClock(), mail: MailDelivery = .mailbox,
        dataDirectory: URL? = nil, config: URL? = nil, _ body: @Sendable (TestApp) async throws -> Value
    ) async throws -> Value {
        let setup = try await Setup(environment: environment, clock: clock, mail: mail, dataDirectory: dataDirectory, config: config)
        defer { setup.removeDataDirectory() }
        let application = try await setup.build(onRunning: { _ in })
        return try await application.test(.router) { client in
            try await body(setup.app(.router(client)))
        }
    }

    /// Runs `body` while the app serves on a free loopback port; stops it gracefully afterwards.
    public static func live<Value: Sendable>(
        environment: [String: String] = [:], clock: any ServiceClock = SystemServiceClock(), mail: MailDelivery = .mailbox,
        dataDirectory: URL? = nil, config: URL? = nil, _ body: @Sendable (TestApp) async throws -> Value
    ) async throws -> Value {
        let setup = try await Setup(environment: environment, clock: clock, mail: mail, dataDirectory: dataDirectory, config: config)
        defer { setup.removeDataDirectory() }
        let (running, continuation) = AsyncThrowingStream.makeStream(of: String.self)
        let application = try await setup.build(onRunning: { continuation.yield($0) })
        let services = ServiceGroup(
            configuration: .init(services: [application], gracefulShutdownSignals: [], logger: setup.logs.logger(level: .critical)))
        return try await withTaskExecutorPreference(LiveExecutor.shared) {
            try await run(services, base: running, continuation: continuation, setup: setup, body)
        }
    }

    /// Runs the server and `body` (on the live executor), then stops the server.
    private static func run<Value: Sendable>(
        _ services: ServiceGroup, base running: AsyncThrowingStream<String, any Error>,
        continuation: AsyncThrowingStream<String, any Error>.Continuation, setup: Setup, _ body: @Sendable (TestApp) async throws -> Value
    ) async throws -> Value {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await services.run()
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                    throw error
                }
            }
            do {
                var urls = running.makeAsyncIterator()
                guard let base = try await urls.next() else { throw TestSupportError("the server stopped before it listened") }
                let value = try await body(setup.app(.live(base: base)))
                try await stop(services, group: &group)
                return value
            } catch {
                try? await stop(services, group: &group)
                throw error
            }
        }
    }

    /// Asks the server to finish (requests in flight, queued mail), and cancels it if it has not within 10 s.
    private static func stop(_ services: ServiceGroup, group: inout ThrowingTaskGroup<Void, any Error>) async throws {
        await services.triggerGracefulShutdown()
        group.addTask { try? await Task.sleep(for: .seconds(10)) }
        defer { group.cancelAll() }
        // The first to finish: the server (done), or the deadline (then the server is cancelled,
        // as the binary's harness terminated a process that outlived its test).
        try await group.next()
    }

    /// The configuration, data directory, mailbox and logs of one app, made before it is built.
    struct Setup: Sendable {
        let configuration: ActionLinksConfiguration
        let dataDirectory: URL
        let ownsDataDirectory: Bool
        let clock: any ServiceClock
        let mail: MailDelivery
        let mailbox = Mailbox()
        let logs = CapturedLogs()

        init(environment: [String: String], clock: any ServiceClock, mail: MailDelivery, dataDirectory: URL?, config: URL?) async throws {
            ProcessSetup.prepare()  // as `serve` does
            let directory = dataDirectory ?? TestProject.temporaryDirectory("actionlinks-app")
            if dataDirectory == nil { try await SharedKeys.install(in: directory, now: clock.now) }
            var overrides = TestProject.overrides(dataDirectory: directory)
            for (key, value) in try await SharedKeys.added(to: environment) { overrides[key] = value }
            // As `serve` reads it: the file, the overrides, then what only a server needs.
            let file = config?.path ?? Repository.configFile
            configuration = try ActionLinksConfiguration.load(file: file, environment: overrides)
            try configuration.service.checkServable(file: file)
            self.dataDirectory = directory
            ownsDataDirectory = dataDirectory == nil
            self.clock = clock
            self.mail = mail
        }

        func build(onRunning: @escaping @Sendable (String) -> Void) async throws -> some ApplicationProtocol {
            let transport: MailTransport? =
                switch mail {
                case .mailbox: mailbox.transport
                case .configuredBackend: nil
                case .transport(let given): given
                }
            do {
                return try await LinkDomainServer.buildApplication(
                    configuration: configuration, www: Repository.www, logger: logs.logger(level: .info), clock: clock,
                    mailTransport: transport, onRunning: onRunning)
            } catch {
                removeDataDirectory()
                throw error
            }
        }

        func app(_ transport: Transport) -> TestApp {
            TestApp(
                mailbox: mailbox, logs: logs, clock: clock, dataDirectory: dataDirectory, configuration: configuration, transport: transport
            )
        }

        func removeDataDirectory() {
            if ownsDataDirectory { try? FileManager.default.removeItem(at: dataDirectory) }
        }
    }
}

/// HummingbirdTesting's `.router` client of an application (no socket) as an ``HTTPTarget``: how a
/// router ``TestApp`` and the federated apps (``FederatedApp/run(label:store:environment:clock:_:configure:)``)
/// are sent requests.
public struct RouterClient: LinkDomainClient {
    let client: any TestClientProtocol

    public init(_ client: any TestClientProtocol) { self.client = client }

    public func request(_ method: String, _ path: String, body: Data?, headers: [String: String]) async throws -> HTTPReply {
        var fields = HTTPFields()
        for (name, value) in headers {
            guard let field = HTTPField.Name(name) else { throw TestSupportError("not a header name: \(name)") }
            fields.append(HTTPField(name: field, value: value))
        }
        let response = try await client.execute(
            uri: path, method: HTTPRequest.Method(method) ?? .get, headers: fields, body: body.map { ByteBuffer(bytes: $0) })
        var answer: [String: String] = [:]
        for field in response.headers {
            answer[field.name.canonicalName] = answer[field.name.canonicalName].map { $0 + ", " + field.value } ?? field.value
        }
        return HTTPReply(status: response.status.code, headers: answer, body: Data(buffer: response.body))
    }
}

/// One key set for every app a test makes: a 2048-bit RSA key costs a tenth of a second of CPU to
/// make, and hundreds of apps each making their own kept the few cooperative threads busy enough to
/// delay other tests' timers by seconds. An app with a new data directory gets its ID-token key
/// (its code and form keys are made at start, as `serve` makes them); an app or server on
/// PostgreSQL gets the whole set (`ACTIONLINKS_KEYS_JSON`), as a deployment of several instances
/// mounts it. A test that passes its own data directory (rotation, `keys rotate`) gets the server's
/// own behaviour: a key made at start.
public enum SharedKeys {
    /// The set, made once per test process by the server's own code.
    public static let set: Task<KeySet, any Error> = Task { try KeySet.make(now: .epoch) }

    /// The set's JSON, as `actionlinks keys init` prints it.
    public static func json() async throws -> String { String(decoding: try await set.value.json(), as: UTF8.self) }

    /// `environment` with the shared set added when it names a PostgreSQL store and no keys of its
    /// own: a server on a shared store never makes keys.
    public static func added(to environment: [String: String]) async throws -> [String: String] {
        guard environment["ACTIONLINKS_STORE"]?.hasPrefix("postgres") == true, environment["ACTIONLINKS_KEYS_FILE"] == nil,
            environment["ACTIONLINKS_KEYS_JSON"] == nil
        else { return environment }
        var environment = environment
        environment["ACTIONLINKS_KEYS_JSON"] = try await json()
        return environment
    }

    /// Writes the set's ID-token key into `directory`'s `keys/id-tokens` as made at `now`, with the
    /// modes the server requires (0700 folders, a 0600 file).
    static func install(in directory: URL, now: Timestamp) async throws {
        let pem = Data(try await set.value.idTokenKeys[0].pem.utf8)
        var folder = directory
        for component in ["keys", "id-tokens"] {
            folder = folder.appendingPathComponent(component)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let file = folder.appendingPathComponent("\(now.seconds).pem")
        guard FileManager.default.createFile(atPath: file.path, contents: pem, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
    }
}
