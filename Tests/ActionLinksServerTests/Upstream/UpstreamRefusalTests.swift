import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The front's `sendOobCode` in front of an upstream as strict as Google (``StrictUpstream``): the
/// continue URL goes upstream, which checks it against the project's authorized domains, and
/// Google's refusals come back with Google's code, never as a 500, and with no mail, each told in one
/// warning line (with upstream's HTTP status) and counted in `/metrics`. A mode the front has no page for goes to Google's own
/// handler.
@Suite("Upstream mode: Google's refusals of the front's sendOobCode", .timeLimit(.minutes(5)))
struct UpstreamRefusalTests {
    typealias Upstream = UpstreamModeTests
    typealias Strict = StrictUpstream

    @Test(
        "a continue URL the front allows and the project does not authorize is UNAUTHORIZED_DOMAIN; past the day's link quota, QUOTA_EXCEEDED; no mail either way"
    )
    func refusals() async throws {
        var options = Strict.Options()
        options.dailyLinkQuotas = ["signIn": 1]
        let upstream = try await Strict.start(options)
        let front = try await Upstream.front(
            for: upstream, serviceAccount: try await Upstream.serviceAccount(of: upstream),
            environment: ["ACTIONLINKS_UPSTREAM_API_KEYS": Strict.unrestrictedKey])
        func ask(_ type: String, _ email: String, _ continueURL: String) async throws -> HTTPReply {
            try await front.api(
                "sendOobCode", ["requestType": type, "email": email, "continueUrl": continueURL], key: Strict.unrestrictedKey)
        }

        // *.example.org is on the front's allow-list (config/actionlinks.yaml), not among the
        // project's authorized domains (a reset: the quota below is the sign-in links').
        let made = try await upstream.api(
            "create", ["email": "ann-refused@example.com", "password": Upstream.password], admin: true, adminToken: Strict.adminToken)
        #expect(made.status == 200, "\(made.text)")
        let foreign = try await ask("PASSWORD_RESET", "ann-refused@example.com", "https://shop.example.org/done")
        #expect(foreign.status == 400 && foreign.errorCode == "UNAUTHORIZED_DOMAIN", "\(foreign.status) \(foreign.text)")
        #expect(Upstream.mailCount(front, to: "ann-refused@example.com") == 0)

        let first = try await ask("EMAIL_SIGNIN", "bo-quota@example.com", "https://app.example.com/finish")
        #expect(first.status == 200, "\(first.text)")
        _ = try await Upstream.mailedLink(front, to: "bo-quota@example.com")
        let over = try await ask("EMAIL_SIGNIN", "cy-quota@example.com", "https://app.example.com/finish")
        #expect(over.status == 400 && over.errorCode == "QUOTA_EXCEEDED", "\(over.status) \(over.text)")
        #expect(over.text.contains("QUOTA_EXCEEDED : Exceeded daily quota for generating email sign-in links."), "\(over.text)")
        #expect(Upstream.mailCount(front, to: "cy-quota@example.com") == 0)

        // Each refusal is one warning line (the operation, the outcome, Google's code; no address)
        // and a count in /metrics.
        let log = front.standardOutput + front.standardError
        let warnings = log.split(separator: "\n").filter { $0.contains("a call to the fronted project failed") }
        #expect(warnings.count == 2, "\(warnings)")
        #expect(
            warnings.contains {
                $0.contains("code=UNAUTHORIZED_DOMAIN") && $0.contains("operation=accounts:sendOobCode") && $0.contains("status=400")
            })
        #expect(warnings.contains { $0.contains("code=QUOTA_EXCEEDED") && $0.contains("outcome=refused") && $0.contains("status=400") })
        #expect(!warnings.contains { $0.contains("@example.com") || $0.contains("example.org") })
        let metrics = try await front.request("GET", "/metrics", headers: ["Authorization": "Bearer " + Upstream.frontAdmin])
        #expect(metrics.text.contains(#"actionlinks_upstream_requests_total{operation="accounts:sendOobCode",outcome="refused"} 2"#))
        #expect(metrics.text.contains(#"actionlinks_upstream_requests_total{operation="accounts:sendOobCode",outcome="ok"} 1"#))
        #expect(metrics.text.contains(#"actionlinks_upstream_requests_total{operation="token",outcome="ok"} 1"#), "\(metrics.text)")
        #expect(metrics.text.contains("actionlinks_upstream_request_seconds_bucket"))
    }

    @Test(
        "a mode the front has no page for (revertSecondFactorAddition, an unknown one) goes on (303) to Google's handler with the query byte for byte, never the invalid-link page"
    )
    func otherModes() async throws {
        let upstream = try await Strict.start()
        let front = try await Upstream.front(for: upstream, environment: ["ACTIONLINKS_UPSTREAM_API_KEYS": Strict.unrestrictedKey])
        for query in [
            "mode=revertSecondFactorAddition&oobCode=AbC-123_x&apiKey=\(Strict.unrestrictedKey)&lang=fr",
            "apiKey=k%20ey&mode=someModeGoogleAddsLater&oobCode=c%2Fd&continueUrl=https%3A%2F%2Fapp.example.com%2F%3Fa%3D1",
        ] {
            let reply = try await front.request("GET", "/__/auth/action?" + query)
            #expect(reply.status == 303, "\(query): \(reply.status) \(reply.text.prefix(200))")
            #expect(reply.header("Location") == "https://\(TestProject.id).firebaseapp.com/__/auth/action?" + query)
        }
        // A mode with a page of its own is still this server's.
        let reset = try await front.request("GET", "/__/auth/action?mode=resetPassword&oobCode=unknown&apiKey=\(Strict.unrestrictedKey)")
        #expect(reset.status != 303 && reset.header("Location") == nil, "\(reset.status)")
    }

    @Test(
        "the front's sendOobCode asks upstream in the caller's language: X-Firebase-Locale goes with it (an upstream that needs it answers, and the link is mailed in it)"
    )
    func localeGoesUpstream() async throws {
        // An Identity Toolkit stand-in that answers the service account's sendOobCode only with
        // X-Firebase-Locale: fr (403 otherwise), and a metadata server for the token.
        let path = "/v1/projects/\(TestProject.id)/accounts:sendOobCode"
        let answer = #"{"kind":"identitytoolkit#GetOobConfirmationCodeResponse","email":"lu-locale@example.com","oobCode":"locale-code-1"}"#
        let toolkit = try LoopbackHTTPServer(routes: [path: .init(body: Data(answer.utf8), requires: ["X-Firebase-Locale": "fr"])])
        let metadata = try UpstreamMetadataServerTests.metadataServer(token: Strict.adminToken)
        let front = try await TestServer(environment: [
            "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": Upstream.frontAdmin,
            "ACTIONLINKS_UPSTREAM_PROJECT_ID": TestProject.id, "ACTIONLINKS_UPSTREAM_API_KEYS": Strict.unrestrictedKey,
            "ACTIONLINKS_UPSTREAM_IDENTITY_TOOLKIT_URL": toolkit.origin, "ACTIONLINKS_UPSTREAM_SECURE_TOKEN_URL": toolkit.origin,
            "ACTIONLINKS_UPSTREAM_METADATA_SERVER": metadata.origin,
        ])
        let fields = ["requestType": "EMAIL_SIGNIN", "email": "lu-locale@example.com", "continueUrl": "https://app.example.com/finish"]

        let plain = try await front.api("sendOobCode", fields, key: Strict.unrestrictedKey)
        #expect(plain.status != 200, "\(plain.status) \(plain.text)")
        #expect(Upstream.mailCount(front, to: "lu-locale@example.com") == 0)

        let french = try await front.api("sendOobCode", fields, headers: ["X-Firebase-Locale": "fr"], key: Strict.unrestrictedKey)
        #expect(french.status == 200, "\(french.status) \(french.text)")
        let link = try await Upstream.mailedLink(front, to: "lu-locale@example.com")
        #expect(link.contains("oobCode=locale-code-1") && link.contains("lang=fr"), "\(link)")
    }
}
