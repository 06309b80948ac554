import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// The action page's form post against a cross-site request (red-team finding 10, security issue).
@Suite("Action pages: cross-site form posts", .timeLimit(.minutes(5)))
struct ActionPageFormTests {
    @Test("a form post from Origin: null, a foreign Referer, or with no origin at all is refused and consumes nothing")
    func crossSiteForms() async throws {
        try await TestApp.router { app in
            try await app.createAccount(email: "csrf@example.com")
            let (link, code) = try await app.link("VERIFY_EMAIL", email: "csrf@example.com")
            let page = try await app.request("GET", try app.local(link))
            for headers in [
                ["Origin": "null"], ["Origin": "https://evil.example"], ["Origin": "", "Referer": "https://evil.example/x"],
                ["Origin": "http://links.test.example"], ["Sec-Fetch-Site": "same-site", "Origin": "https://links.test.example"],
            ] {
                var sent = headers
                if sent["Origin"] == "" { sent["Origin"] = nil }
                let reply = try await Self.post(app, page, headers: sent, origin: sent["Origin"])
                #expect(reply.status == 403, "\(headers): \(reply.status)")
            }
            let bare = try await Self.post(app, page, headers: [:], origin: nil)
            #expect(bare.status == 403, "no Origin, Referer or Sec-Fetch-Site")
            #expect(try await app.api("resetPassword", ["oobCode": code]).status == 200, "the code is still live")
            let referer = try await Self.post(app, page, headers: ["Referer": "https://links.test.example/__/auth/action"], origin: nil)
            #expect(referer.status == 200, "our own Referer will do: \(referer.text)")
        }
    }

    /// Posts the page's form with exactly these headers (`origin` nil: no Origin header at all).
    static func post(_ server: some LinkDomainClient, _ page: HTTPReply, headers: [String: String], origin: String?) async throws
        -> HTTPReply
    {
        let body = HTMLForm.hiddenFields(page.text).map { "\(HTMLForm.encode(component: $0.key))=\(HTMLForm.encode(component: $0.value))" }
            .joined(separator: "&")
        var all = headers
        all["Content-Type"] = "application/x-www-form-urlencoded"
        all["Origin"] = origin
        return try await server.request("POST", "/__/auth/action", body: Data(body.utf8), headers: all)
    }
}
