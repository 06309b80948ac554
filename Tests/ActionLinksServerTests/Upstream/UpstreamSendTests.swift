import ActionLinks
import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// The front's own `sendOobCode` (the service account asks upstream for the code; the link and the
/// mail are the front's) and the reset form under upstream's password rules, with two real binaries:
/// an upstream as strict as Google (``StrictUpstream``) and the front (``UpstreamModeTests/front(for:serviceAccount:environment:)``).
@Suite("Upstream mode: the front's sendOobCode and upstream's password rules", .timeLimit(.minutes(5)))
struct UpstreamSendTests {
    typealias Strict = StrictUpstream
    typealias Upstream = UpstreamModeTests

    @Test(
        "sendOobCode on the front: the service account asks upstream for the code, the link is ours and mailed with our templates; unknown addresses get the same answer and no mail; ID-token verification; admin returnOobLink; every other REST path is 404"
    )
    func sendOobCode() async throws {
        let upstream = try await Strict.start()
        let front = try await Upstream.front(for: upstream, serviceAccount: try await Upstream.serviceAccount(of: upstream))
        let email = "bea-upstream@example.com"
        try await upstream.createAccount(email: email, password: Upstream.password)

        // A client's reset, mailed by the front, completed on the front, seen upstream.
        let unknown = try await front.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "nobody@example.com"])
        let known = try await front.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": email])
        #expect(known.status == 200 && known.json["email"] as? String == email, "\(known.text)")
        #expect(unknown.status == 200 && unknown.json["email"] as? String == "nobody@example.com", "\(unknown.text)")
        #expect(known.json.keys.sorted() == unknown.json.keys.sorted() && known.json["oobLink"] == nil)
        let resetLink = try await Upstream.mailedLink(front, to: email)
        #expect(resetLink.hasPrefix("https://links.test.example/__/auth/action?") && resetLink.contains("mode=resetPassword"))
        #expect(Upstream.mailCount(front, to: "nobody@example.com") == 0, "no mail for an address upstream does not know")
        let page = try await front.request("GET", try front.local(resetLink))
        #expect(page.status == 200 && page.text.contains(email), "\(page.text)")
        var fields = try Upstream.form(page)
        fields["password"] = "mailed-by-front-4"
        fields["passwordAgain"] = "mailed-by-front-4"
        #expect(try await Upstream.post(front, fields).status == 200)
        #expect(try await Upstream.signIn(upstream, email, "mailed-by-front-4").status == 200)

        // Verification for the signed-in user: the address comes from upstream's lookup of the ID token.
        let session = try await Upstream.signIn(upstream, email, "mailed-by-front-4")
        let idToken = try #require(session.json["idToken"] as? String)
        let verify = try await front.api("sendOobCode", ["requestType": "VERIFY_EMAIL", "idToken": idToken])
        #expect(verify.status == 200 && verify.json["email"] as? String == email, "\(verify.text)")
        let verifyLink = try await Upstream.mailedLink(front, to: email, after: 1)
        #expect(verifyLink.contains("mode=verifyEmail"))
        let badToken = try await front.api("sendOobCode", ["requestType": "VERIFY_EMAIL", "idToken": "not-a-token"])
        #expect(badToken.status == 400 && badToken.errorCode == "INVALID_ID_TOKEN", "\(badToken.text)")

        // The admin's returnOobLink: our link, unmailed; a client may not ask for it.
        let admin = try await front.api(
            "sendOobCode",
            ["requestType": "EMAIL_SIGNIN", "email": email, "returnOobLink": true, "continueUrl": "https://app.example.com/finish"],
            admin: true)
        let signInLink = try #require(admin.json["oobLink"] as? String, "\(admin.text)")
        let signInCode = try #require(admin.json["oobCode"] as? String)
        #expect(signInLink.hasPrefix("https://links.test.example/__/auth/action?") && signInLink.contains(signInCode))
        let redirect = try await front.request("GET", try front.local(signInLink))
        #expect(redirect.status == 303 && redirect.header("Location")?.hasPrefix("https://app.example.com/finish?") == true)
        #expect(try await upstream.api("signInWithEmailLink", ["email": email, "oobCode": signInCode]).status == 200)
        let clientAsks = try await front.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": email, "returnOobLink": true])
        #expect(clientAsks.errorCode == "INSUFFICIENT_PERMISSION", "\(clientAsks.text)")

        // Another project's key, a continue URL off the allow-list, and every other REST path.
        let foreign = try await front.post("/v1/accounts:sendOobCode?key=AIzaOther", ["requestType": "PASSWORD_RESET", "email": email])
        #expect(foreign.status == 400 && foreign.text.contains("API key not valid"), "\(foreign.text)")
        let offList = try await front.api(
            "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": email, "continueUrl": "https://evil.example.net/"])
        #expect(offList.errorCode == "UNAUTHORIZED_DOMAIN", "\(offList.text)")
        for path in [
            "/v1/accounts:signInWithPassword?key=\(Strict.unrestrictedKey)", "/v1/accounts:lookup", "/v1/token", "/v2/projects/p/tenants",
        ] {
            let other = try await front.request("POST", path, body: Data("{}".utf8), headers: ["Content-Type": "application/json"])
            #expect(other.status == 404, "\(path): \(other.text)")
            #expect(
                other.text.contains("NOT_FOUND : this link domain fronts project \(TestProject.id); the SDKs call Firebase directly"),
                "\(path)")
        }
        #expect(!front.standardError.contains(signInCode), "codes never reach the log")
    }

    @Test("without a service account, sendOobCode says what to configure; the AASA claims sign-in action links only")
    func noServiceAccount() async throws {
        let upstream = try await Strict.start()
        let front = try await Upstream.front(for: upstream)
        let reply = try await front.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "ann@example.com"])
        #expect(reply.errorCode == "OPERATION_NOT_ALLOWED" && reply.text.contains("upstream.serviceAccountFile"), "\(reply.text)")
        let aasa = try AppSiteAssociation(bytes: try await front.request("GET", "/.well-known/apple-app-site-association").body)
        let matcher = AASAMatcher(association: aasa)
        for (query, opens) in [("mode=signIn&oobCode=c&apiKey=\(Strict.unrestrictedKey)", true), ("mode=resetPassword&oobCode=c", false)] {
            let url = AssociatedURL(host: "links.test.example", path: ActionCodeLink.actionPath, query: query)
            #expect((matcher.decide(url, appID: "ABCDE12345.com.example.app", domain: "links.test.example").outcome == .match) == opens)
        }
        #expect((try await upstream.request("GET", "/.well-known/apple-app-site-association")).text.contains("signIn") == false)
    }

    @Test(
        "a password the upstream refuses (WEAK_PASSWORD) comes back on the form, and the code still works; a mobile link goes on to the action page"
    )
    func weakPasswordAndMobileLink() async throws {
        // The upstream asks for longer passwords than the front checks itself.
        let upstream = try await Strict.start(environment: ["ACTIONLINKS_PASSWORDS_MINIMUM_LENGTH": "20"])
        let front = try await Upstream.front(for: upstream, serviceAccount: try await Upstream.serviceAccount(of: upstream))
        let email = "weak@example.com"
        try await upstream.createAccount(email: email, password: String(repeating: "p", count: 24))
        let reset = try await upstream.link("PASSWORD_RESET", email: email)
        var fields = try Upstream.form(try await front.request("GET", try front.local(reset.link)))
        fields["password"] = "short-but-ok-here"
        fields["passwordAgain"] = "short-but-ok-here"
        let refused = try await Upstream.post(front, fields)
        #expect(refused.status == 400 && refused.text.contains("does not accept this password"), "\(refused.status) \(refused.text)")
        let again = try Upstream.form(refused)
        #expect(refused.text.contains(email) && again["oobCode"] == reset.code, "the form again, for the same code")
        var stronger = again
        stronger["password"] = "long-enough-for-the-upstream-1"
        stronger["passwordAgain"] = "long-enough-for-the-upstream-1"
        #expect(try await Upstream.post(front, stronger).status == 200)
        #expect(try await Upstream.signIn(upstream, email, "long-enough-for-the-upstream-1").status == 200)

        let mobile = try await front.post(
            "/v1/projects/\(TestProject.id)/accounts:sendOobCode",
            [
                "requestType": "VERIFY_EMAIL", "email": email, "returnOobLink": true, "canHandleCodeInApp": true,
                "iOSBundleId": "com.example.app", "continueUrl": "https://app.example.com/verified",
            ], headers: ["Authorization": "Bearer " + Upstream.frontAdmin])
        let link = try #require(mobile.json["oobLink"] as? String, "\(mobile.text)")
        #expect(link.hasPrefix("https://links.test.example/__/auth/links?link="))
        let onward = try await front.request("GET", try front.local(link))
        let location = try #require(onward.header("Location"), "\(onward.status) \(onward.text)")
        #expect(onward.status == 303 && location.hasPrefix("/__/auth/action?mode=verifyEmail&oobCode="))
        let page = try await front.request("GET", location)
        let pageFields = try Upstream.form(page)
        #expect(page.status == 200 && pageFields["continueUrl"] == "https://app.example.com/verified", "\(page.text)")
    }

    @Test(
        "a production upstream that enforces a password policy: the front states it, refuses a weak password with what is missing (and maps upstream's own refusal when the policy changed since it was read), the code stays usable, a compliant one works upstream"
    )
    func passwordPolicy() async throws {
        let upstream = try await Strict.start(environment: [
            "ACTIONLINKS_PASSWORDS_ENFORCEMENT": "enforce", "ACTIONLINKS_PASSWORDS_MINIMUM_LENGTH": "10",
            "ACTIONLINKS_PASSWORDS_REQUIRE_UPPERCASE": "true", "ACTIONLINKS_PASSWORDS_REQUIRE_NUMERIC": "true",
        ])
        let front = try await Upstream.front(for: upstream)
        let admin = ["Authorization": "Bearer " + Strict.adminToken]
        func resetLink(_ email: String, tenant: String? = nil) async throws -> String {
            let reply = try await upstream.api(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": email, "returnOobLink": true], admin: true, tenant: tenant)
            return try #require(reply.json["oobLink"] as? String, "\(reply.text)")
        }
        let email = "policy@example.com"
        let created = try await upstream.api("create", ["email": email, "password": "Original-pass-1"], admin: true)
        #expect(created.status == 200, "\(created.text)")

        let page = try await front.request("GET", try front.local(try await resetLink(email)) + "&lang=en")
        #expect(page.status == 200 && page.text.contains("At least 10 characters."), "\(page.status) \(page.text)")
        #expect(page.text.contains("It must also contain an upper-case letter (A–Z); a digit (0–9)."), "\(page.text)")
        var fields = try Upstream.form(page)
        fields["password"] = "only-lower-case"
        fields["passwordAgain"] = "only-lower-case"
        let refused = try await Upstream.post(front, fields)
        #expect(refused.status == 400, "\(refused.status) \(refused.text)")
        #expect(refused.text.contains("It still needs an upper-case letter (A–Z); a digit (0–9)."), "\(refused.text)")
        let again = try Upstream.form(refused)
        #expect(again["oobCode"] == fields["oobCode"], "the same code, on the form again")
        let check = try await upstream.api("resetPassword", ["oobCode": fields["oobCode"] ?? ""])
        #expect(check.json["requestType"] as? String == "PASSWORD_RESET", "the code still works upstream: \(check.text)")
        var compliant = again
        compliant["password"] = "Compliant-pass-2"
        compliant["passwordAgain"] = "Compliant-pass-2"
        let done = try await Upstream.post(front, compliant)
        #expect(done.status == 200, "\(done.status) \(done.text)")
        #expect(try await Upstream.signIn(upstream, email, "Compliant-pass-2").status == 200, "the new password works upstream")

        // A tenant whose policy upstream turns on after the front read it: upstream's refusal, mapped.
        let tenants = "/v2/projects/\(TestProject.id)/tenants"
        let body = ["allowPasswordSignup": true, "passwordPolicyConfig": ["passwordPolicyEnforcementState": "OFF"]] as [String: Any]
        let tenant = try await upstream.post(tenants, body, headers: admin)
        let tenantID = try #require(tenant.json["tenantId"] as? String, "\(tenant.text)")
        let member = try await upstream.api(
            "create", ["email": email, "password": "tenant-pass"], admin: true, tenant: tenantID)
        #expect(member.status == 200, "\(member.text)")
        let tenantPage = try await front.request("GET", try front.local(try await resetLink(email, tenant: tenantID)) + "&lang=en")
        #expect(tenantPage.status == 200 && tenantPage.text.contains("At least 6 characters."), "off: Firebase's floor: \(tenantPage.text)")
        let enforce: [String: Any] = [
            "passwordPolicyConfig": [
                "passwordPolicyEnforcementState": "ENFORCE",
                "passwordPolicyVersions": [["customStrengthOptions": ["minPasswordLength": 8, "containsNonAlphanumericCharacter": true]]],
            ]
        ]
        let patched = try await upstream.request(
            "PATCH", "\(tenants)/\(tenantID)?updateMask=passwordPolicyConfig", json: enforce, headers: admin)
        #expect(patched.status == 200, "\(patched.text)")
        var tenantFields = try Upstream.form(tenantPage)
        tenantFields["password"] = "letters and digits 1"
        tenantFields["passwordAgain"] = "letters and digits 1"
        let mapped = try await Upstream.post(front, tenantFields)
        #expect(mapped.status == 400 && mapped.text.contains("It still needs a symbol from"), "\(mapped.status) \(mapped.text)")
        let mappedForm = try Upstream.form(mapped)
        #expect(!mapped.text.contains("cannot be used") && mappedForm["oobCode"] == tenantFields["oobCode"])
        tenantFields["password"] = "letters, digits & 1"
        tenantFields["passwordAgain"] = "letters, digits & 1"
        #expect(try await Upstream.post(front, tenantFields).status == 200)
        let signedIn = try await upstream.api(
            "signInWithPassword", ["email": email, "password": "letters, digits & 1", "returnSecureToken": true], tenant: tenantID)
        #expect(signedIn.status == 200, "\(signedIn.text)")
    }
}
