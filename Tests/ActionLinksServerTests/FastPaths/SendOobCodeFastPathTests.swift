import ActionLinks
import ActionLinksTestSupport
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Synchronization
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// Links issued from the event loop (SQLite): the answer is the route's, written once the link's
/// one write has committed; everything the route must settle reaches it whole.
@Suite("sendOobCode fast path", .timeLimit(.minutes(5)))
struct SendOobCodeFastPathTests {
    typealias Raw = AssociationFastPathTests
    typealias Server = TokenRefreshFastPathTests.Server

    static let json: HTTPFields = [.contentType: "application/json", .authorization: "Bearer owner"]

    /// A channel with the fast path alone, on an event loop of its own (the answer comes from the
    /// store's writer thread).
    static func channel(_ server: Server) async throws -> NIOAsyncTestingChannel {
        let services = server.services
        let route = SendOobCodeFastPath(
            issuer: services.issuer, tenants: services.tenants, settings: services.settings, accessTokens: services.serviceAccountTokens,
            logger: Logger(label: "send-oob-code-fast-path-tests"))
        // The handler is made on the channel's loop, where it lives.
        return try await NIOAsyncTestingChannel { channel in
            try channel.pipeline.syncOperations.addHandler(
                FastPathHandler(route, metrics: ServerMetrics(), logger: Logger(label: "send-oob-code-fast-path-tests")))
        }
    }

    /// Sends one request.
    static func send(
        _ channel: NIOAsyncTestingChannel, method: HTTPRequest.Method = .post, target: String = "/v1/accounts:sendOobCode",
        headers: HTTPFields = json, body: String
    ) async throws {
        try await channel.writeInbound(
            HTTPRequestPart.head(HTTPRequest(method: method, scheme: nil, authority: "localhost", path: target, headerFields: headers)))
        if !body.isEmpty { try await channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: body))) }
        try await channel.writeInbound(HTTPRequestPart.end(nil))
    }

    /// The answer written here, once it is: its head and JSON body.
    static func answer(_ channel: NIOAsyncTestingChannel) async throws -> (head: HTTPResponse, json: [String: Any]) {
        guard case .head(let head) = try await channel.waitForOutboundWrite(as: HTTPResponsePart.self),
            case .body(let body) = try await channel.waitForOutboundWrite(as: HTTPResponsePart.self),
            case .end = try await channel.waitForOutboundWrite(as: HTTPResponsePart.self)
        else { throw Failure("the answer is not a head, a body and an end") }
        return (head, try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]))
    }

    /// What reached the route: the head's target and the whole body, or `nil` when nothing did.
    static func forwarded(_ channel: NIOAsyncTestingChannel) async throws -> (target: String, body: String)? {
        var parts: [HTTPRequestPart] = []
        while let part = try await channel.readInbound(as: HTTPRequestPart.self) {
            parts.append(part)
            if case .end = part { break }
        }
        var next = parts.makeIterator()
        return TokenRefreshFastPathTests.request { next.next() }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    @Test("a sign-in link is answered here once its one write has committed: the code, its sign-in code and the answer agree")
    func answersAfterTheCommit() async throws {
        let server = try await Server()
        let channel = try await Self.channel(server)
        try await Self.send(
            channel,
            body: #"{"requestType":"EMAIL_SIGNIN","email":"Ann@Example.com","continueUrl":"https://app.example.com/","returnOobLink":true}"#
        )
        let (head, json) = try await Self.answer(channel)
        #expect(try await Self.forwarded(channel) == nil)
        #expect(head.status == .ok)
        #expect(head.headerFields[.contentType] == "application/json; charset=utf-8" && head.headerFields[.vary] == "Origin")
        #expect(json["kind"] as? String == "identitytoolkit#GetOobConfirmationCodeResponse")
        #expect(json["email"] as? String == "ann@example.com")
        let link = try #require(json["oobLink"] as? String)
        let code = try #require(json["oobCode"] as? String)
        #expect(link.contains("oobCode=" + code))
        // The code is stored (live, for the address), and the sign-in code opens the same link.
        let record = try server.services.completer.checkNow(code: code, in: server.database.codes)
        #expect(record.mode == .signIn && record.email == "ann@example.com" && record.accountID == nil)
        let signInCode = try #require(json["signInCode"] as? String)
        let exchanged = try await server.services.signInCodes.exchange(
            email: "ann@example.com", code: signInCode, tenantID: "", clientAddress: nil)
        #expect(exchanged.emailLink == link)
    }

    @Test("one handler holds every fast path: all four with SQLite; all but the landing page with PostgreSQL, its refresh from a task")
    func installed() async throws {
        let server = try await Server()
        func handlers(codes: any CodeStore, accounts: any AccountStore) -> [any RemovableChannelHandler] {
            LinkDomainServer.fastPaths(
                services: server.services, templates: server.templates, files: [:], codes: codes, accounts: accounts,
                metrics: ServerMetrics(), logger: Logger(label: "send-oob-code-fast-path-tests"))()
        }
        let sqlite = handlers(codes: server.database.codes, accounts: server.database.accounts)
        let sqliteRoutes = try #require((sqlite.first as? FastPathHandler<ServerFastPaths>)?.route, "one handler: \(sqlite)")
        #expect(sqlite.count == 1)
        #expect(sqliteRoutes.page != nil && sqliteRoutes.refresh != nil && sqliteRoutes.issuing != nil)
        #expect(sqliteRoutes.refresh?.answersLater("/v1/token") == false, "SQLite's refresh is answered at once")
        let postgres = try await StoreFactory.make("postgres")
        let shared = handlers(codes: postgres.codes, accounts: postgres.accounts)
        let sharedRoutes = try #require((shared.first as? FastPathHandler<ServerFastPaths>)?.route, "\(shared)")
        #expect(shared.count == 1)
        #expect(sharedRoutes.page == nil, "PostgreSQL's reads cross a network: no landing page on the event loop")
        #expect(sharedRoutes.refresh?.answersLater("/v1/token") == true, "its refresh is the route's, run from a task")
        #expect(sharedRoutes.issuing != nil, "its batched statement issues a link in one call")
    }

    @Test("what the route must settle reaches it whole, and nothing is written: refusals of the checks, other callers and bodies")
    func routeSettles() async throws {
        let server = try await Server()
        let channel = try await Self.channel(server)
        let signIn = #"{"requestType":"EMAIL_SIGNIN","email":"bo@example.com","returnOobLink":true}"#
        let cases: [(String, HTTPRequest.Method, String, HTTPFields, String)] = [
            ("another operation", .post, "/v1/accounts:signUp", Self.json, "{}"),
            ("a GET", .get, "/v1/accounts:sendOobCode", Self.json, ""),
            ("a page's request (CORS)", .post, "/v1/accounts:sendOobCode", Self.json + [.origin: "https://app.example.com"], signIn),
            (
                "a form", .post, "/v1/accounts:sendOobCode",
                [.contentType: "application/x-www-form-urlencoded", .authorization: "Bearer owner"], "requestType=EMAIL_SIGNIN"
            ),
            ("no API key", .post, "/v1/accounts:sendOobCode", [.contentType: "application/json"], signIn),
            (
                "a Bearer that is not the admin's", .post, "/v1/accounts:sendOobCode",
                [.contentType: "application/json", .authorization: "Bearer nobody"], signIn
            ),
            (
                "a body that may name the project", .post, "/v1/accounts:sendOobCode", Self.json,
                #"{"targetProjectId":"p","requestType":"EMAIL_SIGNIN"}"#
            ),
            ("a body that is not JSON", .post, "/v1/accounts:sendOobCode", Self.json, "{"),
            (
                "a stored or unknown tenant", .post, "/v1/accounts:sendOobCode", Self.json,
                #"{"requestType":"EMAIL_SIGNIN","email":"bo@example.com","tenantId":"stored-1"}"#
            ),
            ("an unknown request type", .post, "/v1/accounts:sendOobCode", Self.json, #"{"requestType":"NOPE","email":"bo@example.com"}"#),
            (
                "a verification", .post, "/v1/accounts:sendOobCode", Self.json,
                #"{"requestType":"VERIFY_EMAIL","email":"bo@example.com","returnOobLink":true}"#
            ),
            ("an address that is not one", .post, "/v1/accounts:sendOobCode", Self.json, #"{"requestType":"EMAIL_SIGNIN","email":"bo"}"#),
            (
                "a continue URL not allowed", .post, "/v1/accounts:sendOobCode", Self.json,
                #"{"requestType":"EMAIL_SIGNIN","email":"bo@example.com","continueUrl":"https://evil.test/"}"#
            ),
            (
                "a link domain not configured", .post, "/v1/accounts:sendOobCode", Self.json,
                #"{"requestType":"EMAIL_SIGNIN","email":"bo@example.com","linkDomain":"evil.test"}"#
            ),
            (
                "a client asking for the link back", .post, "/v1/accounts:sendOobCode?key=demo-api-key", [.contentType: "application/json"],
                signIn
            ),
            ("a project in the path", .post, "/v1/projects/demo-actionlinks/accounts:sendOobCode", Self.json, signIn),
        ]
        for (name, method, target, headers, body) in cases {
            try await Self.send(channel, method: method, target: target, headers: headers, body: body)
            let reached = try await Self.forwarded(channel)
            #expect(reached?.target == target && reached?.body == body, "\(name)")
            #expect(try await channel.readOutbound(as: HTTPResponsePart.self) == nil, "\(name)")
            // The route's answer ends, so the next request may be claimed.
            try await channel.writeOutbound(HTTPResponsePart.end(nil))
            _ = try await channel.readOutbound(as: HTTPResponsePart.self)
        }
        // No code was stored for any of them: the address has no live code to retire.
        let retired = try await server.database.codes.retireCodes(tenantID: "", email: "bo@example.com", now: server.services.clock.now)
        #expect(retired == 0)
    }
}

extension SendOobCodeFastPathTests {
    static let adminToken = String(repeating: "t", count: 40)

    /// A live production server (at most two sends an hour per address), `body` on a thread of its
    /// own with the server's port, then `after` (the mail is delivered by a task of the server's).
    static func withProductionServer(
        _ body: @escaping @Sendable (Int) throws -> Void, after: @Sendable (TestApp) async throws -> Void
    ) async throws {
        let environment = [
            "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": adminToken,
            "ACTIONLINKS_LIMITS_SENDS_PER_ADDRESS_PER_HOUR": "2",
        ]
        try await TestApp.live(environment: environment) { app in
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                Thread { done.resume(with: Result { try body(app.port) }) }.start()
            }
            try await after(app)
        }
    }

    /// A `sendOobCode` request with `body`, as the admin or as a client with the project's key.
    static func sendOobCode(_ body: String, admin: Bool, _ headers: [String] = []) -> String {
        let target = admin ? "/v1/accounts:sendOobCode" : "/v1/accounts:sendOobCode?key=demo-api-key"
        let caller = admin ? ["Authorization: Bearer " + adminToken] : []
        return Raw.request("POST", target, ["Content-Type: application/json", "Content-Length: \(body.utf8.count)"] + caller + headers)
            + body
    }

    /// The same request answered from the event loop (no `Connection` header) and by the route
    /// (`Connection: keep-alive`, which the fast paths leave to it), on one connection.
    static func fastAndRoute(port: Int, _ body: String, admin: Bool) throws -> (fast: String, route: String) {
        let close = Raw.request("GET", "/healthz", ["Connection: close"])
        let answers = Raw.responses(
            try Raw.exchange(
                port: port, [sendOobCode(body, admin: admin), sendOobCode(body, admin: admin, ["Connection: keep-alive"]), close]))
        guard answers.count == 3 else { throw Failure("\(answers.count) answers: \(answers)") }
        return (answers[0], answers[1])
    }

    static func head(_ answer: String) -> String { answer.components(separatedBy: "\r\n\r\n")[0] }

    @Test("on a live production server, each answer from the event loop is the route's: links, refusals of the write, the limits")
    func sameAsTheRoute() async throws {
        try await Self.withProductionServer { port in
            let create = #"{"email":"reset@example.com","password":"reset-password-1"}"#
            let created = Raw.responses(
                try Raw.exchange(
                    port: port,
                    [
                        Raw.request(
                            "POST", "/v1/projects/demo-actionlinks/accounts",
                            [
                                "Content-Type: application/json", "Content-Length: \(create.utf8.count)",
                                "Authorization: Bearer " + Self.adminToken,
                                "Connection: close",
                            ]) + create
                    ]))
            #expect(created.first?.hasPrefix("HTTP/1.1 200") == true)

            // The admin's sign-in link, returned: the same head and fields, another code.
            let signIn =
                #"{"requestType":"EMAIL_SIGNIN","email":"ann@example.com","continueUrl":"https://app.example.com/","returnOobLink":true}"#
            var (fast, route) = try Self.fastAndRoute(port: port, signIn, admin: true)
            #expect(fast.hasPrefix("HTTP/1.1 200 OK") && Self.head(fast) == Self.head(route))
            let (fastJSON, routeJSON) = (try ActionPageFastPathTests.json(fast), try ActionPageFastPathTests.json(route))
            #expect(
                Set(fastJSON.keys) == ["kind", "email", "oobLink", "oobCode", "signInCode"] && Set(routeJSON.keys) == Set(fastJSON.keys))
            #expect(fastJSON["oobCode"] as? String != routeJSON["oobCode"] as? String)

            // A client's reset of an account: mailed, the same answer byte for byte.
            let reset = #"{"requestType":"PASSWORD_RESET","email":"reset@example.com"}"#
            (fast, route) = try Self.fastAndRoute(port: port, reset, admin: false)
            #expect(fast.hasPrefix("HTTP/1.1 200 OK") && fast == route)

            // An address without an account: a client hears what it would of one (email-enumeration
            // protection, on here), and nothing is mailed; the admin is told (a refusal of the write).
            let nobody = #"{"requestType":"PASSWORD_RESET","email":"nobody@example.com"}"#
            (fast, route) = try Self.fastAndRoute(port: port, nobody, admin: false)
            #expect(fast.hasPrefix("HTTP/1.1 200 OK") && fast == route)
            (fast, route) = try Self.fastAndRoute(port: port, nobody, admin: true)
            #expect(fast.hasPrefix("HTTP/1.1 400 Bad Request") && fast.contains("EMAIL_NOT_FOUND") && fast == route)
            // A send over the address's hourly limit (two sends went to it first).
            let limited = #"{"requestType":"EMAIL_SIGNIN","email":"limited@example.com","continueUrl":"https://app.example.com/"}"#
            (fast, route) = try Self.fastAndRoute(port: port, limited, admin: false)
            #expect(fast.hasPrefix("HTTP/1.1 200 OK") && fast == route)
            (fast, route) = try Self.fastAndRoute(port: port, limited, admin: false)
            #expect(fast.hasPrefix("HTTP/1.1 429") && fast.contains("TOO_MANY_ATTEMPTS_TRY_LATER") && fast == route)
        } after: { app in
            // The resets and the sign-in links within the limit were mailed; nothing to nobody. Each
            // second link retired the first one's code (one live link per address and kind), so the
            // outbox sends the first one's mail only if it went out before the second was issued (a
            // mail whose code is dead is not sent late): one or two of each.
            for address in ["reset@example.com", "limited@example.com"] {
                _ = try await app.mailbox.next(to: address)
            }
            #expect((1...2).contains(app.mailbox.messages(to: "reset@example.com").count))
            #expect((1...2).contains(app.mailbox.messages(to: "limited@example.com").count))
            #expect(app.mailbox.messages(to: "nobody@example.com").isEmpty)
        }
    }
}
