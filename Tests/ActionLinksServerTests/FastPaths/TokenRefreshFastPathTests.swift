import ActionLinks
import ActionLinksConfiguration
import ActionLinksTestSupport
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The SDKs' token refreshes answered on the event loop (SQLite): what the route answers, and only
/// when nothing but a read and a signature is needed; everything else reaches the route whole.
@Suite("Token refresh fast path", .timeLimit(.minutes(5)))
struct TokenRefreshFastPathTests {
    typealias Raw = AssociationFastPathTests

    /// A server's services over a new SQLite database, with the shipped configuration.
    struct Server {
        let services: LinkDomainServices
        let database: SQLiteDatabase
        let templates: PageTemplates

        /// The PostgreSQL store the services use instead of ``database``, if any.
        let postgres: PostgresStore?

        /// `configure` changes the shipped configuration first; the services read `clock`, and use
        /// `postgres` when it is given (``database`` otherwise).
        init(
            clock: any ServiceClock = SystemServiceClock(), postgres: PostgresStore? = nil,
            _ configure: (inout ActionLinksConfiguration) -> Void = { _ in }
        ) async throws {
            let directory = TestProject.temporaryDirectory("token-fast-path")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var configuration = try ActionLinksConfiguration.load(
                file: Repository.configFile, environment: TestProject.overrides(dataDirectory: directory))
            configure(&configuration)
            database = try SQLiteDatabase(path: directory.appendingPathComponent("actionlinks.sqlite").path)
            self.postgres = postgres
            let logger = Logger(label: "token-fast-path-tests")
            templates = try await PageTemplates(www: Repository.www)
            let keys = try ServerKeys(directory: directory.path)
            let mailer = Mailer(
                settings: configuration.service.mail, templates: templates, outbox: postgres?.outbox ?? database.outbox,
                formKey: keys.formKey, logger: logger)
            services =
                if let postgres {
                    LinkDomainServices(
                        configuration: configuration, codes: postgres.codes, accounts: postgres.accounts, tenants: postgres.tenants,
                        flows: postgres.federatedFlows, signInCodes: postgres.signInCodes, keys: keys, mailer: mailer, clock: clock,
                        logger: logger)
                } else {
                    LinkDomainServices(
                        configuration: configuration, codes: database.codes, accounts: database.accounts, tenants: database.tenants,
                        flows: database.federatedFlows, signInCodes: database.signInCodes, keys: keys, mailer: mailer, clock: clock,
                        logger: logger)
                }
        }

        /// A channel with the fast path alone (no connection guard: answers go out as response parts).
        func channel() throws -> EmbeddedChannel {
            EmbeddedChannel(handler: handler())
        }

        /// The fast path's handler: the refresh at once with SQLite, from a task with PostgreSQL.
        func handler() -> FastPathHandler<TokenRefreshFastPath> {
            let route = TokenRefreshFastPath(
                signIn: services.signIn, sessions: postgres == nil ? database.accounts : nil, settings: services.settings,
                projectID: services.settings.project.id, logger: Logger(label: "token-fast-path-tests"))
            return FastPathHandler(route, metrics: ServerMetrics(), logger: Logger(label: "token-fast-path-tests"))
        }

        /// A new anonymous user's refresh token, and its account's ID.
        func signUp() async throws -> (refreshToken: String, localID: String) {
            try await services.signingKeys.refresh(now: services.clock.now)
            let (account, user) = try await services.signIn.signUp(
                .init(), tenant: services.tenants.project, caller: Caller(isAdmin: false))
            let tokens = try await #require(user).requiredTokens(services.tokens, now: services.clock.now)
            return (tokens.refreshToken, account.localID)
        }
    }

    static let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    static func body(_ refreshToken: String) -> String { "grant_type=refresh_token&refresh_token=" + refreshToken }

    /// Sends one request, its body in `parts` pieces.
    static func send(
        _ channel: EmbeddedChannel, method: HTTPRequest.Method = .post, target: String = "/securetoken.googleapis.com/v1/token?key=k",
        headers: HTTPFields = form, body: String, parts: Int = 1
    ) throws {
        try channel.writeInbound(
            HTTPRequestPart.head(HTTPRequest(method: method, scheme: nil, authority: "localhost", path: target, headerFields: headers)))
        let bytes = Array(body.utf8)
        let size = max(1, (bytes.count + parts - 1) / parts)
        for start in stride(from: 0, to: bytes.count, by: size) {
            try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(bytes: bytes[start..<min(bytes.count, start + size)])))
        }
        try channel.writeInbound(HTTPRequestPart.end(nil))
    }

    /// What reached the route: the head's target and the whole body, or `nil` when nothing did.
    static func forwarded(_ channel: EmbeddedChannel) throws -> (target: String, body: String)? {
        try request { try channel.readInbound(as: HTTPRequestPart.self) }
    }

    /// The first request in the parts `next` gives, until its end: its head's target and its
    /// whole body, or `nil` when there is none.
    static func request(_ next: () throws -> HTTPRequestPart?) rethrows -> (target: String, body: String)? {
        guard case .head(let head) = try next() else { return nil }
        var body = ""
        while let part = try next() {
            switch part {
            case .head: Issue.record("a second head")
            case .body(let buffer): body += String(buffer: buffer)
            case .end: return (head.path ?? "", body)
            }
        }
        Issue.record("no end")
        return nil
    }

    /// The answer written here: its head and JSON body, or `nil` when none was.
    static func answered(_ channel: EmbeddedChannel) throws -> (head: HTTPResponse, json: [String: Any])? {
        guard case .head(let head) = try channel.readOutbound(as: HTTPResponsePart.self) else { return nil }
        guard case .body(let body) = try channel.readOutbound(as: HTTPResponsePart.self),
            case .end = try channel.readOutbound(as: HTTPResponsePart.self)
        else {
            Issue.record("an answer without its body or end")
            return nil
        }
        return (head, try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]))
    }

    /// A JWT's claims.
    static func claims(_ token: String) throws -> [String: Any] {
        let payload = try #require(Base64URL.decode(token.split(separator: ".")[1]))
        return try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
    }

    @Test("a refresh is answered here once lastRefreshAt is fresh; the one that writes it goes to the route")
    func answersAfterTheWrite() async throws {
        let server = try await Server()
        let (refreshToken, localID) = try await server.signUp()
        let channel = try server.channel()
        // Never refreshed: the route refreshes and writes lastRefreshAt.
        try Self.send(channel, body: Self.body(refreshToken))
        #expect(try Self.forwarded(channel)?.body == Self.body(refreshToken))
        #expect(try Self.answered(channel) == nil)
        _ = try await server.services.signIn.refresh(grantType: "refresh_token", refreshToken: refreshToken)
        // Write the route's answer's end, as the responder does, so the next request may be answered here.
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        _ = try channel.readOutbound(as: HTTPResponsePart.self)

        let json: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        for (target, headers, body, parts) in [
            ("/securetoken.googleapis.com/v1/token?key=k", Self.form, Self.body(refreshToken), 1),
            ("/v1/token?key=demo-api-key", Self.form, Self.body(refreshToken), 3),
            ("/v1/token", Self.form + [.googAPIKey: "k"], Self.body(refreshToken), 1),
            ("/securetoken.googleapis.com/v1/token?key=k", json, #"{"grantType":"refresh_token","refreshToken":"\#(refreshToken)"}"#, 2),
            ("/v1/token?key=k", json, #"{"grant_type":"refresh_token","refresh_token":"\#(refreshToken)"}"#, 1),
        ] {
            try Self.send(channel, target: target, headers: headers, body: body, parts: parts)
            #expect(try Self.forwarded(channel) == nil)
            let (head, json) = try #require(try Self.answered(channel))
            #expect(head.status == .ok)
            var expected = RESTAnswer.head(length: Int(head.headerFields[.contentLength] ?? "") ?? -1).headerFields
            expected[.date] = head.headerFields[.date]
            #expect(head.headerFields == expected)
            #expect(json["user_id"] as? String == localID)
            #expect(json["refresh_token"] as? String == refreshToken)
            #expect(json["project_id"] as? String == server.services.settings.project.id)
            #expect(json["token_type"] as? String == "Bearer" && json["expires_in"] as? String == "3600")
            let idToken = try #require(json["id_token"] as? String)
            #expect(json["access_token"] as? String == idToken)
            let verified = try await server.services.tokens.verifyIDToken(idToken, now: server.services.clock.now)
            #expect(verified.sub == localID && verified.firebase.signInProvider == "anonymous")
        }
    }

    @Test("while an earlier request is with the route, later ones go there too, so answers stay in order")
    func pipelined() async throws {
        let server = try await Server()
        let (refreshToken, _) = try await server.signUp()
        _ = try await server.services.signIn.refresh(grantType: "refresh_token", refreshToken: refreshToken)
        let channel = try server.channel()
        try Self.send(channel, headers: Self.form + [.connection: "keep-alive"], body: Self.body(refreshToken))
        try Self.send(channel, body: Self.body(refreshToken))
        #expect(try Self.forwarded(channel) != nil)
        #expect(try Self.forwarded(channel) != nil)
        #expect(try Self.answered(channel) == nil)
        // The route answers both; then the fast path answers again.
        for _ in 0..<2 { try channel.writeOutbound(HTTPResponsePart.end(nil)) }
        while try channel.readOutbound(as: HTTPResponsePart.self) != nil {}
        try Self.send(channel, body: Self.body(refreshToken))
        #expect(try Self.forwarded(channel) == nil)
        #expect(try Self.answered(channel)?.head.status == .ok)
    }

    @Test("anything the route must settle reaches it whole: other requests, refusals, unknown sessions, writes")
    func routeSettles() async throws {
        let server = try await Server()
        let (refreshToken, localID) = try await server.signUp()
        let (revokedToken, revokedID) = try await server.signUp()
        let (disabledToken, disabledID) = try await server.signUp()
        for token in [refreshToken, revokedToken, disabledToken] {
            _ = try await server.services.signIn.refresh(grantType: "refresh_token", refreshToken: token)
        }
        let accounts = server.database.accounts
        _ = try await accounts.transaction(tenantID: "", now: server.services.clock.now) { store in
            var revoked = try store.existingAccount(id: revokedID)
            revoked.validSince = server.services.clock.now.seconds + 10
            try store.update(revoked)
            var disabled = try store.existingAccount(id: disabledID)
            disabled.disabled = true
            try store.update(disabled)
        }
        let body = Self.body(refreshToken)
        let cases: [(String, HTTPRequest.Method, String, HTTPFields, String)] = [
            ("a browser's (CORS)", .post, "/v1/token?key=k", Self.form + [.origin: "https://app.example.com"], body),
            ("the admin's", .post, "/v1/token?key=k", Self.form + [.authorization: "Bearer owner"], body),
            ("JSON with an escape", .post, "/v1/token?key=k", [.contentType: "application/json"], #"{"grantType":"refresh\u005ftoken"}"#),
            ("JSON that is not", .post, "/v1/token?key=k", [.contentType: "application/json"], "grant_type=refresh_token"),
            ("text", .post, "/v1/token?key=k", [.contentType: "text/plain"], body),
            ("no content type", .post, "/v1/token?key=k", [:], body),
            ("no API key", .post, "/v1/token", Self.form, body),
            ("an empty API key", .post, "/v1/token?key=", Self.form, body),
            ("GET", .get, "/v1/token?key=k", Self.form, body),
            ("another path", .post, "/v1/token/?key=k", Self.form, body),
            ("another grant", .post, "/v1/token?key=k", Self.form, "grant_type=authorization_code&refresh_token=" + refreshToken),
            ("no refresh token", .post, "/v1/token?key=k", Self.form, "grant_type=refresh_token"),
            ("a target project", .post, "/v1/token?key=k", Self.form, body + "&targetProjectId=demo-actionlinks"),
            ("an escape", .post, "/v1/token?key=k", Self.form, body + "&x=%41"),
            ("an unknown session", .post, "/v1/token?key=k", Self.form, Self.body(String(repeating: "A", count: 43))),
            ("a revoked session", .post, "/v1/token?key=k", Self.form, Self.body(revokedToken)),
            ("a disabled account", .post, "/v1/token?key=k", Self.form, Self.body(disabledToken)),
            ("a body over 8 KiB", .post, "/v1/token?key=k", Self.form, body + "&x=" + String(repeating: "a", count: 8200)),
        ]
        for (name, method, target, headers, body) in cases {
            let channel = try server.channel()
            try Self.send(channel, method: method, target: target, headers: headers, body: body, parts: 4)
            let reached = try Self.forwarded(channel)
            #expect(reached?.target == target, "\(name)")
            #expect(reached?.body == body, "\(name)")
            #expect(try Self.answered(channel) == nil, "\(name)")
        }
        // The refresh token itself still works here.
        let channel = try server.channel()
        try Self.send(channel, body: body)
        #expect(try Self.answered(channel).map { $0.json["user_id"] as? String } == localID)
    }

    @Test(
        "on a production server a key is taken here only as the route takes it: one of the project's, with its app's headers when it is restricted"
    )
    func restrictedKeys() async throws {
        // A clock that stands still: a refresh writes lastRefreshAt once a minute (the route's), however slow the machine.
        let server = try await Server(clock: ManualClock()) { configuration in
            configuration.service.server.development = false
            configuration.service.project.apiKeys = [
                APIKey("open-key"), APIKey("ios-key", restriction: .iosApps(["com.example.app"])),
                APIKey("web-key", restriction: .httpReferrers([try! HTTPReferrerPattern("app.example.com/*")])),
            ]
        }
        let (refreshToken, localID) = try await server.signUp()
        _ = try await server.services.signIn.refresh(grantType: "refresh_token", refreshToken: refreshToken)
        let body = Self.body(refreshToken)
        let answered: [(String, HTTPFields)] = [
            ("/v1/token?key=open-key", Self.form),
            ("/v1/token?key=ios-key", Self.form + [HTTPField.Name("X-Ios-Bundle-Identifier")!: "com.example.app"]),
            ("/v1/token?key=web-key", Self.form + [.referer: "https://app.example.com/"]),
            ("/v1/token", Self.form + [.googAPIKey: "ios-key", HTTPField.Name("X-Ios-Bundle-Identifier")!: "com.example.app"]),
        ]
        for (target, headers) in answered {
            let channel = try server.channel()
            try Self.send(channel, target: target, headers: headers, body: body)
            #expect(try Self.forwarded(channel) == nil, "\(target)")
            #expect(try Self.answered(channel).map { $0.json["user_id"] as? String } == localID, "\(target)")
        }
        let refused: [(String, HTTPFields, key: String)] = [
            ("/v1/token?key=k", Self.form, "k"),
            ("/v1/token?key=demo-api-key", Self.form, "demo-api-key"),
            ("/v1/token?key=ios-key", Self.form, "ios-key"),
            ("/v1/token?key=ios-key", Self.form + [HTTPField.Name("X-Ios-Bundle-Identifier")!: "com.example.other"], "ios-key"),
            ("/v1/token?key=web-key", Self.form + [.referer: "https://evil.example.net/"], "web-key"),
            ("/v1/token", Self.form + [.googAPIKey: "web-key"], "web-key"),
        ]
        for (target, headers, key) in refused {
            let channel = try server.channel()
            try Self.send(channel, target: target, headers: headers, body: body)
            #expect(try Self.forwarded(channel)?.body == body, "\(target)")
            #expect(try Self.answered(channel) == nil, "\(target)")
            // The route's own check refuses exactly these.
            #expect(!APIAuthenticationMiddleware.accepts(key: key, headers: headers, server.services.settings), "\(target)")
        }
    }

    @Test("on a live server, an answer from the event loop is the route's: the same head, fields and claims")
    func sameAsTheRoute() async throws {
        try await Raw().withServer { port in
            let signUp = Raw.request(
                "POST", "/v1/accounts:signUp?key=demo-api-key",
                ["Content-Type: application/json", "Content-Length: 2", "Connection: close"])
            let created = Raw.responses(try Raw.exchange(port: port, [signUp + "{}"]))
            let answer = try #require(created.first)
            let refreshToken = try #require(try ActionPageFastPathTests.json(answer)["refreshToken"] as? String)
            // The web SDK's form and the iOS and Android SDKs' JSON.
            let bodies = [
                ("application/x-www-form-urlencoded", Self.body(refreshToken)),
                ("application/json", #"{"grantType":"refresh_token","refreshToken":"\#(refreshToken)"}"#),
            ]
            for (index, (type, body)) in bodies.enumerated() {
                func refresh(_ headers: [String]) -> String {
                    Raw.request(
                        "POST", "/securetoken.googleapis.com/v1/token?key=demo-api-key",
                        ["Content-Type: \(type)", "Content-Length: \(body.utf8.count)"] + headers) + body
                }
                // The first refresh writes lastRefreshAt (the route's); then the fast path answers
                // the request without a Connection header, the route the one with.
                if index == 0 {
                    let first = Raw.responses(try Raw.exchange(port: port, [refresh(["Connection: close"])]))
                    #expect(first.first?.hasPrefix("HTTP/1.1 200 OK") == true)
                }
                let answers = Raw.responses(
                    try Raw.exchange(port: port, [refresh([]), refresh(["Connection: keep-alive"]), refresh(["Connection: close"])]))
                #expect(answers.count == 3, "\(type)")
                guard answers.count == 3 else { continue }
                let (fast, route) = (answers[0], answers[1])
                #expect(fast.components(separatedBy: "\r\n\r\n")[0] == route.components(separatedBy: "\r\n\r\n")[0], "\(type)")
                try Self.expectSameTokens(fast, route, type)
            }
        }
    }

    @Test("with PostgreSQL the route's refresh runs from a task and is answered here, its refusals too: nothing reaches the router")
    func answersFromATaskOnPostgreSQL() async throws {
        let postgres = try await PostgresTestServer.freshStore()
        let server = try await Server(postgres: postgres)
        let (refreshToken, localID) = try await server.signUp()
        let (revokedToken, revokedID) = try await server.signUp()
        _ = try await postgres.accounts.transaction(tenantID: "", now: server.services.clock.now) { store in
            var revoked = try store.existingAccount(id: revokedID)
            revoked.validSince = server.services.clock.now.seconds + 10
            try store.update(revoked)
        }
        // The handler is made on the channel's loop, where it lives (the answer comes from a task).
        let channel = try await NIOAsyncTestingChannel { try $0.pipeline.syncOperations.addHandler(server.handler()) }
        let cases = [
            (refreshToken, HTTPResponse.Status.ok, localID), (revokedToken, .badRequest, "TOKEN_EXPIRED"),
            ("AMf-no-such-token", .badRequest, "INVALID_REFRESH_TOKEN"), (refreshToken, .ok, localID),
        ]
        for (token, status, expected) in cases {
            try await SendOobCodeFastPathTests.send(channel, target: "/v1/token?key=k", headers: Self.form, body: Self.body(token))
            // Settled as the request ends: taken here (answered once the task is done) or passed on.
            try #require(try await SendOobCodeFastPathTests.forwarded(channel) == nil, "nothing reaches the router")
            let (head, json) = try await SendOobCodeFastPathTests.answer(channel)
            #expect(head.status == status)
            if status == .ok {
                #expect(json["user_id"] as? String == expected && json["refresh_token"] as? String == token)
            } else {
                #expect((json["error"] as? [String: Any])?["message"] as? String == expected)
            }
        }
        // The first refresh wrote lastRefreshAt, as the route's does.
        #expect(try await postgres.accounts.account(id: localID, tenantID: "")?.lastRefreshAt != nil)
        _ = try await channel.finish()
    }

    @Test(
        "on a live PostgreSQL production server the refresh is the route's, run from a task: tokens, TOKEN_EXPIRED, USER_DISABLED, USER_NOT_FOUND, INVALID_REFRESH_TOKEN"
    )
    func sameAsTheRouteOnPostgreSQL() async throws {
        let environment = [
            "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": SendOobCodeFastPathTests.adminToken,
            "ACTIONLINKS_STORE": try await PostgresTestServer.freshDatabaseURL(),
        ]
        try await TestApp.live(environment: environment) { app in
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                Thread { done.resume(with: Result { try Self.refreshesOnPostgreSQL(port: app.port) }) }.start()
            }
        }
    }

    /// Expects two answers of tokens to be the same but for when they were made: the same fields,
    /// and the ID token's claims but `iat` and `exp`, which are within a second or two.
    static func expectSameTokens(_ fast: String, _ route: String, _ context: String) throws {
        let (fastJSON, routeJSON) = (try ActionPageFastPathTests.json(fast), try ActionPageFastPathTests.json(route))
        #expect(Set(fastJSON.keys) == Set(routeJSON.keys), "\(context)")
        for key in ["user_id", "project_id", "refresh_token", "expires_in", "token_type"] {
            #expect(fastJSON[key] as? String == routeJSON[key] as? String, "\(context) \(key)")
        }
        var fastClaims = try Self.claims(try #require(fastJSON["id_token"] as? String))
        var routeClaims = try Self.claims(try #require(routeJSON["id_token"] as? String))
        for key in ["iat", "exp"] {
            let (a, b) = (fastClaims.removeValue(forKey: key) as? Int ?? 0, routeClaims.removeValue(forKey: key) as? Int ?? -100)
            #expect(abs(a - b) <= 2, "\(context) \(key)")
        }
        #expect(NSDictionary(dictionary: fastClaims) == NSDictionary(dictionary: routeClaims), "\(context)")
    }

    /// The comparisons of ``sameAsTheRouteOnPostgreSQL()``, over blocking sockets.
    static func refreshesOnPostgreSQL(port: Int) throws {
        func post(_ target: String, _ body: String, admin: Bool = false) throws -> String {
            let caller = admin ? ["Authorization: Bearer " + SendOobCodeFastPathTests.adminToken] : []
            let request =
                Raw.request(
                    "POST", target, ["Content-Type: application/json", "Content-Length: \(body.utf8.count)", "Connection: close"] + caller)
                + body
            return try #require(Raw.responses(try Raw.exchange(port: port, [request])).first)
        }
        var users: [(refreshToken: String, localID: String)] = []
        for _ in 0..<4 {
            let created = try ActionPageFastPathTests.json(try post("/v1/accounts:signUp?key=demo-api-key", "{}"))
            users.append((try #require(created["refreshToken"] as? String), try #require(created["localId"] as? String)))
        }
        /// The same refresh answered from the event loop (no `Connection`) and by the route, on one connection.
        func fastAndRoute(_ refreshToken: String) throws -> (fast: String, route: String) {
            let body = Self.body(refreshToken)
            func refresh(_ headers: [String]) -> String {
                Raw.request(
                    "POST", "/v1/token?key=demo-api-key",
                    ["Content-Type: application/x-www-form-urlencoded", "Content-Length: \(body.utf8.count)"] + headers) + body
            }
            let answers = Raw.responses(
                try Raw.exchange(
                    port: port, [refresh([]), refresh(["Connection: keep-alive"]), Raw.request("GET", "/healthz", ["Connection: close"])]))
            guard answers.count == 3 else { throw SendOobCodeFastPathTests.Failure("\(answers.count) answers: \(answers)") }
            return (answers[0], answers[1])
        }
        /// An answer without its `Date` line (the two may straddle a second).
        func dateless(_ answer: String) -> String {
            answer.components(separatedBy: "\r\n").filter { !$0.hasPrefix("Date: ") }.joined(separator: "\r\n")
        }

        // Tokens: the same head and fields, claims but for the times (the first refresh writes lastRefreshAt).
        for user in users {
            let (fast, route) = try fastAndRoute(user.refreshToken)
            #expect(
                fast.hasPrefix("HTTP/1.1 200 OK")
                    && SendOobCodeFastPathTests.head(dateless(fast)) == SendOobCodeFastPathTests.head(dateless(route)))
            #expect(try ActionPageFastPathTests.json(fast)["user_id"] as? String == user.localID)
            try Self.expectSameTokens(fast, route, user.localID)
        }

        // Revoked (a minute ahead, so the sessions of this second go too), disabled, deleted, unknown.
        let validSince = Int(Date().timeIntervalSince1970) + 60
        let project = "/v1/projects/demo-actionlinks/accounts"
        #expect(
            try post(project + ":update", #"{"localId":"\#(users[0].localID)","validSince":\#(validSince)}"#, admin: true).hasPrefix(
                "HTTP/1.1 200"))
        #expect(
            try post(project + ":update", #"{"localId":"\#(users[1].localID)","disableUser":true}"#, admin: true).hasPrefix("HTTP/1.1 200"))
        #expect(try post(project + ":delete", #"{"localId":"\#(users[2].localID)"}"#, admin: true).hasPrefix("HTTP/1.1 200"))
        let refusals = [
            (users[0].refreshToken, "TOKEN_EXPIRED"), (users[1].refreshToken, "USER_DISABLED"), (users[2].refreshToken, "USER_NOT_FOUND"),
            ("AMf-no-such-token", "INVALID_REFRESH_TOKEN"),
        ]
        for (refreshToken, code) in refusals {
            let (fast, route) = try fastAndRoute(refreshToken)
            #expect(
                fast.hasPrefix("HTTP/1.1 400 Bad Request") && fast.contains(code) && dateless(fast) == dateless(route), "\(code): \(fast)")
        }
        // The fourth user still refreshes.
        #expect(try fastAndRoute(users[3].refreshToken).fast.hasPrefix("HTTP/1.1 200 OK"))
    }
}
