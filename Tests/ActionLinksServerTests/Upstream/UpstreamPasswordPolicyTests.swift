import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The front's reset form and the fronted project's password policy, against a stand-in for
/// Google's Identity Toolkit whose answers the test chooses, with a clock the test moves: the
/// policy is read once per (API key, tenant) and kept five minutes, an enforced one is stated and
/// checked before posting, and upstream's `PASSWORD_DOES_NOT_MEET_REQUIREMENTS` comes back on the
/// form with what is missing. (`UpstreamModeTests` does it with two real binaries.)
@Suite("Upstream mode: the project's password policy on the reset form", .timeLimit(.minutes(5)))
struct UpstreamPasswordPolicyTests {
    /// The stand-in. `/v2/passwordPolicy` answers by tenant: none, a policy that is off (the front
    /// then checks only Firebase's floor); `strict`, 10 characters and an upper-case letter
    /// enforced; `broken`, a 500. `accounts:resetPassword` describes any code, and refuses a new
    /// password without a digit as Google does (a rule the policy it serves does not say).
    static func standIn(reads: Locked<[String]>, posts: Locked<[String]>) -> Application<RouterResponder<BasicRequestContext>> {
        let router = Router()
        router.get("/v2/passwordPolicy") { request, _ -> Response in
            let tenant = request.uri.queryParameters["tenantId"].map(String.init) ?? ""
            let key = request.uri.queryParameters["key"].map(String.init) ?? "-"
            reads.withLock { $0.append(key + "/" + tenant) }
            switch tenant {
            case "broken": return Response(status: .internalServerError)
            case "strict":
                return Self.json(
                    #"{"customStrengthOptions":{"minPasswordLength":10,"maxPasswordLength":4096,"containsUppercaseCharacter":true},"enforcementState":"ENFORCE","schemaVersion":1}"#
                )
            default:
                return Self.json(
                    #"{"customStrengthOptions":{"minPasswordLength":20,"containsNumericCharacter":true},"enforcementState":"OFF","schemaVersion":1}"#
                )
            }
        }
        router.post("/v1/accounts:resetPassword") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 16)
            let fields = (try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]) ?? [:]
            guard let password = fields["newPassword"] as? String else {
                return Self.json(
                    #"{"kind":"identitytoolkit#ResetPasswordResponse","requestType":"PASSWORD_RESET","email":"ann@example.com"}"#)
            }
            posts.withLock { $0.append(password) }
            guard password.contains(where: \.isNumber) else {
                let message =
                    "PASSWORD_DOES_NOT_MEET_REQUIREMENTS : Missing password requirements: [Password must contain a numeric character]"
                return Self.json(
                    #"{"error":{"code":400,"message":"\#(message)","errors":[{"message":"\#(message)","domain":"global","reason":"invalid"}]}}"#,
                    status: .badRequest)
            }
            return Self.json(#"{"kind":"identitytoolkit#ResetPasswordResponse","requestType":"PASSWORD_RESET","email":"ann@example.com"}"#)
        }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func front(_ upstream: String) -> [String: String] {
        [
            "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": UpstreamModeTests.frontAdmin,
            "ACTIONLINKS_UPSTREAM_ANSWER_TIMEOUT": "120s", "ACTIONLINKS_UPSTREAM_PROJECT_ID": TestProject.id,
            "ACTIONLINKS_UPSTREAM_API_KEYS": TestProject.apiKey + ",second-key",
            "ACTIONLINKS_UPSTREAM_IDENTITY_TOOLKIT_URL": upstream, "ACTIONLINKS_UPSTREAM_SECURE_TOKEN_URL": upstream,
        ]
    }

    static func page(_ app: TestApp, tenant: String? = nil, key: String = TestProject.apiKey, code: String = "CODE") async throws
        -> HTTPReply
    {
        let tenant = tenant.map { "&tenantId=\($0)" } ?? ""
        return try await app.request("GET", "/__/auth/action?mode=resetPassword&oobCode=\(code)&apiKey=\(key)&lang=en" + tenant)
    }

    @Test("read once per API key and tenant, kept five minutes, read again after; a policy upstream does not serve is never kept")
    func cached() async throws {
        let reads = Locked<[String]>([]), posts = Locked<[String]>([])
        try await Self.standIn(reads: reads, posts: posts).test(.live) { standIn in
            let clock = ManualClock()
            try await TestApp.router(environment: Self.front("http://127.0.0.1:\(try #require(standIn.port))"), clock: clock) { app in
                let key = TestProject.apiKey
                for _ in 0..<3 { #expect(try await Self.page(app, tenant: "strict").status == 200) }
                _ = try await Self.page(app)
                _ = try await Self.page(app, tenant: "strict", key: "second-key")
                #expect(reads.value == ["\(key)/strict", "\(key)/", "second-key/strict"], "\(reads.value)")
                clock.advance(seconds: 299)
                _ = try await Self.page(app, tenant: "strict")
                #expect(reads.value.count == 3, "still fresh after 299 s")
                clock.advance(seconds: 2)
                _ = try await Self.page(app, tenant: "strict")
                #expect(reads.value.count == 4 && reads.value.last == "\(key)/strict", "read again after five minutes: \(reads.value)")
                // Verify pages never ask.
                _ = try await app.request("GET", "/__/auth/action?mode=verifyEmail&oobCode=CODE&apiKey=\(key)&lang=en")
                #expect(reads.value.count == 4)
                let broken = try await Self.page(app, tenant: "broken")
                #expect(broken.status == 200 && broken.text.contains("At least 6 characters."), "Firebase's floor: \(broken.text)")
                _ = try await Self.page(app, tenant: "broken")
                #expect(reads.value.filter { $0.hasSuffix("/broken") }.count == 2, "a failed read is not kept")
            }
        }
    }

    @Test(
        "an enforced policy is stated and checked before posting; off, only the floor; upstream's PASSWORD_DOES_NOT_MEET_REQUIREMENTS on the form, code usable"
    )
    func statedCheckedAndMapped() async throws {
        let reads = Locked<[String]>([]), posts = Locked<[String]>([])
        try await Self.standIn(reads: reads, posts: posts).test(.live) { standIn in
            try await TestApp.router(environment: Self.front("http://127.0.0.1:\(try #require(standIn.port))")) { app in
                let strict = try await Self.page(app, tenant: "strict")
                #expect(strict.text.contains("At least 10 characters."), "\(strict.text)")
                #expect(strict.text.contains("It must also contain an upper-case letter (A–Z)."), "\(strict.text)")
                let refused = try await app.submitForm(of: strict, ["password": "lower-case-1", "passwordAgain": "lower-case-1"])
                #expect(refused.status == 400 && refused.text.contains("It still needs an upper-case letter (A–Z)."), "\(refused.text)")
                #expect(posts.value.isEmpty, "refused here, before anything was sent upstream")
                #expect(
                    HTMLForm.hiddenFields(refused.text)["oobCode"] == "CODE" && HTMLForm.hiddenFields(refused.text)["tenantId"] == "strict")

                // Off upstream: the page states Firebase's floor, and upstream's own refusal is mapped.
                let plain = try await Self.page(app)
                #expect(plain.text.contains("At least 6 characters.") && !plain.text.contains("password-rules"), "\(plain.text)")
                let mapped = try await app.submitForm(of: plain, ["password": "no digits at all", "passwordAgain": "no digits at all"])
                #expect(mapped.status == 400 && mapped.text.contains("It still needs a digit (0–9)."), "\(mapped.text)")
                #expect(
                    !mapped.text.contains("cannot be used") && HTMLForm.hiddenFields(mapped.text)["oobCode"] == "CODE", "the form again")
                let japanese = try await app.submitForm(
                    of: plain, ["password": "no digits at all", "passwordAgain": "no digits at all", "lang": "ja"])
                #expect(japanese.text.contains("足りないもの：数字（0〜9）。"), "\(japanese.text)")
                let done = try await app.submitForm(of: mapped, ["password": "with digit 1", "passwordAgain": "with digit 1"])
                #expect(done.status == 200, "\(done.text)")
                #expect(posts.value == ["no digits at all", "no digits at all", "with digit 1"])
            }
        }
    }
}
