import ActionLinks
import ActionLinksConfiguration
import ActionLinksTestSupport
import Foundation
import Logging
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

@Suite("The application in process", .timeLimit(.minutes(5)))
struct InProcessTests {
    static let json = ["Content-Type": "application/json"]
    static let admin = ["Content-Type": "application/json", "Authorization": "Bearer owner"]

    @Test("each surface's routes: 405 with Allow on a known path, Firebase's NOT_FOUND under the API, www/ and the 404 page elsewhere")
    func routes() async throws {
        try await TestApp.router { app in
            let put = try await app.request("PUT", "/__/auth/action")
            #expect(put.status == 405 && put.header("Allow") == "GET, HEAD, POST")
            #expect(try await app.request("DELETE", "/.well-known/assetlinks.json").header("Allow") == "GET, HEAD")
            let missing = try await app.request("POST", "/v1/accounts:nothing?key=demo-api-key", headers: Self.json)
            #expect(missing.status == 404 && missing.text.contains("NOT_FOUND"))
            let unrouted = try await app.request("GET", "/v1/nothing/at/all")
            #expect(unrouted.status == 404 && unrouted.header("Content-Type")?.hasPrefix("application/json") == true)
            let index = try await app.request("GET", "/")
            #expect(index.status == 200 && index.header("Content-Security-Policy")?.contains("default-src 'none'") == true)
            let page = try await app.request("GET", "/__/nothing")
            #expect(page.status == 404 && page.header("Content-Type") == "text/html; charset=utf-8")
            #expect(try await app.request("GET", "/healthz").status == 200)
            let aasa = try await app.request("GET", "/.well-known/apple-app-site-association")
            #expect(aasa.status == 200 && aasa.text.contains("ABCDE12345.com.example.app"))
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
            let create = try await app.request(
                "POST", "/v1/projects/demo-actionlinks/accounts", body: Data(#"{"email":"ann@example.com"}"#.utf8), headers: Self.admin)
            #expect(create.status == 200, "\(create.text)")
            let sent = try await app.request(
                "POST", "/v1/projects/demo-actionlinks/accounts:sendOobCode",
                body: Data(#"{"requestType":1,"email":"Ann@Example.com","returnOobLink":true}"#.utf8), headers: Self.admin)
            let answer = try JSONDecoder().decode([String: String].self, from: sent.body)
            let code = try #require(answer["oobCode"], "\(answer)")
            #expect(answer["email"] == "ann@example.com" && ActionCodeLink.parse(answer["oobLink"] ?? "")?.mode == .resetPassword)
            let path = "/v1/accounts:resetPassword?key=demo-api-key"
            let inspect = try await app.request("POST", path, body: Data(#"{"oobCode":"\#(code)"}"#.utf8), headers: Self.json)
            #expect(inspect.text.contains(#""requestType":"PASSWORD_RESET""#))
            let body = Data(#"{"oobCode":"\#(code)","newPassword":"a long new password"}"#.utf8)
            #expect(try await app.request("POST", path, body: body, headers: Self.json).status == 200)
            let again = try await app.request("POST", path, body: body, headers: Self.json)
            #expect(again.status == 400 && again.text.contains("INVALID_OOB_CODE"))
        }
    }

    @Test("bad bodies: wrong field types named, malformed JSON, the wrong content type, an unknown tenant")
    func badBodies() async throws {
        try await TestApp.router { app in
            let path = "/v1/accounts:sendOobCode?key=demo-api-key"
            func send(_ body: String, headers: [String: String] = Self.json) async throws -> String {
                try await app.request("POST", path, body: Data(body.utf8), headers: headers).text
            }
            let cases: [(body: String, headers: [String: String], expected: String)] = [
                (#"{"requestType":"PASSWORD_RESET","email":7}"#, Self.json, "INVALID_ARGUMENT : 'email'"),
                (#"{"requestType":"#, Self.json, "INVALID_JSON"), ("x", ["Content-Type": "text/plain"], "INVALID_CONTENT_TYPE"),
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
            _ = try await app.request(
                "POST", "/v1/projects/demo-actionlinks/accounts", body: Data(#"{"email":"tim@example.com"}"#.utf8), headers: Self.admin)
            let sent = try await app.request(
                "POST", "/v1/projects/demo-actionlinks/accounts:sendOobCode",
                body: Data(#"{"requestType":"VERIFY_EMAIL","email":"tim@example.com","returnOobLink":true}"#.utf8), headers: Self.admin)
            let answer = try JSONDecoder().decode([String: String].self, from: sent.body)
            let code = try #require(answer["oobCode"]), link = try #require(answer["oobLink"])
            let check = Data(#"{"oobCode":"\#(code)"}"#.utf8)
            let path = "/v1/accounts:resetPassword?key=demo-api-key"
            clock.advance(seconds: 72 * 3600 - 60)
            #expect(try await app.request("POST", path, body: check, headers: Self.json).status == 200)
            clock.advance(seconds: 120)
            let late = try await app.request("POST", path, body: check, headers: Self.json)
            #expect(late.text.contains("EXPIRED_OOB_CODE"), "\(late.text)")
            let page = try await app.request("GET", String(link.dropFirst("https://links.test.example".count)))
            #expect(page.status == 410)
        }
    }

    @Test("docs/CONTRIBUTING.md's example: an expired reset link, mailed and read from the mailbox, shows the expired page")
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
