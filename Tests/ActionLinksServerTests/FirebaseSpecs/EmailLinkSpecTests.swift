import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

extension FirebaseSpecs {
    /// firebase-tools `src/emulator/auth/emailLink.spec.ts`, case by case. Not ported: the two
    /// multi-factor cases ("should return pending credential if user has MFA", "... and enabled on
    /// tenant projects") and the eight blocking-function cases: this server has neither. The specs'
    /// phone users are accounts the admin gave a phone number, signed in with a custom token (there is
    /// no SMS sign-in here).
    @Suite("emailLink.spec.ts: email link sign-in", .timeLimit(.minutes(5)))
    struct EmailLinkSpecTests {
        @Test("should send OOB code to new emails and create account on sign-in")
        func newAccount() async throws {
            try await TestApp.router { app in
                let email = "alice@example.com"
                _ = try await app.createEmailSignInOob(email)
                let oobs = try await app.inspectOobs()
                #expect(oobs.count == 1 && oobs[0]["email"] as? String == email && oobs[0]["requestType"] as? String == "EMAIL_SIGNIN")
                let reply = try await app.api("signInWithEmailLink", ["oobCode": oobs[0]["oobCode"] as? String ?? "", "email": email])
                #expect(reply.status == 200, "\(reply.text)")
                #expect(reply.json["email"] as? String == email && reply.json["isNewUser"] as? Bool == true)
                let idToken = try #require(reply.json["idToken"] as? String)
                // Signed RS256 rather than the emulator's `alg: none`: these tokens are real.
                #expect(Spec.header(idToken)["alg"] as? String == "RS256")
                #expect(Spec.payload(idToken)["user_id"] is String && Spec.payload(idToken)["provider_id"] == nil)
                #expect(Spec.signInProvider(idToken) == "password")
                #expect(try await app.signInMethods(email) == ["emailLink"])
            }
        }

        @Test(
            "should sign an existing account in and enable email-link sign-in for them (an unverified password goes, with its sessions)"
        )
        func existingAccount() async throws {
            let clock = ManualClock()
            try await TestApp.router(clock: clock) { app in
                let user = try await app.registerUser(email: "bob@example.com")
                let (code, _) = try await app.createEmailSignInOob("bob@example.com")
                clock.advance(seconds: 2)
                let reply = try await app.api("signInWithEmailLink", ["email": "bob@example.com", "oobCode": code])
                #expect(reply.status == 200 && reply.json["localId"] as? String == user.localId, "\(reply.text)")
                // docs/ARCHITECTURE.md §6: whoever set a password on an address they never proved is not
                // its owner, so the password and its sessions go (Firebase keeps both and lists
                // ["password", "emailLink"]).
                #expect(try await app.lookupError(idToken: user.idToken) == "TOKEN_EXPIRED")
                let newToken = try #require(reply.json["idToken"] as? String)
                #expect(try await app.accountInfo(idToken: newToken)["emailLinkSignin"] as? Bool == true)
                #expect(try await app.signInMethods("bob@example.com") == ["emailLink"])
            }
        }

        @Test("should sign an existing account in and keep its verified password")
        func existingVerifiedAccount() async throws {
            try await TestApp.router { app in
                let localId = try await app.createAccount(email: "bob@example.com", password: Spec.password, verified: true)
                let user = try await app.signInWithPassword("bob@example.com")
                let signedIn = try await app.signInWithEmailLink("bob@example.com")
                #expect(signedIn.localId == localId)
                #expect(try await app.accountInfo(idToken: user.idToken)["emailLinkSignin"] as? Bool == true)
                #expect(Set(try await app.signInMethods("bob@example.com")) == ["password", "emailLink"])
            }
        }

        @Test("should error on invalid oobCode")
        func invalidCode() async throws {
            try await TestApp.router { app in
                let reply = try await app.api("signInWithEmailLink", ["email": "alice@example.com", "oobCode": "invalid"])
                #expect(reply.isError("INVALID_OOB_CODE"), "\(reply.text)")
            }
        }

        @Test("should error if user is disabled")
        func disabledUser() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "bob@example.com")
                let (code, _) = try await app.createEmailSignInOob("bob@example.com")
                try await app.updateAccount(localId: user.localId, ["disableUser": true])
                let reply = try await app.api("signInWithEmailLink", ["email": "bob@example.com", "oobCode": code])
                #expect(reply.isError("USER_DISABLED"), "\(reply.text)")
            }
        }

        @Test("should error if email mismatches")
        func emailMismatch() async throws {
            try await TestApp.router { app in
                let (code, _) = try await app.createEmailSignInOob("alice@example.com")
                let reply = try await app.api("signInWithEmailLink", ["email": "NOT-alice@example.com", "oobCode": code])
                #expect(reply.status == 400)
                #expect(reply.errorMessage == "INVALID_EMAIL : The email provided does not match the sign-in email address.")
            }
        }

        @Test("should link existing account with idToken to new email")
        func linkNewEmail() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "bob@example.com")
                let (code, _) = try await app.createEmailSignInOob("alice@example.com")
                let reply = try await app.api(
                    "signInWithEmailLink", ["email": "alice@example.com", "oobCode": code, "idToken": user.idToken])
                #expect(reply.status == 200, "\(reply.text)")
                #expect(reply.json["localId"] as? String == user.localId && reply.json["email"] as? String == "alice@example.com")
                #expect(Set(try await app.signInMethods("alice@example.com")) == ["password", "emailLink"])
                #expect(try await app.signInMethods("bob@example.com").isEmpty)
            }
        }

        @Test("should link existing phone-auth account to new email")
        func linkPhoneUser() async throws {
            try await TestApp.router { app in
                let user = try await app.phoneUser()
                let (code, _) = try await app.createEmailSignInOob("alice@example.com")
                let reply = try await app.api(
                    "signInWithEmailLink", ["email": "alice@example.com", "oobCode": code, "idToken": user.idToken])
                #expect(reply.status == 200, "\(reply.text)")
                #expect(reply.json["localId"] as? String == user.localId && reply.json["email"] as? String == "alice@example.com")
                #expect(try await app.signInMethods("alice@example.com") == ["emailLink"])
            }
        }

        @Test("should error when trying to link an email already used in another account")
        func linkTakenEmail() async throws {
            try await TestApp.router { app in
                let user = try await app.phoneUser()
                _ = try await app.registerUser(email: "alice@example.com")
                let (code, _) = try await app.createEmailSignInOob("alice@example.com")
                let reply = try await app.api(
                    "signInWithEmailLink", ["email": "alice@example.com", "oobCode": code, "idToken": user.idToken])
                #expect(reply.isError("EMAIL_EXISTS"), "\(reply.text)")
            }
        }

        @Test("should error if user to be linked is disabled")
        func linkDisabledUser() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                try await app.updateAccount(localId: user.localId, ["disableUser": true])
                let (code, _) = try await app.createEmailSignInOob("alice@example.com")
                let reply = try await app.api(
                    "signInWithEmailLink", ["email": "alice@example.com", "oobCode": code, "idToken": user.idToken])
                #expect(reply.isError("USER_DISABLED"), "\(reply.text)")
            }
        }

        @Test("should error if auth is disabled")
        func authDisabled() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": true])
                let reply = try await app.api("signInWithEmailLink", [:], tenant: tenant)
                #expect(reply.status == 400 && reply.errorMessage.contains("PROJECT_DISABLED"), "\(reply.text)")
            }
        }

        @Test("should error if email link sign in is disabled")
        func emailLinkDisabled() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": false, "enableEmailLinkSignin": false])
                let reply = try await app.api("signInWithEmailLink", [:], tenant: tenant)
                #expect(reply.status == 400 && reply.errorMessage.contains("OPERATION_NOT_ALLOWED"), "\(reply.text)")
            }
        }

        @Test("should create account on sign-in with tenantId")
        func tenantAccount() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": false, "enableEmailLinkSignin": true])
                let (code, _) = try await app.createEmailSignInOob("alice@example.com", tenant: tenant)
                let reply = try await app.api("signInWithEmailLink", ["oobCode": code, "email": "alice@example.com"], tenant: tenant)
                let localId = try #require(reply.json["localId"] as? String, "\(reply.text)")
                #expect(try await app.accountInfo(localId: localId, tenant: tenant)["tenantId"] as? String == tenant)
            }
        }

        @Test("self-service sign-up off: a link for a new address is refused (ADMIN_ONLY_OPERATION), an existing account still signs in")
        func selfServiceSignUpOff() async throws {
            try await TestApp.router(environment: ["ACTIONLINKS_USERS_SELF_SERVICE_SIGN_UP": "false"]) { app in
                let (code, _) = try await app.createEmailSignInOob("new@example.com")
                let refused = try await app.api("signInWithEmailLink", ["oobCode": code, "email": "new@example.com"])
                #expect(refused.isError("ADMIN_ONLY_OPERATION"), "\(refused.text)")
                try await app.createAccount(email: "old@example.com")
                #expect(try await app.signInWithEmailLink("old@example.com").email == "old@example.com")
            }
        }

        @Test("a used code is INVALID_OOB_CODE, an expired one EXPIRED_OOB_CODE (the emulator's codes never expire)")
        func usedAndExpiredCodes() async throws {
            let clock = ManualClock()
            try await TestApp.router(clock: clock) { app in
                let (code, _) = try await app.createEmailSignInOob("alice@example.com")
                #expect(code.count == 43 && code.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
                #expect(try await app.api("signInWithEmailLink", ["oobCode": code, "email": "alice@example.com"]).status == 200)
                let again = try await app.api("signInWithEmailLink", ["oobCode": code, "email": "alice@example.com"])
                #expect(again.isError("INVALID_OOB_CODE"), "\(again.text)")
                let (late, _) = try await app.createEmailSignInOob("alice@example.com")
                clock.advance(seconds: 3601)
                let expired = try await app.api("signInWithEmailLink", ["oobCode": late, "email": "alice@example.com"])
                #expect(expired.isError("EXPIRED_OOB_CODE"), "\(expired.text)")
            }
        }
    }
}
