import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

extension FirebaseSpecs {
    /// firebase-tools `src/emulator/auth/setAccountInfo.spec.ts`, case by case. Not ported: the
    /// fourteen multi-factor cases ("should allow creating MFA info" to "should error if enrollments is
    /// not an array or undefined"): this server has no multi-factor sign-in. The specs' phone users
    /// are accounts the admin gave a phone number, signed in with a custom token (no SMS sign-in here).
    ///
    /// Where this server answers differently on purpose, the case says why: a completed email change
    /// leaves a `recoverEmail` code for the old address; a code whose effect is refused stays usable;
    /// a linked provider's entry shows `federatedId` as every provider entry does.
    @Suite("setAccountInfo.spec.ts: accounts:update", .timeLimit(.minutes(5)))
    struct SetAccountInfoSpecTests {
        @Test("should allow updating and deleting displayName and photoUrl")
        func profile() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                let set = try await app.api(
                    "update", ["idToken": user.idToken, "displayName": "Alice", "photoUrl": "http://localhost/alice.png"])
                #expect(set.status == 200 && set.json["displayName"] as? String == "Alice", "\(set.text)")
                #expect(set.json["photoUrl"] as? String == "http://localhost/alice.png")
                #expect(set.json["idToken"] == nil && set.json["refreshToken"] == nil)
                #expect(set.json["kind"] as? String == "identitytoolkit#SetAccountInfoResponse")
                let deleted = try await app.api("update", ["idToken": user.idToken, "deleteAttribute": ["DISPLAY_NAME", "PHOTO_URL"]])
                #expect(deleted.status == 200 && deleted.json["displayName"] == nil && deleted.json["photoUrl"] == nil, "\(deleted.text)")
            }
        }

        @Test("should set password and issue new tokens")
        func setPassword() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                let reply = try await app.api("update", ["idToken": user.idToken, "password": "notasecreteither"])
                #expect(reply.status == 200 && reply.json["refreshToken"] is String, "\(reply.text)")
                let idToken = reply.json["idToken"] as? String ?? ""
                #expect(Spec.payload(idToken)["user_id"] as? String == user.localId && Spec.signInProvider(idToken) == "password")
                #expect(try await app.signInWithPassword("alice@example.com", "notasecreteither").localId == user.localId)
            }
        }

        @Test("should add password provider to anon user")
        func passwordForAnonymous() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                let reply = try await app.api(
                    "update", ["idToken": user.idToken, "email": "alice@example.com", "password": "notasecreteither"])
                #expect(reply.status == 200 && reply.json["refreshToken"] is String, "\(reply.text)")
                let idToken = reply.json["idToken"] as? String ?? ""
                #expect(Spec.payload(idToken)["user_id"] as? String == user.localId && Spec.signInProvider(idToken) == "password")
                #expect(try await app.signInWithPassword("alice@example.com", "notasecreteither").localId == user.localId)
                #expect(try await app.signInMethods("alice@example.com") == ["password"])
            }
        }

        @Test("should allow adding email without password to anon user")
        func emailForAnonymous() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                let reply = try await app.api("update", ["idToken": user.idToken, "email": "alice@example.com"])
                #expect(reply.status == 200 && reply.json["refreshToken"] is String, "\(reply.text)")
                let idToken = reply.json["idToken"] as? String ?? ""
                #expect(Spec.payload(idToken)["user_id"] as? String == user.localId && Spec.signInProvider(idToken) == "anonymous")
                #expect(!(try await app.signInMethods("alice@example.com")).contains("password"))
            }
        }

        @Test("should allow changing email of an existing user, and send out an oob to reset the email")
        func changeEmail() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                let reply = try await app.api("update", ["idToken": user.idToken, "email": "bob@example.com"])
                #expect(reply.status == 200 && reply.json["refreshToken"] is String, "\(reply.text)")
                let idToken = reply.json["idToken"] as? String ?? ""
                #expect(
                    Spec.payload(idToken)["user_id"] as? String == user.localId
                        && Spec.payload(idToken)["email"] as? String == "bob@example.com")
                #expect(Spec.signInProvider(idToken) == "password")
                #expect(try await app.signInWithPassword("bob@example.com").localId == user.localId)
                let old = try await app.api("signInWithPassword", ["email": "alice@example.com", "password": Spec.password])
                #expect(old.isError("EMAIL_NOT_FOUND"), "\(old.text)")
                let oobs = try await app.inspectOobs()
                #expect(oobs.count == 1 && oobs.first?["email"] as? String == "alice@example.com")
                #expect(oobs.first?["requestType"] as? String == "RECOVER_EMAIL")
                let mail = try await app.mailbox.next(to: "alice@example.com")
                #expect(mail.text.contains("mode=recoverEmail"))
            }
        }

        @Test("should disallow setting email to same as an existing user")
        func emailTaken() async throws {
            try await TestApp.router { app in
                _ = try await app.registerUser(email: "bob@example.com")
                let user = try await app.registerAnonUser()
                #expect(try await app.api("update", ["idToken": user.idToken, "email": "bob@example.com"]).isError("EMAIL_EXISTS"))
                let upper = try await app.api("update", ["idToken": user.idToken, "email": "BOB@example.com", "password": Spec.password])
                #expect(upper.isError("EMAIL_EXISTS"), "\(upper.text)")
            }
        }

        @Test("should set initialEmail for the user, after updating email")
        func initialEmail() async throws {
            // The old token stays valid within the second of the change (validSince is in seconds), as
            // in the spec under its fake timer.
            try await TestApp.router(clock: ManualClock()) { app in
                let user = try await app.registerUser(email: "alice@example.com")
                let reply = try await app.api("update", ["idToken": user.idToken, "email": "bob@example.com"])
                #expect(reply.json["email"] as? String == "bob@example.com", "\(reply.text)")
                #expect(try await app.accountInfo(idToken: user.idToken)["initialEmail"] as? String == "alice@example.com")
            }
        }

        @Test("should reset email when OOB flow is initiated, after updating user email")
        func recoverEmail() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                #expect(try await app.api("update", ["idToken": user.idToken, "email": "bob@example.com"]).status == 200)
                let oobs = try await app.inspectOobs()
                #expect(oobs.count == 1 && oobs.first?["email"] as? String == "alice@example.com")
                #expect(oobs.first?["requestType"] as? String == "RECOVER_EMAIL")
                let reply = try await app.api("update", ["oobCode": oobs.first?["oobCode"] as? String ?? ""])
                #expect(reply.status == 200 && reply.json["email"] as? String == "alice@example.com", "\(reply.text)")
                #expect(reply.json["emailVerified"] as? Bool == true)
                #expect(try await app.inspectOobs().isEmpty)
            }
        }

        @Test("should disallow resetting an email if another user exists with the same email")
        func recoverTakenEmail() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "bob@example.com")
                let reply = try await app.api("update", ["idToken": user.idToken, "email": "bob_new@example.com"])
                #expect(reply.json["email"] as? String == "bob_new@example.com", "\(reply.text)")
                _ = try await app.registerUser(email: "bob@example.com", password: "notasecreteither")
                let oobs = try await app.inspectOobs()
                #expect(oobs.count == 1 && oobs.first?["requestType"] as? String == "RECOVER_EMAIL")
                let recovered = try await app.api("update", ["oobCode": oobs.first?["oobCode"] as? String ?? ""])
                #expect(recovered.isError("EMAIL_EXISTS"), "\(recovered.text)")
            }
        }

        @Test("should not set initial email or send OOB when anon user updates email")
        func anonymousEmailNoRecovery() async throws {
            try await TestApp.router(clock: ManualClock()) { app in
                let user = try await app.registerAnonUser()
                let reply = try await app.api("update", ["idToken": user.idToken, "email": "alice@example.com"])
                #expect(reply.json["email"] as? String == "alice@example.com", "\(reply.text)")
                #expect(try await app.inspectOobs().isEmpty)
                #expect(try await app.accountInfo(idToken: user.idToken)["initialEmail"] == nil)
            }
        }

        @Test("should not update email if user is disabled")
        func disabledEmailChange() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "bob@example.com")
                try await app.updateAccount(localId: user.localId, ["disableUser": true])
                let reply = try await app.api("update", ["idToken": user.idToken, "email": "alice@example.com"])
                #expect(reply.isError("USER_DISABLED"), "\(reply.text)")
            }
        }

        @Test("should update email when OOB flow of VERIFY_AND_CHANGE_EMAIL is initiated")
        func verifyAndChange() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                let sent = try await app.api(
                    "sendOobCode", ["idToken": user.idToken, "newEmail": "bob@example.com", "requestType": "VERIFY_AND_CHANGE_EMAIL"])
                #expect(sent.status == 200 && sent.json["email"] as? String == "alice@example.com", "\(sent.text)")
                let oobs = try await app.inspectOobs()
                #expect(oobs.count == 1 && oobs.first?["email"] as? String == "alice@example.com")
                #expect(oobs.first?["newEmail"] as? String == "bob@example.com")
                #expect(oobs.first?["requestType"] as? String == "VERIFY_AND_CHANGE_EMAIL")
                let reply = try await app.api("update", ["oobCode": oobs.first?["oobCode"] as? String ?? ""])
                #expect(reply.status == 200 && reply.json["email"] as? String == "bob@example.com", "\(reply.text)")
                #expect(reply.json["newEmail"] as? String == "bob@example.com" && reply.json["emailVerified"] as? Bool == true)
                // The change code is used up; a recoverEmail code for the old address replaces it
                // (Firebase production mails one; the emulator leaves none).
                #expect(try await app.inspectOobs().map { $0["requestType"] as? String } == ["RECOVER_EMAIL"])
            }
        }

        @Test("should disallow changing an email if another user exists with the same email (the code stays usable)")
        func changeToTakenEmail() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                _ = try await app.api(
                    "sendOobCode", ["idToken": user.idToken, "newEmail": "bob@example.com", "requestType": "VERIFY_AND_CHANGE_EMAIL"])
                let oobs = try await app.inspectOobs()
                #expect(oobs.count == 1 && oobs.first?["requestType"] as? String == "VERIFY_AND_CHANGE_EMAIL")
                _ = try await app.registerUser(email: "bob@example.com", password: "notasecreteither")
                let reply = try await app.api("update", ["oobCode": oobs.first?["oobCode"] as? String ?? ""])
                #expect(reply.isError("EMAIL_EXISTS"), "\(reply.text)")
                // A refused completion changes nothing, the code's consumption included (the emulator
                // deletes it anyway): the link works once the address is free.
                #expect(try await app.inspectOobs().count == 1)
            }
        }

        @Test("should error if auth is disabled")
        func authDisabled() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": true])
                #expect(try await app.api("update", [:], tenant: tenant).isError("PROJECT_DISABLED"))
            }
        }

        @Test("should set tenantId in oobLink")
        func tenantRecoveryLink() async throws {
            try await TestApp.router { app async throws in
                let tenant = try await app.registerTenant(["disableAuth": false, "allowPasswordSignup": true])
                let user = try await app.registerUser(email: "alice@example.com", tenant: tenant)
                let reply = try await app.api("update", ["idToken": user.idToken, "email": "bob@example.com"], tenant: tenant)
                #expect(reply.status == 200, "\(reply.text)")
                let oobs = try await app.inspectOobs(tenant: tenant)
                #expect(oobs.count == 1 && oobs.first?["email"] as? String == "alice@example.com")
                #expect(oobs.first?["requestType"] as? String == "RECOVER_EMAIL")
                let link = oobs.first?["oobLink"] as? String ?? ""
                #expect(link.contains(tenant))
            }
        }

        @Test("should link provider account with existing user account (the entry also shows federatedId)")
        func linkProvider() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "test@example.com")
                let info: [String: String] = [
                    "providerId": "google.com", "rawId": "google_user_id", "email": "linked@example.com", "displayName": "Linked User",
                    "photoUrl": "https://example.com/photo.jpg",
                ]
                // As every provider entry here (and in Firebase production's answers), with federatedId = rawId.
                var expected = info
                expected["federatedId"] = "google_user_id"
                let reply = try await app.api("update", ["idToken": user.idToken, "linkProviderUserInfo": info])
                let providers = reply.json["providerUserInfo"] as? [[String: String]] ?? []
                #expect(reply.status == 200 && providers.count == 2, "\(reply.text)")
                #expect(providers.first { $0["providerId"] == "google.com" } == expected)
                let stored = try await app.accountInfo(idToken: user.idToken)["providerUserInfo"] as? [[String: String]] ?? []
                #expect(stored.count == 2 && stored.first { $0["providerId"] == "google.com" } == expected)
            }
        }

        @Test("should error if linkProviderUserInfo is missing required fields")
        func linkProviderMissingFields() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "test@example.com")
                let noRaw = try await app.api(
                    "update",
                    ["idToken": user.idToken, "linkProviderUserInfo": ["providerId": "google.com", "email": "linked@example.com"]])
                #expect(noRaw.status == 400 && noRaw.errorMessage.contains("MISSING_RAW_ID"), "\(noRaw.text)")
                let noProvider = try await app.api(
                    "update",
                    ["idToken": user.idToken, "linkProviderUserInfo": ["rawId": "google_user_id", "email": "linked@example.com"]])
                #expect(noProvider.status == 400 && noProvider.errorMessage.contains("MISSING_PROVIDER_ID"), "\(noProvider.text)")
            }
        }

        @Test("should error if user is disabled when linking a provider")
        func linkProviderDisabled() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "test@example.com")
                try await app.updateAccount(localId: user.localId, ["disableUser": true])
                let reply = try await app.api(
                    "update",
                    [
                        "idToken": user.idToken,
                        "linkProviderUserInfo": ["providerId": "google.com", "rawId": "google_user_id", "email": "linked@example.com"],
                    ])
                #expect(reply.isError("USER_DISABLED"), "\(reply.text)")
            }
        }

        @Test("a client's update without an ID token or a code is INVALID_REQ_TYPE; with customAttributes, INSUFFICIENT_PERMISSION")
        func clientWithoutCredential() async throws {
            try await TestApp.router { app in
                let bare = try await app.api("update", ["displayName": "Foo"])
                #expect(
                    bare.status == 400 && bare.errorMessage.hasPrefix("INVALID_REQ_TYPE : Unsupported request parameters."), "\(bare.text)")
                let user = try await app.registerAnonUser()
                let claims = try await app.api("update", ["idToken": user.idToken, "customAttributes": #"{"admin":true}"#])
                #expect(claims.errorCode == "INSUFFICIENT_PERMISSION", "\(claims.text)")
            }
        }
    }
}
