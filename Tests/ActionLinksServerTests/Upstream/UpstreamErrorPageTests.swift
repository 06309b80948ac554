import ActionLinksTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The front's pages for the refusals a development upstream does not give (a disabled account on
/// a reset, too many attempts, an operation the project turned off) and for an upstream that
/// accepts the call and never answers: a local server stands in for the Identity Toolkit.
@Suite("Upstream mode: upstream's refusals and silences on our pages", .timeLimit(.minutes(5)))
struct UpstreamErrorPageTests {
    /// Answers `accounts:resetPassword` by the code: its refusal, or for `SLOW` nothing until the
    /// test releases it (after the front's deadline has answered, so only the deadline can end that
    /// exchange, whatever the load).
    static func standIn(slowAnswers released: Locked<Bool>) -> Application<RouterResponder<BasicRequestContext>> {
        let router = Router()
        router.post("/v1/accounts:resetPassword") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 16)
            let code = (try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["oobCode"] as? String ?? ""
            if code == "SLOW" {
                try await Eventually.wait(for: "the test to release the slow answer", upTo: .seconds(240)) { released.value }
            }
            let error = ["error": ["code": 400, "message": code + " : from the stand-in"]]
            return Response(
                status: .badRequest, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: error))))
        }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    @Test(
        "USER_DISABLED, TOO_MANY_ATTEMPTS_TRY_LATER, OPERATION_NOT_ALLOWED and EXPIRED_OOB_CODE get their pages; no answer within upstream.answerTimeout is 503"
    )
    func refusals() async throws {
        let released = Locked<Bool>(false)
        try await Self.standIn(slowAnswers: released).test(.live) { standIn in
            // Released before the stand-in shuts down (which waits for its open answers), pass or fail.
            defer { released.set(true) }
            let upstream = "http://127.0.0.1:\(try #require(standIn.port))"
            /// A front with this answer deadline: a hang guard for the refusals (the stand-in runs in
            /// this loaded test process), a short one where the deadline itself is tested.
            func makeFront(answerTimeout: String) async throws -> TestServer {
                try await TestServer(environment: [
                    "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": UpstreamModeTests.frontAdmin,
                    "ACTIONLINKS_UPSTREAM_PROJECT_ID": TestProject.id, "ACTIONLINKS_UPSTREAM_API_KEYS": TestProject.apiKey,
                    "ACTIONLINKS_UPSTREAM_IDENTITY_TOOLKIT_URL": upstream, "ACTIONLINKS_UPSTREAM_SECURE_TOKEN_URL": upstream,
                    "ACTIONLINKS_UPSTREAM_ANSWER_TIMEOUT": answerTimeout,
                ])
            }
            let front = try await makeFront(answerTimeout: "120s")
            func page(_ code: String, on server: TestServer? = nil) async throws -> HTTPReply {
                try await (server ?? front).request(
                    "GET", "/__/auth/action?mode=resetPassword&oobCode=\(code)&apiKey=\(TestProject.apiKey)&lang=en")
            }
            let disabled = try await page("USER_DISABLED")
            #expect(disabled.status == 403 && disabled.text.contains("This account is disabled"), "\(disabled.text)")
            let tooMany = try await page("TOO_MANY_ATTEMPTS_TRY_LATER")
            #expect(tooMany.status == 429 && tooMany.text.contains("Too many attempts"), "\(tooMany.text)")
            let notAllowed = try await page("OPERATION_NOT_ALLOWED")
            #expect(notAllowed.status == 400 && notAllowed.text.contains("cannot be used"), "\(notAllowed.text)")
            let expired = try await page("EXPIRED_OOB_CODE")
            #expect(expired.status == 410, "\(expired.text)")
            // A front with a 2 s deadline and a stand-in that never answers: only the deadline ends it.
            let impatient = try await makeFront(answerTimeout: "2s")
            let started = ContinuousClock.now
            let slow = try await page("SLOW", on: impatient)
            let waited = ContinuousClock.now - started
            #expect(slow.status == 503 && slow.text.contains("Your link still works"), "\(slow.text)")
            #expect(waited >= .seconds(2), "not before the 2 s answer deadline: \(waited)")
            released.set(true)
            #expect(!front.standardError.contains("from the stand-in"), "upstream's detail is not logged")
        }
    }
}
