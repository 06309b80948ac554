import ActionLinks
import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// A production server (`server.development: false`) answers as Google production does where a
/// front depends on it (issue 33; /work/shared/google-production-rules.md §0–§3, §9, §11): restricted
/// API keys with Google's 403 envelopes, links that carry the key of the client that asked, the
/// continue URL and mobile settings refused as Google refuses them, and daily quotas. In process, on
/// ``StrictUpstream``'s configuration.
@Suite("Production answers as Google: keys, continue URLs, mobile settings, quotas", .timeLimit(.minutes(5)))
struct StrictProductionTests {
    typealias Strict = StrictUpstream

    /// A client's call with `key` and the headers `sent`.
    static func call(
        _ app: some LinkDomainClient, _ operation: String, _ fields: [String: Any], key: String = Strict.unrestrictedKey,
        headers sent: [String: String]? = nil
    ) async throws -> HTTPReply {
        try await app.api(operation, fields, headers: sent ?? Strict.headers(for: key), key: key)
    }

    /// The admin's call.
    static func admin(_ app: some LinkDomainClient, _ operation: String, _ fields: [String: Any]) async throws -> HTTPReply {
        try await app.api(operation, fields, admin: true, adminToken: Strict.adminToken)
    }

    static func createAccount(_ app: some LinkDomainClient, _ email: String) async throws {
        let made = try await admin(app, "create", ["email": email, "password": "first-password-1"])
        guard made.status == 200 else { throw TestSupportError("create failed: \(made.text)") }
    }

    /// The body's `error` member.
    static func error(_ reply: HTTPReply) -> NSDictionary { NSDictionary(dictionary: reply.json["error"] as? [String: Any] ?? [:]) }

    /// Google's 403 for a key whose restriction the request does not meet (§0.2, §3.1–3.3).
    static func blocked(_ message: String, reason: String, metadata extra: [String: String] = [:]) -> NSDictionary {
        var metadata = ["service": "identitytoolkit.googleapis.com", "consumer": "projects/\(TestProject.id)"]
        for (key, value) in extra { metadata[key] = value }
        return NSDictionary(dictionary: [
            "code": 403, "message": message, "status": "PERMISSION_DENIED",
            "errors": [["message": message, "domain": "global", "reason": "forbidden"]],
            "details": [
                ["@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "googleapis.com", "metadata": metadata],
                ["@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US", "message": message],
            ],
        ])
    }

    static var unknownKey: NSDictionary {
        NSDictionary(dictionary: [
            "code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT",
            "errors": [["message": "API key not valid. Please pass a valid API key.", "domain": "global", "reason": "badRequest"]],
            "details": [
                [
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com",
                    "metadata": ["service": "identitytoolkit.googleapis.com"],
                ],
                [
                    "@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
                    "message": "API key not valid. Please pass a valid API key.",
                ],
            ],
        ])
    }

    // MARK: API keys

    @Test("an unknown key: Google's 400 (badRequest, INVALID_ARGUMENT, ErrorInfo API_KEY_INVALID and its LocalizedMessage)")
    func unknownKey() async throws {
        try await TestApp.router(config: try Strict.configFile()) { app in
            for key in ["AIzaSyNotThisProjectsKey", TestProject.apiKey] {
                let reply = try await Self.call(app, "signUp", [:], key: key)
                #expect(reply.status == 400 && Self.error(reply) == Self.unknownKey, "\(reply.text)")
            }
        }
    }

    @Test(
        "a restricted key without its app's headers: Google's 403 with <empty>, or the value sent, and the restriction's ErrorInfo; with them it works, by ?key= and X-Goog-Api-Key"
    )
    func restrictedKeys() async throws {
        try await TestApp.router(config: try Strict.configFile()) { app in
            let cases: [(key: String, wrong: [String: String], sentMessage: String, reason: String, platform: String)] = [
                (
                    Strict.iosKey, ["X-Ios-Bundle-Identifier": "com.evil.app"], "com.evil.app", "API_KEY_IOS_APP_BLOCKED",
                    "this iOS client application"
                ),
                (
                    Strict.androidKey, ["X-Android-Package": "com.evil.app", "X-Android-Cert": "00"], "com.evil.app",
                    "API_KEY_ANDROID_APP_BLOCKED",
                    "this Android client application"
                ),
                (
                    Strict.webKey, ["Referer": "https://evil.example.net/"], "https://evil.example.net/", "API_KEY_HTTP_REFERRER_BLOCKED",
                    "referer"
                ),
            ]
            for (key, wrong, sent, reason, platform) in cases {
                let isReferrer = reason == "API_KEY_HTTP_REFERRER_BLOCKED"
                let none = try await Self.call(app, "signUp", [:], key: key, headers: [:])
                let emptyMessage = "Requests from \(platform) <empty> are blocked."
                #expect(
                    none.status == 403
                        && Self.error(none)
                            == Self.blocked(emptyMessage, reason: reason, metadata: isReferrer ? ["httpReferrer": "<empty>"] : [:]),
                    "\(key): \(none.text)")
                let other = try await Self.call(app, "signUp", [:], key: key, headers: wrong)
                #expect(
                    other.status == 403
                        && Self.error(other)
                            == Self.blocked(
                                "Requests from \(platform) \(sent) are blocked.", reason: reason,
                                metadata: isReferrer ? ["httpReferrer": sent] : [:]),
                    "\(key): \(other.text)")
                // The app's own headers (a browser sends the origin and '/').
                let good = try await Self.call(app, "signUp", [:], key: key)
                #expect(good.status == 200 && good.json["idToken"] is String, "\(key): \(good.text)")
                var headers = Strict.headers(for: key)
                headers["X-Goog-Api-Key"] = key
                headers["Content-Type"] = "application/json"
                let byHeader = try await app.request("POST", "/v1/accounts:signUp", body: Data("{}".utf8), headers: headers)
                #expect(byHeader.status == 200, "\(key): \(byHeader.text)")
            }
            // The Android certificate in either case, with or without colons; a package without its certificate is blocked.
            let colons = ["X-Android-Package": Strict.androidPackage, "X-Android-Cert": Strict.androidSHA1.lowercased()]
            #expect(try await Self.call(app, "signUp", [:], key: Strict.androidKey, headers: colons).status == 200)
            let noCert = try await Self.call(
                app, "signUp", [:], key: Strict.androidKey, headers: ["X-Android-Package": Strict.androidPackage])
            #expect(
                noCert.status == 403 && noCert.errorMessage == "Requests from this Android client application com.example.app are blocked.")
            // The unrestricted key needs nothing, and the admin no key at all.
            #expect(try await Self.call(app, "signUp", [:], key: Strict.unrestrictedKey).status == 200)
        }
    }

    @Test(
        "a development server takes any key and ignores restrictions and app settings, as Firebase's emulator does; its links carry a project key"
    )
    func developmentTakesAnyKey() async throws {
        try await TestApp.router(environment: ["ACTIONLINKS_SERVER_DEVELOPMENT": "true"], config: try Strict.configFile()) { app in
            for key in [Strict.iosKey, Strict.androidKey, Strict.webKey, "fake-api-key"] {
                let reply = try await Self.call(app, "signUp", [:], key: key, headers: [:])
                #expect(reply.status == 200, "\(key): \(reply.text)")
            }
            let fields: [String: Any] = [
                "requestType": "EMAIL_SIGNIN", "email": "dev@example.com", "iOSBundleId": Strict.bundleID, "canHandleCodeInApp": true,
            ]
            for key in [Strict.iosKey, "fake-api-key"] {
                #expect(try await Self.call(app, "sendOobCode", fields, key: key, headers: [:]).status == 200)
                let link = try await app.mailbox.nextLink(to: "dev@example.com")
                // A web link (no mobile link domain), with the client's key when it is the project's.
                let parsed = try #require(ActionCodeLink.parse(link), "\(link)")
                #expect(parsed.apiKey == (key == Strict.iosKey ? key : Strict.unrestrictedKey), "\(link)")
                #expect(link.hasPrefix(TestProject.linkOrigin + "/__/auth/action?"), "\(link)")
                #expect(try await app.request("GET", try app.local(link)).status == 200)
            }
        }
    }

    // MARK: Links carry the client's key

    @Test(
        "a mailed link carries the key of the client that asked; the admin's carries the first unrestricted key; every project key opens the pages"
    )
    func linksCarryTheClientsKey() async throws {
        try await TestApp.router(config: try Strict.configFile()) { app in
            for (index, key) in [Strict.iosKey, Strict.androidKey, Strict.webKey, Strict.unrestrictedKey].enumerated() {
                let email = "key\(index)@example.com"
                try await Self.createAccount(app, email)
                let sent = try await Self.call(app, "sendOobCode", ["requestType": "PASSWORD_RESET", "email": email], key: key)
                #expect(sent.status == 200, "\(sent.text)")
                let link = try await app.mailbox.nextLink(to: email)
                #expect(ActionCodeLink.parse(link)?.apiKey == key, "\(link)")
                // The page opens it, and the code completes through the REST API with another of the project's keys.
                let page = try await app.request("GET", try app.local(link))
                #expect(page.status == 200 && page.text.contains("<form"), "\(key): \(page.status)")
                let code = try #require(ActionCodeLink.parse(link)?.oobCode)
                let reset = try await Self.call(
                    app, "resetPassword", ["oobCode": code, "newPassword": "second-password-2"],
                    key: [Strict.androidKey, Strict.iosKey][index % 2])
                #expect(reset.status == 200 && reset.json["email"] as? String == email, "\(reset.text)")
            }
            let admin = try await Self.admin(
                app, "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "key0@example.com", "returnOobLink": true])
            let adminLink = try #require(admin.json["oobLink"] as? String, "\(admin.text)")
            #expect(ActionCodeLink.parse(adminLink)?.apiKey == Strict.unrestrictedKey)
            // A link whose key is not the project's is the invalid-link page.
            let foreign = adminLink.replacingOccurrences(of: "apiKey=\(Strict.unrestrictedKey)", with: "apiKey=AIzaSyOther")
            #expect(try await app.request("GET", try app.local(foreign)).status == 400)
        }
    }

    @Test("a sign-in link goes on to its continue URL with its own key, the key of the client that asked for it")
    func signInRedirectKeepsTheKey() async throws {
        try await TestApp.router(config: try Strict.configFile()) { app in
            let sent = try await Self.call(
                app, "sendOobCode",
                ["requestType": "EMAIL_SIGNIN", "email": "ios@example.com", "continueUrl": "https://app.example.com/finish"],
                key: Strict.iosKey)
            #expect(sent.status == 200, "\(sent.text)")
            let link = try await app.mailbox.nextLink(to: "ios@example.com")
            let landed = try await app.request("GET", try app.local(link))
            #expect(landed.status == 303, "\(landed.text)")
            let location = try #require(landed.header("Location"))
            #expect(location.hasPrefix("https://app.example.com/finish?") && location.contains("apiKey=\(Strict.iosKey)&"), "\(location)")
        }
    }

    // MARK: Continue URLs

    @Test("a continue URL on a host the project does not list: UNAUTHORIZED_DOMAIN on every request type, for the admin too")
    func unauthorizedDomain() async throws {
        try await TestApp.router(config: try Strict.configFile()) { app in
            try await Self.createAccount(app, "ann@example.com")
            let signedIn = try await Self.call(
                app, "signInWithPassword", ["email": "ann@example.com", "password": "first-password-1", "returnSecureToken": true])
            let idToken = try #require(signedIn.json["idToken"] as? String, "\(signedIn.text)")
            let requests: [[String: Any]] = [
                ["requestType": "EMAIL_SIGNIN", "email": "ann@example.com"],
                ["requestType": "PASSWORD_RESET", "email": "ann@example.com"],
                ["requestType": "VERIFY_EMAIL", "idToken": idToken],
                ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": idToken, "newEmail": "new@example.com"],
            ]
            for var fields in requests {
                fields["continueUrl"] = "https://evil.example.net/done"
                let client = try await Self.call(app, "sendOobCode", fields)
                #expect(
                    client.isError("UNAUTHORIZED_DOMAIN")
                        && client.errorMessage == "UNAUTHORIZED_DOMAIN : Domain not allowlisted by project", "\(client.text)")
                fields["idToken"] = nil
                fields["email"] = "ann@example.com"
                fields["returnOobLink"] = true
                let admin = try await Self.admin(app, "sendOobCode", fields)
                #expect(admin.isError("UNAUTHORIZED_DOMAIN"), "admin \(fields): \(admin.text)")
                // A listed host is taken.
                fields["continueUrl"] = "https://app.example.com/done"
                #expect(try await Self.admin(app, "sendOobCode", fields).status == 200)
            }
            #expect(app.mailbox.messages.isEmpty)
        }
    }

    @Test(
        "a relative or hostless continue URL is INVALID_CONTINUE_URI with no detail; a client's sign-in link needs one (MISSING_CONTINUE_URI), the admin's does not"
    )
    func continueURLShapes() async throws {
        try await TestApp.router(config: try Strict.configFile()) { app in
            try await Self.createAccount(app, "bob@example.com")
            for url in ["/done", "noSchemeOrHost", "undefined?email=bob@example.com", "mailto:bob@example.com"] {
                let reply = try await Self.call(
                    app, "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "bob@example.com", "continueUrl": url])
                #expect(reply.status == 400 && reply.errorMessage == "INVALID_CONTINUE_URI", "\(url): \(reply.text)")
            }
            let missing = try await Self.call(app, "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "bob@example.com"])
            #expect(missing.isError("MISSING_CONTINUE_URI"), "\(missing.text)")
            // Google accepts the admin's (OAuth) sign-in link without one: the link has no continueUrl.
            let admin = try await Self.admin(
                app, "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "bob@example.com", "returnOobLink": true])
            let link = try #require(admin.json["oobLink"] as? String, "\(admin.text)")
            let parsed = try #require(ActionCodeLink.parse(link))
            #expect(parsed.mode == .signIn && parsed.continueURL == nil && parsed.apiKey == Strict.unrestrictedKey)
            // Without a continue URL, a reset is fine for a client as well.
            #expect(try await Self.call(app, "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "bob@example.com"]).status == 200)
        }
    }

    @Test("email-link sign-in switched off beats a bad continue URL (OPERATION_NOT_ALLOWED), as Google answers")
    func signInDisabledFirst() async throws {
        try await TestApp.router(config: try Strict.configFile()) { app in
            let made = try await app.post(
                "/v2/projects/\(TestProject.id)/tenants",
                ["displayName": "no-links", "enableEmailLinkSignin": false, "allowPasswordSignup": true],
                headers: ["Authorization": "Bearer \(Strict.adminToken)"])
            let tenant = try #require(made.json["tenantId"] as? String, "\(made.text)")
            for url in ["https://evil.example.net/", "/relative"] {
                let reply = try await Self.call(
                    app, "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "c@example.com", "continueUrl": url, "tenantId": tenant])
                #expect(reply.isError("OPERATION_NOT_ALLOWED"), "\(url): \(reply.text)")
            }
        }
    }

    // MARK: Mobile settings and link domains

    @Test(
        "an app's bundle or package without a mobile link domain: DYNAMIC_LINK_NOT_ACTIVATED, even for a web link; with one, a mobile link on it; a foreign linkDomain: INVALID_HOSTING_LINK_DOMAIN"
    )
    func mobileSettings() async throws {
        try await TestApp.router(config: try Strict.configFile()) { app in
            try await Self.createAccount(app, "dee@example.com")
            for extra: [String: Any] in [
                ["iOSBundleId": Strict.bundleID], ["iOSBundleId": Strict.bundleID, "canHandleCodeInApp": true],
                ["androidPackageName": Strict.androidPackage, "androidInstallApp": true],
            ] {
                var fields: [String: Any] = ["requestType": "PASSWORD_RESET", "email": "dee@example.com"]
                for (key, value) in extra { fields[key] = value }
                let reply = try await Self.call(app, "sendOobCode", fields, key: Strict.iosKey)
                #expect(
                    reply.status == 400 && reply.errorMessage == "DYNAMIC_LINK_NOT_ACTIVATED : FDL domain is not configured",
                    "\(reply.text)")
            }
            #expect(app.mailbox.messages.isEmpty)
        }
        var options = Strict.Options()
        options.mobileLinkDomain = "links.test.example"
        try await TestApp.router(config: try Strict.configFile(options)) { app in
            try await Self.createAccount(app, "dee@example.com")
            let fields: [String: Any] = [
                "requestType": "PASSWORD_RESET", "email": "dee@example.com", "iOSBundleId": Strict.bundleID, "canHandleCodeInApp": true,
                "continueUrl": "https://app.example.com/back",
            ]
            #expect(try await Self.call(app, "sendOobCode", fields, key: Strict.iosKey).status == 200)
            let link = try await app.mailbox.nextLink(to: "dee@example.com")
            #expect(link.hasPrefix(TestProject.linkOrigin + "/__/auth/links?link="), "\(link)")
            #expect(link.contains("apiKey%3D\(Strict.iosKey)%26"), "\(link)")
            var foreign = fields
            foreign["linkDomain"] = "demo-actionlinks.firebaseapp.com"
            let refused = try await Self.call(app, "sendOobCode", foreign, key: Strict.iosKey)
            #expect(refused.isError("INVALID_HOSTING_LINK_DOMAIN"), "\(refused.text)")
        }
    }

    // MARK: Daily quotas

    @Test(
        "beyond a mode's daily quota: QUOTA_EXCEEDED with Google's detail and no mail, until the next UTC day; TOO_MANY_ATTEMPTS_TRY_LATER still answers bursts"
    )
    func dailyQuotas() async throws {
        var options = Strict.Options()
        options.dailyQuotas = ["signIn": 2, "resetPassword": 1, "verifyEmail": 0]
        options.dailyLinkQuotas = ["resetPassword": 1]
        // Five minutes before midnight UTC.
        let clock = ManualClock(start: Timestamp.now.roundedDown(to: .seconds(86400)) + .seconds(86400 - 300))
        try await TestApp.router(clock: clock, config: try Strict.configFile(options)) { app in
            func signIn(_ email: String) async throws -> HTTPReply {
                try await Self.call(
                    app, "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": email, "continueUrl": "https://app.example.com/finish"])
            }
            #expect(try await signIn("s1@example.com").status == 200)
            #expect(try await signIn("s2@example.com").status == 200)
            let third = try await signIn("s3@example.com")
            #expect(
                third.status == 400 && third.errorMessage == "QUOTA_EXCEEDED : Exceeded daily quota for email sign-in.", "\(third.text)")
            try await Self.createAccount(app, "r@example.com")
            #expect(try await Self.call(app, "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "r@example.com"]).status == 200)
            let reset = try await Self.call(app, "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "r@example.com"])
            #expect(reset.errorMessage == "QUOTA_EXCEEDED : Exceeded quota for sending password reset email.", "\(reset.text)")
            // An unknown address counts as well (with enumeration protection its answer is the same 200).
            let unknown = try await Self.call(app, "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "nobody@example.com"])
            #expect(unknown.isError("QUOTA_EXCEEDED"), "\(unknown.text)")
            let signedIn = try await Self.call(
                app, "signInWithPassword", ["email": "r@example.com", "password": "first-password-1", "returnSecureToken": true])
            let verify = try await Self.call(
                app, "sendOobCode", ["requestType": "VERIFY_EMAIL", "idToken": signedIn.json["idToken"] as? String ?? ""])
            #expect(verify.errorMessage == "QUOTA_EXCEEDED : Exceeded quota for sending verification email.", "\(verify.text)")
            // The admin's returned links have their own quota.
            let generated = ["requestType": "PASSWORD_RESET", "email": "r@example.com", "returnOobLink": true] as [String: Any]
            #expect(try await Self.admin(app, "sendOobCode", generated).status == 200)
            let overLinks = try await Self.admin(app, "sendOobCode", generated)
            #expect(
                overLinks.errorMessage == "QUOTA_EXCEEDED : Exceeded daily quota for generating password reset links.", "\(overLinks.text)")
            // The accepted ones were mailed (in the background); nothing else was.
            for address in ["s1@example.com", "s2@example.com", "r@example.com"] { _ = try await app.mailbox.next(to: address) }
            try await Task.sleep(for: .milliseconds(300))
            #expect(app.mailbox.messages.count == 3, "\(app.mailbox.messages.map(\.to))")

            // A new UTC day, five minutes later: the quotas start again.
            clock.advance(seconds: 300)
            #expect(try await signIn("s3@example.com").status == 200)
            #expect(try await Self.call(app, "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "r@example.com"]).status == 200)
            #expect(try await Self.admin(app, "sendOobCode", generated).status == 200)
        }
        // Bursts to one address are still TOO_MANY_ATTEMPTS_TRY_LATER, before any quota.
        try await TestApp.router(
            environment: ["ACTIONLINKS_LIMITS_SENDS_PER_ADDRESS_PER_HOUR": "2"], clock: ManualClock.midHour(),
            config: try Strict.configFile()
        ) {
            app in
            var answers: [String] = []
            for _ in 0..<3 {
                let reply = try await Self.call(
                    app, "sendOobCode",
                    ["requestType": "EMAIL_SIGNIN", "email": "burst@example.com", "continueUrl": "https://app.example.com/"])
                answers.append(reply.errorCode ?? String(reply.status))
            }
            #expect(answers == ["200", "200", "TOO_MANY_ATTEMPTS_TRY_LATER"])
        }
    }
}
