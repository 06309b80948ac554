import ActionLinks
import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// The real server over HTTP on a loopback port: every flow as a browser, an app or an admin sees it.
@Suite("Link domain end to end", .timeLimit(.minutes(5)))
struct EndToEndTests {
    @Test("issue → GET landing (not consumed) → POST confirm (consumed) → second POST fails")
    func landingThenConfirm() async throws {
        try await TestApp.router { app in
            try await app.createAccount(email: "ann@example.com", password: "original-password", verified: true)
            let (link, code) = try await app.link(
                "PASSWORD_RESET", email: "ann@example.com", extra: ["continueUrl": "https://app.example.com/done"])
            #expect(ActionCodeLink.parse(link)?.oobCode == code, "the link parses with the library")
            #expect(ActionCodeLink.parse(link)?.continueURL == "https://app.example.com/done")

            let page = try await app.request("GET", try app.local(link))
            #expect(page.status == 200)
            #expect(page.text.contains("Choose a new password"))
            #expect(page.header("Referrer-Policy") == "no-referrer")
            #expect(page.header("Cache-Control") == "no-store")
            #expect(page.header("X-Robots-Tag") == "noindex")
            #expect(page.header("X-Frame-Options") == "DENY")
            #expect(page.header("Content-Security-Policy")?.contains("default-src 'none'") == true)
            // A scanner's second GET and a HEAD change nothing.
            #expect(try await app.request("GET", try app.local(link)).status == 200)
            #expect(try await app.request("HEAD", try app.local(link)).status == 200)
            #expect(try await app.api("resetPassword", ["oobCode": code]).json["requestType"] as? String == "PASSWORD_RESET")

            let done = try await app.submitForm(of: page, ["password": "brand new password", "passwordAgain": "brand new password"])
            #expect(done.status == 200, "\(done.text)")
            #expect(done.text.contains("Your password has been changed"))
            #expect(done.text.contains("href=\"https://app.example.com/done\""))
            let again = try await app.submitForm(of: page, ["password": "brand new password", "passwordAgain": "brand new password"])
            #expect(again.status == 400)
            #expect(
                again.text.contains("This link has already been used"), "a second submission of the same form says so and changes nothing")
            #expect(try await app.api("resetPassword", ["oobCode": code]).errorCode == "INVALID_OOB_CODE")
            let account = try #require(try await app.lookup(email: "ann@example.com"))
            #expect(account["passwordUpdatedAt"] != nil)

            let metrics = try await app.request("GET", "/metrics", headers: ["Authorization": "Bearer owner"])
            #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
            #expect(metrics.text.contains(#"actionlinks_codes_issued_total{mode="resetPassword"} 1"#))
            #expect(metrics.text.contains(#"actionlinks_codes_consumed_total{mode="resetPassword"} 1"#))
            #expect(
                metrics.text.contains(#"actionlinks_codes_refused_total{reason="invalid"} 2"#), "the second POST and the check after it")
            #expect(metrics.text.contains(#"actionlinks_http_requests_total{route="actionPage",status="2xx"}"#))
        }
    }

    @Test("a form with a mismatched password, a short one, or no form token consumes nothing")
    func formMistakesKeepTheCode() async throws {
        try await TestApp.router { app in
            try await app.createAccount(email: "bo@example.com", verified: true)
            let (link, code) = try await app.link("PASSWORD_RESET", email: "bo@example.com")
            let page = try await app.request("GET", try app.local(link))
            let differ = try await app.submitForm(of: page, ["password": "long enough one", "passwordAgain": "long enough two"])
            #expect(differ.status == 400 && differ.text.contains("not the same"))
            #expect(differ.text.contains(#"aria-describedby="password-again-error" aria-invalid="true""#), "the error is tied to its field")
            let short = try await app.submitForm(of: page, ["password": "short", "passwordAgain": "short"])
            #expect(short.status == 400 && short.text.contains("At least 8 characters"))
            let forged = try await app.submitForm(
                of: page, ["form": "1.forged", "password": "long enough one", "passwordAgain": "long enough one"])
            #expect(forged.status == 403)
            let crossSite = try await app.submitForm(
                of: page, ["password": "long enough one", "passwordAgain": "long enough one"], headers: ["Sec-Fetch-Site": "cross-site"])
            #expect(crossSite.status == 403)
            #expect(try await app.api("resetPassword", ["oobCode": code]).status == 200, "the code is still live")
        }
    }

    @Test("HEAD of an action link answers 200 and leaves the code live")
    func headHasNoSideEffect() async throws {
        try await TestApp.router { app in
            try await app.createAccount(email: "cy@example.com")
            let (link, code) = try await app.link("VERIFY_EMAIL", email: "cy@example.com")
            for _ in 0..<3 {
                let head = try await app.request("HEAD", try app.local(link))
                #expect(head.status == 200 && head.body.isEmpty)
            }
            #expect(try await app.api("update", ["oobCode": code]).json["emailVerified"] as? Bool == true)
        }
    }

    @Test("an expired code: the page says so and the API answers EXPIRED_OOB_CODE")
    func expiredCode() async throws {
        let clock = ManualClock()
        try await TestApp.router(environment: ["ACTIONLINKS_CODES_LIFETIMES_VERIFY_EMAIL": "1s"], clock: clock) { app in
            try await app.createAccount(email: "di@example.com")
            let (link, code) = try await app.link("VERIFY_EMAIL", email: "di@example.com")
            clock.advance(seconds: 2)
            let page = try await app.request("GET", try app.local(link))
            #expect(page.status == 410 && page.text.contains("This link has expired"))
            #expect(try await app.api("update", ["oobCode": code]).errorCode == "EXPIRED_OOB_CODE")
            #expect(try await app.lookup(email: "di@example.com")?["emailVerified"] as? Bool == false)
        }
    }

    @Test("sign-in: creates a verified account, returns tokens the server accepts, and only for the address it was sent to")
    func signIn() async throws {
        try await TestApp.router { app in
            let (link, code) = try await app.link(
                "EMAIL_SIGNIN", email: "Eve@Example.com", extra: ["continueUrl": "https://app.example.com/"])
            #expect(ActionCodeLink.parse(link)?.mode == .signIn)
            let mismatch = try await app.api("signInWithEmailLink", ["email": "mallory@example.com", "oobCode": code])
            #expect(mismatch.errorCode == "INVALID_EMAIL")
            let reply = try await app.api("signInWithEmailLink", ["email": "eve@example.com", "oobCode": code])
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.json["isNewUser"] as? Bool == true)
            let idToken = try #require(reply.json["idToken"] as? String)
            #expect((reply.json["refreshToken"] as? String)?.isEmpty == false)
            let me = try await app.api("lookup", ["idToken": idToken])
            let user = try #require((me.json["users"] as? [[String: Any]])?.first)
            #expect(user["email"] as? String == "eve@example.com" && user["emailVerified"] as? Bool == true)
            #expect(
                try await app.api("signInWithEmailLink", ["email": "eve@example.com", "oobCode": code]).errorCode == "INVALID_OOB_CODE")
            let jwks = try await app.request("GET", "/.well-known/jwks.json")
            let kid = try #require(((jwks.json["keys"] as? [[String: Any]])?.first)?["kid"] as? String)
            let header = try #require(Data(base64URL: String(idToken.split(separator: ".")[0])))
            #expect((try JSONSerialization.jsonObject(with: header) as? [String: Any])?["kid"] as? String == kid)
        }
    }

    @Test("a sign-in link's GET goes on to the app's page with the code, as Firebase's hosted page does; nothing is consumed")
    func signInRedirect() async throws {
        try await TestApp.router(environment: ["ACTIONLINKS_TENANTS": "t-one"]) { app in
            let (link, code) = try await app.link(
                "EMAIL_SIGNIN", email: "eve@example.com", extra: ["continueUrl": "https://app.example.com/welcome?from=mail#top"])
            let reply = try await app.request("GET", try app.local(link))
            #expect(reply.status == 303 && reply.header("Referrer-Policy") == "no-referrer")
            let location = try #require(reply.header("Location"))
            #expect(location == "https://app.example.com/welcome?from=mail&apiKey=demo-api-key&oobCode=\(code)&mode=signIn&lang=en#top")
            let landed = try #require(ActionCodeLink.parse(location))
            #expect(landed.mode == .signIn && landed.oobCode == code && landed.apiKey == "demo-api-key")
            // Nothing was consumed: the app's own SDK completes it.
            let done = try await app.api("signInWithEmailLink", ["email": "eve@example.com", "oobCode": code])
            #expect(done.status == 200 && done.json["idToken"] is String, "\(done.text)")
            // A tenant's link carries its tenant on.
            let tenant = try await app.api(
                "sendOobCode",
                [
                    "requestType": "EMAIL_SIGNIN", "email": "eve@example.com", "returnOobLink": true,
                    "continueUrl": "https://app.example.com/",
                ],
                admin: true, tenant: "t-one")
            let tenantLink = try #require(tenant.json["oobLink"] as? String)
            let tenantReply = try await app.request("GET", try app.local(tenantLink))
            #expect(tenantReply.header("Location")?.hasSuffix("&tenantId=t-one") == true, "\(tenantReply.headers)")
        }
    }

    @Test("pages.signIn confirm: the page asks for the address; then the account is signed in and the web app gets a one-time custom token")
    func signInPage() async throws {
        try await TestApp.router(environment: ["ACTIONLINKS_PAGES_SIGN_IN": "confirm"]) { app in
            let (link, _) = try await app.link(
                "EMAIL_SIGNIN", email: "fay@example.com", extra: ["continueUrl": "https://app.example.com/welcome"])
            let page = try await app.request("GET", try app.local(link))
            #expect(page.status == 200 && page.text.contains("type=\"email\""))
            let wrong = try await app.submitForm(of: page, ["email": "someone@example.com"])
            #expect(wrong.status == 400 && wrong.text.contains("different address"))
            let done = try await app.submitForm(of: page, ["email": "FAY@example.com"])
            #expect(done.status == 303, "\(done.text)")
            let location = try #require(done.header("Location"))
            #expect(location.hasPrefix("https://app.example.com/welcome#customToken="))
            #expect(try await app.lookup(email: "fay@example.com")?["emailVerified"] as? Bool == true)
            // The web app exchanges the token once.
            let token = String(location.split(separator: "=", maxSplits: 1)[1])
            let signedIn = try await app.api("signInWithCustomToken", ["token": token, "returnSecureToken": true])
            #expect(signedIn.status == 200 && signedIn.json["isNewUser"] as? Bool == false, "\(signedIn.text)")
            let again = try await app.api("signInWithCustomToken", ["token": token, "returnSecureToken": true])
            #expect(again.errorCode == "INVALID_CUSTOM_TOKEN", "\(again.text)")
            // Without a continue URL the page says it is done.
            let (plain, _) = try await app.link("EMAIL_SIGNIN", email: "fay@example.com")
            let plainPage = try await app.request("GET", try app.local(plain))
            let result = try await app.submitForm(of: plainPage, ["email": "fay@example.com"])
            #expect(result.status == 200 && result.text.contains("You are signed in"), "\(result.text)")
        }
    }

    @Test("sign-in removes a password set by someone who never proved the address")
    func signInRemovesUnverifiedPassword() async throws {
        try await TestApp.router { app in
            try await app.createAccount(email: "gus@example.com", password: "impostor-password", verified: false)
            #expect((try await app.lookup(email: "gus@example.com")?["providerUserInfo"] as? [Any])?.count == 1)
            let (_, code) = try await app.link("EMAIL_SIGNIN", email: "gus@example.com", extra: ["continueUrl": "https://app.example.com/"])
            let reply = try await app.api("signInWithEmailLink", ["email": "gus@example.com", "oobCode": code])
            #expect(reply.json["isNewUser"] as? Bool == false)
            let account = try #require(try await app.lookup(email: "gus@example.com"))
            // The address now signs in by link only: Firebase lists that as the `password` provider.
            #expect(account["passwordHash"] == nil && account["emailLinkSignin"] as? Bool == true)
            #expect((account["providerUserInfo"] as? [[String: Any]])?.map { $0["providerId"] as? String } == ["password"])
            #expect(account["emailVerified"] as? Bool == true)
        }
    }

    @Test("reset password through the API: check, weak password refused without consuming, then set")
    func resetPasswordAPI() async throws {
        try await TestApp.router { app in
            try await app.createAccount(email: "hal@example.com", password: "old-password-1")
            let (_, code) = try await app.link("PASSWORD_RESET", email: "hal@example.com")
            let check = try await app.api("resetPassword", ["oobCode": code])
            #expect(check.json["email"] as? String == "hal@example.com" && check.json["requestType"] as? String == "PASSWORD_RESET")
            let weak = try await app.api("resetPassword", ["oobCode": code, "newPassword": "abcdefg"])
            #expect(weak.errorCode == "WEAK_PASSWORD")
            #expect(
                (weak.json["error"] as? [String: Any])?["message"] as? String == "WEAK_PASSWORD : Password should be at least 8 characters")
            // Below Firebase's floor of 6 the message is Firebase's own, whatever the policy.
            let tiny = try await app.api("resetPassword", ["oobCode": code, "newPassword": "abc"])
            #expect(
                (tiny.json["error"] as? [String: Any])?["message"] as? String == "WEAK_PASSWORD : Password should be at least 6 characters")
            let done = try await app.api("resetPassword", ["oobCode": code, "newPassword": "a much better password"])
            #expect(done.status == 200 && done.json["requestType"] as? String == "PASSWORD_RESET")
            #expect(try await app.lookup(email: "hal@example.com")?["emailVerified"] as? Bool == true)
            #expect(
                try await app.api("resetPassword", ["oobCode": code, "newPassword": "another password"]).errorCode == "INVALID_OOB_CODE")
        }
    }

    @Test("verifyAndChangeEmail changes the address and sends recoverEmail to the old one, which restores it")
    func changeAndRecover() async throws {
        try await TestApp.router { app in
            try await app.createAccount(email: "ida@example.com", verified: true)
            let (_, code) = try await app.link(
                "VERIFY_AND_CHANGE_EMAIL", email: "ida@example.com", extra: ["newEmail": "ida.new@example.com"])
            let check = try await app.api("resetPassword", ["oobCode": code])
            #expect(
                check.json["requestType"] as? String == "VERIFY_AND_CHANGE_EMAIL"
                    && check.json["newEmail"] as? String == "ida.new@example.com")
            let applied = try await app.api("update", ["oobCode": code])
            #expect(applied.json["email"] as? String == "ida.new@example.com", "\(applied.text)")
            #expect(try await app.lookup(email: "ida@example.com") == nil)

            let listing = try await app.request("GET", "/emulator/v1/projects/\(TestProject.id)/oobCodes")
            let recovery = try #require(
                (listing.json["oobCodes"] as? [[String: Any]])?.last { $0["requestType"] as? String == "RECOVER_EMAIL" })
            #expect(recovery["email"] as? String == "ida@example.com")
            // The recovery email went to the old address.
            let mail = try await app.mailbox.next(to: "ida@example.com")
            let mailed = try Mailbox.link(in: mail)
            #expect(mail.mode == .recoverEmail && mailed == recovery["oobLink"] as? String)
            let recoverCode = try #require(recovery["oobCode"] as? String)
            let page = try await app.request("GET", try app.local(try #require(recovery["oobLink"] as? String)))
            #expect(page.status == 200 && page.text.contains("Restore your email address"))
            let wrongMode = try await app.submitForm(of: page, ["mode": "verifyEmail"])
            #expect(wrongMode.status == 403, "the form token binds the mode: a form whose mode was changed applies nothing")
            #expect(try await app.lookup(email: "ida@example.com") == nil)
            let restored = try await app.submitForm(of: page, [:])
            #expect(restored.status == 200 && restored.text.contains("restored"), "\(restored.text)")
            #expect(try await app.lookup(email: "ida@example.com") != nil)
            #expect(try await app.api("update", ["oobCode": recoverCode]).errorCode == "INVALID_OOB_CODE")
        }
    }

    @Test("verifyEmail through the page")
    func verifyEmailPage() async throws {
        try await TestApp.router { app in
            try await app.createAccount(email: "jo@example.com")
            let (link, _) = try await app.link("VERIFY_EMAIL", email: "jo@example.com")
            let page = try await app.request("GET", try app.local(link))
            let done = try await app.submitForm(of: page, [:])
            #expect(done.status == 200 && done.text.contains("is verified"))
            #expect(try await app.lookup(email: "jo@example.com")?["emailVerified"] as? Bool == true)
        }
    }

    @Test(
        "with email-enumeration protection, a client's sendOobCode answers the same whether or not the address exists, and mails only real accounts; without it, EMAIL_NOT_FOUND, as Firebase's emulator"
    )
    func enumerationSafe() async throws {
        try await TestApp.router { app in
            let unprotected = try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "nobody@example.com"])
            #expect(unprotected.errorCode == "EMAIL_NOT_FOUND", "a development server answers as the emulator: \(unprotected.text)")
        }
        try await TestApp.router(environment: ["ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true"]) { app in
            try await app.createAccount(email: "kim@example.com")
            // The unknown address first: a mail for it would be queued before the known one's, so
            // once the known one's has arrived, none for it is still on its way.
            let unknown = try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "nobody@example.com"])
            let known = try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "kim@example.com"])
            #expect(known.status == 200 && unknown.status == 200)
            #expect(known.json["kind"] as? String == unknown.json["kind"] as? String)
            #expect(known.json.keys.sorted() == unknown.json.keys.sorted())
            #expect(known.json["oobLink"] == nil, "a client never gets the link back")
            #expect(try await app.mailbox.next(to: "kim@example.com").mode == .resetPassword)
            #expect(app.mailbox.messages(to: "nobody@example.com").isEmpty)
            #expect(
                try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "nobody@example.com", "returnOobLink": true])
                    .errorCode == "INSUFFICIENT_PERMISSION")
        }
    }

    @Test("the send limit per address applies to known and unknown addresses alike")
    func sendLimit() async throws {
        // The limit's window is the clock's hour: a clock that stands mid-hour, so a run that crosses
        // an hour cannot open a new window between the sends.
        let clock = ManualClock.midHour()
        try await TestApp.router(
            environment: [
                "ACTIONLINKS_LIMITS_SENDS_PER_ADDRESS_PER_HOUR": "2", "ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true",
            ], clock: clock
        ) { app in
            try await app.createAccount(email: "lu@example.com")
            for email in ["lu@example.com", "ghost@example.com"] {
                for _ in 0..<2 {
                    #expect(try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": email]).status == 200)
                }
                #expect(
                    try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": email]).errorCode
                        == "TOO_MANY_ATTEMPTS_TRY_LATER")
            }
        }
    }

    @Test("bad input gets a clear Firebase-style error and changes nothing")
    func badInput() async throws {
        try await TestApp.router(environment: ["ACTIONLINKS_SERVER_MAXIMUM_BODY_BYTES": "2048"]) { app in
            try await app.createAccount(email: "max@example.com")
            let path = "/v1/accounts:sendOobCode?key=\(TestProject.apiKey)"
            let json = ["Content-Type": "application/json"]
            let big = try await app.request("POST", path, body: Data(repeating: UInt8(ascii: " "), count: 4096), headers: json)
            #expect(big.status == 413 && big.errorCode == "PAYLOAD_TOO_LARGE")
            let malformed = try await app.request("POST", path, body: Data("{\"requestType\":".utf8), headers: json)
            #expect(malformed.status == 400 && malformed.errorCode == "INVALID_JSON")
            let wrongType = try await app.request(
                "POST", path, body: Data("requestType=PASSWORD_RESET".utf8), headers: ["Content-Type": "text/plain"])
            #expect(wrongType.status == 415 && wrongType.errorCode == "INVALID_CONTENT_TYPE")
            #expect(try await app.api("sendOobCode", ["requestType": "NOPE", "email": "max@example.com"]).errorCode == "INVALID_REQ_TYPE")
            #expect(try await app.api("sendOobCode", ["email": "max@example.com"]).errorCode == "MISSING_REQ_TYPE")
            #expect(try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": 42]).errorCode == "INVALID_ARGUMENT")
            #expect(
                try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "not an address"]).errorCode == "INVALID_EMAIL")
            let evil = try await app.api(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "max@example.com", "continueUrl": "https://evil.example.net/"])
            #expect(evil.errorCode == "UNAUTHORIZED_DOMAIN")
            #expect(!evil.text.contains("app.example.com"), "errors never list the allow-list")
            let script = try await app.api(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "max@example.com", "continueUrl": "javascript:alert(1)"])
            #expect(script.errorCode == "INVALID_CONTINUE_URI")
            let domain = try await app.api(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "max@example.com", "linkDomain": "evil.example.net"])
            #expect(domain.errorCode == "INVALID_HOSTING_LINK_DOMAIN")
            let noKey = try await app.request("POST", "/v1/accounts:sendOobCode", body: Data("{}".utf8), headers: json)
            #expect(noKey.status == 403)
            let badKey = try await app.request("POST", "/v1/accounts:sendOobCode?key=wrong", body: Data("{}".utf8), headers: json)
            #expect(badKey.status == 400)
            #expect(
                try await app.request("POST", "/v1/accounts:frobnicate?key=\(TestProject.apiKey)", body: Data("{}".utf8), headers: json)
                    .status == 404)
            #expect(try await app.api("update", ["oobCode": "not-a-code"]).errorCode == "INVALID_OOB_CODE")
            #expect(try await app.request("GET", "/__/auth/handler-of-nothing").status == 404)
            let unknownMode = try await app.request("GET", "/__/auth/action?mode=frobnicate&oobCode=abc&apiKey=\(TestProject.apiKey)")
            #expect(unknownMode.status == 400 && unknownMode.text.contains("This link cannot be used"))
            let listing = try await app.request("GET", "/emulator/v1/projects/\(TestProject.id)/oobCodes")
            #expect((listing.json["oobCodes"] as? [Any])?.isEmpty == true, "no bad request issued a code")
        }
    }
}
