import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// Account takeover and untrusted numbers: what a review of the accounts work found, each case as
/// an attacker would try it. Development servers answer as Firebase's emulator; the production
/// cases run with `server.development: false` and their own admin token.
@Suite("Account takeover and untrusted numbers", .timeLimit(.minutes(5)))
struct TakeoverTests {
    static let adminToken = String(repeating: "t", count: 40)
    static let production = ["ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": adminToken]
    static let productionAdmin = ["Authorization": "Bearer \(adminToken)"]

    // MARK: Numbers beyond Int64 are bad requests, not traps

    @Test("a page form's time of Int64.min (or beyond) is refused, and the server goes on")
    func formTokenOverflow() async throws {
        try await TestApp.router { app in
            for form in ["-9223372036854775808.x", "9223372036854775807.x", "-1.x", "99999999999999999999.x"] {
                let reply = try await app.request(
                    "POST", "/__/auth/action", body: Data("mode=verifyEmail&oobCode=x&form=\(form)".utf8),
                    headers: ["Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin"])
                #expect(reply.status == 403, "\(form): \(reply.status)")
            }
            #expect(try await app.request("GET", "/healthz").status == 200)
        }
    }

    @Test("a number beyond Int64 where the SDKs may send a number (validSince) is a 400")
    func lenientNumberOverflow() async throws {
        try await TestApp.router { app in
            let user = try await app.registerUser(email: "num@example.com")
            for number in ["1e300", "9223372036854775808", "-9.3e18"] {
                let body = Data(#"{"idToken":"\#(user.idToken)","validSince":\#(number)}"#.utf8)
                let reply = try await app.request(
                    "POST", "/v1/accounts:update?key=\(TestProject.apiKey)", body: body, headers: ["Content-Type": "application/json"])
                #expect(reply.status == 400, "\(number): \(reply.text)")
            }
            let admin = try await app.request(
                "POST", "/v1/projects/\(TestProject.id)/accounts:update",
                body: Data(#"{"localId":"\#(user.localId)","validSince":1e300}"#.utf8),
                headers: ["Content-Type": "application/json", "Authorization": "Bearer owner"])
            #expect(admin.status == 400, "\(admin.text)")
            #expect(try await app.lookupError(idToken: user.idToken) == nil, "nothing changed")
        }
    }

    // MARK: Provider identities nobody proved

    @Test("a production server takes linkProviderUserInfo from the admin only")
    func linkProviderUserInfoIsAdminOnly() async throws {
        try await TestApp.router(environment: Self.production) { app in
            let user = try await app.registerUser(email: "planter@example.com")
            let info = ["providerId": "google.com", "rawId": "victim-sub"]
            let planted = try await app.api("update", ["idToken": user.idToken, "linkProviderUserInfo": info])
            #expect(planted.status == 400 && planted.text.contains("INSUFFICIENT_PERMISSION"), "\(planted.text)")
            let lookup = try await app.api("lookup", ["localId": [user.localId]], admin: true, headers: Self.productionAdmin)
            let providers = ((lookup.json["users"] as? [[String: Any]])?.first?["providerUserInfo"] as? [[String: Any]]) ?? []
            #expect(providers.map { $0["providerId"] as? String } == ["password"], "\(lookup.text)")
            let byAdmin = try await app.api(
                "update", ["localId": user.localId, "linkProviderUserInfo": info], admin: true, headers: Self.productionAdmin)
            #expect(byAdmin.status == 200, "\(byAdmin.text)")
        }
    }

    @Test("an email link into an unverified account ends every way in its maker had: password, providers, sessions")
    func emailLinkTakesOverUnverifiedAccount() async throws {
        let clock = ManualClock()
        try await TestApp.router(clock: clock) { app in
            // The impostor registers the victim's address with a password and links a provider of their own.
            let impostor = try await app.registerUser(email: "victim@example.com")
            let linked = try await app.api(
                "update", ["idToken": impostor.idToken, "linkProviderUserInfo": ["providerId": "google.com", "rawId": "impostor-sub"]])
            #expect(linked.status == 200, "\(linked.text)")
            clock.advance(seconds: 2)
            let victim = try await app.signInWithEmailLink("victim@example.com")
            #expect(victim.localId == impostor.localId)
            let account = try await app.accountInfo(localId: victim.localId)
            let providers = (account["providerUserInfo"] as? [[String: Any]] ?? []).compactMap { $0["providerId"] as? String }
            // (An email-link account lists "password" as Firebase lists it; what matters is the hash.)
            #expect(!providers.contains("google.com") && account["passwordHash"] == nil, "\(account)")
            let refresh = try await app.post(
                "/securetoken.googleapis.com/v1/token?key=\(TestProject.apiKey)",
                ["grant_type": "refresh_token", "refresh_token": impostor.refreshToken])
            #expect(refresh.status == 400 && refresh.text.contains("TOKEN_EXPIRED"), "\(refresh.text)")
            #expect(try await app.lookupError(idToken: victim.idToken) == nil)
        }
    }

    @Test("an anonymous session that named the address loses its sessions when the owner signs in by link")
    func emailLinkEndsAnonymousSessions() async throws {
        let clock = ManualClock()
        try await TestApp.router(clock: clock) { app in
            let anonymous = try await app.registerAnonUser()
            let named = try await app.api("update", ["idToken": anonymous.idToken, "email": "owner@example.com"])
            #expect(named.status == 200, "\(named.text)")
            let refreshToken = named.json["refreshToken"] as? String ?? anonymous.refreshToken
            clock.advance(seconds: 2)
            let owner = try await app.signInWithEmailLink("owner@example.com")
            #expect(owner.localId == anonymous.localId)
            let refresh = try await app.post(
                "/securetoken.googleapis.com/v1/token?key=\(TestProject.apiKey)",
                ["grant_type": "refresh_token", "refresh_token": refreshToken])
            #expect(refresh.status == 400 && refresh.text.contains("TOKEN_EXPIRED"), "\(refresh.text)")
        }
    }

    @Test("a password reset on an unverified account unlinks the providers someone else may have linked")
    func resetUnlinksProvidersOfUnverifiedAccount() async throws {
        try await TestApp.router { app in
            let users: [[String: Any]] = [
                [
                    "localId": "unproven", "email": "unproven@example.com", "rawPassword": Spec.password,
                    "providerUserInfo": [["providerId": "google.com", "rawId": "someone-else"]],
                ]
            ]
            #expect(try await app.api("batchCreate", ["users": users], admin: true).status == 200)
            let code = try await app.link("PASSWORD_RESET", email: "unproven@example.com").code
            let reset = try await app.api("resetPassword", ["oobCode": code, "newPassword": "notasecret2"])
            #expect(reset.status == 200, "\(reset.text)")
            let account = try await app.accountInfo(localId: "unproven")
            let providers = (account["providerUserInfo"] as? [[String: Any]] ?? []).compactMap { $0["providerId"] as? String }
            #expect(providers == ["password"] && account["emailVerified"] as? Bool == true, "\(account)")
        }
    }

    // MARK: What an attacker may learn about an address

    @Test("production: a disabled account's wrong password answers as any wrong password, after the same work")
    func disabledAccountWrongPassword() async throws {
        try await TestApp.router(environment: Self.production) { app in
            let user = try await app.registerUser(email: "off@example.com")
            let disabled = try await app.api(
                "update", ["localId": user.localId, "disableUser": true], admin: true, headers: Self.productionAdmin)
            #expect(disabled.status == 200, "\(disabled.text)")
            let wrong = try await app.api("signInWithPassword", ["email": "off@example.com", "password": "wrong-password"])
            #expect(wrong.isError("INVALID_LOGIN_CREDENTIALS"), "\(wrong.text)")
            let right = try await app.api("signInWithPassword", ["email": "off@example.com", "password": Spec.password])
            #expect(right.isError("USER_DISABLED"), "\(right.text)")
        }
    }

    @Test("development: a disabled account is USER_DISABLED before its password is looked at, as the emulator answers")
    func disabledAccountDevelopment() async throws {
        try await TestApp.router { app in
            let user = try await app.registerUser(email: "off@example.com")
            try await app.updateAccount(localId: user.localId, ["disableUser": true])
            let wrong = try await app.api("signInWithPassword", ["email": "off@example.com", "password": "wrong-password"])
            #expect(wrong.isError("USER_DISABLED"), "\(wrong.text)")
        }
    }

    @Test("production with email-enumeration protection: a taken new address is not told; a direct change of address is refused")
    func enumerationThroughEmailChange() async throws {
        try await TestApp.router(environment: Self.production) { app in
            _ = try await app.registerUser(email: "taken@example.com")
            let user = try await app.registerUser(email: "asker@example.com")
            let taken = try await app.api(
                "sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": user.idToken, "newEmail": "taken@example.com"])
            let free = try await app.api(
                "sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": user.idToken, "newEmail": "free@example.com"])
            #expect(taken.status == 200 && taken.text == free.text, "\(taken.text) vs \(free.text)")
            // Mail leaves after the answer: the free address's arrives, and by then the taken one's would have.
            _ = try await app.mailbox.next(to: "free@example.com")
            #expect(app.mailbox.messages(to: "taken@example.com").isEmpty, "nothing is mailed to the taken address")
            let direct = try await app.api("update", ["idToken": user.idToken, "email": "free@example.com"])
            #expect(direct.isError("OPERATION_NOT_ALLOWED"), "\(direct.text)")
            let byAdmin = try await app.api(
                "update", ["localId": user.localId, "email": "taken@example.com"], admin: true, headers: Self.productionAdmin)
            #expect(byAdmin.isError("EMAIL_EXISTS"), "the admin is told: \(byAdmin.text)")
        }
    }

    @Test("removing the address mails the old one no recoverEmail link (there is no change to undo)")
    func removedAddressIsNotRecoverable() async throws {
        try await TestApp.router { app in
            let user = try await app.registerUser(email: "gone@example.com")
            let removed = try await app.api("update", ["idToken": user.idToken, "deleteAttribute": ["EMAIL"]])
            #expect(removed.status == 200 && removed.json["email"] == nil, "\(removed.text)")
            #expect(app.mailbox.messages(to: "gone@example.com").isEmpty)
            #expect(try await app.inspectOobs().isEmpty)
        }
    }

    // MARK: The ID token's tenant

    @Test(
        "a tenant's user whose call names no tenant is checked against the token's tenant (disabled: PROJECT_DISABLED), in one place for every call"
    )
    func tokenTenantIsChecked() async throws {
        try await TestApp.router { app in
            let tenant = try await app.registerEnabledTenant()
            let user = try await app.registerUser(email: "tenant-user@example.com", tenant: tenant)
            let off = try await app.request(
                "PATCH", "/v2/projects/\(TestProject.id)/tenants/\(tenant)?updateMask=disableAuth", json: ["disableAuth": true],
                headers: ["Authorization": "Bearer owner"])
            #expect(off.status == 200, "\(off.text)")
            let update = try await app.api("update", ["idToken": user.idToken, "displayName": "x"])
            #expect(update.isError("PROJECT_DISABLED"), "\(update.text)")
            let send = try await app.api("sendOobCode", ["requestType": "VERIFY_EMAIL", "idToken": user.idToken])
            #expect(send.isError("PROJECT_DISABLED"), "\(send.text)")
            let signUp = try await app.api("signUp", ["idToken": user.idToken, "email": "other@example.com", "password": Spec.password])
            #expect(signUp.isError("PROJECT_DISABLED"), "\(signUp.text)")
            let link = try await app.api(
                "signInWithEmailLink", ["idToken": user.idToken, "email": "tenant-user@example.com", "oobCode": "x"])
            #expect(link.isError("PROJECT_DISABLED"), "\(link.text)")
        }
    }
}
