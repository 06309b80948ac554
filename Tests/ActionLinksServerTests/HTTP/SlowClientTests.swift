import ActionLinksTestSupport
import Foundation
import Testing

/// Slow clients (slowloris): header, body and idle timeouts, and the connection cap.
@Suite("Slow clients", .timeLimit(.minutes(5)))
struct SlowClientTests {
    static let request = "GET /healthz HTTP/1.1\r\nHost: links.test.example\r\nUser-Agent: slow-client-test\r\nAccept: */*\r\n\r\n"

    /// Sends `text` one byte a second until it is all sent or the server answers or closes the
    /// connection (a byte sent after the server closed would draw a reset, and a reset throws away
    /// the answer still unread in the socket).
    static func trickle(_ text: String, on connection: RawConnection) async throws {
        for character in text {
            connection.poll()
            if connection.closed || connection.hasAnswer || !connection.send(String(character)) { return }
            try await Task.sleep(for: .seconds(1))
        }
    }

    @Test("a head trickled one byte a second is cut off with 408 after the header timeout")
    func headerTimeout() async throws {
        try await TestApp.live(environment: ["ACTIONLINKS_SERVER_HEADER_TIMEOUT": "2s"]) { app in
            let connection = try RawConnection(base: app.base)
            // The first byte goes out at once: a connection with no byte of a request when the time is
            // up is closed without a 408 (browsers open connections ahead of use), and a trickling task
            // that a loaded test process starts late would test that instead.
            #expect(connection.send(String(Self.request.prefix(1))))
            let trickling = Task { try await Self.trickle(String(Self.request.dropFirst()), on: connection) }
            defer { trickling.cancel() }
            // Trickled whole, the head would take 90 s; the server cuts it off at 2 s after it
            // accepted the connection, which is after `opened`.
            let elapsed = try await connection.wait(upTo: .seconds(60)) { $0.closed }
            let closedAfter = try #require(elapsed, "the connection was still open after 60 s")
            #expect(closedAfter >= .seconds(2), "closed after \(closedAfter), before the 2 s header timeout")
            #expect(connection.text.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(connection.text)")
        }
    }

    @Test("a body trickled after its head is cut off with 408 after the body timeout")
    func bodyTimeout() async throws {
        try await TestApp.live(environment: ["ACTIONLINKS_SERVER_BODY_TIMEOUT": "2s"]) { app in
            let connection = try RawConnection(base: app.base)
            let body = String(repeating: "x", count: 90)
            connection.send(
                "POST /v1/accounts:signUp?key=\(TestProject.apiKey) HTTP/1.1\r\nHost: links.test.example\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
            )
            let trickling = Task { try await Self.trickle(body, on: connection) }
            defer { trickling.cancel() }
            let elapsed = try await connection.wait(upTo: .seconds(60)) { $0.closed }
            let closedAfter = try #require(elapsed, "the connection was still open after 60 s")
            #expect(closedAfter >= .seconds(2), "closed after \(closedAfter), before the 2 s body timeout")
            #expect(connection.text.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(connection.text)")
        }
    }

    @Test("between requests the idle timeout applies, not the header timeout")
    func idleTimeout() async throws {
        try await TestApp.live(environment: [
            "ACTIONLINKS_SERVER_HEADER_TIMEOUT": "1s", "ACTIONLINKS_SERVER_IDLE_TIMEOUT": "6s",
        ]) { app in
            let connection = try RawConnection(base: app.base)
            connection.send(Self.request)
            #expect(try await connection.wait(upTo: .seconds(30)) { $0.text.contains("\r\n\r\nok") || $0.closed } != nil)
            #expect(connection.text.hasPrefix("HTTP/1.1 200"), "\(connection.text)")
            // Idle for three header timeouts. The server last heard from the connection after it
            // was opened, so a close seen less than the idle timeout after `opened` is early; a
            // loaded machine that stretched this pause past it makes the rest moot, never wrong.
            try await Task.sleep(for: .seconds(3))
            connection.poll()
            if connection.closed {
                #expect(ContinuousClock.now - connection.opened >= .seconds(6), "closed before the idle timeout: \(app.logs.text)")
                return
            }
            let second = ContinuousClock.now
            connection.send(Self.request)
            #expect(
                try await connection.wait(upTo: .seconds(30)) { $0.text.components(separatedBy: "HTTP/1.1 200").count == 3 || $0.closed }
                    != nil)
            #expect(connection.text.components(separatedBy: "HTTP/1.1 200").count == 3, "\(connection.text)")
            // The server heard the second request after `second`: the idle timeout (6 s), not the
            // header timeout (1 s), closes the connection, no earlier than 6 s after it.
            let elapsed = try await connection.wait(upTo: .seconds(60), since: second) { $0.closed }
            let closedAfter = try #require(elapsed, "an idle connection was still open 60 s after its last request")
            #expect(closedAfter >= .seconds(6), "closed \(closedAfter) after the last request, expected the 6 s idle timeout")
        }
    }

    @Test("a connection only the fast paths serve is not idle while they answer, and is closed once it is")
    func idleTimeoutWithFastPaths() async throws {
        try await TestApp.live(environment: ["ACTIONLINKS_SERVER_IDLE_TIMEOUT": "3s"]) { app in
            let connection = try RawConnection(base: app.base)
            let association = "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: links.test.example\r\n\r\n"
            // Seven answers a second apart, over two idle timeouts: the association file's fast
            // path answers every one below Hummingbird's own connection handler, and each must
            // count as activity. A close is early when it is seen less than the idle timeout after
            // the last request was sent (load only makes a legitimate one come later).
            var sent = ContinuousClock.now
            for round in 1...7 {
                sent = .now
                connection.send(association)
                let answered = try await connection.wait(upTo: .seconds(30)) {
                    $0.text.components(separatedBy: "HTTP/1.1 200").count == round + 1 || $0.closed
                }
                #expect(answered != nil, "round \(round): no answer within 30 s")
                if connection.closed {
                    #expect(ContinuousClock.now - sent >= .seconds(3), "round \(round): closed while busy: \(connection.text.suffix(200))")
                    return
                }
                try await Task.sleep(for: .seconds(1))
                connection.poll()
                if connection.closed {
                    #expect(ContinuousClock.now - sent >= .seconds(3), "round \(round): closed while busy: \(connection.text.suffix(200))")
                    return
                }
            }
            let elapsed = try await connection.wait(upTo: .seconds(60), since: sent) { $0.closed }
            let closedAfter = try #require(elapsed, "an idle connection was still open 60 s after its last request")
            #expect(closedAfter >= .seconds(3), "closed \(closedAfter) after the last request, before the 3 s idle timeout")
        }
    }

    @Test("more slow connections than the cap hold it only until the header timeout; a fresh connection is then served")
    func connectionCap() async throws {
        try await TestApp.live(environment: [
            "ACTIONLINKS_SERVER_MAXIMUM_CONNECTIONS": "4", "ACTIONLINKS_SERVER_HEADER_TIMEOUT": "5s",
        ]) { app in
            var slow: [RawConnection] = []
            for _ in 0..<8 { slow.append(try RawConnection(base: app.base)) }
            let trickling = slow.map { connection in Task { try await Self.trickle(Self.request, on: connection) } }
            defer { for task in trickling { task.cancel() } }
            try await Task.sleep(for: .milliseconds(300))

            let fresh = try RawConnection(base: app.base)
            fresh.send(Self.request)
            // While the slow connections hold every slot the fresh one waits in the listen queue. The
            // slots free up no earlier than the header timeout after the first slow connection was
            // opened: an answer seen before that came through a full cap.
            try await Task.sleep(for: .seconds(1))
            if fresh.hasAnswer || !fresh.text.isEmpty {
                #expect(ContinuousClock.now - slow[0].opened >= .seconds(5), "served while the cap was full: \(fresh.text)")
            }
            // ...and is served once the header timeout has closed them.
            let served = try await fresh.wait(upTo: .seconds(60)) { $0.text.contains("\r\n\r\nok") || $0.closed }
            #expect(served != nil, "the fresh connection was not served within 60 s")
            #expect(fresh.text.hasPrefix("HTTP/1.1 200"), "\(fresh.text)")
            if let served { #expect(served + (fresh.opened - slow[0].opened) >= .seconds(5), "served before the cap freed up") }

            for connection in slow {
                #expect(try await connection.wait(upTo: .seconds(60)) { $0.closed } != nil, "a slow connection stayed open")
                #expect(!connection.text.contains("200 OK"), "a slow connection was served: \(connection.text)")
            }
            #expect(try await app.request("GET", "/healthz").status == 200)
        }
    }
}
