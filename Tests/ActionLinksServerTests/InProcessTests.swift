import ActionLinks
import ActionLinksConfiguration
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import ActionLinksServer

/// The application `actionlinks serve` builds, tested in process through Hummingbird's router test
/// framework: no socket, no child process, no waiting for a start line.
enum InProcessApp {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `body` against the application of the shipped configuration with `environment` overrides,
    /// on a fresh data directory (deleted afterwards).
    static func test<Value: Sendable>(
        environment: [String: String] = [:], clock: any ServiceClock = SystemServiceClock(),
        _ body: @Sendable (any TestClientProtocol) async throws -> Value
    ) async throws -> Value {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("actionlinks-inprocess-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        var overrides = [
            "ACTIONLINKS_DATA_DIRECTORY": data.path,
            "ACTIONLINKS_STORE": "sqlite:" + data.appendingPathComponent("actionlinks.sqlite").path,
            "ACTIONLINKS_LINK_DOMAINS": "links.test.example", "ACTIONLINKS_SERVER_PORT": "0",
        ]
        for (key, value) in environment { overrides[key] = value }
        let configuration = try ActionLinksConfiguration.load(
            file: root.appendingPathComponent("config/actionlinks.yaml").path, environment: overrides)
        var logger = Logger(label: "in-process")
        logger.logLevel = .warning
        let app = try await LinkDomainServer.buildApplication(
            configuration: configuration, www: root.appendingPathComponent("www").path, logger: logger, clock: clock)
        return try await app.test(.router, body)
    }
}

@Suite("The application in process")
struct InProcessTests {
    static let json: HTTPFields = [.contentType: "application/json"]
    static let admin: HTTPFields = [.contentType: "application/json", .authorization: "Bearer owner"]

    @Test("each surface's routes: 405 with Allow on a known path, Firebase's NOT_FOUND under the API, www/ and the 404 page elsewhere")
    func routes() async throws {
        try await InProcessApp.test { client in
            let put = try await client.execute(uri: "/__/auth/action", method: .put)
            #expect(put.status == .methodNotAllowed && put.headers[.allow] == "GET, HEAD, POST")
            #expect(try await client.execute(uri: "/.well-known/assetlinks.json", method: .delete).headers[.allow] == "GET, HEAD")
            let missing = try await client.execute(uri: "/v1/accounts:nothing?key=demo-api-key", method: .post, headers: Self.json)
            #expect(missing.status == .notFound && String(buffer: missing.body).contains("NOT_FOUND"))
            let unrouted = try await client.execute(uri: "/v1/nothing/at/all", method: .get)
            #expect(unrouted.status == .notFound && unrouted.headers[.contentType]?.hasPrefix("application/json") == true)
            let index = try await client.execute(uri: "/", method: .get)
            #expect(
                index.status == .ok && index.headers[HTTPField.Name("Content-Security-Policy")!]?.contains("default-src 'none'") == true)
            let page = try await client.execute(uri: "/__/nothing", method: .get)
            #expect(page.status == .notFound && page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
            let aasa = try await client.execute(uri: "/.well-known/apple-app-site-association", method: .get)
            #expect(aasa.status == .ok && String(buffer: aasa.body).contains("ABCDE12345.com.example.app"))
        }
    }

    @Test("a reset link issued, inspected, used and refused a second time, through the REST API")
    func resetRoundTrip() async throws {
        try await InProcessApp.test { client in
            let create = try await client.execute(
                uri: "/v1/projects/demo-actionlinks/accounts", method: .post, headers: Self.admin,
                body: ByteBuffer(string: #"{"email":"ann@example.com"}"#))
            #expect(create.status == .ok, "\(String(buffer: create.body))")
            let sent = try await client.execute(
                uri: "/v1/projects/demo-actionlinks/accounts:sendOobCode", method: .post, headers: Self.admin,
                body: ByteBuffer(string: #"{"requestType":1,"email":"Ann@Example.com","returnOobLink":true}"#))
            let answer = try JSONDecoder().decode([String: String].self, from: Data(buffer: sent.body))
            let code = try #require(answer["oobCode"], "\(answer)")
            #expect(answer["email"] == "ann@example.com" && ActionCodeLink.parse(answer["oobLink"] ?? "")?.mode == .resetPassword)
            let path = "/v1/accounts:resetPassword?key=demo-api-key"
            let inspect = try await client.execute(
                uri: path, method: .post, headers: Self.json, body: ByteBuffer(string: #"{"oobCode":"\#(code)"}"#))
            #expect(String(buffer: inspect.body).contains(#""requestType":"PASSWORD_RESET""#))
            let body = ByteBuffer(string: #"{"oobCode":"\#(code)","newPassword":"a long new password"}"#)
            #expect(try await client.execute(uri: path, method: .post, headers: Self.json, body: body).status == .ok)
            let again = try await client.execute(uri: path, method: .post, headers: Self.json, body: body)
            #expect(again.status == .badRequest && String(buffer: again.body).contains("INVALID_OOB_CODE"))
        }
    }

    @Test("bad bodies: wrong field types named, malformed JSON, the wrong content type, an unknown tenant")
    func badBodies() async throws {
        try await InProcessApp.test { client in
            let path = "/v1/accounts:sendOobCode?key=demo-api-key"
            func send(_ body: String, headers: HTTPFields = Self.json) async throws -> String {
                String(buffer: try await client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: body)).body)
            }
            let cases: [(body: String, headers: HTTPFields, expected: String)] = [
                (#"{"requestType":"PASSWORD_RESET","email":7}"#, Self.json, "INVALID_ARGUMENT : 'email'"),
                (#"{"requestType":"#, Self.json, "INVALID_JSON"), ("x", [.contentType: "text/plain"], "INVALID_CONTENT_TYPE"),
                (#"{"requestType":"PASSWORD_RESET","email":"a@b.c","tenantId":"nope"}"#, Self.json, "TENANT_NOT_FOUND"),
                (#"{"requestType":"NOT_A_TYPE","email":"a@b.c"}"#, Self.json, "INVALID_REQ_TYPE"),
            ]
            for (body, headers, expected) in cases {
                let answer = try await send(body, headers: headers)
                #expect(answer.contains(expected), "\(body): \(answer)")
            }
        }
    }

    @Test("expiry with a clock moved by hand: a verification code lasts 72 hours, then answers EXPIRED_OOB_CODE and the expired page")
    func expiryWithoutSleeping() async throws {
        let clock = ManualClock()
        try await InProcessApp.test(clock: clock) { client in
            _ = try await client.execute(
                uri: "/v1/projects/demo-actionlinks/accounts", method: .post, headers: Self.admin,
                body: ByteBuffer(string: #"{"email":"tim@example.com"}"#))
            let sent = try await client.execute(
                uri: "/v1/projects/demo-actionlinks/accounts:sendOobCode", method: .post, headers: Self.admin,
                body: ByteBuffer(string: #"{"requestType":"VERIFY_EMAIL","email":"tim@example.com","returnOobLink":true}"#))
            let answer = try JSONDecoder().decode([String: String].self, from: Data(buffer: sent.body))
            let code = try #require(answer["oobCode"]), link = try #require(answer["oobLink"])
            let check = #"{"oobCode":"\#(code)"}"#
            let path = "/v1/accounts:resetPassword?key=demo-api-key"
            clock.advance(seconds: 72 * 3600 - 60)
            #expect(try await client.execute(uri: path, method: .post, headers: Self.json, body: ByteBuffer(string: check)).status == .ok)
            clock.advance(seconds: 120)
            let late = try await client.execute(uri: path, method: .post, headers: Self.json, body: ByteBuffer(string: check))
            #expect(String(buffer: late.body).contains("EXPIRED_OOB_CODE"), "\(String(buffer: late.body))")
            let page = try await client.execute(uri: String(link.dropFirst("https://links.test.example".count)), method: .get)
            #expect(page.status == .gone)
        }
    }
}
