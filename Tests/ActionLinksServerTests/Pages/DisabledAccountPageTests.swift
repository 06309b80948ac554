import ActionLinks
import ActionLinksTestSupport
import Foundation
import Testing

/// The pages' answer for an account disabled after its link was sent: the "account disabled" page
/// (403), as in upstream mode, not the "invalid link" page; the code is not used, so it works once
/// the account is enabled again.
@Suite("Pages for a disabled account", .timeLimit(.minutes(5)))
struct DisabledAccountPageTests {
    @Test("a sign-in link's form posted for a disabled account: 403 'This account is disabled', the code kept; enabled again, it signs in")
    func disabledAccount() async throws {
        try await TestApp.router { app in
            let email = "off@example.com"
            let localID = try await app.createAccount(email: email, verified: true)
            let link = try await app.link("EMAIL_SIGNIN", email: email)
            let page = try await app.request("GET", try app.local(link.link) + "&lang=en")
            #expect(page.status == 200, "\(page.status) \(page.text)")
            var fields = try UpstreamModeTests.form(page)
            fields["email"] = email
            func post() async throws -> HTTPReply { try await UpstreamModeTests.post(app, fields) }

            let disabled = try await app.api("update", ["localId": localID, "disableUser": true], admin: true)
            #expect(disabled.status == 200, "\(disabled.text)")
            let refused = try await post()
            #expect(refused.status == 403 && refused.text.contains("This account is disabled"), "\(refused.status) \(refused.text)")

            let enabled = try await app.api("update", ["localId": localID, "disableUser": false], admin: true)
            #expect(enabled.status == 200, "\(enabled.text)")
            let done = try await post()
            #expect(done.status == 200 || done.status == 303, "the code was kept: \(done.status) \(done.text)")
        }
    }
}
