import ActionLinksConfiguration
import ActionLinksServer
import Foundation
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL server the tests use: `POSTGRES_TEST_URL`, which `scripts/test.sh` (and so
/// `.ci/run`) sets after starting a throw-away cluster. Each test gets a database of its own.
enum PostgresTestServer {
    static let variable = "POSTGRES_TEST_URL"

    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "\(PostgresTestServer.variable) is not set: run the tests with `bash scripts/test.sh` (it starts a throw-away PostgreSQL cluster), "
                + "or start one with `bash scripts/postgres-test-cluster.sh start /tmp/pg 55432` and export \(PostgresTestServer.variable) with the URL it prints"
        }
    }

    /// The server's URL, or an error that says how to get one.
    static func baseURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment[variable], !url.isEmpty else { throw Missing() }
        return url
    }

    /// A client on the base database, for creating test databases; runs for the whole test process.
    static let adminClient: Result<PostgresClient, any Error> = {
        do {
            let location = try PostgresLocation(url: try baseURL())
            var configuration = PostgresClient.Configuration(
                host: location.host, port: location.port, username: location.username, password: location.password, database: location.database,
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
    static func freshDatabaseURL() async throws -> String {
        let base = try baseURL()
        let client = try adminClient.get()
        let name = "actionlinks_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        var components = URLComponents(string: base)!
        components.path = "/" + name
        return components.string!
    }

    /// A migrated store on a new, empty database; its pool runs until the test process ends.
    static func freshStore() async throws -> PostgresStore {
        let location = try PostgresLocation(url: try await freshDatabaseURL())
        let database = try PostgresStore(location: location, logger: Logger(label: "test-store"))
        Task.detached { await database.client.run() }
        try await database.migrate()
        return database
    }

    /// Runs one SQL statement on the database at `url` and returns the rows' first column as text.
    static func column(_ sql: String, url: String) async throws -> [String] {
        let location = try PostgresLocation(url: url)
        let configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password, database: location.database,
            tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: Logger(label: "test-sql"))
        defer { Task { try? await connection.close() } }
        var values: [String] = []
        for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "test-sql")).decode(String.self) {
            values.append(value)
        }
        return values
    }
}

/// A private PostgreSQL cluster for a test that stops or kills the server (the shared one must stay up).
final class PrivatePostgresCluster: Sendable {
    let directory: URL
    let port: Int
    let url: String

    init() async throws {
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("actionlinks-pg-\(UUID().uuidString.prefix(8))")
        port = try Self.freePort()
        url = try await Self.script(["start", directory.path, String(port)]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func stop() async throws { _ = try await Self.script(["stop", directory.path]) }
    func start() async throws { _ = try await Self.script(["start", directory.path, String(port)]) }

    /// Stops the cluster and removes its files.
    func remove() async {
        _ = try? await Self.script(["stop", directory.path])
        try? FileManager.default.removeItem(at: directory)
    }

    static func freePort() throws -> Int {
        let socket = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw TestServerError(message: "cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @discardableResult
    static func script(_ arguments: [String]) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [TestServer.root.appendingPathComponent("scripts/postgres-test-cluster.sh").path] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = TextBuffer(), errors = TextBuffer()
        out.fileHandleForReading.readabilityHandler = { output.append($0.availableData) }
        err.fileHandleForReading.readabilityHandler = { errors.append($0.availableData) }
        while process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        out.fileHandleForReading.readabilityHandler = nil
        err.fileHandleForReading.readabilityHandler = nil
        output.append(out.fileHandleForReading.readDataToEndOfFile())
        errors.append(err.fileHandleForReading.readDataToEndOfFile())
        guard process.terminationStatus == 0 else {
            throw TestServerError(message: "postgres-test-cluster.sh \(arguments.joined(separator: " ")) failed:\n\(errors.text)")
        }
        return output.text
    }
}
