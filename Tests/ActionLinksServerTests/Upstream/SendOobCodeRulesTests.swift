import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// `accounts:sendOobCode`'s rules are one implementation (``CodeIssuer``) whichever back end holds
/// the accounts: a production server with its own accounts and a front whose codes come from the
/// project it fronts answer every request of one table with the same status and the same error,
/// word for word. Three real binaries: the standalone server, a strict upstream and its front.
@Suite("sendOobCode: one set of rules for this server's accounts and a fronted project's", .timeLimit(.minutes(5)))
struct SendOobCodeRulesTests {
    typealias Strict = StrictUpstream

    /// One request of the table: a client's (the unrestricted key) unless `admin`.
    struct Case: Sendable, CustomStringConvertible {
        var fields: [String: any Sendable]
        var admin = false
        var tenant: String? = nil
        /// The error code both must answer; `nil` for a request both accept.
        var expected: String?
        var description: String { "\(fields.keys.sorted().map { "\($0)=\(fields[$0]!)" }) admin=\(admin) → \(expected ?? "200")" }
    }

    static let email = "rules@example.com"

    static let cases: [Case] = [
        Case(fields: [:], expected: "MISSING_REQ_TYPE"),
        Case(fields: ["requestType": "NO_SUCH_TYPE", "email": email], expected: "INVALID_REQ_TYPE"),
        Case(fields: ["requestType": "RECOVER_EMAIL", "email": email], expected: "INVALID_REQ_TYPE"),
        Case(fields: ["requestType": "PASSWORD_RESET", "email": email, "returnOobLink": true], expected: "INSUFFICIENT_PERMISSION"),
        Case(fields: ["requestType": "EMAIL_SIGNIN", "email": email], expected: "MISSING_CONTINUE_URI"),
        Case(
            fields: ["requestType": "EMAIL_SIGNIN", "email": email, "continueUrl": "https://elsewhere.example/finish"],
            expected: "UNAUTHORIZED_DOMAIN"),
        Case(fields: ["requestType": "EMAIL_SIGNIN", "email": email, "continueUrl": "/finish"], expected: "INVALID_CONTINUE_URI"),
        Case(
            fields: ["requestType": "PASSWORD_RESET", "email": email, "iOSBundleId": Strict.bundleID, "canHandleCodeInApp": true],
            expected: "DYNAMIC_LINK_NOT_ACTIVATED"),
        Case(
            fields: ["requestType": "PASSWORD_RESET", "email": email, "linkDomain": "other.example"],
            expected: "INVALID_HOSTING_LINK_DOMAIN"),
        Case(fields: ["requestType": "PASSWORD_RESET"], expected: "MISSING_EMAIL"),
        Case(fields: ["requestType": "PASSWORD_RESET", "email": "not-an-address"], expected: "INVALID_EMAIL"),
        Case(fields: ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": "x"], expected: "MISSING_NEW_EMAIL"),
        Case(fields: ["requestType": "VERIFY_AND_CHANGE_EMAIL", "newEmail": "new@example.com"], expected: "MISSING_ID_TOKEN"),
        Case(fields: ["requestType": "VERIFY_EMAIL", "idToken": ""], expected: "INVALID_ID_TOKEN"),
        Case(fields: ["requestType": "VERIFY_EMAIL", "idToken": "not-a-token"], expected: "INVALID_ID_TOKEN"),
        Case(
            fields: ["requestType": "PASSWORD_RESET", "email": email, "tenantId": "t-two"], admin: true, tenant: "t-one",
            expected: "TENANT_ID_MISMATCH"),
        // The admin's sign-in link needs no continue URL (Firebase production's OAuth callers).
        Case(fields: ["requestType": "EMAIL_SIGNIN", "email": email, "returnOobLink": true], admin: true, expected: nil),
    ]

    @Test("every request of the table gets the same answer from a standalone production server and from a front, and the same daily quota")
    func sameAnswers() async throws {
        var options = Strict.Options()
        options.dailyQuotas = ["resetPassword": 1]
        let standalone = try await Strict.start(options)
        let upstream = try await Strict.start()
        let front = try await UpstreamModeTests.front(
            for: upstream, serviceAccount: try await UpstreamModeTests.serviceAccount(of: upstream),
            environment: [
                "ACTIONLINKS_PROJECT_MOBILE_LINK_DOMAIN": "none", "ACTIONLINKS_LIMITS_DAILY_QUOTAS_RESET_PASSWORD": "1",
                "ACTIONLINKS_CONTINUE_URLS_ALLOW": options.authorizedDomains.joined(separator: ","),
            ])
        try await standalone.createAccount(email: Self.email, password: UpstreamModeTests.password)
        try await upstream.createAccount(email: Self.email, password: UpstreamModeTests.password)

        for rule in Self.cases {
            let own = try await standalone.api("sendOobCode", rule.fields, admin: rule.admin, tenant: rule.tenant)
            let fronted = try await front.api("sendOobCode", rule.fields, admin: rule.admin, tenant: rule.tenant)
            #expect(own.status == (rule.expected == nil ? 200 : 400) && own.errorCode == rule.expected, "standalone, \(rule): \(own.text)")
            #expect(fronted.status == own.status && fronted.errorCode == own.errorCode, "front, \(rule): \(fronted.text)")
            if rule.expected != nil {
                let message = { (reply: HTTPReply) in (reply.json["error"] as? [String: Any])?["message"] as? String }
                #expect(message(fronted) == message(own), "the same words, \(rule)")
            } else {
                let link = try #require(fronted.json["oobLink"] as? String, "\(fronted.text)")
                #expect(link.hasPrefix("https://links.test.example/__/auth/action?mode=signIn&"), "\(link)")
            }
        }

        // The daily quota of reset mail (1): the second is refused by both, with Google's words.
        let reset: [String: any Sendable] = ["requestType": "PASSWORD_RESET", "email": Self.email]
        for server in [standalone, front] {
            #expect(try await server.api("sendOobCode", reset).status == 200)
            let refused = try await server.api("sendOobCode", reset)
            // A UTC day that ended between the two sends opened a new quota: the refusal is then the next day's.
            let again = refused.status == 200 ? try await server.api("sendOobCode", reset) : refused
            #expect(again.status == 400 && again.errorCode == "QUOTA_EXCEEDED", "\(again.text)")
            #expect(
                (again.json["error"] as? [String: Any])?["message"] as? String
                    == "QUOTA_EXCEEDED : Exceeded quota for sending password reset email.")
        }
    }
}
