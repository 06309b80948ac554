import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import Foundation
import Logging
import PostgresNIO

/// The PostgreSQL server the tests use: `POSTGRES_TEST_URL`, which `scripts/test.sh` (and so
/// `.ci/run`) sets after starting a throw-away cluster. Each test gets a database of its own.
public enum PostgresTestServer {
    public static let variable = "POSTGRES_TEST_URL"

    /// The server's URL, or an error that says how to get one.
    public static func baseURL() throws -> String {
        try MissingTestService.url(
            variable,
            remedy: " (it starts a throw-away PostgreSQL cluster), "
                + "or start one with `bash scripts/postgres-test-cluster.sh start /tmp/pg 55432` and export \(variable) with the URL it prints"
        )
    }

    /// A client on the base database, for creating test databases; runs for the whole test process.
    public static let adminClient: Result<PostgresClient, any Error> = {
        do {
            let location = try PostgresLocation(url: try baseURL())
            var configuration = PostgresClient.Configuration(
                host: location.host, port: location.port, username: location.username, password: location.password,
                database: location.database,
                tls: .disable)
            configuration.options.maximumConnections = 4
            let client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "test-admin"))
            Task.detached { await client.run() }
            return .success(client)
        } catch {
            return .failure(error)
        }
    }()

    /// The URL of a new, empty database on the test server.
    public static func freshDatabaseURL() async throws -> String {
        let base = try baseURL()
        let client = try adminClient.get()
        let name = "actionlinks_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        var components = URLComponents(string: base)!
        components.path = "/" + name
        // Deadlines as hang guards, not bounds: the suite runs many tests (and a browser) at once on
        // few cores, maybe beside a build that saturates the disk, and these tests are about
        // behaviour, not the 503 deadlines (the outage tests set their own). At 20 s, a fresh-clone
        // CI run beside a parallel build saw five tests fail waiting for a connection.
        components.queryItems = [
            URLQueryItem(name: "connect_timeout", value: "120"), URLQueryItem(name: "statement_timeout", value: "60"),
        ]
        return components.string!
    }

    /// A migrated store on a new, empty database; its pool runs until the test process ends.
    public static func freshStore() async throws -> PostgresStore {
        // A small pool: every test's store stays connected until the test process ends, and dozens
        // of them share the cluster's max_connections.
        try await store(url: try await freshDatabaseURL())
    }

    /// A migrated store on the database at `url` (one a server also uses, say); its pool runs
    /// until the test process ends.
    public static func store(url: String) async throws -> PostgresStore {
        let location = try PostgresLocation(url: url + (url.contains("?") ? "&" : "?") + "pool_size=4")
        let database = try PostgresStore(location: location, logger: Logger(label: "test-store"))
        Task.detached { await database.client.run() }
        try await database.migrate()
        return database
    }

    /// Runs one SQL statement on the database at `url` and returns the rows' first column as text.
    public static func column(_ sql: String, url: String) async throws -> [String] {
        let location = try PostgresLocation(url: url)
        let configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password, database: location.database,
            tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: Logger(label: "test-sql"))
        defer { Task { try? await connection.close() } }
        var values: [String] = []
        for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "test-sql")).decode(
            String.self)
        {
            values.append(value)
        }
        return values
    }
}

/// A private PostgreSQL cluster for a test that stops or kills the server (the shared one must stay up).
public final class PrivatePostgresCluster: Sendable {
    /// The cluster's files.
    public let directory: URL
    /// Its loopback port.
    public let port: Int
    /// Its URL, as `postgres-test-cluster.sh start` printed it.
    public let url: String

    /// Starts a new cluster; with `tls`, it also accepts TLS with a self-signed certificate
    /// (``certificate``); with `socketFolder` (a path inside the cluster's files, such as Cloud
    /// SQL's `cloudsql/PROJECT:REGION:INSTANCE`), it listens on that folder's Unix socket only, on
    /// no TCP address, and ``url`` is libpq's socket form.
    public init(tls: Bool = false, socketFolder: String? = nil) async throws {
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("actionlinks-pg-\(UUID().uuidString.prefix(8))")
        port = try LoopbackPort.free()
        var environment = tls ? ["SSL": "1"] : [:]
        if let socketFolder { environment["SOCKET"] = directory.appendingPathComponent(socketFolder).path }
        url = try await Self.script(["start", directory.path, String(port)], environment: environment)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The server's self-signed certificate (a cluster started with `tls`).
    public var certificate: String { directory.appendingPathComponent("server.crt").path }

    /// Stops the server, keeping its files.
    public func stop() async throws { _ = try await Self.script(["stop", directory.path]) }
    /// Starts the server again.
    public func start() async throws { _ = try await Self.script(["start", directory.path, String(port)]) }

    /// Stops the cluster and removes its files.
    public func remove() async {
        _ = try? await Self.script(["discard", directory.path])
        try? FileManager.default.removeItem(at: directory)
    }

    @discardableResult
    public static func script(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> String {
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("pg-script-\(UUID().uuidString).out")
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("pg-script-\(UUID().uuidString).err")
        defer {
            try? FileManager.default.removeItem(at: outputFile)
            try? FileManager.default.removeItem(at: errorFile)
        }
        // posix_spawn rather than Foundation's Process: the script leaves a PostgreSQL server
        // running behind it, and Process was seen never to notice the script's exit then (the
        // script stayed a zombie). Output goes to files, not pipes, because the server
        // inherits the script's descriptors and would hold a pipe open for its whole life.
        // The exit status goes to a file too: another part of the process (Foundation's child
        // reaper) may collect the child before our waitpid does, and then its status is lost.
        let statusFile = FileManager.default.temporaryDirectory.appendingPathComponent("pg-script-\(UUID().uuidString).status")
        defer { try? FileManager.default.removeItem(at: statusFile) }
        let argv =
            [
                "/bin/bash", "-c",
                // The script runs with none of this process's other descriptors: the PostgreSQL server
                // would keep them open for its whole life, among them the connections of servers
                // running in this process (NIO accepts them without close-on-exec), which would then
                // never close for their clients.
                #"for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null; "#
                    + #"bash "$0" "$@"; echo $? > "$STATUS_FILE.tmp"; mv "$STATUS_FILE.tmp" "$STATUS_FILE""#,
                Repository.root.appendingPathComponent("scripts/postgres-test-cluster.sh").path,
            ] + arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorFile.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var pid: pid_t = 0
        let environment = ProcessInfo.processInfo.environment.merging(extra.merging(["STATUS_FILE": statusFile.path]) { $1 }) { $1 }.map {
            "\($0.key)=\($0.value)"
        }
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup($0) } + [nil]
        defer {
            cArguments.forEach { free($0) }
            cEnvironment.forEach { free($0) }
        }
        let spawned = posix_spawn(&pid, "/bin/bash", &actions, nil, cArguments, cEnvironment)
        guard spawned == 0 else {
            throw TestSupportError("cannot run postgres-test-cluster.sh: \(String(cString: strerror(spawned)))")
        }
        var exitStatus: Int32?
        for _ in 0..<2400 {
            if let text = try? String(contentsOf: statusFile, encoding: .utf8),
                let value = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                exitStatus = value
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        var ignored: Int32 = 0
        _ = waitpid(pid, &ignored, 0)  // reap it, unless someone else did
        let output = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        guard exitStatus == 0 else {
            throw TestSupportError(
                "postgres-test-cluster.sh \(arguments.joined(separator: " ")) failed (exit status \(exitStatus.map(String.init) ?? "unknown after 120 s")):\n\(errors)"
            )
        }
        return output
    }
}
