import ActionLinks
import Foundation
import Testing

/// The real server over HTTP on a loopback port: every flow as a browser, an app or an admin sees it.
@Suite("Link domain end to end")
struct EndToEndTests {
    @Test("issue → GET landing (not consumed) → POST confirm (consumed) → second POST fails")
    func landingThenConfirm() async throws {
        let server = try await TestServer()
        try await server.createAccount(email: "ann@example.com", password: "original-password", verified: true)
        let (link, code) = try await server.link(
            "PASSWORD_RESET", email: "ann@example.com", extra: ["continueUrl": "https://app.example.com/done"])
        #expect(ActionCodeLink.parse(link)?.oobCode == code, "the link parses with the library")
        #expect(ActionCodeLink.parse(link)?.continueURL == "https://app.example.com/done")

        let page = try await server.request("GET", try server.local(link))
        #expect(page.status == 200)
        #expect(page.text.contains("Choose a new password"))
        #expect(page.header("Referrer-Policy") == "no-referrer")
        #expect(page.header("Cache-Control") == "no-store")
        #expect(page.header("X-Robots-Tag") == "noindex")
        #expect(page.header("X-Frame-Options") == "DENY")
        #expect(page.header("Content-Security-Policy")?.contains("default-src 'none'") == true)
        // A scanner's second GET and a HEAD change nothing.
        #expect(try await server.request("GET", try server.local(link)).status == 200)
        #expect(try await server.request("HEAD", try server.local(link)).status == 200)
        #expect(try await server.api("resetPassword", ["oobCode": code]).json["requestType"] as? String == "PASSWORD_RESET")

        let done = try await server.submitForm(of: page, ["password": "brand new password", "passwordAgain": "brand new password"])
        #expect(done.status == 200, "\(done.text)")
        #expect(done.text.contains("Your password has been changed"))
        #expect(done.text.contains("href=\"https://app.example.com/done\""))
        let again = try await server.submitForm(of: page, ["password": "brand new password", "passwordAgain": "brand new password"])
        #expect(again.status == 400)
        #expect(again.text.contains("This link has already been used"), "a second submission of the same form says so and changes nothing")
        #expect(try await server.api("resetPassword", ["oobCode": code]).errorCode == "INVALID_OOB_CODE")
        let account = try #require(try await server.lookup(email: "ann@example.com"))
        #expect(account["passwordUpdatedAt"] != nil)

        let metrics = try await server.request("GET", "/metrics", headers: ["Authorization": "Bearer owner"])
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(metrics.text.contains(#"actionlinks_codes_issued_total{mode="resetPassword"} 1"#))
        #expect(metrics.text.contains(#"actionlinks_codes_consumed_total{mode="resetPassword"} 1"#))
        #expect(metrics.text.contains(#"actionlinks_codes_refused_total{reason="invalid"} 2"#), "the second POST and the check after it")
        #expect(metrics.text.contains(#"actionlinks_http_requests_total{route="actionPage",status="2xx"}"#))
    }

    @Test("a form with a mismatched password, a short one, or no form token consumes nothing")
    func formMistakesKeepTheCode() async throws {
        let server = try await TestServer()
        try await server.createAccount(email: "bo@example.com", verified: true)
        let (link, code) = try await server.link("PASSWORD_RESET", email: "bo@example.com")
        let page = try await server.request("GET", try server.local(link))
        let differ = try await server.submitForm(of: page, ["password": "long enough one", "passwordAgain": "long enough two"])
        #expect(differ.status == 400 && differ.text.contains("not the same"))
        #expect(differ.text.contains(#"aria-describedby="password-again-error" aria-invalid="true""#), "the error is tied to its field")
        let short = try await server.submitForm(of: page, ["password": "short", "passwordAgain": "short"])
        #expect(short.status == 400 && short.text.contains("At least 8 characters"))
        let forged = try await server.submitForm(
            of: page, ["form": "1.forged", "password": "long enough one", "passwordAgain": "long enough one"])
        #expect(forged.status == 403)
        let crossSite = try await server.submitForm(
            of: page, ["password": "long enough one", "passwordAgain": "long enough one"], headers: ["Sec-Fetch-Site": "cross-site"])
        #expect(crossSite.status == 403)
        #expect(try await server.api("resetPassword", ["oobCode": code]).status == 200, "the code is still live")
    }

    @Test("HEAD of an action link answers 200 and leaves the code live")
    func headHasNoSideEffect() async throws {
        let server = try await TestServer()
        try await server.createAccount(email: "cy@example.com")
        let (link, code) = try await server.link("VERIFY_EMAIL", email: "cy@example.com")
        for _ in 0..<3 {
            let head = try await server.request("HEAD", try server.local(link))
            #expect(head.status == 200 && head.body.isEmpty)
        }
        #expect(try await server.api("update", ["oobCode": code]).json["emailVerified"] as? Bool == true)
    }

    @Test("an expired code: the page says so and the API answers EXPIRED_OOB_CODE")
    func expiredCode() async throws {
        let server = try await TestServer(environment: ["ACTIONLINKS_CODES_LIFETIMES_VERIFY_EMAIL": "1s"])
        try await server.createAccount(email: "di@example.com")
        let (link, code) = try await server.link("VERIFY_EMAIL", email: "di@example.com")
        try await Task.sleep(for: .milliseconds(1300))
        let page = try await server.request("GET", try server.local(link))
        #expect(page.status == 410 && page.text.contains("This link has expired"))
        #expect(try await server.api("update", ["oobCode": code]).errorCode == "EXPIRED_OOB_CODE")
        #expect(try await server.lookup(email: "di@example.com")?["emailVerified"] as? Bool == false)
    }

    @Test("sign-in: creates a verified account, returns tokens the server accepts, and only for the address it was sent to")
    func signIn() async throws {
        let server = try await TestServer()
        let (link, code) = try await server.link(
            "EMAIL_SIGNIN", email: "Eve@Example.com", extra: ["continueUrl": "https://app.example.com/"])
        #expect(ActionCodeLink.parse(link)?.mode == .signIn)
        let mismatch = try await server.api("signInWithEmailLink", ["email": "mallory@example.com", "oobCode": code])
        #expect(mismatch.errorCode == "INVALID_EMAIL")
        let reply = try await server.api("signInWithEmailLink", ["email": "eve@example.com", "oobCode": code])
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply.json["isNewUser"] as? Bool == true)
        let idToken = try #require(reply.json["idToken"] as? String)
        #expect((reply.json["refreshToken"] as? String)?.isEmpty == false)
        let me = try await server.api("lookup", ["idToken": idToken])
        let user = try #require((me.json["users"] as? [[String: Any]])?.first)
        #expect(user["email"] as? String == "eve@example.com" && user["emailVerified"] as? Bool == true)
        #expect(try await server.api("signInWithEmailLink", ["email": "eve@example.com", "oobCode": code]).errorCode == "INVALID_OOB_CODE")
        let jwks = try await server.request("GET", "/.well-known/jwks.json")
        let kid = try #require(((jwks.json["keys"] as? [[String: Any]])?.first)?["kid"] as? String)
        let header = try #require(Data(base64URL: String(idToken.split(separator: ".")[0])))
        #expect((try JSONSerialization.jsonObject(with: header) as? [String: Any])?["kid"] as? String == kid)
    }

    @Test("sign-in on the page: the address must match; then the account is signed in")
    func signInPage() async throws {
        let server = try await TestServer()
        let (link, _) = try await server.link(
            "EMAIL_SIGNIN", email: "fay@example.com", extra: ["continueUrl": "https://app.example.com/welcome"])
        let page = try await server.request("GET", try server.local(link))
        #expect(page.status == 200 && page.text.contains("type=\"email\""))
        let wrong = try await server.submitForm(of: page, ["email": "someone@example.com"])
        #expect(wrong.status == 400 && wrong.text.contains("different address"))
        let done = try await server.submitForm(of: page, ["email": "FAY@example.com"])
        #expect(done.status == 200 && done.text.contains("You are signed in"), "\(done.text)")
        #expect(done.text.contains("https://app.example.com/welcome"))
        #expect(try await server.lookup(email: "fay@example.com")?["emailVerified"] as? Bool == true)
    }

    @Test("sign-in removes a password set by someone who never proved the address")
    func signInRemovesUnverifiedPassword() async throws {
        let server = try await TestServer()
        try await server.createAccount(email: "gus@example.com", password: "impostor-password", verified: false)
        #expect((try await server.lookup(email: "gus@example.com")?["providerUserInfo"] as? [Any])?.count == 1)
        let (_, code) = try await server.link("EMAIL_SIGNIN", email: "gus@example.com", extra: ["continueUrl": "https://app.example.com/"])
        let reply = try await server.api("signInWithEmailLink", ["email": "gus@example.com", "oobCode": code])
        #expect(reply.json["isNewUser"] as? Bool == false)
        let account = try #require(try await server.lookup(email: "gus@example.com"))
        #expect(account["passwordHash"] == nil && (account["providerUserInfo"] as? [Any])?.isEmpty == true)
        #expect(account["emailVerified"] as? Bool == true)
    }

    @Test("reset password through the API: check, weak password refused without consuming, then set")
    func resetPasswordAPI() async throws {
        let server = try await TestServer()
        try await server.createAccount(email: "hal@example.com", password: "old-password-1")
        let (_, code) = try await server.link("PASSWORD_RESET", email: "hal@example.com")
        let check = try await server.api("resetPassword", ["oobCode": code])
        #expect(check.json["email"] as? String == "hal@example.com" && check.json["requestType"] as? String == "PASSWORD_RESET")
        let weak = try await server.api("resetPassword", ["oobCode": code, "newPassword": "abc"])
        #expect(weak.errorCode == "WEAK_PASSWORD")
        #expect((weak.json["error"] as? [String: Any])?["message"] as? String == "WEAK_PASSWORD : Password should be at least 8 characters")
        let done = try await server.api("resetPassword", ["oobCode": code, "newPassword": "a much better password"])
        #expect(done.status == 200 && done.json["requestType"] as? String == "PASSWORD_RESET")
        #expect(try await server.lookup(email: "hal@example.com")?["emailVerified"] as? Bool == true)
        #expect(
            try await server.api("resetPassword", ["oobCode": code, "newPassword": "another password"]).errorCode == "INVALID_OOB_CODE")
    }

    @Test("verifyAndChangeEmail changes the address and sends recoverEmail to the old one, which restores it")
    func changeAndRecover() async throws {
        let server = try await TestServer()
        try await server.createAccount(email: "ida@example.com", verified: true)
        let (_, code) = try await server.link(
            "VERIFY_AND_CHANGE_EMAIL", email: "ida@example.com", extra: ["newEmail": "ida.new@example.com"])
        let check = try await server.api("resetPassword", ["oobCode": code])
        #expect(
            check.json["requestType"] as? String == "VERIFY_AND_CHANGE_EMAIL" && check.json["newEmail"] as? String == "ida.new@example.com")
        let applied = try await server.api("update", ["oobCode": code])
        #expect(applied.json["email"] as? String == "ida.new@example.com", "\(applied.text)")
        #expect(try await server.lookup(email: "ida@example.com") == nil)

        let listing = try await server.request("GET", "/emulator/v1/projects/\(TestServer.project)/oobCodes")
        let recovery = try #require(
            (listing.json["oobCodes"] as? [[String: Any]])?.last { $0["requestType"] as? String == "RECOVER_EMAIL" })
        #expect(recovery["email"] as? String == "ida@example.com")
        // The log mail backend printed the recovery email for the old address.
        #expect(server.standardOutput.contains("mail to ida@example.com"))
        let recoverCode = try #require(recovery["oobCode"] as? String)
        let page = try await server.request("GET", try server.local(try #require(recovery["oobLink"] as? String)))
        #expect(page.status == 200 && page.text.contains("Restore your email address"))
        let wrongMode = try await server.submitForm(of: page, ["mode": "verifyEmail"])
        #expect(wrongMode.status == 403, "the form token binds the mode: a form whose mode was changed applies nothing")
        #expect(try await server.lookup(email: "ida@example.com") == nil)
        let restored = try await server.submitForm(of: page, [:])
        #expect(restored.status == 200 && restored.text.contains("restored"), "\(restored.text)")
        #expect(try await server.lookup(email: "ida@example.com") != nil)
        #expect(try await server.api("update", ["oobCode": recoverCode]).errorCode == "INVALID_OOB_CODE")
    }

    @Test("verifyEmail through the page")
    func verifyEmailPage() async throws {
        let server = try await TestServer()
        try await server.createAccount(email: "jo@example.com")
        let (link, _) = try await server.link("VERIFY_EMAIL", email: "jo@example.com")
        let page = try await server.request("GET", try server.local(link))
        let done = try await server.submitForm(of: page, [:])
        #expect(done.status == 200 && done.text.contains("is verified"))
        #expect(try await server.lookup(email: "jo@example.com")?["emailVerified"] as? Bool == true)
    }

    @Test("a client's sendOobCode answers the same whether or not the address exists, and mails only real accounts")
    func enumerationSafe() async throws {
        let server = try await TestServer()
        try await server.createAccount(email: "kim@example.com")
        let known = try await server.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "kim@example.com"])
        let unknown = try await server.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "nobody@example.com"])
        #expect(known.status == 200 && unknown.status == 200)
        #expect(known.json["kind"] as? String == unknown.json["kind"] as? String)
        #expect(known.json.keys.sorted() == unknown.json.keys.sorted())
        #expect(known.json["oobLink"] == nil, "a client never gets the link back")
        try await Task.sleep(for: .milliseconds(300))
        #expect(server.standardOutput.contains("mail to kim@example.com"))
        #expect(!server.standardOutput.contains("nobody@example.com"))
        #expect(
            try await server.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "nobody@example.com", "returnOobLink": true])
                .errorCode == "INSUFFICIENT_PERMISSION")
    }

    @Test("the send limit per address applies to known and unknown addresses alike")
    func sendLimit() async throws {
        let server = try await TestServer(environment: ["ACTIONLINKS_LIMITS_SENDS_PER_ADDRESS_PER_HOUR": "2"])
        try await server.createAccount(email: "lu@example.com")
        for email in ["lu@example.com", "ghost@example.com"] {
            for _ in 0..<2 {
                #expect(try await server.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": email]).status == 200)
            }
            #expect(
                try await server.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": email]).errorCode
                    == "TOO_MANY_ATTEMPTS_TRY_LATER")
        }
    }

    @Test("bad input gets a clear Firebase-style error and changes nothing")
    func badInput() async throws {
        let server = try await TestServer(environment: ["ACTIONLINKS_SERVER_MAXIMUM_BODY_BYTES": "2048"])
        try await server.createAccount(email: "max@example.com")
        let path = "/v1/accounts:sendOobCode?key=\(TestServer.apiKey)"
        let json = ["Content-Type": "application/json"]
        let big = try await server.request("POST", path, body: Data(repeating: UInt8(ascii: " "), count: 4096), headers: json)
        #expect(big.status == 413 && big.errorCode == "PAYLOAD_TOO_LARGE")
        let malformed = try await server.request("POST", path, body: Data("{\"requestType\":".utf8), headers: json)
        #expect(malformed.status == 400 && malformed.errorCode == "INVALID_JSON")
        let wrongType = try await server.request(
            "POST", path, body: Data("requestType=PASSWORD_RESET".utf8), headers: ["Content-Type": "text/plain"])
        #expect(wrongType.status == 415 && wrongType.errorCode == "INVALID_CONTENT_TYPE")
        #expect(try await server.api("sendOobCode", ["requestType": "NOPE", "email": "max@example.com"]).errorCode == "INVALID_REQ_TYPE")
        #expect(try await server.api("sendOobCode", ["email": "max@example.com"]).errorCode == "MISSING_REQ_TYPE")
        #expect(try await server.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": 42]).errorCode == "INVALID_ARGUMENT")
        #expect(
            try await server.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "not an address"]).errorCode == "INVALID_EMAIL")
        let evil = try await server.api(
            "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "max@example.com", "continueUrl": "https://evil.example.net/"])
        #expect(evil.errorCode == "UNAUTHORIZED_DOMAIN")
        #expect(!evil.text.contains("app.example.com"), "errors never list the allow-list")
        let script = try await server.api(
            "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "max@example.com", "continueUrl": "javascript:alert(1)"])
        #expect(script.errorCode == "INVALID_CONTINUE_URI")
        let domain = try await server.api(
            "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "max@example.com", "linkDomain": "evil.example.net"])
        #expect(domain.errorCode == "INVALID_HOSTING_LINK_DOMAIN")
        let noKey = try await server.request("POST", "/v1/accounts:sendOobCode", body: Data("{}".utf8), headers: json)
        #expect(noKey.status == 403)
        let badKey = try await server.request("POST", "/v1/accounts:sendOobCode?key=wrong", body: Data("{}".utf8), headers: json)
        #expect(badKey.status == 400)
        #expect(
            try await server.request("POST", "/v1/accounts:frobnicate?key=\(TestServer.apiKey)", body: Data("{}".utf8), headers: json)
                .status == 404)
        #expect(try await server.api("update", ["oobCode": "not-a-code"]).errorCode == "INVALID_OOB_CODE")
        #expect(try await server.request("GET", "/__/auth/handler-of-nothing").status == 404)
        let unknownMode = try await server.request("GET", "/__/auth/action?mode=frobnicate&oobCode=abc&apiKey=\(TestServer.apiKey)")
        #expect(unknownMode.status == 400 && unknownMode.text.contains("This link cannot be used"))
        let listing = try await server.request("GET", "/emulator/v1/projects/\(TestServer.project)/oobCodes")
        #expect((listing.json["oobCodes"] as? [Any])?.isEmpty == true, "no bad request issued a code")
    }

    @Test("association files: JSON from config, ETag, HEAD, 304, never a redirect")
    func associationFiles() async throws {
        let server = try await TestServer()
        for path in ["/.well-known/apple-app-site-association", "/apple-app-site-association", "/.well-known/assetlinks.json"] {
            let reply = try await server.request("GET", path)
            #expect(reply.status == 200)
            #expect(reply.header("Content-Type") == "application/json")
            let etag = try #require(reply.header("ETag"))
            #expect(try JSONSerialization.jsonObject(with: reply.body) is [String: Any] || path.hasSuffix("assetlinks.json"))
            let head = try await server.request("HEAD", path)
            #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == String(reply.body.count))
            #expect(try await server.request("GET", path, headers: ["If-None-Match": etag]).status == 304)
        }
        let aasa = try await server.request("GET", "/.well-known/apple-app-site-association")
        #expect(aasa.text.contains("ABCDE12345.com.example.app") && aasa.text.contains("/__/auth/links*"))
        #expect(!aasa.text.contains("/__/auth/action*"), "web action links stay on the web unless apps.claimActionLinks")
        let assetLinks = try await server.request("GET", "/.well-known/assetlinks.json")
        #expect(assetLinks.text.contains("com.example.app"))
        #expect(try await server.request("GET", "/").text.contains("This domain opens links"))
        #expect(try await server.request("GET", "/assets/style.css").header("Content-Type") == "text/css; charset=utf-8")
        #expect(try await server.request("GET", "/healthz").status == 200)
    }

    @Test("mobile links: the fallback page accepts only inner links to our own handler")
    func mobileLinks() async throws {
        let server = try await TestServer()
        try await server.createAccount(email: "ned@example.com")
        let (link, code) = try await server.link(
            "VERIFY_EMAIL", email: "ned@example.com",
            extra: [
                "canHandleCodeInApp": true, "iOSBundleId": "com.example.app", "androidPackageName": "com.example.app",
                "androidMinimumVersion": 12,
            ])
        #expect(link.hasPrefix("https://links.test.example/__/auth/links?link="))
        #expect(ActionCodeLink.parse(link)?.oobCode == code)
        let android = ["User-Agent": "Mozilla/5.0 (Linux; Android 14)"]
        let update = try await server.request("GET", try server.local(link), headers: android)
        #expect(update.status == 200, "\(update.text)")
        #expect(update.text.contains("This link needs version 12 or newer"), "the link asks for a newer Android app than may be installed")
        #expect(update.text.contains("play.google.com/store/apps/details?id=com.example.app") && !update.text.contains("intent://"))
        let page = try await server.request("GET", try server.local(link))
        #expect(
            page.text.contains("apps.apple.com/app/id1234567890")
                && page.text.contains("play.google.com/store/apps/details?id=com.example.app"))
        #expect(page.text.contains("app-argument=https://links.test.example/__/auth/action?"))
        let (plain, _) = try await server.link(
            "VERIFY_EMAIL", email: "ned@example.com", extra: ["canHandleCodeInApp": true, "androidPackageName": "com.example.app"])
        #expect(
            try await server.request("GET", try server.local(plain), headers: android).text.contains(
                "intent://links.test.example/__/auth/action?"))
        #expect(try await server.api("resetPassword", ["oobCode": code]).status == 400, "issuing a new link retired the first")
        let foreign =
            "/__/auth/links?link=" + TestServer.formEncode("https://evil.example.net/__/auth/action?mode=verifyEmail&oobCode=\(code)")
        #expect(try await server.request("GET", foreign).status == 400)
        let (last, lastCode) = try await server.link(
            "VERIFY_EMAIL", email: "ned@example.com", extra: ["canHandleCodeInApp": true, "iOSBundleId": "com.example.app"])
        #expect(try await server.request("GET", try server.local(last)).status == 200)
        let iPhone = try await server.request(
            "GET", try server.local(last), headers: ["User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X)"])
        #expect(
            iPhone.text.contains("href=\"com.example.app://google/link/?deep_link_id=http"),
            "open in the app: the bundle ID's custom scheme")
        #expect(!iPhone.text.contains("play.google.com"), "no Play Store link on an iPhone")
        #expect(try await server.api("resetPassword", ["oobCode": lastCode]).status == 200, "the fallback page consumed nothing")
    }

    @Test("tenants: a tenant's code works only under that tenant")
    func tenants() async throws {
        let server = try await TestServer(environment: ["ACTIONLINKS_TENANTS": "tenant-a,tenant-b"])
        let create = try await server.api("create", ["email": "ola@example.com"], admin: true, tenant: "tenant-a")
        #expect(create.status == 200)
        let reply = try await server.api(
            "sendOobCode", ["requestType": "VERIFY_EMAIL", "email": "ola@example.com", "returnOobLink": true], admin: true,
            tenant: "tenant-a")
        let link = try #require(reply.json["oobLink"] as? String, "\(reply.text)")
        let parsed = try #require(ActionCodeLink.parse(link))
        #expect(parsed.tenantID == "tenant-a")
        #expect(try await server.api("update", ["oobCode": parsed.oobCode], tenant: "tenant-b").errorCode == "INVALID_OOB_CODE")
        #expect(try await server.api("update", ["oobCode": parsed.oobCode], tenant: "tenant-a").json["emailVerified"] as? Bool == true)
    }

    @Test("a bad configuration stops the server with the file, the key and what was expected")
    func badConfiguration() async throws {
        await #expect(throws: TestServerError.self) {
            _ = try await TestServer(environment: ["ACTIONLINKS_SERVER_PORT": "eighty"])
        }
        let process = Process()
        process.executableURL = try TestServer.binary()
        process.arguments = ["serve"]
        process.currentDirectoryURL = TestServer.root
        process.environment = ["ACTIONLINKS_PASSWORDS_MINIMUM_LENGTH": "2", "PATH": "/usr/bin:/bin"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = Pipe()
        try process.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus != 0)
        #expect(
            text.contains(
                "environment variable ACTIONLINKS_PASSWORDS_MINIMUM_LENGTH: passwords.minimumLength: expected a whole number from 6 to 128")
        )
    }
}

extension Data {
    init?(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        self.init(base64Encoded: base64)
    }
}

/// `actionlinks generate` against a running server.
@Suite("actionlinks generate")
struct GenerateCommandTests {
    func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = try TestServer.binary()
        process.arguments = ["generate"] + arguments
        process.environment = ["PATH": "/usr/bin:/bin"]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }

    @Test("prints a link that works, as text or JSON; a refusal is exit 1 with the server's error")
    func generate() async throws {
        let server = try await TestServer()
        try await server.createAccount(email: "rex@example.com")
        let text = try run(["--server", server.base, "--admin-token", "owner", "--mode", "verifyEmail", "--email", "rex@example.com"])
        #expect(text.status == 0, "\(text.stderr)")
        let link = try #require(ActionCodeLink.parse(text.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(link.mode == .verifyEmail)
        let json = try run([
            "--server", server.base, "--admin-token", "owner", "--mode", "signIn", "--email", "sue@example.com", "--continue-url",
            "https://app.example.com/", "--json",
        ])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stderr)")
        #expect(object["mode"] as? String == "signIn" && (object["link"] as? String)?.contains(object["oobCode"] as? String ?? "?") == true)
        #expect(try await server.api("update", ["oobCode": link.oobCode]).json["emailVerified"] as? Bool == true)
        let refused = try run([
            "--server", server.base, "--admin-token", "owner", "--mode", "resetPassword", "--email", "nobody@example.com",
        ])
        #expect(refused.status == 1 && refused.stderr.contains("EMAIL_NOT_FOUND"))
        let badToken = try run(["--server", server.base, "--admin-token", "wrong", "--mode", "resetPassword", "--email", "rex@example.com"])
        #expect(badToken.status == 1 && badToken.stderr.contains("UNAUTHENTICATED"))
        let usage = try run(["--server", server.base, "--admin-token", "owner", "--mode", "frobnicate", "--email", "rex@example.com"])
        #expect(usage.status == 64)
    }
}

/// The REST API's other spellings and headers, TLS, and shutdown.
@Suite("Link domain: API variants, TLS and shutdown")
struct ServerVariantTests {
    @Test("the googleapis prefix, x-goog-api-key, X-Firebase-Locale and androidMinimumVersionCode")
    func apiVariants() async throws {
        let server = try await TestServer()
        try await server.createAccount(email: "tia@example.com")
        let body = try JSONSerialization.data(withJSONObject: [
            "requestType": "VERIFY_EMAIL", "email": "tia@example.com", "returnOobLink": true, "canHandleCodeInApp": true,
            "androidPackageName": "com.example.app", "androidMinimumVersionCode": "7", "someFieldFromTheFuture": ["x": 1],
        ])
        let reply = try await server.request(
            "POST", "/identitytoolkit.googleapis.com/v1/projects/\(TestServer.project)/accounts:sendOobCode", body: body,
            headers: ["Content-Type": "application/json", "Authorization": "Bearer owner", "X-Firebase-Locale": "ru"])
        #expect(reply.status == 200, "\(reply.text)")
        let oobLink = try #require(reply.json["oobLink"] as? String)
        let link = try #require(ActionCodeLink.parse(oobLink))
        #expect(link.languageCode == "ru")
        let check = try await server.request(
            "POST", "/identitytoolkit.googleapis.com/v1/accounts:resetPassword",
            body: try JSONSerialization.data(withJSONObject: ["oobCode": link.oobCode]),
            headers: ["Content-Type": "application/json", "x-goog-api-key": TestServer.apiKey])
        #expect(check.json["requestType"] as? String == "VERIFY_EMAIL", "\(check.text)")
        let preflight = try await server.request(
            "OPTIONS", "/v1/accounts:sendOobCode",
            headers: ["Access-Control-Request-Headers": "content-type,x-goog-api-key", "Origin": "https://app.example.com"])
        #expect(preflight.status == 204 && preflight.header("Access-Control-Allow-Origin") == "https://app.example.com")
        #expect(try await server.request("GET", "/v1/projects/other-project/accounts:lookup").status == 400)
    }

    @Test("TLS with configured certificate files")
    func tls() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("actionlinks-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let certificate = folder.appendingPathComponent("cert.pem").path, key = folder.appendingPathComponent("key.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        openssl.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out",
            certificate,
            "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
        ]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        try #require(openssl.terminationStatus == 0, "openssl could not make a test certificate")
        await #expect(throws: Never.self) {
            let server = try await TestServer(environment: [
                "ACTIONLINKS_SERVER_TLS_CERTIFICATE": certificate, "ACTIONLINKS_SERVER_TLS_PRIVATE_KEY": key,
            ])
            #expect(server.standardError.contains("serving https://127.0.0.1:"))
            let port = server.base.split(separator: ":").last!
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            curl.arguments = ["curl", "-s", "--cacert", certificate, "https://127.0.0.1:\(port)/.well-known/apple-app-site-association"]
            let out = Pipe()
            curl.standardOutput = out
            try curl.run()
            let body = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            curl.waitUntilExit()
            #expect(body.contains("ABCDE12345.com.example.app"), "the AASA over TLS, verified against the certificate")
        }
        let broken = await #expect(throws: TestServerError.self) {
            _ = try await TestServer(environment: [
                "ACTIONLINKS_SERVER_TLS_CERTIFICATE": "/nonexistent.pem", "ACTIONLINKS_SERVER_TLS_PRIVATE_KEY": key,
            ])
        }
        #expect(broken?.description.contains("server.tls: cannot load /nonexistent.pem") == true)
    }

    @Test("SIGTERM: the server finishes, delivers queued mail and exits 0")
    func gracefulShutdown() async throws {
        let server = try await TestServer()
        try await server.createAccount(email: "uma@example.com")
        #expect(try await server.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "uma@example.com"]).status == 200)
        server.process.terminate()
        for _ in 0..<100 where server.process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!server.process.isRunning)
        #expect(server.process.terminationStatus == 0)
        #expect(server.standardOutput.contains("mail to uma@example.com"))
    }
}
