import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

extension FirebaseSpecs {
    /// firebase-tools `src/emulator/auth/signUp.spec.ts`, case by case. Not ported: the six
    /// multi-factor cases (multi factor info on create, two factors, de-duplication, no display name,
    /// an invalid MFA phone number, an ignored enrollment ID) and the five blocking-function cases:
    /// this server has neither. The specs' phone users are accounts the admin gave a phone number,
    /// signed in with a custom token (no SMS sign-in here).
    @Suite("signUp.spec.ts: accounts:signUp", .timeLimit(.minutes(5)))
    struct SignUpSpecTests {
        @Test("should throw error if no email provided")
        func noEmail() async throws {
            try await TestApp.router { app async throws in
                #expect(try await app.api("signUp", ["password": Spec.password]).isError("MISSING_EMAIL"))
            }
        }

        @Test("should throw error if empty email and password is provided")
        func emptyEmailAndPassword() async throws {
            try await TestApp.router { app in
                let reply = try await app.api("signUp", ["email": "", "password": ""])
                #expect(reply.isError("INVALID_EMAIL"), "\(reply.text)")
            }
        }

        @Test("should issue idToken and refreshToken on anon signUp")
        func anonymous() async throws {
            try await TestApp.router { app in
                let reply = try await app.api("signUp", ["returnSecureToken": true])
                #expect(reply.status == 200 && reply.json["refreshToken"] is String, "\(reply.text)")
                #expect(
                    reply.json["kind"] as? String == "identitytoolkit#SignupNewUserResponse" && reply.json["expiresIn"] as? String == "3600"
                )
                let idToken = try #require(reply.json["idToken"] as? String)
                // RS256, where the emulator's are unsigned.
                #expect(Spec.header(idToken)["alg"] as? String == "RS256")
                #expect(Spec.payload(idToken)["user_id"] is String && Spec.payload(idToken)["provider_id"] as? String == "anonymous")
                #expect(Spec.signInProvider(idToken) == "anonymous")
            }
        }

        @Test("should issue refreshToken on email+password signUp")
        func emailAndPassword() async throws {
            try await TestApp.router { app in
                let reply = try await app.api("signUp", ["email": "me@example.com", "password": Spec.password])
                #expect(reply.status == 200 && reply.json["refreshToken"] is String, "\(reply.text)")
                let idToken = try #require(reply.json["idToken"] as? String)
                let payload = Spec.payload(idToken)
                #expect(payload["provider_id"] == nil && Spec.signInProvider(idToken) == "password")
                #expect((payload["firebase"] as? [String: Any])?["identities"] as? [String: [String]] == ["email": ["me@example.com"]])
            }
        }

        @Test("should ignore displayName and photoUrl for new anon account")
        func anonymousProfileIgnored() async throws {
            try await TestApp.router { app in
                let reply = try await app.api("signUp", ["displayName": "Me", "photoUrl": "http://localhost/my-profile.png"])
                #expect(reply.status == 200 && reply.json["displayName"] == nil && reply.json["photoUrl"] == nil, "\(reply.text)")
                let info = try await app.accountInfo(idToken: reply.json["idToken"] as? String ?? "")
                #expect(info["displayName"] == nil && info["photoUrl"] == nil)
            }
        }

        @Test("should set displayName but ignore photoUrl for new password account")
        func passwordProfile() async throws {
            try await TestApp.router { app in
                let reply = try await app.api(
                    "signUp",
                    [
                        "email": "me@example.com", "password": Spec.password, "displayName": "Me",
                        "photoUrl": "http://localhost/my-profile.png",
                    ])
                #expect(reply.status == 200 && reply.json["displayName"] as? String == "Me" && reply.json["photoUrl"] == nil)
                let info = try await app.accountInfo(idToken: reply.json["idToken"] as? String ?? "")
                #expect(info["displayName"] as? String == "Me" && info["photoUrl"] == nil)
            }
        }

        @Test("should disallow duplicate email signUp")
        func duplicateEmail() async throws {
            try await TestApp.router { app in
                _ = try await app.registerUser(email: "bob@example.com")
                #expect(try await app.api("signUp", ["email": "bob@example.com", "password": Spec.password]).isError("EMAIL_EXISTS"))
                #expect(try await app.api("signUp", ["email": "BOB@example.com", "password": Spec.password]).isError("EMAIL_EXISTS"))
            }
        }

        @Test("should error if another account exists with same email from IDP")
        func emailFromIDP() async throws {
            try await TestApp.router { app in
                _ = try await app.signInWithFakeClaims("google.com", ["sub": "123", "email": "alice@example.com"])
                let reply = try await app.api("signUp", ["email": "alice@example.com", "password": Spec.password])
                #expect(reply.isError("EMAIL_EXISTS"), "\(reply.text)")
            }
        }

        @Test("should error when email format is invalid")
        func invalidEmail() async throws {
            try await TestApp.router { app in
                let reply = try await app.api("signUp", ["email": "not.an.email.address.at.all", "password": Spec.password])
                #expect(reply.isError("INVALID_EMAIL"), "\(reply.text)")
            }
        }

        @Test("should normalize email address to all lowercase")
        func lowercase() async throws {
            try await TestApp.router { app in
                let reply = try await app.api("signUp", ["email": "AlIcE@exAMPle.COM", "password": Spec.password])
                #expect(reply.status == 200 && reply.json["email"] as? String == "alice@example.com", "\(reply.text)")
            }
        }

        @Test("should error when password is too short")
        func shortPassword() async throws {
            try await TestApp.router { app async throws in
                let reply = try await app.api("signUp", ["email": "me@example.com", "password": "short"])
                #expect(reply.status == 400 && reply.errorMessage.hasPrefix("WEAK_PASSWORD"), "\(reply.text)")
            }
        }

        @Test("passwords follow the configured policy: 8 characters in the shipped config, 6 (Firebase's rule) when configured so")
        func passwordPolicy() async throws {
            try await TestApp.router { app async throws in
                #expect(try await app.api("signUp", ["email": "me@example.com", "password": "sixsix7"]).isError("WEAK_PASSWORD"))
            }
            try await TestApp.router(environment: ["ACTIONLINKS_PASSWORDS_MINIMUM_LENGTH": "6"]) { app async throws in
                #expect(try await app.api("signUp", ["email": "me@example.com", "password": "five5"]).isError("WEAK_PASSWORD"))
                #expect(try await app.api("signUp", ["email": "me@example.com", "password": "sixsix"]).status == 200)
            }
        }

        @Test("should error when idToken is provided but email / password is not")
        func idTokenWithoutEmailOrPassword() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                #expect(try await app.api("signUp", ["idToken": user.idToken]).isError("MISSING_EMAIL"))
                #expect(try await app.api("signUp", ["idToken": user.idToken, "email": "alice@example.com"]).isError("MISSING_PASSWORD"))
            }
        }

        @Test("should link email and password to anon user if idToken is provided")
        func linkToAnonymous() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                let reply = try await app.api("signUp", ["idToken": user.idToken, "email": "alice@example.com", "password": Spec.password])
                #expect(reply.status == 200 && reply.json["localId"] as? String == user.localId, "\(reply.text)")
                #expect(Spec.signInProvider(reply.json["idToken"] as? String ?? "") == "password")
            }
        }

        @Test("should link email and password to phone sign-in user")
        func linkToPhoneUser() async throws {
            try await TestApp.router { app in
                let user = try await app.phoneUser()
                let reply = try await app.api("signUp", ["idToken": user.idToken, "email": "alice@example.com", "password": Spec.password])
                #expect(reply.status == 200 && reply.json["localId"] as? String == user.localId, "\(reply.text)")
                let idToken = reply.json["idToken"] as? String ?? ""
                #expect(Spec.signInProvider(idToken) == "password")
                let identities = (Spec.payload(idToken)["firebase"] as? [String: Any])?["identities"] as? [String: [String]]
                #expect(identities == ["phone": [Spec.phoneNumber], "email": ["alice@example.com"]])
            }
        }

        @Test("should error if account to be linked is disabled")
        func linkToDisabled() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                try await app.updateAccount(localId: user.localId, ["disableUser": true])
                let reply = try await app.api("signUp", ["idToken": user.idToken, "email": "alice@example.com", "password": Spec.password])
                #expect(reply.isError("USER_DISABLED"), "\(reply.text)")
            }
        }

        @Test("should replace existing email / password in linked account")
        func replaceEmailAndPassword() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                let reply = try await app.api("signUp", ["idToken": user.idToken, "email": "bob@example.com", "password": "notasecret2"])
                #expect(reply.status == 200 && reply.json["localId"] as? String == user.localId, "\(reply.text)")
                #expect(reply.json["email"] as? String == "bob@example.com")
                let payload = Spec.payload(reply.json["idToken"] as? String ?? "")
                #expect(payload["email"] as? String == "bob@example.com")
                #expect((payload["firebase"] as? [String: Any])?["identities"] as? [String: [String]] == ["email": ["bob@example.com"]])
                #expect(try await app.signInMethods("alice@example.com").isEmpty)
            }
        }

        @Test("should create new account with phone number when authenticated (read back by lookup: no SMS sign-in here)")
        func adminPhoneNumber() async throws {
            try await TestApp.router { app in
                let reply = try await app.api("signUp", ["phoneNumber": Spec.phoneNumber, "displayName": "Alice"], admin: true)
                #expect(reply.status == 200 && reply.json["idToken"] == nil && reply.json["refreshToken"] == nil, "\(reply.text)")
                #expect(reply.json["displayName"] as? String == "Alice")
                let localId = try #require(reply.json["localId"] as? String)
                #expect(!localId.isEmpty)
                let found = try await app.api("lookup", ["phoneNumber": [Spec.phoneNumber]], admin: true)
                let user = (found.json["users"] as? [[String: Any]])?.first
                #expect(user?["localId"] as? String == localId && user?["displayName"] as? String == "Alice")
            }
        }

        @Test("should error when extra localId parameter is provided")
        func extraLocalID() async throws {
            try await TestApp.router { app in
                let client = try await app.api("signUp", ["localId": "anything"])
                #expect(client.status == 400 && client.errorMessage == "UNEXPECTED_PARAMETER : User ID", "\(client.text)")
                let user = try await app.registerAnonUser()
                let admin = try await app.api("signUp", ["idToken": user.idToken, "localId": user.localId], admin: true)
                #expect(admin.status == 400 && admin.errorMessage == "UNEXPECTED_PARAMETER : User ID", "\(admin.text)")
            }
        }

        @Test("should create new account with specified localId when authenticated")
        func adminLocalID() async throws {
            try await TestApp.router { app in
                let reply = try await app.post("/v1/accounts:signUp", ["localId": "haha"], headers: Spec.admin)
                #expect(reply.status == 200 && reply.json["localId"] as? String == "haha", "\(reply.text)")
                #expect(reply.json["idToken"] == nil && reply.json["refreshToken"] == nil)
            }
        }

        @Test("should error when creating new user with duplicate localId")
        func duplicateLocalID() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                let reply = try await app.api("signUp", ["localId": user.localId], admin: true)
                #expect(reply.isError("DUPLICATE_LOCAL_ID"), "\(reply.text)")
            }
        }

        @Test("should error if phone number is invalid")
        func invalidPhoneNumber() async throws {
            try await TestApp.router { app in
                let reply = try await app.api("signUp", ["phoneNumber": "5555550100"], admin: true)
                #expect(reply.status == 400 && reply.errorMessage == "INVALID_PHONE_NUMBER : Invalid format.", "\(reply.text)")
            }
        }

        @Test("should error if auth is disabled")
        func authDisabled() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": true])
                let reply = try await app.api("signUp", [:], tenant: tenant)
                #expect(reply.status == 400 && reply.errorMessage.contains("PROJECT_DISABLED"), "\(reply.text)")
                // Before anything in the body, as the emulator asserts it first: a client's `localId`
                // (UNEXPECTED_PARAMETER elsewhere) and the admin's call alike.
                let named = try await app.api("signUp", ["localId": "chosen"], tenant: tenant)
                #expect(named.isError("PROJECT_DISABLED"), "\(named.text)")
                let admin = try await app.api("create", ["localId": "chosen", "idToken": "x"], admin: true, tenant: tenant)
                #expect(admin.isError("PROJECT_DISABLED"), "\(admin.text)")
            }
        }

        @Test("should error if password sign up is not allowed")
        func passwordSignUpOff() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["allowPasswordSignup": false])
                let reply = try await app.api("signUp", ["email": "me@example.com", "password": Spec.password], tenant: tenant)
                #expect(reply.status == 400 && reply.errorMessage.contains("OPERATION_NOT_ALLOWED"), "\(reply.text)")
            }
        }

        @Test("should error if anonymous user is disabled")
        func anonymousOff() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["enableAnonymousUser": false])
                let reply = try await app.api("signUp", ["returnSecureToken": true], tenant: tenant)
                #expect(reply.status == 400 && reply.errorMessage.contains("ADMIN_ONLY_OPERATION"), "\(reply.text)")
            }
        }

        @Test("should create new account with tenant info")
        func tenantAccount() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["allowPasswordSignup": true])
                let reply = try await app.api("signUp", ["email": "alice@example.com", "password": Spec.password], tenant: tenant)
                let localId = try #require(reply.json["localId"] as? String, "\(reply.text)")
                #expect(try await app.accountInfo(localId: localId, tenant: tenant)["tenantId"] as? String == tenant)
            }
        }

        @Test(
            "self-service sign-up off: a client's sign-up and anonymous sign-in are ADMIN_ONLY_OPERATION; the admin still creates accounts")
        func selfServiceSignUpOff() async throws {
            try await TestApp.router(environment: ["ACTIONLINKS_USERS_SELF_SERVICE_SIGN_UP": "false"]) { app in
                let password = try await app.api("signUp", ["email": "me@example.com", "password": Spec.password])
                #expect(password.isError("ADMIN_ONLY_OPERATION"), "\(password.text)")
                let anonymous = try await app.api("signUp", ["returnSecureToken": true])
                #expect(anonymous.isError("ADMIN_ONLY_OPERATION"), "\(anonymous.text)")
                let admin = try await app.api("signUp", ["email": "me@example.com", "password": Spec.password], admin: true)
                #expect(admin.status == 200 && admin.json["localId"] is String, "\(admin.text)")
            }
        }

        @Test("createdAt and lastLoginAt are strings of milliseconds")
        func timestamps() async throws {
            let clock = ManualClock(start: Timestamp(milliseconds: 1_700_000_000_123))
            try await TestApp.router(clock: clock) { app in
                let user = try await app.registerUser(email: "me@example.com")
                let info = try await app.accountInfo(localId: user.localId)
                #expect(info["createdAt"] as? String == "1700000000123" && info["lastLoginAt"] as? String == "1700000000123", "\(info)")
            }
        }
    }
}
