import ActionLinks
import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// The pages a person sees after tapping a link, over HTTP against the real server: scanners consume
/// nothing, every page is small and carries the security headers, the remembered-device sign-in,
/// and the language a page and an email are in; and what the security issue's finding 14 checked:
/// the page headers on every HTML answer, the device cookie's expiry, and
/// `androidMinimumVersion` refused unless it is a version code.
@Suite("Pages end to end", .timeLimit(.minutes(5)))
struct PageTests {
    static let scanner = ["User-Agent": "Mozilla/5.0 (compatible; LinkScanner/1.0; +https://scanner.example)"]

    /// GET twice and HEAD, as mail scanners and link previewers do: each answers 200 and changes nothing.
    func scan(_ server: some LinkDomainClient, _ path: String, _ label: String) async throws {
        for method in ["GET", "HEAD", "GET"] {
            let reply = try await server.request(method, path, headers: Self.scanner)
            #expect(reply.status == 200, "\(label): \(method) answered \(reply.status)")
            if method == "HEAD" { #expect(reply.body.isEmpty) }
        }
    }

    /// The inner action link of a `/__/auth/links?link=` wrapper, as a local path.
    func inner(_ wrapper: String) throws -> String {
        let encoded = try #require(wrapper.range(of: "?link=")).upperBound
        return try #require(String(wrapper[encoded...]).removingPercentEncoding).replacingOccurrences(
            of: "https://links.test.example", with: "")
    }

    @Test("a mail scanner's GET and HEAD of every link (and of the /__/auth/links wrapper) consume nothing; the person completes it after")
    func scannersConsumeNothing() async throws {
        try await TestApp.router { server in
            let app: [String: Any] = [
                "canHandleCodeInApp": true, "iOSBundleId": "com.example.app", "androidPackageName": "com.example.app",
            ]
            try await server.createAccount(email: "reset@example.com", password: "first-password")
            try await server.createAccount(email: "verify@example.com")
            try await server.createAccount(email: "change@example.com", verified: true)
            var cases: [(mode: String, wrapper: String, fields: [String: String], done: String)] = []
            for (type, email, extra, fields, done) in [
                // No continue URL, so the page itself signs in (with one, its GET goes on to the app:
                // EndToEndTests.signInRedirect).
                ("EMAIL_SIGNIN", "signin@example.com", [:], ["email": "signin@example.com"], "You are signed in"),
                (
                    "PASSWORD_RESET", "reset@example.com", [:], ["password": "a new password", "passwordAgain": "a new password"],
                    "Your password has been changed"
                ),
                ("VERIFY_EMAIL", "verify@example.com", [:], [:], "Your email address is verified"),
                (
                    "VERIFY_AND_CHANGE_EMAIL", "change@example.com", ["newEmail": "changed@example.com"], [:],
                    "Your email address has been changed"
                ),
            ] as [(String, String, [String: Any], [String: String], String)] {
                let (link, _) = try await server.link(type, email: email, extra: extra.merging(app) { $1 })
                #expect(link.hasPrefix("https://links.test.example/__/auth/links?link="))
                cases.append((type, link, fields, done))
            }
            for item in cases {
                try await scan(server, try server.local(item.wrapper), "\(item.mode) wrapper")
                try await scan(server, try inner(item.wrapper), "\(item.mode) action link")
                try await scan(server, try inner(item.wrapper) + "&lang=ar", "\(item.mode) action link in Arabic")
            }
            for item in cases {
                let page = try await server.request("GET", try inner(item.wrapper))
                let done = try await server.submitForm(of: page, item.fields)
                #expect(
                    done.status == 200 && done.text.contains(item.done), "\(item.mode): the link still worked after the scans: \(done.text)"
                )
            }
            // recoverEmail: the server mails it to the old address when the change above was applied.
            let listing = try await server.request("GET", "/emulator/v1/projects/\(TestProject.id)/oobCodes")
            let recovery = try #require(
                (listing.json["oobCodes"] as? [[String: Any]])?.last { $0["requestType"] as? String == "RECOVER_EMAIL" })
            let recoverPath = try server.local(try #require(recovery["oobLink"] as? String))
            try await scan(server, recoverPath, "RECOVER_EMAIL")
            let restored = try await server.submitForm(of: try await server.request("GET", recoverPath), [:])
            #expect(restored.status == 200 && restored.text.contains("Your email address has been restored"))
            #expect(try await server.lookup(email: "change@example.com") != nil)
        }
    }

    /// Issues a link in `language` (as a client's X-Firebase-Locale would), returned to the admin.
    func link(_ server: some LinkDomainClient, _ type: String, _ email: String, _ language: String, _ extra: [String: Any] = [:])
        async throws
        -> String
    {
        var fields: [String: Any] = ["requestType": type, "email": email, "returnOobLink": true]
        for (key, value) in extra { fields[key] = value }
        let reply = try await server.api("sendOobCode", fields, admin: true, headers: ["X-Firebase-Locale": language])
        return try server.local(try #require(reply.json["oobLink"] as? String, "\(reply.text)"))
    }

    @Test("every page in every language is under 15 KB with its stylesheet, and carries the security headers")
    func pageSizesAndHeaders() async throws {
        let clock = ManualClock()
        try await TestApp.router { server in
            try await TestApp.router(environment: ["ACTIONLINKS_CODES_LIFETIMES_VERIFY_EMAIL": "1s"], clock: clock) { expiring in
                let css = try await server.request("GET", "/assets/style.css").body.count
                var pages: [(String, String, HTTPReply)] = []
                var expiredLinks: [String: String] = [:]
                for language in ["en", "ru", "ja", "ar"] {
                    try await expiring.createAccount(email: "expired-\(language)@example.com")
                    expiredLinks[language] = try await link(expiring, "VERIFY_EMAIL", "expired-\(language)@example.com", language)
                }
                for language in ["en", "ru", "ja", "ar"] {
                    // A long address: the worst case for the pages that show it.
                    let name = "a.rather.long.name.for.an.address.\(language)"
                    for suffix in ["reset", "verify", "change", "mobile", "minimum"] {
                        try await server.createAccount(email: "\(name)-\(suffix)@example.com", verified: true)
                    }
                    let signIn = try await server.request(
                        "GET",
                        try await link(server, "EMAIL_SIGNIN", "\(name)@example.com", language, [:])
                    )
                    pages.append((language, "signIn form", signIn))
                    pages.append((language, "signIn mismatch", try await server.submitForm(of: signIn, ["email": "x@example.com"])))
                    pages.append((language, "signIn done", try await server.submitForm(of: signIn, ["email": "\(name)@example.com"])))
                    let reset = try await server.request(
                        "GET",
                        try await link(
                            server, "PASSWORD_RESET", "\(name)-reset@example.com", language, ["continueUrl": "https://app.example.com/"])
                    )
                    pages.append((language, "resetPassword form", reset))
                    pages.append(
                        (
                            language, "resetPassword weak",
                            try await server.submitForm(of: reset, ["password": "short", "passwordAgain": "short"])
                        ))
                    pages.append(
                        (
                            language, "resetPassword mismatch",
                            try await server.submitForm(of: reset, ["password": "long enough 1", "passwordAgain": "long enough 2"])
                        ))
                    pages.append(
                        (
                            language, "resetPassword done",
                            try await server.submitForm(of: reset, ["password": "long enough 1", "passwordAgain": "long enough 1"])
                        ))
                    pages.append(
                        (
                            language, "used (second submission)",
                            try await server.submitForm(of: reset, ["password": "long enough 1", "passwordAgain": "long enough 1"])
                        ))
                    let verify = try await server.request(
                        "GET", try await link(server, "VERIFY_EMAIL", "\(name)-verify@example.com", language))
                    pages.append((language, "verifyEmail form", verify))
                    pages.append((language, "verifyEmail done", try await server.submitForm(of: verify, [:])))
                    let change = try await server.request(
                        "GET",
                        try await link(
                            server, "VERIFY_AND_CHANGE_EMAIL", "\(name)-change@example.com", language,
                            ["newEmail": "\(name)-new@example.com"]))
                    pages.append((language, "verifyAndChangeEmail form", change))
                    pages.append((language, "verifyAndChangeEmail done", try await server.submitForm(of: change, [:])))
                    let listing = try await server.request("GET", "/emulator/v1/projects/\(TestProject.id)/oobCodes")
                    let recovery = try #require(
                        (listing.json["oobCodes"] as? [[String: Any]])?.last { $0["requestType"] as? String == "RECOVER_EMAIL" })
                    let recover = try await server.request("GET", try server.local(try #require(recovery["oobLink"] as? String)))
                    pages.append((language, "recoverEmail form", recover))
                    pages.append((language, "recoverEmail done", try await server.submitForm(of: recover, [:])))
                    let mobile = try await link(
                        server, "VERIFY_EMAIL", "\(name)-mobile@example.com", language,
                        ["canHandleCodeInApp": true, "iOSBundleId": "com.example.app", "androidPackageName": "com.example.app"])
                    pages.append((language, "links", try await server.request("GET", mobile)))
                    pages.append(
                        (
                            language, "links (iPhone)",
                            try await server.request(
                                "GET", mobile, headers: ["User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X)"])
                        ))
                    pages.append(
                        (
                            language, "links (Android)",
                            try await server.request("GET", mobile, headers: ["User-Agent": "Mozilla/5.0 (Linux; Android 14)"])
                        ))
                    let minimum = try await link(
                        server, "VERIFY_EMAIL", "\(name)-minimum@example.com", language,
                        ["canHandleCodeInApp": true, "androidPackageName": "com.example.app", "androidMinimumVersion": "42"])
                    pages.append(
                        (
                            language, "minimum version",
                            try await server.request("GET", minimum, headers: ["User-Agent": "Mozilla/5.0 (Linux; Android 14)"])
                        ))
                    pages.append(
                        (
                            language, "invalid",
                            try await server.request(
                                "GET", "/__/auth/action?mode=verifyEmail&oobCode=\(String(repeating: "A", count: 43))&lang=\(language)")
                        ))
                    pages.append(
                        (language, "not found", try await server.request("GET", "/__/nothing", headers: ["Accept-Language": language])))
                }
                clock.advance(seconds: 2)
                for (language, path) in expiredLinks { pages.append((language, "expired", try await expiring.request("GET", path))) }

                var table = "page sizes (HTML + \(css) B of CSS):\n"
                for (language, name, reply) in pages {
                    table += "  \(language) \(name): \(reply.body.count) B\n"
                    #expect(reply.body.count + css < 15 * 1024, "\(language) \(name): \(reply.body.count) B of HTML")
                    #expect(
                        reply.text.contains("<html lang=\"\(language)\" dir=\"\(language == "ar" ? "rtl" : "ltr")\">"),
                        "\(language) \(name): \(reply.text.prefix(300))")
                    #expect(
                        reply.header("Content-Security-Policy")?.hasPrefix("default-src 'none'; style-src 'self'") == true,
                        "\(language) \(name)")
                    #expect(
                        reply.header("Referrer-Policy") == "no-referrer" && reply.header("Cache-Control") == "no-store",
                        "\(language) \(name)")
                    #expect(
                        reply.header("X-Frame-Options") == "DENY" && reply.header("X-Content-Type-Options") == "nosniff",
                        "\(language) \(name)")
                    #expect(reply.header("X-Robots-Tag") == "noindex", "\(language) \(name)")
                    #expect(!reply.text.contains("<script"), "\(language) \(name): no scripts")
                    if name.hasSuffix("done") || name.hasPrefix("used") || name.hasSuffix("mismatch") || name.hasSuffix("weak") {
                        #expect(
                            !reply.text.contains("?oobCode=") && !reply.text.contains("&oobCode="),
                            "\(language) \(name): no code in a URL after the first request")
                    }
                }
                #expect(pages.count == 4 * 21)
                print(table, terminator: "")
                #expect(css < 4096, "one small stylesheet: \(css) B")
            }
        }
    }

    @Test(
        "form tokens and device cookies age with the server's clock: an hour-old form is refused and consumes nothing, a 30-day-old cookie is forgotten"
    )
    func tokensAgeWithTheClock() async throws {
        let clock = ManualClock()
        try await TestApp.router(environment: ["ACTIONLINKS_CODES_LIFETIMES_RESET_PASSWORD": "3h"], clock: clock) { app in
            try await app.createAccount(email: "aging@example.com")
            let path = try await link(app, "PASSWORD_RESET", "aging@example.com", "en", [:])
            let code = try #require(ActionCodeLink.parse("https://links.test.example" + path)?.oobCode)
            let page = try await app.request("GET", path)
            clock.advance(seconds: 3599)
            let late = try await app.submitForm(of: page, ["password": "a new password", "passwordAgain": "another one"])
            #expect(late.status == 400 && late.text.contains("name=\"password\""), "a second before the hour: the form is still ours")
            clock.advance(seconds: 1)
            let expired = try await app.submitForm(of: page, ["password": "a new password", "passwordAgain": "a new password"])
            #expect(expired.status == 403, "an hour after it was shown, the form is refused")
            #expect(
                try await app.api("resetPassword", ["oobCode": code]).json["requestType"] as? String == "PASSWORD_RESET",
                "and the code is still live")

            let first = try await app.request("GET", try await link(app, "EMAIL_SIGNIN", "aging@example.com", "en", [:]))
            let done = try await app.submitForm(of: first, ["email": "aging@example.com"])
            let cookie = ["Cookie": String(try #require(done.header("Set-Cookie")).prefix { $0 != ";" })]
            clock.advance(seconds: 30 * 86_400 - 1)
            let remembered = try await app.request(
                "GET", try await link(app, "EMAIL_SIGNIN", "aging@example.com", "en", [:]), headers: cookie)
            #expect(remembered.status == 200 && !remembered.text.contains(#"type="email""#), "a second before 30 days: remembered")
            clock.advance(seconds: 1)
            let forgotten = try await app.request(
                "GET", try await link(app, "EMAIL_SIGNIN", "aging@example.com", "en", [:]), headers: cookie)
            #expect(forgotten.status == 200 && forgotten.text.contains(#"type="email""#), "30 days on: the address is asked for")
        }
    }

    @Test("a browser that proved an address signs in with that address's next link in one tap; any other browser types it")
    func rememberedDevice() async throws {
        try await TestApp.router { app in
            let first = try await app.request(
                "GET", try await link(app, "EMAIL_SIGNIN", "pat@example.com", "en", [:]))
            #expect(first.text.contains(#"type="email""#), "another device: the address is asked for")
            let done = try await app.submitForm(of: first, ["email": "pat@example.com"])
            let setCookie = try #require(done.header("Set-Cookie"))
            #expect(setCookie.hasPrefix("actionlinks_device=") && setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Lax"))
            #expect(
                setCookie.contains("Path=/__/auth/") && !setCookie.contains("pat@example.com"), "an HMAC of the address, never the address")
            #expect(!setCookie.contains("Secure"), "plain HTTP on a loopback development host")
            let cookie = ["Cookie": "other=1; " + String(setCookie.prefix { $0 != ";" })]

            let secondPath = try await link(app, "EMAIL_SIGNIN", "pat@example.com", "en", [:])
            let code = try #require(ActionCodeLink.parse("https://links.test.example" + secondPath)?.oobCode)
            let second = try await app.request("GET", secondPath, headers: cookie)
            #expect(!second.text.contains(#"type="email""#) && second.text.contains("Sign in to Example App as pat@example.com."))
            let forged = try await app.submitForm(of: second, [:])
            #expect(
                forged.status == 400 && forged.text.contains("Enter your email address."), "without the cookie the address is asked for")
            #expect(
                try await app.api("resetPassword", ["oobCode": code]).json["requestType"] as? String == "EMAIL_SIGNIN",
                "and the code is live")
            let signedIn = try await app.submitForm(of: second, [:], headers: cookie)
            #expect(signedIn.status == 200 && signedIn.text.contains("You are signed in"), "\(signedIn.text)")

            let proxied = try await app.request(
                "GET", try await link(app, "EMAIL_SIGNIN", "ray@example.com", "en", [:]))
            let spoofed = try await app.submitForm(of: proxied, ["email": "ray@example.com"], headers: ["Host": "links.example.com"])
            #expect(spoofed.header("Set-Cookie")?.contains("Secure") == false, "a client-sent Host decides nothing")

            let other = try await app.request(
                "GET", try await link(app, "EMAIL_SIGNIN", "sam@example.com", "en", [:]),
                headers: cookie)
            #expect(other.text.contains(#"type="email""#), "the cookie proves only the address it was set for")
        }
    }

    @Test("the configured default language, Accept-Language, and the link's lang; emails in the link's language")
    func languages() async throws {
        try await TestApp.router(environment: ["ACTIONLINKS_PAGES_DEFAULT_LANGUAGE": "ru"]) { app in
            let bad = "/__/auth/action?mode=verifyEmail&oobCode=\(String(repeating: "A", count: 43))"
            #expect(
                try await app.request("GET", bad, headers: ["Accept-Language": "de-DE, fr;q=0.5"]).text.contains(
                    "<h1>Эту ссылку нельзя использовать</h1>"))
            #expect(
                try await app.request("GET", bad, headers: ["Accept-Language": "de-DE, ja-JP;q=0.8, en;q=0.5"]).text.contains(
                    #"<html lang="ja""#))
            #expect(
                try await app.request("GET", bad + "&lang=ar", headers: ["Accept-Language": "ja"]).text.contains(
                    #"<html lang="ar" dir="rtl">"#))
            try await app.createAccount(email: "yui@example.com")
            let sent = try await app.api(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "yui@example.com"], headers: ["X-Firebase-Locale": "ja"])
            #expect(sent.status == 200)
            let mail = try await app.mailbox.next(to: "yui@example.com")
            #expect(mail.subject.hasPrefix("Example App のパスワードの再設定"), "\(mail.subject)")
        }

        let broken = await #expect(throws: (any Error).self) {
            try await TestApp.router(environment: ["ACTIONLINKS_PAGES_DEFAULT_LANGUAGE": "xx"]) { _ in }
        }
        let message = broken.map { "\($0)" } ?? ""
        #expect(message.contains("pages.defaultLanguage is 'xx' but there are no strings for it") == true, "\(message)")
    }

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
            let cookie = try #require(try await RememberedDeviceTests.deviceCookie(app, headers: [:]))
            let value = try #require(cookie.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last)
            let expiry = try #require(Int(value.split(separator: ".").first ?? ""))
            let now = Int(Date().timeIntervalSince1970)
            #expect(expiry > now + 29 * 86_400 && expiry <= now + 30 * 86_400 + 5, "the cookie carries its expiry, which the server checks")
            #expect(cookie.contains("Max-Age=2592000"))
        }
    }
}
