import ActionLinks
import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The front in front of an upstream as strict as Google (``StrictUpstream``), with links that carry
/// the API key of the app that asked: restricted to the iOS app, the Android app or websites. Every
/// upstream call the front makes with a link's key carries the headers the configured apps' SDKs
/// send (`X-Ios-Bundle-Identifier`, `X-Android-Package` and `X-Android-Cert`, and the link domain as
/// `Referer`), so each key passes Google's API front end.
@Suite("Upstream mode: links with restricted API keys", .timeLimit(.minutes(5)))
struct UpstreamRestrictedKeyTests {
    typealias Upstream = UpstreamModeTests
    typealias Strict = StrictUpstream

    @Test("a reset link carrying an iOS-, Android- or website-restricted key gets its form on the front, and its POST applies upstream")
    func restrictedKeys() async throws {
        let upstream = try await Strict.start()
        let front = try await Upstream.front(
            for: upstream,
            environment: [
                "ACTIONLINKS_UPSTREAM_API_KEYS": [Strict.unrestrictedKey, Strict.webKey, Strict.iosKey, Strict.androidKey].joined(
                    separator: ","),
                // The shipped apps (iOS and Android com.example.app) with the Android app's signing SHA-1.
                "ACTIONLINKS_APPS_ANDROID_0_SHA1_CERT_FINGERPRINTS": Strict.androidSHA1,
            ])
        for key in [Strict.iosKey, Strict.androidKey, Strict.webKey] {
            let email = "\(key)@example.com"
            let made = try await upstream.api(
                "create", ["email": email, "password": Upstream.password], admin: true, adminToken: Strict.adminToken)
            #expect(made.status == 200, "\(made.text)")
            // The app's SDK asks Google for the mail with its own key and platform headers.
            let asked = try await upstream.api(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": email], headers: Strict.headers(for: key), key: key)
            #expect(asked.status == 200, "\(key): \(asked.text)")
            let link = try await Upstream.mailedLink(upstream, to: email)
            #expect(link.contains("apiKey=\(key)"), "the link carries the key of the app that asked: \(link)")

            let page = try await front.request("GET", try front.local(link))
            #expect(page.status == 200 && page.text.contains("name=\"password\""), "\(key): \(page.status) \(page.text.prefix(400))")
            guard page.status == 200 else { continue }
            var fields = try Upstream.form(page)
            fields["password"] = "restricted-\(key)-2"
            fields["passwordAgain"] = "restricted-\(key)-2"
            let done = try await Upstream.post(front, fields)
            #expect(done.status == 200, "\(key): \(done.status) \(done.text.prefix(400))")
            let signedIn = try await upstream.api(
                "signInWithPassword", ["email": email, "password": "restricted-\(key)-2", "returnSecureToken": true],
                key: Strict.unrestrictedKey)
            #expect(signedIn.status == 200, "\(key): the new password works upstream: \(signedIn.text)")
        }
    }

    @Test("the header sets: the link domain's Referer, each iOS bundle and each Android package with each SHA-1, tried in turn")
    func headerSets() throws {
        let apps = AppsConfiguration(
            appleApps: [
                .init(teamID: "ABCDE12345", bundleID: "com.example.one"), .init(teamID: "ABCDE12345", bundleID: "com.example.two"),
            ],
            androidApps: [
                .init(packageName: "com.example.android", sha256Fingerprints: [], sha1Fingerprints: ["da:39:a3:ee", "01:02"])
            ])
        let sets = UpstreamClient.platformHeaders(apps: apps, referer: "https://links.example.com/")
        #expect(
            sets.map { $0.map { "\($0.0): \($0.1)" } } == [
                [
                    "Referer: https://links.example.com/", "X-Ios-Bundle-Identifier: com.example.one",
                    "X-Android-Package: com.example.android",
                    "X-Android-Cert: DA39A3EE",
                ],
                [
                    "Referer: https://links.example.com/", "X-Ios-Bundle-Identifier: com.example.two",
                    "X-Android-Package: com.example.android",
                    "X-Android-Cert: 0102",
                ],
            ])
        #expect(UpstreamClient.platformHeaders(apps: AppsConfiguration(), referer: nil).map(\.count) == [0])
    }
}
