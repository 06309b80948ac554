import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

extension FirebaseSpecs {
    /// firebase-tools `src/emulator/auth/customToken.spec.ts`, every case: a development server takes
    /// the unsigned custom tokens (and plain JSON) that the emulator takes, still checking the
    /// audience and `uid`; a production server only tokens signed by its service accounts.
    @Suite("customToken.spec.ts: sign-in with custom token", .timeLimit(.minutes(5)))
    struct CustomTokenSpecTests {
        static var claims: [String: Any] { ["abc": "def", "ultimate": ["answer": 42]] }

        @Test("should create new account from custom token (unsigned)")
        func unsigned() async throws {
            try await TestApp.router { app in
                let token = Spec.customToken(["uid": "someuid", "claims": Self.claims])
                let reply = try await app.api("signInWithCustomToken", ["token": token])
                #expect(
                    reply.status == 200 && reply.json["isNewUser"] as? Bool == true && reply.json["refreshToken"] is String, "\(reply.text)"
                )
                #expect(reply.json["kind"] as? String == "identitytoolkit#VerifyCustomTokenResponse")
                let idToken = try #require(reply.json["idToken"] as? String)
                // RS256, where the emulator's are unsigned.
                #expect(Spec.header(idToken)["alg"] as? String == "RS256")
                let payload = Spec.payload(idToken)
                #expect(payload["provider_id"] == nil && Spec.signInProvider(idToken) == "custom")
                #expect(payload["abc"] as? String == "def" && (payload["ultimate"] as? [String: Any])?["answer"] as? Int == 42)
                #expect(try await app.accountInfo(idToken: idToken)["localId"] as? String == "someuid")
            }
        }

        @Test("should sign into existing account and merge claims")
        func mergeClaims() async throws {
            try await TestApp.router { app in
                let user = try await app.signInWithEmailLink("alice@example.com")
                try await app.updateAccount(localId: user.localId, ["customAttributes": #"{"abc":"abc","foo":"bar"}"#])
                let token = String(decoding: Spec.json(["uid": user.localId, "claims": Self.claims]), as: UTF8.self)
                let reply = try await app.api("signInWithCustomToken", ["token": token])
                #expect(reply.status == 200 && reply.json["isNewUser"] as? Bool == false, "\(reply.text)")
                let idToken = reply.json["idToken"] as? String ?? ""
                let payload = Spec.payload(idToken)
                #expect(payload["provider_id"] == nil && Spec.signInProvider(idToken) == "custom")
                #expect((payload["firebase"] as? [String: Any])?["identities"] as? [String: [String]] == ["email": ["alice@example.com"]])
                // The token's claims win over the account's.
                #expect(payload["abc"] as? String == "def" && payload["foo"] as? String == "bar" && payload["ultimate"] != nil)
                let refreshToken = try #require(reply.json["refreshToken"] as? String)
                let refreshed = try await app.request(
                    "POST", "/securetoken.googleapis.com/v1/token?key=demo-api-key",
                    body: Data("refreshToken=\(HTMLForm.encode(component: refreshToken))&grantType=refresh_token".utf8),
                    headers: ["Content-Type": "application/x-www-form-urlencoded"])
                let again = Spec.payload(refreshed.json["id_token"] as? String ?? "")
                #expect(
                    again["abc"] as? String == "def" && again["foo"] as? String == "bar" && again["ultimate"] != nil, "\(refreshed.text)")
            }
        }

        @Test("should error if custom token is missing")
        func missing() async throws {
            try await TestApp.router { app async throws in
                #expect(try await app.api("signInWithCustomToken", [:]).isError("MISSING_CUSTOM_TOKEN"))
            }
        }

        @Test("should error if custom token is invalid")
        func invalid() async throws {
            try await TestApp.router { app in
                for token in ["{not+Json,That's=>For@Sure}", "ThisMayLookLikeAJWT.ButItWontDecode.ToJsonObjects"] {
                    let reply = try await app.api("signInWithCustomToken", ["token": token])
                    #expect(reply.status == 400 && reply.errorMessage.contains("INVALID_CUSTOM_TOKEN"), "\(reply.text)")
                }
            }
        }

        @Test("should error if custom token addresses the wrong audience")
        func wrongAudience() async throws {
            try await TestApp.router { app in
                let token = Spec.unsignedJWT(["uid": "foo", "aud": "http://localhost/not-the-firebase-auth-audience"])
                let reply = try await app.api("signInWithCustomToken", ["token": token])
                #expect(reply.status == 400 && reply.errorMessage.contains("INVALID_CUSTOM_TOKEN"), "\(reply.text)")
            }
        }

        @Test("should error if custom token contains no uid")
        func noUID() async throws {
            try await TestApp.router { app in
                for token in [Spec.customToken([:]), #"{"look": "I do not have uid"}"#] {
                    let reply = try await app.api("signInWithCustomToken", ["token": token])
                    #expect(reply.status == 400 && reply.errorMessage.contains("MISSING_IDENTIFIER"), "\(reply.text)")
                }
            }
        }

        @Test("should error if custom token contains forbidden claims")
        func forbiddenClaims() async throws {
            try await TestApp.router { app in
                let reply = try await app.api("signInWithCustomToken", ["token": #"{"uid": "wow", "claims": {"firebase": "awesome"}}"#])
                #expect(reply.status == 400 && reply.errorMessage.contains("FORBIDDEN_CLAIM : firebase"), "\(reply.text)")
            }
        }

        @Test("should error if user is disabled")
        func disabledUser() async throws {
            try await TestApp.router { app in
                let user = try await app.signInWithEmailLink("alice@example.com")
                try await app.updateAccount(localId: user.localId, ["disableUser": true])
                let token = String(decoding: Spec.json(["uid": user.localId, "claims": Self.claims]), as: UTF8.self)
                #expect(try await app.api("signInWithCustomToken", ["token": token]).isError("USER_DISABLED"))
            }
        }

        @Test("should error if auth is disabled")
        func authDisabled() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": true])
                let reply = try await app.api("signInWithCustomToken", [:], tenant: tenant)
                #expect(reply.isError("PROJECT_DISABLED"), "\(reply.text)")
            }
        }

        @Test("should error if custom token tenantId does not match")
        func tenantMismatch() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": false])
                let token = Spec.customToken(["uid": "someuid", "claims": Self.claims, "tenant_id": "not-matching-tenant-id"])
                let reply = try await app.api("signInWithCustomToken", ["token": token], tenant: tenant)
                #expect(reply.status == 400 && reply.errorMessage.contains("TENANT_ID_MISMATCH"), "\(reply.text)")
            }
        }

        @Test("should create a new account from custom token with tenantId")
        func tenantAccount() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": false])
                let token = Spec.customToken(["uid": "someuid", "claims": Self.claims, "tenant_id": tenant])
                let reply = try await app.api("signInWithCustomToken", ["token": token], tenant: tenant)
                #expect(reply.status == 200 && reply.json["isNewUser"] as? Bool == true, "\(reply.text)")
                #expect(try await app.accountInfo(localId: "someuid", tenant: tenant)["tenantId"] as? String == tenant)
            }
        }

        @Test("a production server refuses unsigned custom tokens and plain JSON")
        func productionRefusesUnsigned() async throws {
            let production = [
                "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": String(repeating: "t", count: 40),
            ]
            try await TestApp.router(environment: production) { app in
                for token in [Spec.customToken(["uid": "someuid"]), #"{"uid": "someuid"}"#] {
                    let reply = try await app.api("signInWithCustomToken", ["token": token])
                    #expect(reply.status == 400 && reply.errorMessage.contains("INVALID_CUSTOM_TOKEN"), "\(reply.text)")
                }
            }
        }
    }
}
