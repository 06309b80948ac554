import ActionLinks
import ActionLinksTestSupport
import Foundation
import Testing

/// Firebase's password policy on the application `serve` builds: `GET /v2/passwordPolicy` in
/// Google's shape behind the API key and CORS, enforcement on `signUp`, `accounts:update`,
/// `resetPassword` and the reset page (the code stays usable after a refusal), and a tenant's own
/// policy from the admin API's `passwordPolicyConfig`.
@Suite("Password policy end to end", .timeLimit(.minutes(5)))
struct PasswordPolicyEndToEndTests {
    /// A project that enforces 10 characters and an upper-case letter.
    static let enforced = [
        "ACTIONLINKS_PASSWORDS_ENFORCEMENT": "enforce", "ACTIONLINKS_PASSWORDS_MINIMUM_LENGTH": "10",
        "ACTIONLINKS_PASSWORDS_REQUIRE_UPPERCASE": "true",
    ]
    static let missingBoth =
        "PASSWORD_DOES_NOT_MEET_REQUIREMENTS : Missing password requirements: [Password must contain at least 10 characters, Password must contain an upper case character]"
    static let admin = ["Authorization": "Bearer owner"]
    static let symbols =
        ##"["^","$","*",".","[","]","{","}","(",")","?","\"","!","@","#","%","&","/","\\",",",">","<","'",":",";","|","_","~","`"]"##

    static func policy(_ app: TestApp, _ query: String = "", prefix: String = "/v2", headers: [String: String] = [:]) async throws
        -> HTTPReply
    {
        try await app.request("GET", "\(prefix)/passwordPolicy?key=\(TestProject.apiKey)" + query, headers: headers)
    }

    static func message(_ reply: HTTPReply) -> String {
        ((reply.json["error"] as? [String: Any])?["message"] as? String) ?? ""
    }

    @Test("GET /v2/passwordPolicy: the shipped policy in Google's shape, byte for byte, also under /identitytoolkit.googleapis.com/v2/")
    func shippedPolicy() async throws {
        try await TestApp.router { app in
            let expected =
                #"{"allowedNonAlphanumericCharacters":"# + Self.symbols
                + #","customStrengthOptions":{"maxPasswordLength":4096,"minPasswordLength":8},"enforcementState":"OFF","forceUpgradeOnSignin":false,"schemaVersion":1}"#
            for prefix in ["/v2", "/identitytoolkit.googleapis.com/v2"] {
                let reply = try await Self.policy(app, prefix: prefix)
                #expect(reply.status == 200 && reply.text == expected, "\(prefix): \(reply.status) \(reply.text)")
                #expect(reply.header("Content-Type") == "application/json; charset=utf-8" && reply.header("Cache-Control") == "no-store")
            }
            // The JS SDK sends Content-Type: application/json on the GET, and the tenant in the query.
            let sdk = try await Self.policy(app, "&tenantId=", headers: ["Content-Type": "application/json"])
            #expect(sdk.status == 200 && sdk.text == expected, "\(sdk.text)")
            let post = try await app.request("POST", "/v2/passwordPolicy?key=\(TestProject.apiKey)")
            #expect(
                post.status == 404 && (post.json["error"] as? [String: Any])?["status"] as? String == "NOT_FOUND",
                "\(post.status) \(post.text)")
        }
    }

    @Test("an enforced policy: ENFORCE and a true for each required rule; a tenant's own; unknown tenant TENANT_NOT_FOUND")
    func enforcedPolicy() async throws {
        try await TestApp.router(environment: Self.enforced.merging(["ACTIONLINKS_TENANTS": "plain"]) { $1 }) { app in
            let reply = try await Self.policy(app)
            let options = reply.json["customStrengthOptions"] as? [String: Any] ?? [:]
            #expect(reply.json["enforcementState"] as? String == "ENFORCE" && reply.json["schemaVersion"] as? Int == 1, "\(reply.text)")
            #expect(options["minPasswordLength"] as? Int == 10 && options["containsUppercaseCharacter"] as? Bool == true, "\(reply.text)")
            #expect(options["containsLowercaseCharacter"] == nil && options["containsNumericCharacter"] == nil, "absent: not required")
            let plain = try await Self.policy(app, "&tenantId=plain")
            #expect(plain.status == 200 && plain.text == reply.text, "a configured tenant without its own policy has the project's")
            let unknown = try await Self.policy(app, "&tenantId=nobody")
            #expect(unknown.isError("TENANT_NOT_FOUND"), "\(unknown.text)")
            #expect(try await Self.policy(app, "&tenantId=not%20an%20id").isError("INVALID_TENANT_ID"))
        }
    }

    @Test("behind the REST API's gate: a production server takes only the project's key; CORS answers allowed origins and their preflight")
    func gateAndCORS() async throws {
        let production = ["ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": String(repeating: "t", count: 40)]
        try await TestApp.router(environment: production) { app in
            #expect(try await Self.policy(app).status == 200)
            let other = try await app.request("GET", "/v2/passwordPolicy?key=AIzaSomeoneElse")
            #expect(other.status == 400 && Self.message(other) == "API key not valid. Please pass a valid API key.", "\(other.text)")
            let none = try await app.request("GET", "/v2/passwordPolicy")
            #expect(none.status >= 400 && none.json["customStrengthOptions"] == nil, "\(none.status) \(none.text)")
            let origin = "https://app.example.com"
            let allowed = try await Self.policy(app, headers: ["Origin": origin])
            #expect(allowed.status == 200 && allowed.header("Access-Control-Allow-Origin") == origin)
            let foreign = try await Self.policy(app, headers: ["Origin": "https://evil.example.net"])
            #expect(foreign.header("Access-Control-Allow-Origin") == nil)
            let preflight = try await app.request(
                "OPTIONS", "/v2/passwordPolicy?key=\(TestProject.apiKey)",
                headers: [
                    "Origin": origin, "Access-Control-Request-Method": "GET",
                    "Access-Control-Request-Headers": "content-type,x-client-version,x-firebase-gmpid",
                ])
            #expect(preflight.status == 204 && preflight.header("Access-Control-Allow-Origin") == origin, "\(preflight.headers)")
            #expect(preflight.header("Access-Control-Allow-Methods")?.contains("GET") == true)
        }
    }

    @Test(
        "enforce: signUp, accounts:update and resetPassword refuse a weak password with every missing rule; fewer than 6 is WEAK_PASSWORD; the code stays usable"
    )
    func enforcement() async throws {
        try await TestApp.router(environment: Self.enforced) { app in
            let weak = try await app.api("signUp", ["email": "ann@example.com", "password": "lowercase"])
            #expect(weak.status == 400 && Self.message(weak) == Self.missingBoth, "\(weak.text)")
            #expect(
                weak.json["error"].flatMap { ($0 as? [String: Any])?["errors"] as? [[String: Any]] }?.first?["reason"] as? String
                    == "invalid")
            let tiny = try await app.api("signUp", ["email": "ann@example.com", "password": "Ab1"])
            #expect(Self.message(tiny) == "WEAK_PASSWORD : Password should be at least 6 characters", "\(tiny.text)")
            let upper = try await app.api("signUp", ["email": "ann@example.com", "password": "lowercase-but-long"])
            #expect(
                Self.message(upper)
                    == "PASSWORD_DOES_NOT_MEET_REQUIREMENTS : Missing password requirements: [Password must contain an upper case character]"
            )
            let signedUp = try await app.api("signUp", ["email": "ann@example.com", "password": "Compliant-1", "returnSecureToken": true])
            let idToken = try #require(signedUp.json["idToken"] as? String, "\(signedUp.text)")

            // A password change by the user, and by the admin.
            let change = try await app.api("update", ["idToken": idToken, "password": "short-one"])
            #expect(Self.message(change) == Self.missingBoth, "\(change.text)")
            let localID = try #require(signedUp.json["localId"] as? String)
            let byAdmin = try await app.api("update", ["localId": localID, "password": "Nope"], admin: true)
            #expect(Self.message(byAdmin) == "WEAK_PASSWORD : Password should be at least 6 characters", "\(byAdmin.text)")
            #expect(try await app.api("update", ["idToken": idToken, "password": "Changed-password"]).status == 200)

            // A reset through the REST API: refused without consuming, then set.
            let (_, code) = try await app.link("PASSWORD_RESET", email: "ann@example.com")
            let refused = try await app.api("resetPassword", ["oobCode": code, "newPassword": "all lower case"])
            #expect(
                refused.status == 400
                    && Self.message(refused)
                        == "PASSWORD_DOES_NOT_MEET_REQUIREMENTS : Missing password requirements: [Password must contain an upper case character]"
            )
            #expect(
                try await app.api("resetPassword", ["oobCode": code]).json["requestType"] as? String == "PASSWORD_RESET", "still usable")
            #expect(try await app.api("resetPassword", ["oobCode": code, "newPassword": "Reset-password-3"]).status == 200)
            #expect(try await app.api("signInWithPassword", ["email": "ann@example.com", "password": "Reset-password-3"]).status == 200)
        }
    }

    @Test("enforcement off (the default): the lengths as before, with WEAK_PASSWORD; fewer than 6 says 6")
    func off() async throws {
        try await TestApp.router(environment: ["ACTIONLINKS_PASSWORDS_REQUIRE_UPPERCASE": "true"]) { app in
            let seven = try await app.api("signUp", ["email": "bo@example.com", "password": "sevenxx"])
            #expect(Self.message(seven) == "WEAK_PASSWORD : Password should be at least 8 characters", "\(seven.text)")
            let five = try await app.api("signUp", ["email": "bo@example.com", "password": "fivex"])
            #expect(Self.message(five) == "WEAK_PASSWORD : Password should be at least 6 characters", "\(five.text)")
            #expect(try await app.api("signUp", ["email": "bo@example.com", "password": "no upper case"]).status == 200)
            let served = try await Self.policy(app)
            #expect(served.json["enforcementState"] as? String == "OFF")
            #expect((served.json["customStrengthOptions"] as? [String: Any])?["containsUppercaseCharacter"] as? Bool == true)
        }
    }

    @Test("the reset page states the policy in its language, refuses a weak password with what is missing, and the code still works")
    func resetPage() async throws {
        try await TestApp.router(environment: Self.enforced) { app in
            try await app.createAccount(email: "cy@example.com", password: "Original-password")
            let (link, _) = try await app.link("PASSWORD_RESET", email: "cy@example.com")
            let page = try await app.request("GET", try app.local(link) + "&lang=en")
            #expect(page.status == 200, "\(page.text)")
            #expect(page.text.contains(#"<p class="help" id="password-help">At least 10 characters.</p>"#), "\(page.text)")
            #expect(
                page.text.contains(#"<p class="help" id="password-rules">It must also contain an upper-case letter (A–Z).</p>"#),
                "\(page.text)")
            #expect(page.text.contains(#"aria-describedby="password-help password-rules""#) && page.text.contains(#"minlength="10""#))
            let refused = try await app.submitForm(of: page, ["password": "too short", "passwordAgain": "too short"])
            #expect(refused.status == 400, "\(refused.text)")
            #expect(
                refused.text.contains(
                    "This password does not meet the requirements. It still needs at least 10 characters; an upper-case letter (A–Z)."),
                "\(refused.text)")
            #expect(refused.text.contains(#"aria-invalid="true""#))
            let tiny = try await app.submitForm(of: refused, ["password": "ab", "passwordAgain": "ab"])
            #expect(tiny.text.contains("It still needs at least 10 characters; an upper-case letter (A–Z)."), "below 6: the same list")
            let russian = try await app.request("GET", try app.local(link) + "&lang=ru")
            #expect(
                russian.text.contains("Не менее 10 символов.") && russian.text.contains("заглавную латинскую букву (A–Z)"),
                "\(russian.text)")
            let refusedInRussian = try await app.submitForm(of: russian, ["password": "длинный-пароль", "passwordAgain": "длинный-пароль"])
            #expect(
                refusedInRussian.text.contains(
                    "Этот пароль не отвечает требованиям. Пароль должен содержать: заглавную латинскую букву (A–Z)."),
                "\(refusedInRussian.text)")
            let done = try await app.submitForm(of: refused, ["password": "Compliant-page-1", "passwordAgain": "Compliant-page-1"])
            #expect(done.status == 200, "the code was not used by the refusals: \(done.text)")
            #expect(try await app.api("signInWithPassword", ["email": "cy@example.com", "password": "Compliant-page-1"]).status == 200)
        }
    }

    @Test(
        "a tenant made through the admin API with passwordPolicyConfig: shown, served, enforced, changed by updateMask, refused when out of range"
    )
    func tenantPolicy() async throws {
        try await TestApp.router { app in
            let tenants = "/v2/projects/\(TestProject.id)/tenants"
            let config: [String: Any] = [
                "passwordPolicyEnforcementState": "ENFORCE",
                "passwordPolicyVersions": [["customStrengthOptions": ["minPasswordLength": 12, "containsNumericCharacter": true]]],
            ]
            let created = try await app.post(tenants, ["allowPasswordSignup": true, "passwordPolicyConfig": config], headers: Self.admin)
            let id = try #require(created.json["tenantId"] as? String, "\(created.text)")
            let shown = created.json["passwordPolicyConfig"] as? [String: Any]
            #expect(shown?["passwordPolicyEnforcementState"] as? String == "ENFORCE", "\(created.text)")
            let fetched = try await app.request("GET", "\(tenants)/\(id)", headers: Self.admin)
            #expect(fetched.json["passwordPolicyConfig"] != nil, "\(fetched.text)")

            let served = try await Self.policy(app, "&tenantId=\(id)")
            #expect(served.json["enforcementState"] as? String == "ENFORCE", "\(served.text)")
            let options = served.json["customStrengthOptions"] as? [String: Any] ?? [:]
            #expect(options["minPasswordLength"] as? Int == 12 && options["containsNumericCharacter"] as? Bool == true, "\(served.text)")
            #expect(try await Self.policy(app).json["enforcementState"] as? String == "OFF", "the project's is its own")

            let weak = try await app.api("signUp", ["email": "di@example.com", "password": "no-digits-here"], tenant: id)
            #expect(
                Self.message(weak)
                    == "PASSWORD_DOES_NOT_MEET_REQUIREMENTS : Missing password requirements: [Password must contain a numeric character]",
                "\(weak.text)")
            #expect(try await app.api("signUp", ["email": "di@example.com", "password": "no-digits-here"]).status == 200, "the project's")

            // firebase-admin's update masks name the config's fields.
            let patched = try await app.request(
                "PATCH", "\(tenants)/\(id)?updateMask=passwordPolicyConfig.passwordPolicyEnforcementState",
                json: ["passwordPolicyConfig": ["passwordPolicyEnforcementState": "OFF"]], headers: Self.admin)
            #expect(patched.status == 200, "\(patched.text)")
            let after = try await Self.policy(app, "&tenantId=\(id)")
            #expect(after.json["enforcementState"] as? String == "OFF", "\(after.text)")
            #expect((after.json["customStrengthOptions"] as? [String: Any])?["minPasswordLength"] as? Int == 12, "the rules were kept")

            let bad = try await app.request(
                "PATCH", "\(tenants)/\(id)?updateMask=passwordPolicyConfig",
                json: ["passwordPolicyConfig": ["passwordPolicyVersions": [["customStrengthOptions": ["minPasswordLength": 4]]]]],
                headers: Self.admin)
            #expect(
                bad.isError("INVALID_ARGUMENT") && Self.message(bad).contains("minPasswordLength: expected 6 to 30; got 4"), "\(bad.text)")
            #expect(try await Self.policy(app, "&tenantId=\(id)").text == after.text, "nothing changed")
        }
    }

    @Test("the landing page states a stored tenant's policy, on the event-loop fast path's server too (it passes that page on)")
    func storedTenantPage() async throws {
        try await TestApp.live { app in
            let created = try await app.post(
                "/v2/projects/\(TestProject.id)/tenants",
                [
                    "allowPasswordSignup": true,
                    "passwordPolicyConfig": [
                        "passwordPolicyEnforcementState": "ENFORCE",
                        "passwordPolicyVersions": [
                            ["customStrengthOptions": ["minPasswordLength": 14, "containsLowercaseCharacter": true]]
                        ],
                    ],
                ], headers: Self.admin)
            let id = try #require(created.json["tenantId"] as? String, "\(created.text)")
            try await app.createAccount(email: "ed@example.com", password: "project-password")
            let tenantUser = try await app.api(
                "create", ["email": "ed@example.com", "password": "tenant-password-long"], admin: true, tenant: id)
            #expect(tenantUser.status == 200, "\(tenantUser.text)")
            let tenantLink = try await app.api(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "ed@example.com", "returnOobLink": true], admin: true, tenant: id)
            let link = try #require(tenantLink.json["oobLink"] as? String, "\(tenantLink.text)")
            let (projectLink, _) = try await app.link("PASSWORD_RESET", email: "ed@example.com")
            for _ in 0..<2 {
                let page = try await app.request("GET", try app.local(link) + "&lang=en")
                #expect(page.status == 200 && page.text.contains("At least 14 characters."), "\(page.text)")
                #expect(page.text.contains("It must also contain a lower-case letter (a–z)."), "\(page.text)")
                let project = try await app.request("GET", try app.local(projectLink) + "&lang=en")
                #expect(project.text.contains("At least 8 characters.") && !project.text.contains("password-rules"), "\(project.text)")
            }
            let refused = try await app.submitForm(
                of: try await app.request("GET", try app.local(link) + "&lang=en"),
                ["password": "ALL-UPPER-CASE-LONG", "passwordAgain": "ALL-UPPER-CASE-LONG"])
            #expect(refused.status == 400 && refused.text.contains("It still needs a lower-case letter (a–z)."), "\(refused.text)")
        }
    }
}
