import ActionLinksTestSupport
import Foundation
import HTTPTypes
import Logging
import Testing

@testable import ActionLinksHTTP
@testable import ActionLinksServer

/// What a container platform expects of the process (docs/DEPLOYING.md): JSON log lines Cloud
/// Logging reads, with a request's trace; a stop within the platform's grace period.
@Suite("The container contract", .timeLimit(.minutes(10)))
struct ContainerContractTests {
    @Test("traceparent, else X-Cloud-Trace-Context, gives the trace and span; anything malformed gives nothing")
    func traces() {
        var headers = HTTPFields()
        headers[.traceparent] = "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"
        headers[.xCloudTraceContext] = "105445aa7843bc8bf206b12000100000/1;o=1"
        #expect(RequestTrace.ids(headers)! == ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"))
        headers[.traceparent] = "00-00000000000000000000000000000000-00f067aa0ba902b7-01"
        #expect(RequestTrace.ids(headers)! == ("105445aa7843bc8bf206b12000100000", "0000000000000001"), "an invalid traceparent is skipped")
        for bad in ["105445aa7843bc8bf206b12000100000x/1", "not-a-trace", "\u{1F600}", ""] {
            #expect(RequestTrace.cloudTraceContext(bad) == nil, "\(bad)")
        }
        #expect(RequestTrace.cloudTraceContext("105445aa7843bc8bf206b12000100000;o=1")! == ("105445aa7843bc8bf206b12000100000", nil))
    }

    @Test("a JSON log line: severity for each level, message, RFC 3339 time, the trace as Cloud Logging names it, metadata as strings")
    func jsonLines() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        var handler = JSONLogHandler(label: "actionlinks", traceProject: "my-gcp", descriptor: ends[1])
        handler.logLevel = .trace
        handler[metadataKey: "component"] = "store"
        var logger = Logger(label: "actionlinks") { _ in handler }
        logger[metadataKey: RequestTrace.traceKey] = "4bf92f3577b34da6a3ce929d0e0e4736"
        logger[metadataKey: RequestTrace.spanKey] = "00f067aa0ba902b7"
        let levels: [Logger.Level] = [.trace, .debug, .info, .notice, .warning, .error, .critical]
        for level in levels { logger.log(level: level, "a \"quoted\" line\nwith a break", metadata: ["count": "3"]) }
        close(ends[1])
        let lines = String(decoding: FileHandle(fileDescriptor: ends[0]).readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == levels.count)
        let objects = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]) }
        #expect(objects.map { $0["severity"] } == ["DEBUG", "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "CRITICAL"])
        let first = objects[0]
        #expect(first["message"] == "a \"quoted\" line\nwith a break" && first["logger"] == "actionlinks")
        #expect(first["logging.googleapis.com/trace"] == "projects/my-gcp/traces/4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(first["logging.googleapis.com/spanId"] == "00f067aa0ba902b7" && first["trace"] == nil)
        #expect(first["component"] == "store" && first["count"] == "3")
        let time = try #require(first["time"])
        #expect(time.hasSuffix("Z") && (try? Date(time, strategy: JSONLogHandler.time)) != nil, "\(time)")
    }

    @Test(
        "the binary with log.format json writes only JSON lines, the request's trace on the request's line, and never a code or link"
    )
    func jsonLog() async throws {
        let server = try await TestServer(environment: ["ACTIONLINKS_LOG_FORMAT": "json"], logLevel: "debug")
        try await server.createAccount(email: "ann@example.com")
        let reset = try await server.link("PASSWORD_RESET", email: "ann@example.com").link.replacingOccurrences(
            of: TestProject.linkOrigin, with: "")
        _ = try await server.request("GET", reset, headers: ["traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"])
        try await Eventually.wait(for: "the request's log line") { server.standardError.contains("0af7651916cd43dd8448eb211c80319c") }
        let lines = server.standardError.split(separator: "\n")
        for line in lines {
            let object = try #require(try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String], "not JSON: \(line)")
            #expect(object["severity"] != nil && object["message"] != nil && object["time"] != nil, "\(line)")
        }
        let traced = try #require(lines.first { $0.contains("0af7651916cd43dd8448eb211c80319c") })
        #expect(traced.contains(#""logging.googleapis.com/trace":"projects/demo-actionlinks/traces/0af7651916cd43dd8448eb211c80319c""#))
        let code = try #require(URLComponents(string: TestProject.linkOrigin + reset)?.queryItems?.first { $0.name == "oobCode" }?.value)
        #expect(!server.standardError.contains(code), "no code in the log")
    }

    @Test(
        "SIGTERM stops within server.shutdownTimeout (and one second more) even with a request that never finishes, where the body's own deadline is ten minutes"
    )
    func stopsInTime() async throws {
        let server = try await TestServer(environment: [
            "ACTIONLINKS_SERVER_SHUTDOWN_TIMEOUT": "2s", "ACTIONLINKS_SERVER_BODY_TIMEOUT": "10m",
        ])
        // A request whose body never comes: without the stop's deadline, the server would wait for it.
        let stuck = try RawConnection(base: server.base)
        stuck.send(
            "POST /v1/accounts:signUp?key=\(TestProject.apiKey) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
        // Let the head reach the server first (else the connection is merely idle, and closed at once:
        // the test would pass without a request in flight; it cannot fail because of this pause).
        try await Task.sleep(for: .milliseconds(200))
        let signalled = ContinuousClock.now
        kill(server.process.processIdentifier, SIGTERM)
        try await Eventually.wait(for: "the server to exit", upTo: .seconds(300)) { !server.process.isRunning }
        let took = ContinuousClock.now - signalled
        print("stop with a request in flight: \(took) (shutdownTimeout 2 s)")
        #expect(took < .seconds(120), "stopped long before the body's 10-minute deadline: \(took)")
    }
}
