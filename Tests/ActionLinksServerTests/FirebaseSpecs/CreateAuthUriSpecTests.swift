import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

extension FirebaseSpecs {
    /// firebase-tools `src/emulator/auth/createAuthUri.spec.ts`, every case. The emulator switches
    /// `allowDuplicateEmails` and `enableImprovedEmailPrivacy` at run time; here they are the
    /// configuration's `users.oneAccountPerEmail: false` and `users.emailEnumerationProtection`.
    @Suite("createAuthUri.spec.ts: accounts:createAuthUri", .timeLimit(.minutes(5)))
    struct CreateAuthUriSpecTests {
        static func createAuthUri(_ app: TestApp, _ fields: [String: Any]) async throws -> HTTPReply {
            var all: [String: Any] = ["continueUri": "http://example.com/"]
            for (key, value) in fields { all[key] = value }
            return try await app.api("createAuthUri", all)
        }

        @Test("should report not registered user as not registered")
        func notRegistered() async throws {
            try await TestApp.router { app in
                let reply = try await Self.createAuthUri(app, ["identifier": "notregistered@example.com"])
                #expect(
                    reply.status == 200 && reply.json["registered"] as? Bool == false && reply.json["sessionId"] is String, "\(reply.text)")
                #expect(reply.json["kind"] as? String == "identitytoolkit#CreateAuthUriResponse")
            }
        }

        @Test("should not show registered field with improved email privacy enabled")
        func notRegisteredProtected() async throws {
            try await TestApp.router(environment: ["ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true"]) { app in
                let reply = try await Self.createAuthUri(app, ["identifier": "notregistered@example.com"])
                #expect(reply.status == 200 && reply.json["registered"] == nil && reply.json["sessionId"] is String, "\(reply.text)")
            }
        }

        @Test("should return providers for a registered user")
        func registered() async throws {
            try await TestApp.router { app in
                _ = try await app.registerUser(email: "alice@example.com")
                let reply = try await Self.createAuthUri(app, ["identifier": "alice@example.com"])
                #expect(reply.status == 200 && reply.json["registered"] as? Bool == true, "\(reply.text)")
                #expect(reply.json["allProviders"] as? [String] == ["password"] && reply.json["signinMethods"] as? [String] == ["password"])
                #expect(reply.json["sessionId"] is String)
            }
        }

        @Test("should not return providers for a registered user with improved email privacy enabled")
        func registeredProtected() async throws {
            try await TestApp.router(environment: ["ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true"]) { app in
                _ = try await app.registerUser(email: "alice@example.com")
                let reply = try await Self.createAuthUri(app, ["identifier": "alice@example.com"])
                #expect(reply.status == 200 && reply.json["registered"] == nil && reply.json["allProviders"] == nil, "\(reply.text)")
                #expect(reply.json["signinMethods"] == nil && reply.json["sessionId"] is String)
            }
        }

        @Test("should return existing sessionId if provided")
        func sessionID() async throws {
            try await TestApp.router { app in
                let reply = try await Self.createAuthUri(app, ["identifier": "notregistered@example.com", "sessionId": "my-session-1"])
                #expect(reply.json["sessionId"] as? String == "my-session-1" && reply.json["registered"] as? Bool == false, "\(reply.text)")
            }
        }

        @Test("should find user by email ignoring case")
        func ignoresCase() async throws {
            try await TestApp.router { app in
                _ = try await app.registerUser(email: "alice@example.com")
                let reply = try await Self.createAuthUri(app, ["identifier": "AlIcE@exAMPle.COM"])
                #expect(reply.json["registered"] as? Bool == true, "\(reply.text)")
            }
        }

        @Test("should find user by either IDP email or 'top-level' email")
        func providerOrTopLevelEmail() async throws {
            try await TestApp.router { app in
                let user = try await app.signInWithFakeClaims("google.com", ["sub": "12345", "email": "alice@example.com"])
                _ = try await app.signInWithEmailLink("bob@example.com", idToken: user.idToken)
                for identifier in ["bob@example.com", "alice@example.com"] {
                    let reply = try await Self.createAuthUri(app, ["identifier": identifier])
                    #expect(reply.json["registered"] as? Bool == true, "\(identifier): \(reply.text)")
                    #expect(
                        Set(reply.json["allProviders"] as? [String] ?? []) == ["password", "google.com"], "\(identifier): \(reply.text)")
                    #expect(
                        Set(reply.json["signinMethods"] as? [String] ?? []) == ["emailLink", "google.com"], "\(identifier): \(reply.text)")
                }
            }
        }

        @Test("should not list IDP sign-in methods when allowDuplicateEmails")
        func duplicateEmails() async throws {
            try await TestApp.router(environment: ["ACTIONLINKS_USERS_ONE_ACCOUNT_PER_EMAIL": "false"]) { app async throws in
                let user = try await app.signInWithFakeClaims("google.com", ["sub": "12345", "email": "alice@example.com"])
                _ = try await app.signInWithEmailLink("bob@example.com", idToken: user.idToken)
                for identifier in ["bob@example.com", "alice@example.com"] {
                    let reply = try await Self.createAuthUri(app, ["identifier": identifier])
                    #expect(reply.json["registered"] as? Bool == true, "\(identifier): \(reply.text)")
                    #expect(reply.json["allProviders"] as? [String] == ["password"], "\(identifier): \(reply.text)")
                    #expect(reply.json["signinMethods"] as? [String] == ["emailLink"], "\(identifier): \(reply.text)")
                }
            }
        }

        @Test("should error if identifier or continueUri is not provided")
        func missingFields() async throws {
            try await TestApp.router { app async throws in
                #expect(try await app.api("createAuthUri", ["continueUri": "http://example.com/"]).isError("MISSING_IDENTIFIER"))
                #expect(try await app.api("createAuthUri", ["identifier": "me@example.com"]).isError("MISSING_CONTINUE_URI"))
            }
        }

        @Test("should error if identifier is invalid")
        func invalidIdentifier() async throws {
            try await TestApp.router { app async throws in
                #expect(try await Self.createAuthUri(app, ["identifier": "invalid"]).isError("INVALID_IDENTIFIER"))
            }
        }

        @Test("should error if continueUri is invalid")
        func invalidContinueURI() async throws {
            try await TestApp.router { app async throws in
                #expect(
                    try await app.api("createAuthUri", ["identifier": "me@example.com", "continueUri": "invalid"]).isError(
                        "INVALID_CONTINUE_URI"))
            }
        }

        @Test("should error if auth is disabled")
        func authDisabled() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": true])
                let reply = try await app.api("createAuthUri", [:], tenant: tenant)
                #expect(reply.status == 400 && reply.errorMessage.contains("PROJECT_DISABLED"), "\(reply.text)")
            }
        }
    }
}
