import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

extension FirebaseSpecs {
    /// firebase-tools `src/emulator/auth/deleteAccount.spec.ts`, every case (the spec names two cases
    /// "should delete the user of the idToken"; the second, which tests a disabled tenant, says so
    /// here), and this server's switch for self-service deletion.
    @Suite("deleteAccount.spec.ts: accounts:delete", .timeLimit(.minutes(5)))
    struct DeleteAccountSpecTests {
        @Test("should delete the user of the idToken")
        func deleteByIDToken() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                let reply = try await app.api("delete", ["idToken": user.idToken])
                #expect(reply.status == 200 && reply.json["error"] == nil, "\(reply.text)")
                #expect(reply.json["kind"] as? String == "identitytoolkit#DeleteAccountResponse")
                #expect(try await app.lookupError(idToken: user.idToken) == "USER_NOT_FOUND")
            }
        }

        @Test("should error when trying to delete by localId without OAuth")
        func localIDWithoutOAuth() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                #expect(try await app.api("delete", ["localId": user.localId]).isError("MISSING_ID_TOKEN"))
            }
        }

        @Test("should remove federated accounts for user")
        func federatedAccount() async throws {
            try await TestApp.router { app in
                let user = try await app.signInWithFakeClaims("google.com", ["sub": "12345", "email": "alice@example.com"])
                let reply = try await app.api("delete", ["idToken": user.idToken])
                #expect(reply.status == 200 && reply.json["error"] == nil, "\(reply.text)")
                #expect(try await app.signInMethods("alice@example.com").isEmpty)
                let again = try await app.signInWithFakeClaims("google.com", ["sub": "12345", "email": "alice@example.com"])
                #expect(again.localId != user.localId)
            }
        }

        @Test("should delete the user by localId if OAuth credentials are present")
        func deleteByLocalID() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                let reply = try await app.post("/v1/accounts:delete", ["localId": user.localId], headers: Spec.admin)
                #expect(reply.status == 200 && reply.json["error"] == nil, "\(reply.text)")
                #expect(try await app.lookupError(idToken: user.idToken) == "USER_NOT_FOUND")
            }
        }

        @Test("should error if missing localId when OAuth credentials are present")
        func adminWithoutLocalID() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                let reply = try await app.post("/v1/accounts:delete", ["idToken": user.idToken], headers: Spec.admin)
                #expect(reply.isError("MISSING_LOCAL_ID"), "\(reply.text)")
            }
        }

        @Test("should delete the user of the idToken (the spec's second case of this name: auth disabled)")
        func authDisabled() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": true])
                let reply = try await app.api("delete", [:], tenant: tenant)
                #expect(reply.status == 400 && reply.errorMessage.contains("PROJECT_DISABLED"), "\(reply.text)")
            }
        }

        @Test("the admin's call in a disabled tenant hears PROJECT_DISABLED before MISSING_LOCAL_ID, as the emulator's")
        func adminAuthDisabled() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": true])
                let reply = try await app.api("delete", [:], admin: true, tenant: tenant)
                #expect(reply.status == 400 && reply.errorMessage.contains("PROJECT_DISABLED"), "\(reply.text)")
            }
        }

        @Test("the admin deleting an unknown account gets USER_NOT_FOUND")
        func adminUnknownAccount() async throws {
            try await TestApp.router { app async throws in
                #expect(try await app.api("delete", ["localId": "nosuch"], admin: true).isError("USER_NOT_FOUND"))
            }
        }

        @Test("the iOS SDK's deleteAccount (legacy path, idToken and localId with the API key) deletes the token's user")
        func iOSDeleteAccount() async throws {
            try await TestApp.router { app in
                let other = try await app.registerUser(email: "bob@example.com")
                let user = try await app.registerUser(email: "alice@example.com")
                let reply = try await app.post(
                    "/www.googleapis.com/identitytoolkit/v3/relyingparty/deleteAccount?key=demo-api-key",
                    ["idToken": user.idToken, "localId": other.localId])
                #expect(reply.status == 200, "\(reply.text)")
                #expect(try await app.lookupError(idToken: user.idToken) == "USER_NOT_FOUND")
                #expect(try await app.lookupError(idToken: other.idToken) == nil)
            }
        }

        @Test("self-service deletion off: a client's accounts:delete is refused (ADMIN_ONLY_OPERATION), the admin's is not")
        func selfServiceDeleteOff() async throws {
            try await TestApp.router(environment: ["ACTIONLINKS_USERS_SELF_SERVICE_DELETE": "false"]) { app in
                let user = try await app.registerUser(email: "alice@example.com")
                let refused = try await app.api("delete", ["idToken": user.idToken])
                #expect(refused.isError("ADMIN_ONLY_OPERATION"), "\(refused.text)")
                #expect(try await app.lookupError(idToken: user.idToken) == nil)
                #expect(try await app.api("delete", ["localId": user.localId], admin: true).status == 200)
                #expect(try await app.lookupError(idToken: user.idToken) == "USER_NOT_FOUND")
            }
        }
    }
}
