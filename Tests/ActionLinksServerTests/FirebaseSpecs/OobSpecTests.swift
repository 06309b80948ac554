import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

extension FirebaseSpecs {
    /// firebase-tools `src/emulator/auth/oob.spec.ts`, every case. Where this server answers
    /// differently on purpose, the case says why: a completed email change leaves a `recoverEmail`
    /// code for the old address (Firebase production mails one; the emulator does not), and the
    /// admin is never answered as if an unknown address existed.
    @Suite("oob.spec.ts: accounts:sendOobCode", .timeLimit(.minutes(5)))
    struct OobSpecTests {
        @Test("should generate OOB code for verify email")
        func verifyEmail() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                let sent = try await app.api("sendOobCode", ["idToken": user.idToken, "requestType": "VERIFY_EMAIL"])
                #expect(sent.status == 200 && sent.json["email"] as? String == "alice@example.com", "\(sent.text)")
                #expect(sent.json["oobCode"] == nil && sent.json["oobLink"] == nil)
                let oobs = try await app.inspectOobs()
                #expect(oobs.count == 1 && oobs.first?["email"] as? String == "alice@example.com")
                #expect(oobs.first?["requestType"] as? String == "VERIFY_EMAIL")
                let applied = try await app.api("update", ["oobCode": oobs.first?["oobCode"] as? String ?? ""])
                #expect(applied.status == 200 && applied.json["localId"] as? String == user.localId, "\(applied.text)")
                #expect(applied.json["email"] as? String == "alice@example.com" && applied.json["emailVerified"] as? Bool == true)
                #expect(try await app.inspectOobs().isEmpty)
            }
        }

        @Test("should return OOB code directly for requests with OAuth 2")
        func returnedToAdmin() async throws {
            try await TestApp.router { app in
                _ = try await app.registerUser(email: "alice@example.com")
                let requests: [[String: Any]] = [
                    ["email": "alice@example.com", "requestType": "PASSWORD_RESET", "returnOobLink": true],
                    ["email": "alice@example.com", "requestType": "VERIFY_EMAIL", "returnOobLink": true],
                    [
                        "email": "alice@example.com", "newEmail": "bob@example.com", "requestType": "VERIFY_AND_CHANGE_EMAIL",
                        "returnOobLink": true,
                    ],
                ]
                for fields in requests {
                    let reply = try await app.post("/v1/accounts:sendOobCode", fields, headers: Spec.admin)
                    #expect(reply.status == 200, "\(reply.text)")
                    // VERIFY_AND_CHANGE_EMAIL answers with the current address, not the new one.
                    #expect(reply.json["email"] as? String == "alice@example.com")
                    #expect(reply.json["oobCode"] is String && reply.json["oobLink"] is String)
                }
            }
        }

        @Test("should return OOB code by idToken for OAuth 2 requests as well")
        func returnedToAdminByIDToken() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                let requests: [[String: Any]] = [
                    ["idToken": user.idToken, "requestType": "VERIFY_EMAIL", "returnOobLink": true],
                    [
                        "email": "alice@example.com", "newEmail": "bob@example.com", "idToken": user.idToken,
                        "requestType": "VERIFY_AND_CHANGE_EMAIL", "returnOobLink": true,
                    ],
                ]
                for fields in requests {
                    let reply = try await app.post("/v1/accounts:sendOobCode", fields, headers: Spec.admin)
                    #expect(reply.status == 200 && reply.json["email"] as? String == "alice@example.com", "\(reply.text)")
                    #expect(reply.json["oobCode"] is String && reply.json["oobLink"] is String)
                }
            }
        }

        @Test("should error when trying to verify email without idToken or email")
        func verifyWithoutIDTokenOrEmail() async throws {
            try await TestApp.router { app in
                _ = try await app.registerUser(email: "alice@example.com")
                let badToken = try await app.api("sendOobCode", ["idToken": "hoge", "requestType": "VERIFY_EMAIL"])
                #expect(badToken.isError("INVALID_ID_TOKEN"), "\(badToken.text)")
                let noEmail = try await app.api("sendOobCode", ["returnOobLink": true, "requestType": "VERIFY_EMAIL"], admin: true)
                #expect(noEmail.isError("MISSING_EMAIL"), "\(noEmail.text)")
                #expect(try await app.inspectOobs().isEmpty)
            }
        }

        @Test("should error when trying to verify email without idToken if not returnOobLink")
        func verifyWithoutIDToken() async throws {
            try await TestApp.router { app in
                _ = try await app.registerUser(email: "alice@example.com")
                let reply = try await app.api("sendOobCode", ["email": "alice@example.com", "requestType": "VERIFY_EMAIL"])
                #expect(reply.isError("INVALID_ID_TOKEN"), "\(reply.text)")
                #expect(try await app.inspectOobs().isEmpty)
            }
        }

        @Test("should error when trying to verify email not associated with any user")
        func verifyUnknownEmail() async throws {
            try await TestApp.router { app in
                let reply = try await app.api(
                    "sendOobCode", ["email": "nosuchuser@example.com", "returnOobLink": true, "requestType": "VERIFY_EMAIL"], admin: true)
                #expect(reply.isError("USER_NOT_FOUND"), "\(reply.text)")
                #expect(try await app.inspectOobs().isEmpty)
            }
        }

        @Test("should error when verifying email for accounts without email")
        func verifyWithoutEmail() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                let reply = try await app.api("sendOobCode", ["idToken": user.idToken, "requestType": "VERIFY_EMAIL"])
                #expect(reply.isError("MISSING_EMAIL"), "\(reply.text)")
                #expect(try await app.inspectOobs().isEmpty)
            }
        }

        @Test("should error if user is disabled")
        func disabledUser() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "foo@example.com")
                try await app.updateAccount(localId: user.localId, ["disableUser": true])
                let reply = try await app.api(
                    "sendOobCode", ["email": "foo@example.com", "idToken": user.idToken, "requestType": "VERIFY_EMAIL"])
                #expect(reply.isError("USER_DISABLED"), "\(reply.text)")
            }
        }

        @Test("should error when continueUrl is invalid")
        func invalidContinueURL() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                let reply = try await app.api(
                    "sendOobCode", ["idToken": user.idToken, "requestType": "VERIFY_EMAIL", "continueUrl": "noSchemeOrHost"])
                #expect(reply.status == 400 && reply.errorMessage.contains("INVALID_CONTINUE_URI"), "\(reply.text)")
                #expect(try await app.inspectOobs().isEmpty)
            }
        }

        @Test("should error when continueUrl is invalid (production: INVALID_CONTINUE_URI with no detail, as Google answers)")
        func invalidContinueURLProduction() async throws {
            try await TestApp.router(config: try StrictUpstream.configFile()) { app in
                let key = StrictUpstream.iosKey
                let headers = StrictUpstream.headers(for: key)
                let user = try await app.api(
                    "signUp", ["email": "alice@example.com", "password": "notasecret", "returnSecureToken": true], headers: headers,
                    key: key)
                let idToken = try #require(user.json["idToken"] as? String, "\(user.text)")
                let reply = try await app.api(
                    "sendOobCode", ["idToken": idToken, "requestType": "VERIFY_EMAIL", "continueUrl": "noSchemeOrHost"], headers: headers,
                    key: key)
                #expect(reply.status == 400 && reply.errorMessage == "INVALID_CONTINUE_URI", "\(reply.text)")
                #expect(app.mailbox.messages.isEmpty)
            }
        }

        @Test("should error if auth is disabled")
        func authDisabled() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": true])
                let reply = try await app.api("sendOobCode", [:], tenant: tenant)
                #expect(reply.isError("PROJECT_DISABLED"), "\(reply.text)")
            }
        }

        @Test("should error for email sign in if not enabled")
        func emailSignInDisabled() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": false, "enableEmailLinkSignin": false])
                let reply = try await app.api("sendOobCode", ["email": "bob@example.com", "requestType": "EMAIL_SIGNIN"], tenant: tenant)
                #expect(reply.isError("OPERATION_NOT_ALLOWED"), "\(reply.text)")
            }
        }

        @Test("should error for email sign in if not enabled (production: before the continue URL it would need, as Google answers)")
        func emailSignInDisabledProduction() async throws {
            try await TestApp.router(config: try StrictUpstream.configFile()) { app in
                let made = try await app.post(
                    "/v2/projects/\(TestProject.id)/tenants", ["disableAuth": false, "enableEmailLinkSignin": false],
                    headers: ["Authorization": "Bearer \(StrictUpstream.adminToken)"])
                let tenant = try #require(made.json["tenantId"] as? String, "\(made.text)")
                let reply = try await app.api(
                    "sendOobCode", ["tenantId": tenant, "email": "bob@example.com", "requestType": "EMAIL_SIGNIN"],
                    key: StrictUpstream.unrestrictedKey)
                #expect(reply.isError("OPERATION_NOT_ALLOWED"), "\(reply.text)")
            }
        }

        @Test("should generate OOB code for reset password")
        func resetPassword() async throws {
            let clock = ManualClock()
            try await TestApp.router(clock: clock) { app in
                let user = try await app.registerUser(email: "alice@example.com")
                clock.advance(seconds: 2)
                let sent = try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "alice@example.com"])
                #expect(sent.status == 200 && sent.json["email"] as? String == "alice@example.com", "\(sent.text)")
                #expect(sent.json["oobCode"] == nil && sent.json["oobLink"] == nil)
                let oobs = try await app.inspectOobs()
                #expect(oobs.count == 1 && oobs.first?["requestType"] as? String == "PASSWORD_RESET")
                let reset = try await app.api(
                    "resetPassword", ["oobCode": oobs.first?["oobCode"] as? String ?? "", "newPassword": "notasecret2"])
                #expect(reset.status == 200 && reset.json["requestType"] as? String == "PASSWORD_RESET", "\(reset.text)")
                #expect(reset.json["email"] as? String == "alice@example.com")
                #expect(try await app.lookupError(idToken: user.idToken) == "TOKEN_EXPIRED")
            }
        }

        @Test("should return purpose of oobCodes via resetPassword endpoint")
        func purposeOfCodes() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                let requests: [[String: Any]] = [
                    ["requestType": "PASSWORD_RESET", "email": "alice@example.com"],
                    ["requestType": "VERIFY_EMAIL", "idToken": user.idToken],
                    ["requestType": "EMAIL_SIGNIN", "email": "bob@example.com"],
                    [
                        "requestType": "VERIFY_AND_CHANGE_EMAIL", "email": "alice@example.com", "newEmail": "bob@example.com",
                        "idToken": user.idToken,
                    ],
                ]
                for fields in requests {
                    let reply = try await app.api("sendOobCode", fields)
                    #expect(reply.status == 200, "\(fields): \(reply.text)")
                }
                let oobs = try await app.inspectOobs()
                #expect(oobs.count == 4)
                for oob in oobs {
                    let reply = try await app.api("resetPassword", ["oobCode": oob["oobCode"] as? String ?? ""])
                    let type = oob["requestType"] as? String
                    #expect(reply.status == 200 && reply.json["requestType"] as? String == type, "\(reply.text)")
                    if type == "EMAIL_SIGNIN" {
                        #expect(reply.json["email"] == nil)
                    } else {
                        #expect(reply.json["email"] as? String == oob["email"] as? String)
                    }
                    if type == "VERIFY_AND_CHANGE_EMAIL" { #expect(reply.json["newEmail"] as? String == "bob@example.com") }
                }
                #expect(try await app.inspectOobs().count == 4)
            }
        }

        @Test("should error on resetPassword if auth is disabled")
        func resetAuthDisabled() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": true])
                let reply = try await app.api("resetPassword", [:], tenant: tenant)
                #expect(reply.isError("PROJECT_DISABLED"), "\(reply.text)")
            }
        }

        @Test("should error on resetPassword if password sign up is disabled")
        func resetPasswordSignUpDisabled() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": false, "allowPasswordSignup": false])
                let reply = try await app.api("resetPassword", [:], tenant: tenant)
                #expect(reply.isError("PASSWORD_LOGIN_DISABLED"), "\(reply.text)")
            }
        }

        @Test("should error when sending a password reset to non-existent user with improved email privacy disabled")
        func resetUnknownUser() async throws {
            try await TestApp.router { app in
                let reply = try await app.api(
                    "sendOobCode", ["email": "alice@example.com", "requestType": "PASSWORD_RESET", "returnOobLink": true], admin: true)
                #expect(reply.isError("EMAIL_NOT_FOUND"), "\(reply.text)")
            }
        }

        @Test(
            "should return email address when sending a password reset to non-existent user with improved email privacy enabled (a client's request)"
        )
        func resetUnknownUserProtected() async throws {
            try await TestApp.router(environment: ["ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true"]) { app in
                let reply = try await app.api("sendOobCode", ["email": "alice@example.com", "requestType": "PASSWORD_RESET"])
                #expect(reply.status == 200, "\(reply.text)")
                #expect(reply.json["kind"] as? String == "identitytoolkit#GetOobConfirmationCodeResponse")
                #expect(reply.json["email"] as? String == "alice@example.com")
                #expect(try await app.inspectOobs().isEmpty && app.mailbox.messages.isEmpty)
                // Protection hides addresses from clients only: the admin (firebase-admin's
                // generate_password_reset_link) still learns EMAIL_NOT_FOUND, where the emulator would
                // answer 200 with no link and firebase-admin would fail on the missing oobLink.
                let admin = try await app.api(
                    "sendOobCode", ["email": "alice@example.com", "requestType": "PASSWORD_RESET", "returnOobLink": true], admin: true)
                #expect(admin.isError("EMAIL_NOT_FOUND"), "\(admin.text)")
            }
        }

        @Test("a password reset keeps a verified account's federated providers (the emulator unlinks them)")
        func resetKeepsProviders() async throws {
            try await TestApp.router { app in
                let users: [[String: Any]] = [
                    [
                        "localId": "foo", "email": "foo@example.com", "emailVerified": true, "rawPassword": Spec.password,
                        "providerUserInfo": [["providerId": "google.com", "rawId": "0123456", "email": "foo@example.com"]],
                    ]
                ]
                #expect(try await app.api("batchCreate", ["users": users], admin: true).status == 200)
                let code = try await app.link("PASSWORD_RESET", email: "foo@example.com").code
                let reset = try await app.api("resetPassword", ["oobCode": code, "newPassword": "notasecret2"])
                #expect(reset.status == 200, "\(reset.text)")
                // The reset proves the address, not that the provider link was wrong: it stays.
                #expect(Set(try await app.signInMethods("foo@example.com")) == ["password", "google.com"])
                #expect(try await app.signInWithFakeClaims("google.com", ["sub": "0123456"]).localId == "foo")
            }
        }
    }
}
