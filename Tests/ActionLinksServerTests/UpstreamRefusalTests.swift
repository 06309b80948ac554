import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksServer

/// The front's `sendOobCode` in front of an upstream as strict as Google (``StrictUpstream``): the
/// continue URL goes upstream, which checks it against the project's authorized domains, and
/// Google's refusals come back with Google's code, never as a 500, and with no mail.
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
    }
}
