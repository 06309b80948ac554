import ActionLinks
import ActionLinksServer
import ActionLinksTestSupport
import Foundation
import Testing

/// The red-team findings (security issue), each against the real server over HTTP: what an attacker
/// sends, and that it gets nothing.
@Suite("Security: attacks against the running server", .timeLimit(.minutes(5)))
struct SecurityTests {
    static let iPhone = ["User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X)"]
    static let android = ["User-Agent": "Mozilla/5.0 (Linux; Android 14)"]

    // MARK: 2, 3. /__/auth/links

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

    // MARK: 4. The emulator listing

    @Test("emulatorListing with development: false does not start, and says why")
    func listingNeedsDevelopment() async throws {
        let refused = await #expect(throws: (any Error).self) {
            try await TestApp.router(environment: [
                "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": String(repeating: "t", count: 40),
                "ACTIONLINKS_EMULATOR_LISTING": "true",
            ]) { _ in }
        }
        let message = refused.map { "\($0)" } ?? ""
        #expect(message.contains("emulatorListing") == true, "\(message)")
        #expect(message.contains("server.development: true") == true)
    }

    // MARK: 5. Tenants and send limits

    @Test("only configured tenants exist; malformed IDs are refused; the per-address limit counts across tenants")
    func tenantsAndLimits() async throws {
        try await TestApp.router(
            environment: [
                "ACTIONLINKS_TENANTS": "t-one,t-two", "ACTIONLINKS_LIMITS_SENDS_PER_ADDRESS_PER_HOUR": "3",
                "ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true",
            ], clock: ManualClock.midHour()
        ) { app in
            for tenant in ["t-one", "t-two"] { _ = try await app.api("create", ["email": "rot@example.com"], admin: true, tenant: tenant) }
            let unknown = try await app.api(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "rot@example.com"], tenant: "t-three")
            #expect(unknown.status == 400 && unknown.errorCode == "TENANT_NOT_FOUND", "\(unknown.text)")
            let inBody = try await app.api(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "rot@example.com", "tenantId": "nope"])
            #expect(inBody.errorCode == "TENANT_NOT_FOUND", "\(inBody.text)")
            let nul = try await app.api(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "rot@example.com", "tenantId": "t-one\u{0}x"])
            #expect(nul.errorCode == "INVALID_TENANT_ID", "a NUL does not truncate the ID: \(nul.text)")
            let admin = try await app.api("create", ["email": "x@example.com"], admin: true, tenant: "made-up")
            #expect(admin.errorCode == "TENANT_NOT_FOUND", "nor for the admin")

            var answers: [Int] = []
            for tenant in ["t-one", "t-two", "t-one", "t-two", "t-one"] {
                answers.append(
                    try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "ROT@example.com"], tenant: tenant).status)
            }
            #expect(answers == [200, 200, 200, 429, 429], "one mailbox, one limit, whatever the tenant: \(answers)")
        }
    }

    @Test("a change-email request counts against the new address's limit too")
    func changeEmailCountsTheRecipient() async throws {
        // A clock that stands mid-hour: a run that crosses an hour cannot open a new window.
        let clock = ManualClock.midHour()
        try await TestApp.router(environment: ["ACTIONLINKS_LIMITS_SENDS_PER_ADDRESS_PER_HOUR": "2"], clock: clock) { app in
            try await app.createAccount(email: "victim@example.com")
            for _ in 0..<2 {
                #expect(try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "victim@example.com"]).status == 200)
            }
            let idToken = try await Self.signIn(app, "mallory@example.com")
            let change = try await app.api(
                "sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": idToken, "newEmail": "victim@example.com"])
            #expect(change.status == 429, "the recipient's mailbox is over its limit: \(change.text)")
        }
    }

    /// Signs `email` in with an email link (created on the way) and returns the ID token.
    static func signIn(_ server: some LinkDomainClient, _ email: String) async throws -> String {
        let (_, code) = try await server.link("EMAIL_SIGNIN", email: email, extra: ["continueUrl": "https://app.example.com/"])
        let reply = try await server.api("signInWithEmailLink", ["oobCode": code, "email": email])
        return try #require(reply.json["idToken"] as? String, "\(reply.text)")
    }

    // MARK: 7. /metrics

    @Test("/metrics needs a credential even from loopback, and no counter tells whether an address has an account")
    func metrics() async throws {
        let token = String(repeating: "m", count: 40)
        try await TestApp.live(environment: [
            "ACTIONLINKS_SERVER_METRICS_TOKEN": token, "ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true",
        ]) { app in
            #expect(
                try await app.request("GET", "/metrics").status == 401, "loopback is no credential (a proxy on this machine is loopback)")
            #expect(try await app.request("GET", "/metrics", headers: ["Authorization": "Bearer nope"]).status == 401)
            #expect(try await app.request("GET", "/metrics", headers: ["Authorization": "Bearer owner"]).status == 200)
            func codes() async throws -> [String] {
                let text = try await app.request("GET", "/metrics", headers: ["Authorization": "bearer " + token]).text
                return text.split(separator: "\n").filter { $0.hasPrefix("actionlinks_codes_") }.map(String.init)
            }
            try await app.createAccount(email: "known@example.com")
            let before = try await codes()
            _ = try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "unknown@example.com"])
            let afterUnknown = try await codes()
            _ = try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "known@example.com"])
            let afterKnown = try await codes()
            #expect(before != afterUnknown, "an unknown address moves the counters")
            #expect(Self.delta(before, afterUnknown) == Self.delta(afterUnknown, afterKnown), "exactly as a known one does")
        }
    }

    /// The series that changed from `a` to `b`, with their increase.
    static func delta(_ a: [String], _ b: [String]) -> [String: Double] {
        func values(_ lines: [String]) -> [String: Double] {
            Dictionary(
                lines.compactMap { line in
                    let parts = line.split(separator: " ")
                    return parts.count == 2 ? (String(parts[0]), Double(parts[1]) ?? 0) : nil
                }, uniquingKeysWith: { $1 })
        }
        let (old, new) = (values(a), values(b))
        var changed: [String: Double] = [:]
        for (series, value) in new where old[series] != value { changed[series] = value - (old[series] ?? 0) }
        return changed
    }

    // MARK: 8. Trusted proxies

    @Test("X-Forwarded-For and -Proto count only from a configured proxy; Host never decides a cookie")
    func trustedProxies() async throws {
        try await TestApp.live(
            environment: [
                "ACTIONLINKS_LIMITS_SENDS_PER_IP_PER_HOUR": "2", "ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true",
            ], clock: ManualClock.midHour()
        ) { direct in
            var answers: [Int] = []
            for index in 0..<3 {
                answers.append(
                    try await direct.api(
                        "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "p\(index)@example.com"],
                        headers: ["X-Forwarded-For": "203.0.113.\(index)", "Forwarded": "for=198.51.100.\(index)"]
                    ).status)
            }
            #expect(answers == [200, 200, 429], "a client cannot pick its own address: \(answers)")
            #expect(try await Self.deviceCookie(direct, headers: ["X-Forwarded-Proto": "https"])?.contains("Secure") == false)
        }
        try await TestApp.live(
            environment: [
                "ACTIONLINKS_LIMITS_SENDS_PER_IP_PER_HOUR": "2", "ACTIONLINKS_SERVER_TRUSTED_PROXIES": "127.0.0.0/8,::1",
                "ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true",
            ], clock: ManualClock.midHour()
        ) { proxied in
            var answers: [Int] = []
            for index in 0..<3 {
                answers.append(
                    try await proxied.api(
                        "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "q\(index)@example.com"],
                        headers: ["X-Forwarded-For": "203.0.113.\(index), 127.0.0.1"]
                    ).status)
            }
            #expect(answers == [200, 200, 200], "behind our proxy, each client is itself: \(answers)")
            for index in 0..<3 {
                answers.append(
                    try await proxied.api(
                        "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "r\(index)@example.com"],
                        headers: ["Forwarded": "for=198.51.100.7;proto=https"]
                    ).status)
            }
            #expect(answers.suffix(3) == [200, 200, 429], "and one client is one client: \(answers)")
            #expect(try await Self.deviceCookie(proxied, headers: ["X-Forwarded-Proto": "https"])?.contains("; Secure") == true)
            #expect(try await Self.deviceCookie(proxied, headers: [:])?.contains("Secure") == false, "plain HTTP on a development server")
            #expect(try await Self.deviceCookie(proxied, headers: ["Host": "links.example.com"])?.contains("Secure") == false)
        }
    }

    /// Signs in through the page with `headers` on the form post, and returns the device cookie set.
    static func deviceCookie(_ server: some LinkDomainClient, headers: [String: String]) async throws -> String? {
        let email = "dev\(UUID().uuidString.prefix(6).lowercased())@example.com"
        // No continue URL: the page itself signs in (with one, the GET would go on to the app).
        let (link, _) = try await server.link("EMAIL_SIGNIN", email: email)
        let page = try await server.request("GET", try server.local(link))
        let done = try await server.submitForm(of: page, ["email": email], headers: headers)
        #expect(done.status == 200, "\(done.text)")
        return done.header("Set-Cookie")
    }

    // MARK: 9. Enumeration

    @Test("with email-enumeration protection, sendOobCode answers a known and an unknown address in the same bytes (both normalised)")
    func enumeration() async throws {
        try await TestApp.router(environment: ["ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true"]) { app in
            try await app.createAccount(email: "here@example.com")
            let known = try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "  HERE@Example.com"])
            let unknown = try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "  GONE@Example.com"])
            #expect(known.status == 200 && unknown.status == 200)
            #expect(known.json["email"] as? String == "here@example.com")
            #expect(unknown.json["email"] as? String == "gone@example.com", "not the typed form: \(unknown.text)")
            #expect(known.text.replacingOccurrences(of: "here@", with: "") == unknown.text.replacingOccurrences(of: "gone@", with: ""))
            #expect(known.headers.keys.sorted() == unknown.headers.keys.sorted())
        }
    }

    // MARK: 10. Cross-site form posts

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

    // MARK: 11. CORS

    @Test("CORS reflects only known web origins, and the admin credential never works from another one")
    func cors() async throws {
        try await TestApp.router { app in
            func preflight(_ origin: String) async throws -> HTTPReply {
                try await app.request(
                    "OPTIONS", "/v1/projects/demo-actionlinks/accounts:lookup",
                    headers: [
                        "Origin": origin, "Access-Control-Request-Method": "POST",
                        "Access-Control-Request-Headers": "authorization,content-type",
                    ])
            }
            for allowed in ["https://app.example.com", "https://shop.example.org", "https://links.test.example", "http://localhost:3000"] {
                let reply = try await preflight(allowed)
                #expect(reply.header("Access-Control-Allow-Origin") == allowed, "\(allowed)")
            }
            for refused in ["https://evil.example", "null", "https://example.org", "http://app.example.com", "com.example.app://callback"] {
                let reply = try await preflight(refused)
                #expect(reply.header("Access-Control-Allow-Origin") == nil, "\(refused): \(reply.headers)")
            }
            let admin = try await app.api("lookup", ["email": ["x@example.com"]], admin: true, headers: ["Origin": "https://evil.example"])
            #expect(admin.status == 400 && admin.errorCode == "INSUFFICIENT_PERMISSION", "\(admin.text)")
            #expect(admin.header("Access-Control-Allow-Origin") == nil)
            let fromApp = try await app.api(
                "lookup", ["email": ["x@example.com"]], admin: true, headers: ["Origin": "http://localhost:3000"])
            #expect(fromApp.status == 200 && fromApp.header("Access-Control-Allow-Origin") == "http://localhost:3000")
            let client = try await app.api(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "x@example.com"], headers: ["Origin": "https://evil.example"])
            #expect(client.header("Access-Control-Allow-Origin") == nil, "a foreign page cannot read the answer")
        }
    }

    // MARK: 14. Pages

    @Test("androidMinimumVersion must be a version code; every HTML response has the page headers; the device cookie names its expiry")
    func pages() async throws {
        try await TestApp.router(environment: ["ACTIONLINKS_TENANTS": "t-one"]) { app in
            try await app.createAccount(email: "amv@example.com")
            for bad in ["<b>42</b>", "1.0 beta", "-1", "99999999999", "1e3"] as [Any] + [12.5] {
                let reply = try await app.api(
                    "sendOobCode",
                    [
                        "requestType": "VERIFY_EMAIL", "email": "amv@example.com", "returnOobLink": true, "androidMinimumVersion": bad,
                        "canHandleCodeInApp": true, "androidPackageName": "com.example.app",
                    ], admin: true)
                #expect(reply.status == 400 && reply.errorCode == "INVALID_ARGUMENT", "\(bad): \(reply.text)")
            }
            for path in ["/", "/index.html", "/nothing", "/__/nothing", "/__/auth/action?mode=signIn&oobCode=x"] {
                let reply = try await app.request("GET", path)
                #expect(reply.header("Content-Security-Policy")?.contains("default-src 'none'") == true, "\(path)")
                #expect(reply.header("X-Frame-Options") == "DENY" && reply.header("Referrer-Policy") == "no-referrer", "\(path)")
            }
            let cookie = try #require(try await Self.deviceCookie(app, headers: [:]))
            let value = try #require(cookie.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last)
            let expiry = try #require(Int(value.split(separator: ".").first ?? ""))
            let now = Int(Date().timeIntervalSince1970)
            #expect(expiry > now + 29 * 86_400 && expiry <= now + 30 * 86_400 + 5, "the cookie carries its expiry, which the server checks")
            #expect(cookie.contains("Max-Age=2592000"))
        }
    }

    @Test("a device cookie proves its address only in the tenant it was set in")
    func deviceCookieTenant() async throws {
        try await TestApp.router(environment: ["ACTIONLINKS_TENANTS": "t-one"]) { app in
            let email = "ten@example.com"
            let (link, _) = try await app.link("EMAIL_SIGNIN", email: email)
            let page = try await app.request("GET", try app.local(link))
            let done = try await app.submitForm(of: page, ["email": email])
            let cookie = ["Cookie": String(try #require(done.header("Set-Cookie")).prefix { $0 != ";" })]
            let (again, _) = try await app.link("EMAIL_SIGNIN", email: email)
            #expect(
                !(try await app.request("GET", try app.local(again), headers: cookie).text.contains(#"type="email""#)),
                "same tenant: remembered")
            let reply = try await app.api(
                "sendOobCode",
                ["requestType": "EMAIL_SIGNIN", "email": email, "returnOobLink": true],
                admin: true, tenant: "t-one")
            let tenantLink = try #require(reply.json["oobLink"] as? String, "\(reply.text)")
            let other = try await app.request("GET", try app.local(tenantLink), headers: cookie)
            #expect(other.status == 200 && other.text.contains(#"type="email""#), "another tenant: the address is asked for")
        }
    }

    // MARK: 16. EMAIL_SIGNIN codes

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
