import ActionLinksTestSupport
import Foundation
import Testing

/// `GET /readyz`: 200 while the store answers a read and, fronting a project, upstream answered
/// within `upstream.readinessInterval`; 503 naming what is down otherwise; `/healthz` answers
/// throughout (liveness only). A check waits 2 s for its answer, which a loaded test machine can
/// exceed, so "ready" is awaited (``ready(_:)``), never asked once.
@Suite("Readiness (/readyz)", .timeLimit(.minutes(5)))
struct ReadinessTests {
    typealias Upstream = UpstreamModeTests
    typealias Strict = StrictUpstream

    /// `/readyz`'s first 200, polled until it comes (a hang guard, not a bound on its speed).
    static func ready(_ server: some LinkDomainClient, _ what: String) async throws -> HTTPReply {
        var last: HTTPReply?
        try await Eventually.wait(for: "/readyz to answer 200 \(what); last: \(last?.status ?? 0) \(last?.text ?? "")") {
            last = try await server.request("GET", "/readyz")
            return last?.status == 200
        }
        return try #require(last)
    }

    @Test("standalone on the embedded store: ready, one line for the store and one for the mail outbox, never cached")
    func embedded() async throws {
        try await TestApp.router { app in
            let ready = try await Self.ready(app, "on the embedded store")
            #expect(ready.text == "store: ok\nmail: ok\n", "\(ready.text)")
            #expect(ready.header("Cache-Control") == "no-store")
        }
    }

    @Test("PostgreSQL stopped: 503 naming the store (within the probe's wait), /healthz still 200; ready again once it is back")
    func storeDown() async throws {
        let cluster = try await PrivatePostgresCluster()
        defer { Task { await cluster.remove() } }
        let server = try await TestServer(environment: ["ACTIONLINKS_STORE": cluster.url + "?connect_timeout=10"])
        let up = try await Self.ready(server, "on PostgreSQL")
        #expect(up.text == "store: ok\nmail: ok\n", "\(up.text)")

        try await cluster.stop()
        let down = try await server.request("GET", "/readyz")
        #expect(down.status == 503, "\(down.status) \(down.text)")
        #expect(down.text.hasPrefix("store: ") && !down.text.contains("store: ok"), "\(down.text)")
        #expect(try await server.request("GET", "/healthz").status == 200)

        try await cluster.start()
        _ = try await Self.ready(server, "after PostgreSQL is back")
    }

    @Test(
        "fronting a project: ready once Google answers the probe; upstream stopped, 503 naming upstream past the interval, the failed probe told in a warning line with no status and counted; ready again after it is back"
    )
    func upstreamDown() async throws {
        let port = try LoopbackPort.free()
        let directory = TestProject.temporaryDirectory("readiness-upstream")
        defer { try? FileManager.default.removeItem(at: directory) }
        let where_ = ["ACTIONLINKS_SERVER_PORT": String(port), "ACTIONLINKS_DATA_DIRECTORY": directory.path]
        var upstream: TestServer? = try await Strict.start(environment: where_)
        let front = try await Upstream.front(
            for: try #require(upstream), serviceAccount: try await Upstream.serviceAccount(of: try #require(upstream)),
            environment: ["ACTIONLINKS_UPSTREAM_API_KEYS": Strict.unrestrictedKey, "ACTIONLINKS_UPSTREAM_READINESS_INTERVAL": "1s"])

        let ready = try await Self.ready(front, "fronting the strict upstream")
        #expect(ready.text == "store: ok\nupstream: ok\nmail: ok\n", "\(ready.text)")
        let metrics = try await front.request("GET", "/metrics", headers: ["Authorization": "Bearer " + Upstream.frontAdmin])
        #expect(
            metrics.text.contains(#"actionlinks_upstream_requests_total{operation="passwordPolicy",outcome="ok"} "#), "\(metrics.text)")
        #expect(metrics.text.contains(#"actionlinks_upstream_requests_total{operation="token",outcome="ok"} 1"#))

        upstream?.process.terminate()
        upstream?.process.waitUntilExit()
        upstream = nil
        try await Task.sleep(for: .milliseconds(1100))  // past the 1 s in which the last answer counts
        // The probe's connection is refused; async-http-client retries it until upstream.connectTimeout
        // (3 s), past /readyz's 2 s wait: "no answer within 2 s" first, then what the probe found.
        let down = try await front.request("GET", "/readyz")
        #expect(down.status == 503 && down.text.hasPrefix("store: ok\nupstream: ") && !down.text.contains("upstream: ok"), "\(down.text)")
        #expect(try await front.request("GET", "/healthz").status == 200)
        try await Eventually.wait(for: "/readyz to name the refused connection") {
            let reply = try await front.request("GET", "/readyz")
            #expect(reply.status == 503, "\(reply.text)")
            return reply.text.contains("cannot be reached")
        }
        let warnings = front.standardError.split(separator: "\n").filter { $0.contains("a call to the fronted project failed") }
        #expect(
            warnings.contains {
                $0.contains("operation=passwordPolicy") && $0.contains("outcome=unreachable") && $0.contains("status=none")
            },
            "\(warnings)")
        let counted = try await front.request("GET", "/metrics", headers: ["Authorization": "Bearer " + Upstream.frontAdmin])
        #expect(counted.text.contains(#"actionlinks_upstream_requests_total{operation="passwordPolicy",outcome="unreachable"}"#))

        upstream = try await Strict.start(environment: where_)
        _ = try await Self.ready(front, "after upstream is back")
        withExtendedLifetime(upstream) {}
    }
}
