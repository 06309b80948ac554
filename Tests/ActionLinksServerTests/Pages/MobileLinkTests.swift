import ActionLinks
import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// The mobile links' fallback page (`/__/auth/links`) against what an attacker appends to the inner
/// link (red-team findings 2 and 3, security issue), over HTTP against the real server.
@Suite("Mobile links: the inner link and its continue URL", .timeLimit(.minutes(5)))
struct MobileLinkTests {
    static let iPhone = ["User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X)"]
    static let android = ["User-Agent": "Mozilla/5.0 (Linux; Android 14)"]
    @Test("a continueUrl appended to a mobile link's inner link never reaches the page; the stored one does")
    func mobileLinkInjection() async throws {
        try await TestApp.router { app in
            try await app.createAccount(email: "inj@example.com")
            let (link, _) = try await app.link(
                "VERIFY_EMAIL", email: "inj@example.com",
                extra: [
                    "canHandleCodeInApp": true, "iOSBundleId": "com.example.app", "androidPackageName": "com.example.app",
                    "continueUrl": "https://app.example.com/done",
                ])
            let injected = try app.local(link) + "%26continueUrl%3Dhttps://evil.example/"
            for agent in [Self.iPhone, Self.android, [:]] {
                let page = try await app.request("GET", injected, headers: agent)
                #expect(page.status == 200, "\(page.text)")
                #expect(!page.text.contains("evil.example"), "the injected continue URL is nowhere on the page: \(page.text)")
                #expect(page.text.contains("app.example.com%2Fdone"), "the stored continue URL is")
            }
            let relinked = try app.local(link) + "%26continueUrl%3Dhttps%253A%252F%252Fevil.example%252F"
            #expect(!(try await app.request("GET", relinked, headers: Self.iPhone).text.contains("evil.example")))
        }
    }

    @Test("the inner link is decoded once: a continue URL with %26 and %3D arrives whole")
    func mobileLinkDecodedOnce() async throws {
        try await TestApp.router { app in
            try await app.createAccount(email: "once@example.com")
            let continueURL = "https://app.example.com/done?next=%2Fa%26b%3Dc&x=1"
            let (link, code) = try await app.link(
                "VERIFY_EMAIL", email: "once@example.com",
                extra: ["canHandleCodeInApp": true, "iOSBundleId": "com.example.app", "continueUrl": continueURL])
            let stored = try #require(ActionCodeLink.parse(link)?.continueURL)
            let page = try await app.request("GET", try app.local(link), headers: Self.iPhone)
            #expect(page.status == 200, "\(page.text)")
            // The "continue in the browser" link is the web link rebuilt from the stored code.
            let href = try #require(Self.attribute("href", in: page.text, startingWith: "https://links.test.example/__/auth/action?"))
            let parsed = try #require(ActionCodeLink.parse(href.replacingOccurrences(of: "&amp;", with: "&")))
            #expect(parsed.oobCode == code)
            #expect(parsed.continueURL == stored, "whole, not cut at %26: \(parsed.continueURL ?? "nil") vs \(stored)")
        }
    }

    static func attribute(_ name: String, in html: String, startingWith prefix: String) -> String? {
        var rest = html[...]
        while let range = rest.range(of: "\(name)=\"") {
            let value = rest[range.upperBound...].prefix { $0 != "\"" }
            if value.hasPrefix(prefix) { return String(value) }
            rest = rest[range.upperBound...]
        }
        return nil
    }
}
