import ActionLinksTestSupport
import Foundation
import Testing

/// An upstream (the Identity Toolkit) and an auth domain that send an answer's head at once and
/// then its body a byte a second: one peer on loopback stands in for both, and the front is a real
/// production binary.
@Suite("Upstream mode: a peer that answers a byte a second", .timeLimit(.minutes(5)))
struct UpstreamSlowPeerTests {
    /// A front whose Identity Toolkit and auth domain are `peer`.
    static func front(peer: LoopbackHTTPServer, answerTimeout: String, poolSize: Int? = nil) async throws -> TestServer {
        var environment = [
            "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": UpstreamModeTests.frontAdmin,
            "ACTIONLINKS_UPSTREAM_PROJECT_ID": TestProject.id, "ACTIONLINKS_UPSTREAM_API_KEYS": TestProject.apiKey,
            "ACTIONLINKS_UPSTREAM_IDENTITY_TOOLKIT_URL": peer.origin, "ACTIONLINKS_UPSTREAM_AUTH_DOMAIN": "127.0.0.1:\(peer.port)",
            "ACTIONLINKS_UPSTREAM_ANSWER_TIMEOUT": answerTimeout,
        ]
        if let poolSize { environment["ACTIONLINKS_UPSTREAM_POOL_SIZE"] = String(poolSize) }
        return try await TestServer(environment: environment)
    }

    static let page = "/__/auth/action?mode=resetPassword&oobCode=CODE&apiKey=\(TestProject.apiKey)&lang=en"

    @Test("a page and a proxied request end at upstream.answerTimeout however slowly the body keeps coming, and their connections close")
    func deadlineOverTheBody() async throws {
        // A minute's worth of body each, at a byte a second: the read timeout (3 s) never passes, so
        // only a deadline over the whole exchange ends it sooner.
        let answer = Data(#"{"requestType":"PASSWORD_RESET","email":"ann@example.com"}"#.utf8)
        let peer = try LoopbackHTTPServer(routes: [
            "/v1/accounts:resetPassword": .init(body: answer + Data(repeating: 0x20, count: 60 - answer.count), trickle: .init()),
            "/__/auth/iframe": .init(headers: ["Content-Type": "text/html"], body: Data(repeating: 0x61, count: 60), trickle: .init()),
        ])
        defer { peer.stop() }
        let front = try await Self.front(peer: peer, answerTimeout: "3s")

        let proxiedStart = ContinuousClock.now
        let proxied = try await front.request("GET", "/__/auth/iframe")
        let proxiedWait = ContinuousClock.now - proxiedStart
        #expect(
            proxied.status == 502 && proxied.text == "The auth domain did not answer.\n", "\(proxied.status) \(proxied.text.prefix(80))")
        #expect(proxiedWait >= .seconds(3), "not before the deadline: \(proxiedWait)")

        let pageStart = ContinuousClock.now
        let page = try await front.request("GET", Self.page)
        let pageWait = ContinuousClock.now - pageStart
        #expect(page.status == 503 && page.text.contains("Your link still works"), "\(page.status)")
        #expect(pageWait >= .seconds(3), "not before the deadline: \(pageWait)")

        // The front hung up on both: the peer's next byte found the connection closed.
        try await Eventually.wait(for: "the peer to see both connections closed", upTo: .seconds(60)) { peer.tricklesCut == 2 }
    }

    @Test(
        "with upstream.poolSize exchanges in flight with a host, a further proxied request and page get 503 at once, unsent; a slot frees when an exchange ends"
    )
    func poolFull() async throws {
        let releasedA = Locked(false)
        let releasedB = Locked(false)
        // Held until the test releases them (the front's deadline, 120 s, is a hang guard here):
        // what holds the slots is the test, never the machine's speed.
        let held = Data(repeating: 0x61, count: 600)
        let peer = try LoopbackHTTPServer(routes: [
            "/__/auth/held-a": .init(headers: ["Content-Type": "text/html"], body: held, trickle: .init(releasedWhen: { releasedA.value })),
            "/__/auth/held-b": .init(headers: ["Content-Type": "text/html"], body: held, trickle: .init(releasedWhen: { releasedB.value })),
            "/__/auth/handler": .init(headers: ["Content-Type": "text/html"], body: Data("the handler".utf8)),
        ])
        defer {
            releasedA.set(true)
            releasedB.set(true)
            peer.stop()
        }
        let front = try await Self.front(peer: peer, answerTimeout: "120s", poolSize: 2)

        let a = Task { try await front.request("GET", "/__/auth/held-a") }
        try await Eventually.wait(for: "the peer to read the first held request") { peer.requestsRead == 1 }
        let b = Task { try await front.request("GET", "/__/auth/held-b") }
        try await Eventually.wait(for: "the peer to read the second held request") { peer.requestsRead == 2 }

        // Both slots taken: answered at once (a queued request would wait for a held one to end,
        // which only the test decides), and never sent.
        let busy = try await front.request("GET", "/__/auth/handler")
        #expect(busy.status == 503 && busy.header("Retry-After") == "1", "\(busy.status) \(busy.text)")
        let busyPage = try await front.request("GET", Self.page)
        #expect(busyPage.status == 503 && busyPage.text.contains("Your link still works"), "\(busyPage.status)")
        #expect(peer.requestsRead == 2, "neither was sent to the peer")

        releasedA.set(true)
        let first = try await a.value
        #expect(first.status == 200 && first.body == held)
        // One slot free again (the other still held): the next request goes through.
        let freed = try await front.request("GET", "/__/auth/handler")
        #expect(freed.status == 200 && freed.text == "the handler", "\(freed.status) \(freed.text)")
        #expect(peer.requestsRead == 3)

        releasedB.set(true)
        let second = try await b.value
        #expect(second.status == 200 && second.body == held)
    }
}
