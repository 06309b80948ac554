import ActionLinks
import ActionLinksTestSupport
import Foundation
import Testing

/// ``StrictUpstream`` as a front will meet it: the real binary in production mode, called over
/// loopback exactly as a front or an SDK calls Google (`?key=` and the platform's headers).
@Suite("The strict upstream: restricted keys and quotas through the real binary", .timeLimit(.minutes(5)))
struct StrictUpstreamTests {
    typealias Strict = StrictUpstream

    @Test(
        "each platform's key: Google's 403 without its app's headers, answers with them (token refresh too, on the event loop or the route); an unknown key is Google's 400"
    )
    func restrictedKeys() async throws {
        let upstream = try await Strict.start()
        for key in [Strict.iosKey, Strict.androidKey, Strict.webKey] {
            let blocked = try await upstream.api("signUp", [:], key: key)
            let error = blocked.json["error"] as? [String: Any] ?? [:]
            let details = error["details"] as? [[String: Any]] ?? []
            #expect(blocked.status == 403 && error["status"] as? String == "PERMISSION_DENIED", "\(key): \(blocked.text)")
            #expect((error["message"] as? String)?.hasSuffix(" <empty> are blocked.") == true, "\(blocked.text)")
            #expect(details.first?["@type"] as? String == "type.googleapis.com/google.rpc.ErrorInfo", "\(blocked.text)")
            #expect((details.first?["reason"] as? String)?.hasPrefix("API_KEY_") == true, "\(blocked.text)")
            #expect(details.last?["@type"] as? String == "type.googleapis.com/google.rpc.LocalizedMessage", "\(blocked.text)")

            let signedUp = try await upstream.api("signUp", [:], headers: Strict.headers(for: key), key: key)
            let refreshToken = try #require(signedUp.json["refreshToken"] as? String, "\(key): \(signedUp.text)")
            // The SDKs' hourly refresh: the first writes lastRefreshAt (the route), the next are
            // answered on the event loop; without the app's headers the route refuses every one.
            for _ in 0..<3 {
                let refreshed = try await refresh(upstream, key: key, refreshToken: refreshToken, headers: Strict.headers(for: key))
                #expect(refreshed.status == 200 && refreshed.json["id_token"] is String, "\(key): \(refreshed.text)")
                let refused = try await refresh(upstream, key: key, refreshToken: refreshToken, headers: [:])
                #expect(refused.status == 403 && refused.errorCode?.hasPrefix("Requests from") == true, "\(key): \(refused.text)")
            }
        }
        let unknown = try await upstream.api("signUp", [:], key: "AIzaSyUnknown")
        #expect(unknown.status == 400 && unknown.errorCode == "API key not valid. Please pass a valid API key.", "\(unknown.text)")
        #expect(!upstream.standardError.contains(Strict.iosKey), "keys never reach the log")
    }

    /// Today's UTC day, as the quotas count them.
    static func utcDay() -> Int { Int(Date().timeIntervalSince1970) / 86400 }

    /// The web SDK's refresh: a form to the Secure Token path.
    func refresh(_ server: TestServer, key: String, refreshToken: String, headers: [String: String]) async throws -> HTTPReply {
        var all = headers
        all["Content-Type"] = "application/x-www-form-urlencoded"
        return try await server.request(
            "POST", "/securetoken.googleapis.com/v1/token?key=\(key)",
            body: Data("grant_type=refresh_token&refresh_token=\(refreshToken)".utf8),
            headers: all)
    }

    @Test("sign-in mail: the key of the client that asked in each link, five a day, then QUOTA_EXCEEDED and nothing mailed")
    func quota() async throws {
        let upstream = try await Strict.start()
        let day = Self.utcDay()
        let keys = [Strict.iosKey, Strict.androidKey, Strict.webKey, Strict.unrestrictedKey, Strict.iosKey]
        for (index, key) in keys.enumerated() {
            let email = "quota\(index)@example.com"
            let sent = try await upstream.api(
                "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": email, "continueUrl": "https://app.example.com/finish"],
                headers: Strict.headers(for: key), key: key)
            #expect(sent.status == 200, "\(sent.text)")
            let link = try await UpstreamModeTests.mailedLink(upstream, to: email)
            #expect(ActionCodeLink.parse(link)?.apiKey == key, "\(link)")
        }
        let sixth = try await upstream.api(
            "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "quota5@example.com", "continueUrl": "https://app.example.com/finish"],
            key: Strict.unrestrictedKey)
        // The admin's mail counts against the same quota.
        let admin = try await upstream.api(
            "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "quota6@example.com"], admin: true, adminToken: Strict.adminToken)
        // The quota is per UTC day: a run that crossed midnight has nothing left to check.
        guard Self.utcDay() == day else { return }
        #expect(sixth.status == 400 && sixth.errorMessage == "QUOTA_EXCEEDED : Exceeded daily quota for email sign-in.", "\(sixth.text)")
        #expect(admin.errorCode == "QUOTA_EXCEEDED", "\(admin.text)")
        try await Task.sleep(for: .milliseconds(500))
        #expect(
            UpstreamModeTests.mailCount(upstream, to: "quota5@example.com")
                + UpstreamModeTests.mailCount(upstream, to: "quota6@example.com") == 0)
    }
}
