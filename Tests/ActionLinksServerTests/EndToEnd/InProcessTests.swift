import ActionLinks
import ActionLinksConfiguration
import ActionLinksTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

@Suite("The application in process", .timeLimit(.minutes(5)))
struct InProcessTests {
    static let json: HTTPFields = [.contentType: "application/json"]
    static let admin: HTTPFields = [.contentType: "application/json", .authorization: "Bearer owner"]

    @Test("each surface's routes: 405 with Allow on a known path, Firebase's NOT_FOUND under the API, www/ and the 404 page elsewhere")
    func routes() async throws {
        try await TestApp.router { app in
            let put = try await app.client.execute(uri: "/__/auth/action", method: .put)
            #expect(put.status == .methodNotAllowed && put.headers[.allow] == "GET, HEAD, POST")
            #expect(try await app.client.execute(uri: "/.well-known/assetlinks.json", method: .delete).headers[.allow] == "GET, HEAD")
            let missing = try await app.client.execute(uri: "/v1/accounts:nothing?key=demo-api-key", method: .post, headers: Self.json)
            #expect(missing.status == .notFound && String(buffer: missing.body).contains("NOT_FOUND"))
            let unrouted = try await app.client.execute(uri: "/v1/nothing/at/all", method: .get)
            #expect(unrouted.status == .notFound && unrouted.headers[.contentType]?.hasPrefix("application/json") == true)
            let index = try await app.client.execute(uri: "/", method: .get)
            #expect(
                index.status == .ok && index.headers[HTTPField.Name("Content-Security-Policy")!]?.contains("default-src 'none'") == true)
            let page = try await app.client.execute(uri: "/__/nothing", method: .get)
            #expect(page.status == .notFound && page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(try await app.client.execute(uri: "/healthz", method: .get).status == .ok)
            let aasa = try await app.client.execute(uri: "/.well-known/apple-app-site-association", method: .get)
            #expect(aasa.status == .ok && String(buffer: aasa.body).contains("ABCDE12345.com.example.app"))
        }
    }

    @Test("an operation is reached only by its exact name on its own path: accounts:token is not the token endpoint")
    func exactOperationNames() async throws {
        try await TestApp.router { app in
            let owner = ["Authorization": "Bearer owner", "Content-Type": "application/json"]
            let body = Data(#"{"grant_type":"refresh_token","refresh_token":"x"}"#.utf8)
            for path in [
                "/v1/accounts:token?key=demo-api-key", "/v1/accounts:projects", "/v1/accounts:tenants", "/v1/accounts:config",
                "/v1/accounts:tenant", "/v1/accounts:createSessionCookie", "/v1/accounts:queryAccounts",
                "/v1/projects/demo-actionlinks:lookup", "/v1/projects/demo-actionlinks:signUp", "/v1/projects/demo-actionlinks:token",
            ] {
                let reply = try await app.request("POST", path, body: body, headers: owner)
                #expect(reply.status == 404 && reply.text.contains(#""status":"NOT_FOUND""#), "\(path): \(reply.status) \(reply.text)")
            }
            // The real paths still answer.
            let token = try await app.request(
                "POST", "/v1/token?key=demo-api-key", body: body, headers: ["Content-Type": "application/json"])
            #expect(token.status == 400 && token.errorCode == "INVALID_REFRESH_TOKEN", "\(token.text)")
            let query = try await app.request("POST", "/v1/projects/demo-actionlinks:queryAccounts", body: Data("{}".utf8), headers: owner)
            #expect(query.status == 200, "\(query.text)")
        }
    }

    @Test("a reset link issued, inspected, used and refused a second time, through the REST API")
    func resetRoundTrip() async throws {
        try await TestApp.router { app in
            let create = try await app.client.execute(
                uri: "/v1/projects/demo-actionlinks/accounts", method: .post, headers: Self.admin,
                body: ByteBuffer(string: #"{"email":"ann@example.com"}"#))
            #expect(create.status == .ok, "\(String(buffer: create.body))")
            let sent = try await app.client.execute(
                uri: "/v1/projects/demo-actionlinks/accounts:sendOobCode", method: .post, headers: Self.admin,
                body: ByteBuffer(string: #"{"requestType":1,"email":"Ann@Example.com","returnOobLink":true}"#))
            let answer = try JSONDecoder().decode([String: String].self, from: Data(buffer: sent.body))
            let code = try #require(answer["oobCode"], "\(answer)")
            #expect(answer["email"] == "ann@example.com" && ActionCodeLink.parse(answer["oobLink"] ?? "")?.mode == .resetPassword)
            let path = "/v1/accounts:resetPassword?key=demo-api-key"
            let inspect = try await app.client.execute(
                uri: path, method: .post, headers: Self.json, body: ByteBuffer(string: #"{"oobCode":"\#(code)"}"#))
            #expect(String(buffer: inspect.body).contains(#""requestType":"PASSWORD_RESET""#))
            let body = ByteBuffer(string: #"{"oobCode":"\#(code)","newPassword":"a long new password"}"#)
            #expect(try await app.client.execute(uri: path, method: .post, headers: Self.json, body: body).status == .ok)
            let again = try await app.client.execute(uri: path, method: .post, headers: Self.json, body: body)
            #expect(again.status == .badRequest && String(buffer: again.body).contains("INVALID_OOB_CODE"))
        }
    }

    @Test("bad bodies: wrong field types named, malformed JSON, the wrong content type, an unknown tenant")
    func badBodies() async throws {
        try await TestApp.router { app in
            let path = "/v1/accounts:sendOobCode?key=demo-api-key"
            func send(_ body: String, headers: HTTPFields = Self.json) async throws -> String {
                String(
                    buffer: try await app.client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: body)).body)
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
        try await TestApp.router(clock: clock) { app in
            _ = try await app.client.execute(
                uri: "/v1/projects/demo-actionlinks/accounts", method: .post, headers: Self.admin,
                body: ByteBuffer(string: #"{"email":"tim@example.com"}"#))
            let sent = try await app.client.execute(
                uri: "/v1/projects/demo-actionlinks/accounts:sendOobCode", method: .post, headers: Self.admin,
                body: ByteBuffer(string: #"{"requestType":"VERIFY_EMAIL","email":"tim@example.com","returnOobLink":true}"#))
            let answer = try JSONDecoder().decode([String: String].self, from: Data(buffer: sent.body))
            let code = try #require(answer["oobCode"]), link = try #require(answer["oobLink"])
            let check = #"{"oobCode":"\#(code)"}"#
            let path = "/v1/accounts:resetPassword?key=demo-api-key"
            clock.advance(seconds: 72 * 3600 - 60)
            #expect(
                try await app.client.execute(uri: path, method: .post, headers: Self.json, body: ByteBuffer(string: check)).status == .ok)
            clock.advance(seconds: 120)
            let late = try await app.client.execute(uri: path, method: .post, headers: Self.json, body: ByteBuffer(string: check))
            #expect(String(buffer: late.body).contains("EXPIRED_OOB_CODE"), "\(String(buffer: late.body))")
            let page = try await app.client.execute(uri: String(link.dropFirst("https://links.test.example".count)), method: .get)
            #expect(page.status == .gone)
        }
    }

    @Test("README's example: an expired reset link, mailed and read from the mailbox, shows the expired page")
    func readmeExample() async throws {
        let clock = ManualClock()
        try await TestApp.router(environment: ["ACTIONLINKS_CODES_LIFETIMES_RESET_PASSWORD": "30m"], clock: clock) { app in
            try await app.createAccount(email: "ann@example.com")
            _ = try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "ann@example.com"])
            let link = try await app.mailbox.nextLink(to: "ann@example.com")
            clock.advance(seconds: 31 * 60)
            #expect(try await app.request("GET", try app.local(link)).status == 410)
        }
    }
}
