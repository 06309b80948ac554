import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// The API's CORS (``APICORSMiddleware``) against a foreign web page (red-team finding 11,
/// security issue).
@Suite("CORS on the API: known web origins only", .timeLimit(.minutes(5)))
struct APICORSTests {
    @Test("CORS reflects only known web origins, and the admin credential never works from another one")
    func cors() async throws {
        try await TestApp.router { app in
            func preflight(_ origin: String) async throws -> HTTPReply {
                try await app.request(
                    "OPTIONS", "/v1/projects/demo-actionlinks/accounts:lookup",
                    headers: [
                        "Origin": origin, "Access-Control-Request-Method": "POST",
                        "Access-Control-Request-Headers": "authorization,content-type",
                    ])
            }
            for allowed in ["https://app.example.com", "https://shop.example.org", "https://links.test.example", "http://localhost:3000"] {
                let reply = try await preflight(allowed)
                #expect(reply.header("Access-Control-Allow-Origin") == allowed, "\(allowed)")
            }
            for refused in ["https://evil.example", "null", "https://example.org", "http://app.example.com", "com.example.app://callback"] {
                let reply = try await preflight(refused)
                #expect(reply.header("Access-Control-Allow-Origin") == nil, "\(refused): \(reply.headers)")
            }
            let admin = try await app.api("lookup", ["email": ["x@example.com"]], admin: true, headers: ["Origin": "https://evil.example"])
            #expect(admin.status == 400 && admin.errorCode == "INSUFFICIENT_PERMISSION", "\(admin.text)")
            #expect(admin.header("Access-Control-Allow-Origin") == nil)
            let fromApp = try await app.api(
                "lookup", ["email": ["x@example.com"]], admin: true, headers: ["Origin": "http://localhost:3000"])
            #expect(fromApp.status == 200 && fromApp.header("Access-Control-Allow-Origin") == "http://localhost:3000")
            let client = try await app.api(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "x@example.com"], headers: ["Origin": "https://evil.example"])
            #expect(client.header("Access-Control-Allow-Origin") == nil, "a foreign page cannot read the answer")
        }
    }
}
