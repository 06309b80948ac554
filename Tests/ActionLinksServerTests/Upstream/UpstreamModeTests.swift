import ActionLinks
import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// Upstream mode end to end with two real binaries on loopback: an upstream as strict as Google
/// (``StrictUpstream``: production mode, restricted keys, authorized domains, its own mail) and the
/// front in production mode, whose pages check every code upstream on GET and apply it upstream on
/// POST. The front's `sendOobCode` and the password policy are in ``UpstreamSendTests``.
@Suite("Upstream mode: the front's pages against a real upstream", .timeLimit(.minutes(5)))
struct UpstreamModeTests {
    typealias Strict = StrictUpstream
    static let password = "first-password-1"

    static let frontAdmin = String(repeating: "f", count: 40)

    /// The front for `upstream`: production, its Identity Toolkit and Secure Token on loopback, and
    /// the service account `serviceAccount` if given (and `extra` overrides on top). Its answer deadline is a hang guard (120 s):
    /// the upstream is a debug binary hashing passwords on a machine the other suites load, and the
    /// 10 s default has its own tests against a stand-in that never answers.
    static func front(for upstream: TestServer, serviceAccount: String? = nil, environment extra: [String: String] = [:]) async throws
        -> TestServer
    {
        var environment = [
            "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": frontAdmin,
            "ACTIONLINKS_UPSTREAM_ANSWER_TIMEOUT": "120s",
            "ACTIONLINKS_UPSTREAM_PROJECT_ID": TestProject.id, "ACTIONLINKS_UPSTREAM_API_KEYS": upstream.credentials.apiKey,
            "ACTIONLINKS_UPSTREAM_IDENTITY_TOOLKIT_URL": upstream.base, "ACTIONLINKS_UPSTREAM_SECURE_TOKEN_URL": upstream.base,
        ]
        if let serviceAccount { environment["ACTIONLINKS_UPSTREAM_SERVICE_ACCOUNT_FILE"] = serviceAccount }
        let credentials = TestCredentials(apiKey: upstream.credentials.apiKey, adminToken: frontAdmin)
        return try await TestServer(environment: environment.merging(extra) { $1 }, credentials: credentials)
    }

    /// A service-account file for `upstream`, made by its own command, whose tokens come from it.
    static func serviceAccount(of upstream: TestServer) async throws -> String {
        let path = upstream.dataDirectory.appendingPathComponent("firebase-adminsdk.json").path
        let made = try await Command.run(
            program: try Repository.executable("actionlinks"),
            ["service-account", "--out", path, "--config", Repository.configFile, "--token-uri", upstream.base + "/token"],
            environment: ProcessInfo.processInfo.environment.merging(["ACTIONLINKS_DATA_DIRECTORY": upstream.dataDirectory.path]) { $1 })
        guard made.status == 0 else { throw TestSupportError("service-account failed: \(made.stderr)") }
        return path
    }

    /// The link in the newest mail the front printed (the `log` backend) to `address`, waiting for it.
    static func mailedLink(_ front: TestServer, to address: String, after count: Int = 0) async throws -> String {
        // A hang guard, not a bound: the mailer delivers in the background, later on a loaded machine.
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let mails = front.standardOutput.components(separatedBy: "--- mail to \(address):").dropFirst()
            if mails.count > count, let mail = mails.last,
                let range = mail.range(of: #"https://links\.test\.example/__/auth/[^\s]+"#, options: .regularExpression)
            {
                return String(mail[range])
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestSupportError("no mail to \(address):\n\(front.standardOutput)")
    }

    /// Mail the front printed to `address`.
    static func mailCount(_ front: TestServer, to address: String) -> Int {
        front.standardOutput.components(separatedBy: "--- mail to \(address):").count - 1
    }

    /// The hidden fields of the page's form.
    static func form(_ page: HTTPReply) throws -> [String: String] {
        var fields: [String: String] = [:]
        let pattern = try NSRegularExpression(pattern: #"<input type="hidden" name="([A-Za-z]+)" value="([^"]*)">"#)
        let text = page.text
        for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let name = String(text[Range(match.range(at: 1), in: text)!])
            var value = String(text[Range(match.range(at: 2), in: text)!])
            for (entity, character) in [("&quot;", "\""), ("&#39;", "'"), ("&#x27;", "'"), ("&#x2F;", "/"), ("&lt;", "<"), ("&gt;", ">")] {
                value = value.replacingOccurrences(of: entity, with: character)
            }
            fields[name] = value.replacingOccurrences(of: "&amp;", with: "&")
        }
        return fields
    }

    /// Posts `fields` as the page's form would, from the link domain.
    static func post(_ front: some LinkDomainClient, _ fields: [String: String]) async throws -> HTTPReply {
        try await front.post(
            ActionCodeLink.actionPath, form: fields.map { ($0.key, $0.value) }, headers: ["Origin": TestProject.linkOrigin])
    }

    static func signIn(_ upstream: TestServer, _ email: String, _ password: String) async throws -> HTTPReply {
        try await upstream.api("signInWithPassword", ["email": email, "password": password, "returnSecureToken": true])
    }

    @Test(
        "every mode: the page for a code the upstream issued, the POST, the effect seen upstream; used, wrong-mode and foreign-key links; sign-in goes on to the continue URL"
    )
    func everyMode() async throws {
        let upstream = try await Strict.start()
        let front = try await Self.front(for: upstream)
        let email = "ann-upstream@example.com"
        try await upstream.createAccount(email: email, password: Self.password)

        // Reset: the page shows the address upstream answers, the POST sets the password upstream.
        let reset = try await upstream.link("PASSWORD_RESET", email: email, extra: ["continueUrl": "https://app.example.com/reset"])
        let page = try await front.request("GET", try front.local(reset.link) + "&lang=en")
        // The text masks the address; the hidden username keeps it, for password managers.
        #expect(page.status == 200 && page.text.contains("for a•••@example.com"), "\(page.status) \(page.text)")
        #expect(page.text.contains(#"name="username" autocomplete="username" value="\#(email)""#), "\(page.text)")
        var fields = try Self.form(page)
        #expect(fields["apiKey"] == Strict.unrestrictedKey && fields["oobCode"] == reset.code && fields["mode"] == "resetPassword")
        fields["password"] = "second-password-2"
        fields["passwordAgain"] = "second-password-2"
        let done = try await Self.post(front, fields)
        #expect(done.status == 200 && done.text.contains("https://app.example.com/reset"), "\(done.status) \(done.text)")
        #expect(try await Self.signIn(upstream, email, "second-password-2").status == 200, "the new password works upstream")
        #expect(try await Self.signIn(upstream, email, Self.password).status == 400)
        let again = try await Self.post(front, fields)
        #expect(again.status == 400 && again.text.contains("already been used"), "\(again.text)")
        var retried = fields
        retried["retried"] = "1"
        let maybe = try await Self.post(front, retried)
        #expect(maybe.status == 200 && maybe.text.contains("may already have worked"), "\(maybe.text)")

        // Verify: the address is verified upstream.
        let verify = try await upstream.link("VERIFY_EMAIL", email: email)
        let verifyPage = try await front.request("GET", try front.local(verify.link))
        #expect(verifyPage.status == 200, "\(verifyPage.text)")
        #expect(!verifyPage.text.contains(email), "the address is masked: \(verifyPage.text)")
        #expect(try await Self.post(front, try Self.form(verifyPage)).status == 200)
        let looked = try await upstream.api("lookup", ["email": [email]], admin: true)
        let user = try #require((looked.json["users"] as? [[String: Any]])?.first, "\(looked.text)")
        #expect(user["emailVerified"] as? Bool == true)

        // A link whose mode disagrees with the code, or whose key is not the project's.
        let other = try await upstream.link("PASSWORD_RESET", email: email)
        let local = try front.local(other.link)
        let wrongMode = try await front.request("GET", local.replacingOccurrences(of: "mode=resetPassword", with: "mode=verifyEmail"))
        #expect(wrongMode.status == 400 && wrongMode.text.contains("cannot be used"), "\(wrongMode.text)")
        let foreign = try await front.request(
            "GET", local.replacingOccurrences(of: "apiKey=\(Strict.unrestrictedKey)", with: "apiKey=AIzaOther"))
        #expect(foreign.status == 400, "\(foreign.text)")
        let unknown = try await front.request("GET", local.replacingOccurrences(of: other.code, with: "no-such-code"))
        #expect(unknown.status == 400)

        // Change and recover: the new address upstream, then the old one back with the recover link upstream mailed.
        let change = try await upstream.link(
            "VERIFY_AND_CHANGE_EMAIL", email: email, extra: ["newEmail": "ann-new@example.com"])
        let changePage = try await front.request("GET", try front.local(change.link))
        // The page masks both addresses: a forwarded or scanned link does not tell whose it is.
        #expect(changePage.status == 200 && changePage.text.contains("a•••@example.com"), "\(changePage.text)")
        #expect(!changePage.text.contains("ann-new@example.com") && !changePage.text.contains(email), "\(changePage.text)")
        #expect(try await Self.post(front, try Self.form(changePage)).status == 200)
        #expect(try await Self.signIn(upstream, "ann-new@example.com", "second-password-2").status == 200)
        // Upstream mails the old address its recover link, as Google does.
        let recoverLink = try await Self.mailedLink(upstream, to: email)
        #expect(recoverLink.contains("mode=recoverEmail"), "\(recoverLink)")
        let recoverPage = try await front.request("GET", try front.local(recoverLink))
        #expect(recoverPage.status == 200, "\(recoverPage.text)")
        let recovered = try await Self.post(front, try Self.form(recoverPage))
        #expect(recovered.status == 200, "\(recovered.text)")
        #expect(try await Self.signIn(upstream, email, "second-password-2").status == 200, "the old address is back")
        // The recovered address is offered a password reset, which upstream mails (no service account here).
        var offer = try Self.form(recovered)
        #expect(offer["step"] == "resetPassword" && offer["email"] == email, "\(recovered.text)")
        let sent = try await Self.post(front, offer)
        #expect(sent.status == 200 && sent.text.contains("Check your email"), "\(sent.text)")
        let mailedReset = try await Self.mailedLink(upstream, to: email, after: 1)
        #expect(mailedReset.contains("mode=resetPassword"), "\(mailedReset)")
        offer["email"] = "someone-else@example.com"
        #expect(try await Self.post(front, offer).status == 403, "the offer is bound to the recovered address")

        // Sign-in: 303 to the allow-listed continue URL with the code, for the app's SDK to finish upstream.
        let signInLink = try await upstream.link("EMAIL_SIGNIN", email: email, extra: ["continueUrl": "https://app.example.com/finish"])
        let redirect = try await front.request("GET", try front.local(signInLink.link))
        let location = try #require(redirect.header("Location"), "\(redirect.status) \(redirect.text)")
        #expect(redirect.status == 303 && location.hasPrefix("https://app.example.com/finish?apiKey=\(Strict.unrestrictedKey)&oobCode="))
        let finished = try await upstream.api("signInWithEmailLink", ["email": email, "oobCode": signInLink.code])
        #expect(finished.status == 200, "the code was not consumed by the front: \(finished.text)")
        #expect(!front.standardError.contains(reset.code) && !front.standardError.contains(signInLink.code), "codes never reach the log")
    }

    @Test("a link's tenantId goes upstream with its code: changed on the way, upstream refuses it and nothing happens")
    func tenantGoesUpstream() async throws {
        let upstream = try await Strict.start(environment: ["ACTIONLINKS_TENANTS": "team-a,team-b"])
        let front = try await Self.front(for: upstream)
        let email = "tenant-user@example.com"
        let created = try await upstream.api("create", ["email": email, "password": Self.password], admin: true, tenant: "team-a")
        #expect(created.status == 200, "\(created.text)")
        let issued = try await upstream.api(
            "sendOobCode", ["requestType": "VERIFY_EMAIL", "email": email, "returnOobLink": true], admin: true, tenant: "team-a")
        let link = try #require(issued.json["oobLink"] as? String, "\(issued.text)")
        let local = try front.local(link)
        #expect(local.contains("tenantId=team-a"), "\(local)")
        // Another tenant named on the way: upstream, asked about the code in that tenant, refuses it.
        let moved = try await front.request("GET", local.replacingOccurrences(of: "tenantId=team-a", with: "tenantId=team-b"))
        #expect(moved.status >= 400 && !moved.text.contains("<form"), "\(moved.status) \(moved.text)")
        // The link as issued works, in its own tenant.
        let page = try await front.request("GET", local)
        #expect(page.status == 200, "\(page.text)")
        #expect(try await Self.post(front, try Self.form(page)).status == 200)
        let looked = try await upstream.api("lookup", ["email": [email]], admin: true, tenant: "team-a")
        #expect((looked.json["users"] as? [[String: Any]])?.first?["emailVerified"] as? Bool == true, "\(looked.text)")
    }

    @Test("an expired code gets the expired page")
    func expired() async throws {
        let upstream = try await Strict.start(environment: ["ACTIONLINKS_CODES_LIFETIMES_VERIFY_EMAIL": "1s"])
        let front = try await Self.front(for: upstream)
        try await upstream.createAccount(email: "old@example.com", password: Self.password)
        let verify = try await upstream.link("VERIFY_EMAIL", email: "old@example.com")
        // Wait for the upstream to call the code expired, then ask the front.
        try await Eventually.wait(for: "the upstream to call the code expired", every: .milliseconds(100)) {
            try await upstream.api("resetPassword", ["oobCode": verify.code]).errorCode == "EXPIRED_OOB_CODE"
        }
        let page = try await front.request("GET", try front.local(verify.link))
        #expect(page.status == 410 && page.text.contains("expired"), "\(page.text)")
    }

    @Test("upstream stopped mid-test: 503 that says nothing was changed and retries; started again, the retry works and nothing is lost")
    func upstreamStopped() async throws {
        let data = TestProject.temporaryDirectory("actionlinks-upstream")
        let kept = [
            "ACTIONLINKS_DATA_DIRECTORY": data.path,
            "ACTIONLINKS_STORE": "sqlite:" + data.appendingPathComponent("actionlinks.sqlite").path,
        ]
        var upstream: TestServer? = try await Strict.start(environment: kept)
        let base = try #require(upstream?.base)
        let port = try #require(base.split(separator: ":").last.map(String.init))
        let front = try await Self.front(for: upstream!)
        let email = "outage@example.com"
        try await upstream!.createAccount(email: email, password: Self.password)
        let reset = try await upstream!.link("PASSWORD_RESET", email: email)
        let page = try await front.request("GET", try front.local(reset.link))
        var fields = try Self.form(page)
        fields["password"] = "after-outage-3"
        fields["passwordAgain"] = "after-outage-3"

        upstream!.process.terminate()
        upstream!.process.waitUntilExit()
        upstream = nil
        let down = try await Self.post(front, fields)
        #expect(down.status == 503 && down.text.contains("Nothing was changed"), "\(down.status) \(down.text)")
        let retryFields = try Self.form(down)
        #expect(retryFields["retried"] == "1" && retryFields["oobCode"] == reset.code)
        let downPage = try await front.request("GET", try front.local(reset.link))
        #expect(downPage.status == 503, "the GET while upstream is down")

        let restarted = try await Strict.start(environment: kept.merging(["ACTIONLINKS_SERVER_PORT": port]) { $1 })
        var retry = retryFields
        retry["password"] = "after-outage-3"
        retry["passwordAgain"] = "after-outage-3"
        let done = try await Self.post(front, retry)
        #expect(done.status == 200 && !done.text.contains("may already"), "\(done.status) \(done.text)")
        #expect(try await Self.signIn(restarted, email, "after-outage-3").status == 200)
    }
}

@Suite("Masked addresses", .timeLimit(.minutes(5)))
struct MaskedAddressTests {
    @Test("the first character, three dots whatever the length, and the domain")
    func masked() {
        #expect(EmailAddress.masked("ann@example.com") == "a•••@example.com")
        #expect(EmailAddress.masked("a-much-longer-name@example.com") == "a•••@example.com")
        #expect(EmailAddress.masked("x@example.com") == "•••@example.com", "a one-character name is not shown")
        #expect(EmailAddress.masked("") == "" && EmailAddress.masked("no-at-sign") == "•••")
        #expect(EmailAddress.masked("我的@例子.中国") == "我•••@例子.中国")
    }
}
