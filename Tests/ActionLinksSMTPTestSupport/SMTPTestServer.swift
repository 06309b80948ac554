import ActionLinksChildProcess
import Foundation
import NIOCore
import NIOPosix
import Subprocess
import Synchronization

/// The repository's root, found from this file's place in it (through a symlinked test folder too).
let repositoryRoot = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

/// A test's failure, said in words.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs a program to its end and returns its exit status and output.
public func run(_ program: String, _ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
    try await runToEnd(program: URL(fileURLWithPath: "/usr/bin/env"), [program] + arguments, directory: repositoryRoot)
}

/// Runs the program at `program` with `arguments` to its end, with `stdin` on its standard input
/// (else none), in `environment` (else this process's) and `directory`; returns its exit status
/// (a signal's number if one ended it) and what it printed. On swift-subprocess, whose spawn closes
/// the inherited descriptors safely (Foundation's `Process.run()` in Swift 6.3.1 can crash doing so)
/// and whose reads and waits hold no cooperative thread.
public func runToEnd(
    program: URL, _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil, directory: URL
) async throws -> (status: Int32, stdout: String, stderr: String) {
    var childEnvironment = Environment.inherit
    if let environment {
        childEnvironment = .custom(
            Dictionary(uniqueKeysWithValues: environment.compactMap { key, value in Environment.Key(rawValue: key).map { ($0, value) } }))
    }
    let result = try await Subprocess.run(
        .path(.init(program.path)), arguments: Arguments(arguments), environment: childEnvironment, workingDirectory: .init(directory.path),
        input: .data(Data((stdin ?? "").utf8)), output: .data(limit: 1 << 30), error: .data(limit: 1 << 30))
    let status: Int32
    switch result.terminationStatus {
    case .exited(let code), .signaled(let code): status = code
    }
    return (status, String(decoding: result.standardOutput, as: UTF8.self), String(decoding: result.standardError, as: UTF8.self))
}

/// Waits for `condition` without a fixed sleep standing in for the event: polls it, and fails only
/// after a generous hang guard.
public func waitUntil(_ what: String, upTo limit: Duration = .seconds(60), _ condition: () throws -> Bool) async throws {
    let start = ContinuousClock.now
    while try !condition() {
        guard ContinuousClock.now - start < limit else { throw TestFailure("still waiting after \(limit) for \(what)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// What the test server recorded about a connection (Tests/SMTPServer/smtp_server.py's events.jsonl).
public struct ServerEvent: Decodable, Sendable {
    public var event: String
    public var peer: Int?
    public var tls: Bool?
    public var mechanism: String?
    public var success: Bool?
}

/// A message the test server accepted, and what Python's email package read from it.
public struct ReceivedMessage: Decodable, Sendable {
    public struct Parsed: Decodable, Sendable {
        public var subject: String
        public var fromName: String?
        public var fromAddress: String?
        public var to: [String]
        public var messageID: String?
        public var date: String?
        public var dateTimestamp: Double?
        public var contentType: String
        public var mimeVersion: String?
        public var autoSubmitted: String?
        public var text: String?
        public var html: String?
        public var textTransferEncoding: String?
        public var htmlTransferEncoding: String?
        public var defects: [String]
        public var longestLine: Int
        public var sevenBit: Bool
    }

    public var peer: Int
    public var mailFrom: String
    public var rcptTos: [String]
    public var eml: String
    public var authenticated: Bool
    public var parsed: Parsed
}

/// A real SMTP server, aiosmtpd (Tests/SMTPServer/smtp_server.py), in a directory of its own, run
/// with the Python of the venv that `scripts/smtp-server.sh install` makes. It can be stopped and
/// started again on the same port and directory (an outage), keeping what it received.
///
/// It is started here rather than by `smtp-server.sh start`: a program run to its end (``runToEnd(program:_:stdin:environment:directory:)``)
/// is done once its output pipes close, and the server the script leaves running would hold them
/// open, so the script would never be seen to end.
public final class SMTPTestServer: Sendable {
    public let directory: URL
    public let port: Int
    let options: [String]
    private let running: Mutex<(process: ChildProcess, exited: AsyncStream<Void>)?>

    private init(directory: URL, port: Int, options: [String], running: (ChildProcess, AsyncStream<Void>)) {
        self.directory = directory
        self.port = port
        self.options = options
        self.running = Mutex(running)
    }

    /// Runs `body` with a server started with `options` (smtp_server.py's), and stops it afterwards.
    public static func with<T>(_ options: [String] = [], _ body: (SMTPTestServer) async throws -> T) async throws -> T {
        let server = try await start(options)
        do {
            let result = try await body(server)
            await server.remove()
            return result
        } catch {
            await server.remove()
            throw error
        }
    }

    /// A server started with `options` on a free port; ``remove()`` stops it and deletes its files.
    public static func start(_ options: [String] = []) async throws -> SMTPTestServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("actionlinks-smtp-\(UUID().uuidString)")
        let (process, exited, port) = try await launch(options, port: 0, directory: directory)
        return SMTPTestServer(directory: directory, port: port, options: options, running: (process, exited))
    }

    /// Starts the process with `options` on `port` (0: a free one) and returns it with its port.
    private static func launch(_ options: [String], port: Int, directory: URL) async throws -> (ChildProcess, AsyncStream<Void>, Int) {
        let python = try await run("bash", ["scripts/smtp-server.sh", "python"])
        guard python.status == 0 else {
            throw TestFailure("the test SMTP server is not installed: run `bash scripts/smtp-server.sh install` (\(python.stderr))")
        }
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: python.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        process.arguments = ["Tests/SMTPServer/smtp_server.py", "--directory", directory.path, "--port", String(port)] + options
        process.currentDirectoryURL = repositoryRoot
        let output = Pipe()
        process.standardOutput = .pipe(output)
        process.standardError = .pipe(output)
        process.standardInput = .nullDevice
        let exited = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in exited.continuation.finish() }
        try process.run()
        do {
            return (process, exited.stream, try await listeningPort(output.fileHandleForReading))
        } catch {
            process.terminate()
            for await _ in exited.stream {}
            throw error
        }
    }

    /// Stops the server (connections are refused until ``restart()``).
    public func stop() async {
        guard
            let (process, exited) = running.withLock({ running in
                defer { running = nil }; return running
            })
        else { return }
        process.terminate()
        for await _ in exited {}
    }

    /// Starts the stopped server again, on the same port, keeping what it received.
    public func restart() async throws {
        let (process, exited, _) = try await Self.launch(options, port: port, directory: directory)
        running.withLock { $0 = (process, exited) }
    }

    /// Stops the server and deletes its files.
    public func remove() async {
        await stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The port of the `listening on smtp://127.0.0.1:<port>` line the server prints once it listens.
    /// The output is read to its end on a thread of its own, so that the server never blocks on it.
    private static func listeningPort(_ output: FileHandle) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                var text = ""
                var found = false
                while case let chunk = output.availableData, !chunk.isEmpty {
                    text += String(decoding: chunk, as: UTF8.self)
                    if !found, let range = text.range(of: "127.0.0.1:"),
                        let port = Int(text[range.upperBound...].prefix { $0.isNumber })
                    {
                        found = true
                        continuation.resume(returning: port)
                    }
                }
                if !found { continuation.resume(throwing: TestFailure("the test SMTP server did not start:\n\(text)")) }
            }
        }
    }

    /// The events so far.
    public func events() throws -> [ServerEvent] { try lines("events.jsonl") }
    /// The messages accepted so far.
    public func messages() throws -> [ReceivedMessage] { try lines("messages.jsonl") }
    /// The connections opened so far (a STARTTLS connection counts once).
    public func connections() throws -> Int { try events().filter { $0.event == "connect" }.count }

    /// The most connections that were open at once.
    public func mostConcurrentConnections() throws -> Int {
        var open = 0
        var most = 0
        for event in try events() {
            if event.event == "connect" { open += 1 }
            if event.event == "disconnect" { open -= 1 }
            most = max(most, open)
        }
        return most
    }

    private func lines<T: Decodable>(_ name: String) throws -> [T] {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else { return [] }
        // A line being written is not complete until its newline.
        return try data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
            .map { try JSONDecoder().decode(T.self, from: Data($0)) }
    }
}

/// Self-signed certificates made with `openssl req` once per test run: one for `localhost` and
/// 127.0.0.1, and one for another name.
public actor TestCertificates {
    public static let shared = TestCertificates()

    public struct Pair: Sendable {
        public let certificate: String
        public let key: String
    }

    private var made: (localhost: Pair, otherHost: Pair)?

    public func make() async throws -> (localhost: Pair, otherHost: Pair) {
        if let made { return made }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("actionlinks-smtp-certificates-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func pair(_ name: String, subjectAltName: String) async throws -> Pair {
            let pair = Pair(
                certificate: directory.appendingPathComponent("\(name)-cert.pem").path,
                key: directory.appendingPathComponent("\(name)-key.pem").path)
            let result = try await run(
                "openssl",
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
                    "/CN=\(name)",
                    "-addext", "subjectAltName=\(subjectAltName)", "-keyout", pair.key, "-out", pair.certificate,
                ])
            guard result.status == 0 else { throw TestFailure("openssl req failed: \(result.stderr)") }
            return pair
        }
        let result = (
            localhost: try await pair("localhost", subjectAltName: "DNS:localhost,IP:127.0.0.1"),
            otherHost: try await pair("other.example", subjectAltName: "DNS:other.example")
        )
        made = result
        return result
    }
}

/// A TCP listener on 127.0.0.1 that accepts connections and never says a word: a server whose greeting never comes.
public final class SilentListener: Sendable {
    private final class Counter: Sendable {
        let value = Atomic(0)
    }

    let channel: any Channel
    private let counter: Counter
    public var port: Int { channel.localAddress!.port! }
    /// The connections accepted so far.
    public var accepted: Int { counter.value.load(ordering: .relaxed) }

    public init() async throws {
        let counter = Counter()
        self.counter = counter
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                counter.value.add(1, ordering: .relaxed)
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    public func close() async {
        try? await channel.close()
    }
}

/// A port on 127.0.0.1 where nothing listens: bound, then closed.
public func closedPort() async throws -> Int {
    let listener = try await SilentListener()
    let port = listener.port
    await listener.close()
    return port
}
