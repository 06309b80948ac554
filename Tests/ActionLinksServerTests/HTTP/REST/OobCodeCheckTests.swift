import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// `accounts:resetPassword` with only a code, which checks it (red-team finding 16, security
/// issue): what it tells of the code.
@Suite("resetPassword's code check", .timeLimit(.minutes(5)))
struct OobCodeCheckTests {
    @Test("checking an email sign-in code does not tell whom it was sent to")
    func signInCodeWithholdsTheAddress() async throws {
        try await TestApp.router { app in
            let (_, code) = try await app.link("EMAIL_SIGNIN", email: "who@example.com", extra: ["continueUrl": "https://app.example.com/"])
            let reply = try await app.api("resetPassword", ["oobCode": code])
            #expect(reply.status == 200 && reply.json["requestType"] as? String == "EMAIL_SIGNIN")
            #expect(reply.json["email"] == nil && !reply.text.contains("who@example.com"), "\(reply.text)")
            try await app.createAccount(email: "reset@example.com")
            let (_, resetCode) = try await app.link("PASSWORD_RESET", email: "reset@example.com")
            #expect(
                try await app.api("resetPassword", ["oobCode": resetCode]).json["email"] as? String == "reset@example.com",
                "other modes still say")
        }
    }
}
