import ActionLinksChildProcess
import ActionLinksSMTPTestSupport
import Foundation
import Synchronization

/// A real `actionlinks serve` process on a free loopback port, with its own data directory: for the
/// end-to-end suites that need a process of their own (several instances, kill -9, SIGTERM, a
/// browser or the Python SDK against it, start-up errors as `serve` prints them). Everything else
/// runs in process on ``TestApp``.
public final class TestServer: LinkDomainClient {
    /// The running process.
    public let process: ChildProcess
    /// `http://127.0.0.1:<port>` (or `https://` with TLS), as the server printed it.
    public let base: String
    /// The server's data directory (deleted with the server unless the test named it).
    public let dataDirectory: URL
    /// The key and admin token its REST helpers use by default.
    public let credentials: TestCredentials
    private let ownsDataDirectory: Bool
    private let output = TextBuffer()
    private let errors = TextBuffer()

    /// Starts the server with the shipped config plus `environment` overrides, and waits until it listens.
    public init(
        environment: [String: String] = [:], config: String = "config/actionlinks.yaml", credentials: TestCredentials = .project,
        logLevel: String = "info"
    ) async throws {
        self.credentials = credentials
        let dataDirectory = TestProject.temporaryDirectory("actionlinks-e2e")
        ownsDataDirectory = environment["ACTIONLINKS_DATA_DIRECTORY"] == nil
        self.dataDirectory = environment["ACTIONLINKS_DATA_DIRECTORY"].map { URL(fileURLWithPath: $0) } ?? dataDirectory
        let process = ChildProcess()
        process.executableURL = try Repository.executable("actionlinks")
        process.arguments = ["serve", "--config", config, "--log-level", logLevel]
        process.currentDirectoryURL = Repository.root
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ACTIONLINKS_") }
        for (key, value) in TestProject.overrides(dataDirectory: dataDirectory) { env[key] = value }
        // The tests read a production server's mail from its output too (one that checks the
        // default, which withholds links and codes there, says so).
        env["ACTIONLINKS_MAIL_LOG_CONTENTS"] = "full"
        // An empty value unsets a variable (the default above among them).
        for (key, value) in try await SharedKeys.added(to: environment) { env[key] = value.isEmpty ? nil : value }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = .pipe(out)
        process.standardError = .pipe(err)
        let output = self.output, errors = self.errors
        try process.run()
        // Read to the end on threads of their own, with blocking reads: a readabilityHandler's
        // dispatch source, torn down as the server exits, was seen to crash libdispatch on Linux
        // (_dispatch_event_loop_drain) and with it the whole test process.
        for (pipe, sink) in [(out, output), (err, errors)] {
            Thread.detachNewThread {
                let handle = pipe.fileHandleForReading
                while case let chunk = handle.availableData, !chunk.isEmpty { sink.append(chunk) }
            }
        }
        self.process = process
        var found: String?
        // A hang guard, not a bound on start-up: a debug binary migrating its store on a loaded
        // machine once took most of the 20 s this was.
        let started = ContinuousClock.now
        while ContinuousClock.now - started < .seconds(120) {
            let text = errors.text
            // The text log's line, or the JSON log's (log.format: json).
            if let range = text.range(of: "] serving ") ?? text.range(of: #""message":"serving "#) {
                found = String(text[range.upperBound...].prefix { !$0.isWhitespace && $0 != "\"" })
                break
            }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        guard let found else {
            process.terminate()
            throw TestSupportError("the server did not start:\n" + errors.text)
        }
        base = found
    }

    deinit {
        if process.isRunning { process.terminate() }
        if ownsDataDirectory { try? FileManager.default.removeItem(at: dataDirectory) }
    }

    /// Everything the server wrote to standard output (the `log` mail backend's messages).
    public var standardOutput: String { output.text }
    /// Everything the server logged.
    public var standardError: String { errors.text }

    public func request(_ method: String, _ path: String, body: Data?, headers: [String: String]) async throws -> HTTPReply {
        try await HTTPOrigin(base).request(method, path, body: body, headers: headers)
    }
}

/// Text a child process writes, collected as it arrives.
final class TextBuffer: Sendable {
    private let storage = Mutex("")
    func append(_ data: Data) { storage.withLock { $0 += String(decoding: data, as: UTF8.self) } }
    var text: String { storage.withLock { $0 } }
}
