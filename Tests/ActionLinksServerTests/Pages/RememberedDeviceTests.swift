import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// The remembered device's cookie (``RememberedDevice``) against its use elsewhere (red-team
/// finding 14, security issue).
@Suite("The remembered device's cookie", .timeLimit(.minutes(5)))
struct RememberedDeviceTests {
    @Test("a device cookie proves its address only in the tenant it was set in")
    func deviceCookieTenant() async throws {
        try await TestApp.router(environment: ["ACTIONLINKS_TENANTS": "t-one"]) { app in
            let email = "ten@example.com"
            let (link, _) = try await app.link("EMAIL_SIGNIN", email: email)
            let page = try await app.request("GET", try app.local(link))
            let done = try await app.submitForm(of: page, ["email": email])
            let cookie = ["Cookie": String(try #require(done.header("Set-Cookie")).prefix { $0 != ";" })]
            let (again, _) = try await app.link("EMAIL_SIGNIN", email: email)
            #expect(
                !(try await app.request("GET", try app.local(again), headers: cookie).text.contains(#"type="email""#)),
                "same tenant: remembered")
            let reply = try await app.api(
                "sendOobCode",
                ["requestType": "EMAIL_SIGNIN", "email": email, "returnOobLink": true],
                admin: true, tenant: "t-one")
            let tenantLink = try #require(reply.json["oobLink"] as? String, "\(reply.text)")
            let other = try await app.request("GET", try app.local(tenantLink), headers: cookie)
            #expect(other.status == 200 && other.text.contains(#"type="email""#), "another tenant: the address is asked for")
        }
    }

    /// Signs in through the page with `headers` on the form post, and returns the device cookie set.
    static func deviceCookie(_ server: some LinkDomainClient, headers: [String: String]) async throws -> String? {
        let email = "dev\(UUID().uuidString.prefix(6).lowercased())@example.com"
        // No continue URL: the page itself signs in (with one, the GET would go on to the app).
        let (link, _) = try await server.link("EMAIL_SIGNIN", email: email)
        let page = try await server.request("GET", try server.local(link))
        let done = try await server.submitForm(of: page, ["email": email], headers: headers)
        #expect(done.status == 200, "\(done.text)")
        return done.header("Set-Cookie")
    }
}
