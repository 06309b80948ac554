import ActionLinksTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The `/__/auth/*` proxy of upstream mode against a local server standing in for the project's
/// auth domain (a loopback host with a port is reached over plain HTTP), with the front a real
/// production binary.
@Suite("Upstream mode: the auth-domain proxy", .timeLimit(.minutes(5)))
struct UpstreamAuthDomainProxyTests {
    /// The stand-in: echoes what it got, and answers big, slow and failing paths.
    static func standIn(slowAnswers released: Locked<Bool>) -> Application<RouterResponder<BasicRequestContext>> {
        let router = Router()
        let echo: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            let body = try await request.body.collect(upTo: 1 << 20)
            var seen: [String: String] = [:]
            for field in request.headers { seen[field.name.canonicalName] = field.value }
            let json: [String: Any] = [
                "method": request.method.rawValue, "uri": request.uri.description, "headers": seen, "body": String(buffer: body),
                "authority": request.head.authority ?? "",
            ]
            return Response(
                status: .ok,
                headers: [
                    .contentType: "application/json", .setCookie: "__session=abc; Path=/; Secure; HttpOnly", .connection: "keep-alive",
                    HTTPField.Name("X-Served-By")!: "stand-in",
                ],
                body: .init(byteBuffer: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json))))
        }
        router.get("/__/auth/handler", use: echo)
        router.post("/__/auth/handler", use: echo)
        router.head("/__/auth/handler", use: echo)
        router.get("/__/firebase/init.json", use: echo)
        router.get("/__/auth/teapot") { _, _ in
            Response(status: .init(code: 418), body: .init(byteBuffer: ByteBuffer(string: "short and stout")))
        }
        router.get("/__/auth/big") { _, _ in Response(status: .ok, body: .init(byteBuffer: ByteBuffer(repeating: 0x61, count: 5 << 20))) }
        router.get("/__/auth/slow") { _, _ -> Response in
            // No answer until the test has seen the front's deadline answer (a 502, where this would
            // be a 200): only the deadline can end the exchange, however loaded the machine.
            try await Eventually.wait(for: "the test to release the slow answer", upTo: .seconds(240)) { released.value }
            return Response(status: .ok)
        }
        // Any other path of the auth domain, however it is spelt.
        router.get("/**") { _, _ in Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "must not be reachable"))) }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    /// A front proxying `authDomain`, with an answer deadline that is a hang guard by default (the
    /// stand-in runs in this loaded test process) and short where the deadline itself is tested.
    static func front(authDomain: String?, answerTimeout: String = "120s") async throws -> TestServer {
        var environment = [
            "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": String(repeating: "f", count: 40),
            "ACTIONLINKS_UPSTREAM_ANSWER_TIMEOUT": answerTimeout,
            "ACTIONLINKS_UPSTREAM_PROJECT_ID": TestProject.id, "ACTIONLINKS_UPSTREAM_API_KEYS": TestProject.apiKey,
            "ACTIONLINKS_UPSTREAM_IDENTITY_TOOLKIT_URL": "http://127.0.0.1:9",
            "ACTIONLINKS_SERVER_MAXIMUM_BODY_BYTES": "2048",
        ]
        if let authDomain { environment["ACTIONLINKS_UPSTREAM_AUTH_DOMAIN"] = authDomain }
        return try await TestServer(environment: environment)
    }

    @Test(
        "GET, HEAD and POST pass with their bytes, status, headers and cookies; X-Forwarded-* added and hop-by-hop dropped; big answers, slow answers and other paths are not passed"
    )
    func proxy() async throws {
        let released = Locked<Bool>(false)
        try await Self.standIn(slowAnswers: released).test(.live) { standIn in
            // Released before the stand-in shuts down (which waits for its open answers), pass or fail.
            defer { released.set(true) }
            let authority = "127.0.0.1:\(try #require(standIn.port))"
            let front = try await Self.front(authDomain: authority)

            let get = try await front.request(
                "GET", "/__/auth/handler?apiKey=k&authType=signInViaRedirect&providerId=yahoo.com",
                headers: [
                    "Cookie": "g_state=1; actionlinks_device=123.secret", "X-Forwarded-For": "6.6.6.6", "X-Forwarded-Host": "evil.example",
                    "Authorization": "Bearer " + UpstreamModeTests.frontAdmin,
                ])
            #expect(get.status == 200 && get.header("X-Served-By") == "stand-in", "\(get.status) \(get.text)")
            #expect(get.header("Set-Cookie") == "__session=abc; Path=/; Secure; HttpOnly")
            let seen = try #require(get.json["headers"] as? [String: String])
            #expect(get.json["uri"] as? String == "/__/auth/handler?apiKey=k&authType=signInViaRedirect&providerId=yahoo.com")
            #expect(get.json["authority"] as? String == authority, "Host is the auth domain")
            #expect(seen["cookie"] == "g_state=1", "the auth domain's cookies, not ours")
            #expect(seen["authorization"] == nil)
            #expect(seen["x-forwarded-for"] == "127.0.0.1", "the client as this server sees it, not what the client claimed")
            #expect(seen["x-forwarded-proto"] == "https" && seen["x-forwarded-host"] == String(front.base.dropFirst("http://".count)))

            let form = "state=abc&code=xyz&id_token=t.t.t"
            let post = try await front.request(
                "POST", "/__/auth/handler", body: Data(form.utf8), headers: ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(post.status == 200 && post.json["method"] as? String == "POST" && post.json["body"] as? String == form)

            let head = try await front.request("HEAD", "/__/auth/handler")
            #expect(head.status == 200 && head.body.isEmpty)
            let initJSON = try await front.request("GET", "/__/firebase/init.json")
            #expect(initJSON.status == 200 && initJSON.json["uri"] as? String == "/__/firebase/init.json")
            let teapot = try await front.request("GET", "/__/auth/teapot")
            #expect(teapot.status == 418 && teapot.text == "short and stout")

            let tooBig = try await front.request("POST", "/__/auth/handler", body: Data(repeating: 0x61, count: 4096))
            #expect(tooBig.status == 413, "the body cap")
            let big = try await front.request("GET", "/__/auth/big")
            #expect(big.status == 502 && !big.text.contains("aaaa"), "an answer over the cap")
            // A front with a 2 s deadline, and an answer that never comes: only the deadline ends it.
            let impatient = try await Self.front(authDomain: authority, answerTimeout: "2s")
            let started = ContinuousClock.now
            let slow = try await impatient.request("GET", "/__/auth/slow")
            #expect(slow.status == 502 && slow.text == "The auth domain did not answer.\n")
            #expect(ContinuousClock.now - started >= .seconds(2), "not before the answer deadline (2 s)")
            released.set(true)

            for path in [
                "/elsewhere", "/__/other/handler", "/__/firebase/other.json", "/__/auth/../../elsewhere",
                "/__/auth/%2e%2e/%2e%2e/elsewhere",
                "/__/auth/..%2f..%2felsewhere",
            ] {
                #expect(try await front.request("GET", path).text.contains("must not be reachable") == false, "\(path)")
            }
            let put = try await front.request("PUT", "/__/auth/handler")
            #expect(put.status == 405)
            // Our own pages stay ours.
            let action = try await front.request("GET", "/__/auth/action?mode=resetPassword&oobCode=x&apiKey=other")
            #expect(action.status == 400 && action.header("X-Served-By") == nil)
        }
    }

    @Test("without authDomain the helper's paths answer 404 saying how to enable them; an auth domain that is down is a bare 502")
    func notConfigured() async throws {
        let front = try await Self.front(authDomain: nil)
        let reply = try await front.request("GET", "/__/auth/handler")
        #expect(reply.status == 404 && reply.text.contains("set upstream.authDomain"), "\(reply.text)")
        let down = try await Self.front(authDomain: "127.0.0.1:9")
        let refused = try await down.request("GET", "/__/auth/iframe")
        #expect(refused.status == 502 && refused.text == "The auth domain did not answer.\n")
    }
}
