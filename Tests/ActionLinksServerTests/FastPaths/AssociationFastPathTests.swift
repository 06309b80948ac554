import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The association files answered on the event loop are byte for byte what the responder answers.
@Suite("Association fast path", .timeLimit(.minutes(5)))
struct AssociationFastPathTests {
    /// Runs the real server on a free loopback port while `body` talks to it.
    func withServer(_ body: @escaping @Sendable (Int) throws -> Void) async throws {
        try await TestApp.live { app in
            let port = app.port
            // A blocking client on its own thread, so the server's tasks keep every pool thread.
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                Thread { done.resume(with: Result { try body(port) }) }.start()
            }
        }
    }

    /// Sends `requests` on one connection (the last must close it) and returns everything read.
    static func exchange(port: Int, _ requests: [String]) throws -> String {
        String(decoding: try RawHTTP.exchange(host: "127.0.0.1", port: port, Array(requests.joined().utf8)), as: UTF8.self)
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

    @Test("answers on the event loop are counted and timed in /metrics, 2xx and 3xx, as the responder's are")
    func counted() async throws {
        try await withServer { port in
            let path = "/.well-known/apple-app-site-association"
            // The responder answers this one (it has a Connection header) and counts it.
            let first = try Self.exchange(port: port, [Self.request("GET", path, ["Connection: close"])])
            let etag = try #require(first.components(separatedBy: "\r\n").first { $0.hasPrefix("ETag: ") }?.dropFirst(6))
            let text = try Self.exchange(
                port: port,
                [
                    Self.request("GET", path), Self.request("HEAD", path), Self.request("GET", path + "?x=1"),
                    Self.request("GET", path, ["If-None-Match: \(etag)"]), Self.request("GET", "/.well-known/assetlinks.json"),
                    Self.request("GET", "/metrics", ["Authorization: Bearer \(TestProject.adminToken)", "Connection: close"]),
                ])
            let exposition = try #require(Self.responses(text).last)
            func value(_ series: String) -> String? {
                exposition.components(separatedBy: "\r\n").last?.components(separatedBy: "\n")
                    .first { $0.hasPrefix(series + " ") }?.split(separator: " ").last.map(String.init)
            }
            #expect(value(#"actionlinks_http_requests_total{route="association",status="2xx"}"#) == "5", "\(exposition)")
            #expect(value(#"actionlinks_http_requests_total{route="association",status="3xx"}"#) == "1")
            #expect(value(#"actionlinks_http_request_duration_seconds_count{route="association"}"#) == "6")
        }
    }
}
