import ActionLinksConfiguration
import Foundation
import Logging
import Testing

@testable import ActionLinksServer

#if canImport(Glibc)
    import Glibc
#endif

/// The association files answered on the event loop are byte for byte what the responder answers.
@Suite("Association fast path")
struct AssociationFastPathTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Runs the real server on a free loopback port while `body` talks to it.
    func withServer(_ body: @escaping @Sendable (UInt16) throws -> Void) async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("actionlinks-fastpath-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let configuration = try ActionLinksConfiguration.load(
            file: Self.repository.appendingPathComponent("config/actionlinks.yaml").path,
            environment: [
                "ACTIONLINKS_SERVER_PORT": "0", "ACTIONLINKS_DATA_DIRECTORY": data, "ACTIONLINKS_STORE": "sqlite:\(data)/test.sqlite",
            ])
        var logger = Logger(label: "test")
        logger.logLevel = .critical  // cancelling the server at the end logs an error
        let (running, continuation) = AsyncStream<String>.makeStream()
        let app = try await LinkDomainServer.buildApplication(
            configuration: configuration, www: Self.repository.appendingPathComponent("www").path, logger: logger,
            onRunning: { continuation.yield($0) })
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.run() }
            var urls = running.makeAsyncIterator()
            let url = try #require(await urls.next())
            let port = try #require(UInt16(url.split(separator: ":").last ?? ""))
            // A blocking client on its own thread, so the server's tasks keep every pool thread.
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                Thread {
                    do {
                        try body(port)
                        done.resume()
                    } catch {
                        done.resume(throwing: error)
                    }
                }.start()
            }
            group.cancelAll()
        }
    }

    /// Sends `requests` on one connection (the last must close it) and returns everything read.
    static func exchange(port: UInt16, _ requests: [String]) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        let bytes = Array(requests.joined().utf8)
        guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == bytes.count else { throw POSIXError(.EIO) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    static func request(_ method: String, _ target: String, _ headers: [String] = []) -> String {
        ([method + " " + target + " HTTP/1.1", "Host: localhost"] + headers).joined(separator: "\r\n") + "\r\n\r\n"
    }

    /// The responses in `text`, with their `Date` lines taken out.
    static func responses(_ text: String) -> [String] {
        text.components(separatedBy: "HTTP/1.1 ").dropFirst().map {
            "HTTP/1.1 " + $0.components(separatedBy: "\r\n").filter { !$0.hasPrefix("Date: ") }.joined(separator: "\r\n")
        }
    }

    @Test("GET, HEAD and If-None-Match answers are the responder's, on every association path")
    func sameAnswers() async throws {
        try await withServer { port in
            for path in [
                "/.well-known/apple-app-site-association", "/apple-app-site-association", "/.well-known/assetlinks.json",
                "/.well-known/jwks.json", "/.well-known/apple-app-site-association?x=1",
            ] {
                let etagText = try Self.exchange(port: port, [Self.request("GET", path, ["Connection: close"])])
                let etag = try #require(etagText.components(separatedBy: "\r\n").first { $0.hasPrefix("ETag: ") }?.dropFirst(6))
                var requests: [String] = []
                for (method, headers) in [("GET", []), ("HEAD", []), ("GET", ["If-None-Match: \(etag)"]), ("POST", ["Content-Length: 0"])] {
                    // Without a Connection header the fast path answers; with one, the responder does.
                    requests.append(Self.request(method, path, headers))
                    requests.append(Self.request(method, path, headers + ["Connection: keep-alive"]))
                }
                requests.append(Self.request("GET", "/healthz", ["Connection: close"]))
                let answers = Self.responses(try Self.exchange(port: port, requests))
                #expect(answers.count == 9, "\(path)")
                guard answers.count == 9 else { continue }
                for pair in stride(from: 0, to: 8, by: 2) {
                    #expect(answers[pair] == answers[pair + 1], "\(path) #\(pair / 2)")
                }
                #expect(answers[0].hasPrefix("HTTP/1.1 200 OK") && answers[0].contains("Content-Type: application/json"))
                #expect(answers[4].hasPrefix("HTTP/1.1 304"))
                #expect(answers[6].hasPrefix("HTTP/1.1 405"))
            }
        }
    }

    @Test("the Date header is an IMF-fixdate, as Hummingbird writes it")
    func date() async throws {
        #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(HTTPDate.format(1_800_000_000) == "Fri, 15 Jan 2027 08:00:00 GMT")
        try await withServer { port in
            let text = try Self.exchange(
                port: port,
                [Self.request("GET", "/.well-known/jwks.json"), Self.request("GET", "/.well-known/jwks.json", ["Connection: close"])])
            let dates = text.components(separatedBy: "\r\n").filter { $0.hasPrefix("Date: ") }
            #expect(dates.count == 2)
            // Fast path and responder agree (unless the second turned over between them).
            #expect(dates.allSatisfy { $0.wholeMatch(of: /Date: [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT/) != nil })
        }
    }

    @Test("a pipelined association request waits for the response before it")
    func pipelinedOrder() async throws {
        try await withServer { port in
            let answers = Self.responses(
                try Self.exchange(
                    port: port,
                    [
                        Self.request("GET", "/__/auth/action?mode=resetPassword&oobCode=nope"),
                        Self.request("GET", "/.well-known/apple-app-site-association"),
                        Self.request("GET", "/healthz"),
                        Self.request("GET", "/.well-known/assetlinks.json", ["Connection: close"]),
                    ]))
            #expect(answers.count == 4)
            guard answers.count == 4 else { return }
            #expect(answers[0].hasPrefix("HTTP/1.1 400") && answers[0].contains("text/html"))
            #expect(answers[1].hasPrefix("HTTP/1.1 200") && answers[1].contains("\"applinks\""))
            #expect(answers[2].hasPrefix("HTTP/1.1 200") && answers[2].hasSuffix("ok\n"))
            #expect(answers[3].hasPrefix("HTTP/1.1 200") && answers[3].contains("delegate_permission"))
        }
    }
}
