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
    /// Notes the method and target of every request the stand-in gets, whatever its path.
    struct Recorder: RouterMiddleware {
        let seen: Locked<[String]>
        func handle(
            _ request: Request, context: BasicRequestContext, next: (Request, BasicRequestContext) async throws -> Response
        ) async throws -> Response {
            seen.withLock { $0.append("\(request.method) \(request.uri)") }
            return try await next(request, context)
        }
    }

    /// The stand-in: echoes what it got, and answers big, slow and failing paths; `seen` gets every
    /// request's method and target.
    static func standIn(
        slowAnswers released: Locked<Bool>, seen: Locked<[String]> = Locked([])
    ) -> Application<RouterResponder<BasicRequestContext>> {
        let router = Router()
        router.add(middleware: Recorder(seen: seen))
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
        // Any other path of the auth domain, however it is spelt, and its root.
        let unreachable: @Sendable (Request, BasicRequestContext) async throws -> Response = { _, _ in
            Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "must not be reachable")))
        }
        router.get("/**", use: unreachable)
        for method in [HTTPRequest.Method.get, .head, .post] { router.on("/", method: method, use: unreachable) }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    /// A front proxying `authDomain`, with an answer deadline that is a hang guard by default (the
    /// stand-in runs in this loaded test process) and short where the deadline itself is tested.
    static func front(authDomain: String?, answerTimeout: String = "120s", linkDomains: String? = nil) async throws -> TestServer {
        var environment = [
            "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": String(repeating: "f", count: 40),
            "ACTIONLINKS_UPSTREAM_ANSWER_TIMEOUT": answerTimeout,
            "ACTIONLINKS_UPSTREAM_PROJECT_ID": TestProject.id, "ACTIONLINKS_UPSTREAM_API_KEYS": TestProject.apiKey,
            "ACTIONLINKS_UPSTREAM_IDENTITY_TOOLKIT_URL": "http://127.0.0.1:9",
            "ACTIONLINKS_SERVER_MAXIMUM_BODY_BYTES": "2048",
        ]
        if let authDomain { environment["ACTIONLINKS_UPSTREAM_AUTH_DOMAIN"] = authDomain }
        if let linkDomains { environment["ACTIONLINKS_LINK_DOMAINS"] = linkDomains }
        return try await TestServer(environment: environment)
    }

    /// Sends a request exactly as given (`lines`: the request line and headers) on a connection of
    /// its own: URLSession would re-encode a target that is not UTF-8 and set `Host` itself.
    /// `Connection: close` goes first (Hummingbird closes only on a first `Connection` field that is
    /// exactly `close`) and a `Content-Length` for `body` last. Returns the answer's status, head and body.
    static func raw(_ front: TestServer, _ lines: [String], body: String = "") async throws -> (status: Int, head: String, body: String) {
        let head = [lines[0], "Connection: close"] + lines.dropFirst() + ["Content-Length: \(body.utf8.count)"]
        let request = head.joined(separator: "\r\n") + "\r\n\r\n" + body
        let text = String(decoding: try await RawHTTP.exchangeOffThread(base: front.base, Array(request.utf8)), as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        return (RawHTTP.status(of: text), parts[0], parts.dropFirst().joined(separator: "\r\n\r\n"))
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
            #expect(seen["x-forwarded-proto"] == "https")
            #expect(seen["x-forwarded-host"] == "links.test.example", "the link domain (the client's Host names none: the first)")

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

    @Test(
        "a path whose escapes are not UTF-8 of unreserved characters is refused (404) and never reaches the auth domain, whatever the method; an escaped unreserved character goes as it came"
    )
    func escapesThatAreNotUTF8() async throws {
        let released = Locked<Bool>(true)
        let seen = Locked<[String]>([])
        try await Self.standIn(slowAnswers: released, seen: seen).test(.live) { standIn in
            let front = try await Self.front(authDomain: "127.0.0.1:\(try #require(standIn.port))")
            let host = "Host: " + String(front.base.dropFirst("http://".count))
            for (method, target) in [
                ("GET", "/__/auth/%ff?next=/admin"), ("POST", "/__/auth/%ff?next=/admin"), ("HEAD", "/__/auth/%ff"),
                ("GET", "/__/auth/%80"), ("GET", "/__/auth/x%c3"), ("GET", "/__/auth/%c0%ae"), ("GET", "/__/auth/%c0%ae%c0%ae/x"),
                ("GET", "/__/auth/%c3%a9"), ("GET", "/__/auth/%5c"), ("GET", "/__/auth/%zz"), ("GET", "/__/auth/x%"),
                ("GET", "/__/auth/a;b"), ("GET", "/__/auth/a@b"),
            ] {
                let reply = try await Self.raw(front, ["\(method) \(target) HTTP/1.1", host], body: method == "POST" ? "a=b" : "")
                #expect(
                    reply.status == 404 && (method == "HEAD" || reply.body == "Not found.\n"),
                    "\(method) \(target): \(reply.status) \(reply.body)")
            }
            #expect(seen.value.isEmpty, "the auth domain saw \(seen.value)")
            // An unreserved character may be escaped; what goes out is what came in (whatever the
            // stand-in's router then makes of it).
            _ = try await Self.raw(front, ["GET /__/auth/%7Ehandler?x=%7E HTTP/1.1", host])
            #expect(seen.value == ["GET /__/auth/%7Ehandler?x=%7E"])
        }
    }

    @Test(
        "headers the Connection header names and method or URL overrides are not passed on; X-Forwarded-Host is the link domain the request came in on, never the client's Host"
    )
    func forwardedHeaders() async throws {
        let released = Locked<Bool>(true)
        try await Self.standIn(slowAnswers: released).test(.live) { standIn in
            let front = try await Self.front(
                authDomain: "127.0.0.1:\(try #require(standIn.port))", linkDomains: "links.test.example,auth.test.example")
            /// The headers the stand-in got for a request with `Host: host` (sent raw), and for one
            /// with `extra` (through URLSession: Hummingbird keeps a connection alive when its
            /// `Connection` says more than `close`, so a raw exchange would wait for the idle timeout).
            func headers(host: String) async throws -> [String: String] {
                let reply = try await Self.raw(front, ["GET /__/auth/handler HTTP/1.1", "Host: " + host])
                #expect(reply.status == 200, "\(reply.status) \(reply.body)")
                let echoed = try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any]
                return try #require(echoed?["headers"] as? [String: String])
            }
            let reply = try await front.request(
                "GET", "/__/auth/handler",
                headers: [
                    "Connection": "X-Secret-Hop, x-other-hop", "X-Secret-Hop": "1", "X-Other-Hop": "2", "X-Kept": "3",
                    "X-HTTP-Method-Override": "DELETE", "X-HTTP-Method": "PUT", "X-Method-Override": "PATCH",
                    "X-Original-URL": "/admin", "X-Rewrite-URL": "/admin",
                ])
            let sent = try #require(reply.json["headers"] as? [String: String], "\(reply.status) \(reply.text)")
            #expect(sent["x-kept"] == "3" && reply.json["method"] as? String == "GET")
            for name in [
                "x-secret-hop", "x-other-hop", "x-http-method-override", "x-http-method", "x-method-override", "x-original-url",
                "x-rewrite-url",
            ] {
                #expect(sent[name] == nil, "\(name) was passed on")
            }
            #expect(try await headers(host: "auth.test.example")["x-forwarded-host"] == "auth.test.example", "the link domain that matched")
            #expect(try await headers(host: "AUTH.test.example:443")["x-forwarded-host"] == "auth.test.example")
            #expect(try await headers(host: "evil.example")["x-forwarded-host"] == "links.test.example", "none matched: the first")
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
