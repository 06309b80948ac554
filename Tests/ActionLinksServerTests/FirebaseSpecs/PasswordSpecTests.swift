import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

extension FirebaseSpecs {
    /// firebase-tools `src/emulator/auth/password.spec.ts`, case by case. Not ported: the two
    /// multi-factor cases and the three blocking-function cases (this server has neither). Added: the
    /// limits on failed sign-ins, per account and per client, which the emulator does not have.
    @Suite("password.spec.ts: accounts:signInWithPassword", .timeLimit(.minutes(5)))
    struct PasswordSpecTests {
        @Test("should issue tokens when email and password are valid")
        func validPassword() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                let reply = try await app.api("signInWithPassword", ["email": "alice@example.com", "password": Spec.password])
                #expect(reply.status == 200 && reply.json["localId"] as? String == user.localId, "\(reply.text)")
                #expect(reply.json["email"] as? String == "alice@example.com" && reply.json["registered"] as? Bool == true)
                #expect(reply.json["refreshToken"] is String && reply.json["kind"] as? String == "identitytoolkit#VerifyPasswordResponse")
                let idToken = try #require(reply.json["idToken"] as? String)
                // RS256, where the emulator's are unsigned.
                #expect(Spec.header(idToken)["alg"] as? String == "RS256")
                #expect(Spec.payload(idToken)["user_id"] as? String == user.localId && Spec.payload(idToken)["provider_id"] == nil)
                #expect(Spec.signInProvider(idToken) == "password")
            }
        }

        @Test("should update lastLoginAt on successful login")
        func lastLoginAt() async throws {
            let clock = ManualClock()
            try await TestApp.router(clock: clock) { app async throws in
                let user = try await app.registerUser(email: "alice@example.com")
                #expect(try await app.accountInfo(localId: user.localId)["lastLoginAt"] as? String == clock.now.description)
                clock.advance(seconds: 4)
                _ = try await app.signInWithPassword("alice@example.com")
                #expect(try await app.accountInfo(localId: user.localId)["lastLoginAt"] as? String == clock.now.description)
            }
        }

        @Test("should validate email address ignoring case")
        func ignoresCase() async throws {
            try await TestApp.router { app async throws in
                let user = try await app.registerUser(email: "alice@example.com")
                #expect(try await app.signInWithPassword("AlIcE@exAMPle.COM").localId == user.localId)
            }
        }

        @Test("should error if email or password is missing")
        func missingFields() async throws {
            try await TestApp.router { app async throws in
                #expect(try await app.api("signInWithPassword", ["password": Spec.password]).isError("MISSING_EMAIL"))
                #expect(try await app.api("signInWithPassword", ["email": "nosuchuser@example.com"]).isError("MISSING_PASSWORD"))
            }
        }

        @Test("should error if email is invalid")
        func invalidEmail() async throws {
            try await TestApp.router { app async throws in
                #expect(
                    try await app.api("signInWithPassword", ["email": "ill-formatted-email", "password": Spec.password]).isError(
                        "INVALID_EMAIL"))
                #expect(try await app.api("signInWithPassword", ["email": "", "password": Spec.password]).isError("INVALID_EMAIL"))
            }
        }

        @Test("should error if email is not found")
        func emailNotFound() async throws {
            try await TestApp.router { app in
                let reply = try await app.api("signInWithPassword", ["email": "nosuchuser@example.com", "password": Spec.password])
                #expect(reply.isError("EMAIL_NOT_FOUND"), "\(reply.text)")
            }
        }

        @Test("should error if email is not found with improved email privacy enabled")
        func emailNotFoundProtected() async throws {
            try await TestApp.router(environment: ["ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true"]) { app in
                let reply = try await app.api("signInWithPassword", ["email": "nosuchuser@example.com", "password": Spec.password])
                #expect(reply.isError("INVALID_LOGIN_CREDENTIALS"), "\(reply.text)")
            }
        }

        @Test("should error if password is wrong")
        func wrongPassword() async throws {
            try await TestApp.router { app in
                _ = try await app.registerUser(email: "alice@example.com")
                let reply = try await app.api("signInWithPassword", ["email": "alice@example.com", "password": "NOTASECRET"])
                #expect(reply.isError("INVALID_PASSWORD"), "\(reply.text)")
            }
        }

        @Test("should error if password is wrong with improved email privacy enabled")
        func wrongPasswordProtected() async throws {
            try await TestApp.router(environment: ["ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true"]) { app in
                _ = try await app.registerUser(email: "alice@example.com")
                let reply = try await app.api("signInWithPassword", ["email": "alice@example.com", "password": "NOTASECRET"])
                #expect(reply.isError("INVALID_LOGIN_CREDENTIALS"), "\(reply.text)")
            }
        }

        @Test("should error if user is disabled")
        func disabledUser() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                try await app.updateAccount(localId: user.localId, ["disableUser": true])
                let reply = try await app.api("signInWithPassword", ["email": "alice@example.com", "password": Spec.password])
                #expect(reply.isError("USER_DISABLED"), "\(reply.text)")
            }
        }

        @Test("should error if auth is disabled")
        func authDisabled() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": true])
                let reply = try await app.api("signInWithPassword", [:], tenant: tenant)
                #expect(reply.status == 400 && reply.errorMessage.contains("PROJECT_DISABLED"), "\(reply.text)")
            }
        }

        @Test("should error if password sign up is disabled")
        func passwordSignUpOff() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": false, "allowPasswordSignup": false])
                let reply = try await app.api("signInWithPassword", [:], tenant: tenant)
                #expect(reply.status == 400 && reply.errorMessage.contains("PASSWORD_LOGIN_DISABLED"), "\(reply.text)")
            }
        }

        @Test("failed sign-ins are limited per account: TOO_MANY_ATTEMPTS_TRY_LATER until the hour has passed")
        func failuresPerAccount() async throws {
            let clock = ManualClock(start: Timestamp(milliseconds: 1_700_000_000_000).roundedDown(to: .seconds(3600)))
            try await TestApp.router(environment: ["ACTIONLINKS_LIMITS_SIGN_IN_FAILURES_PER_ACCOUNT_PER_HOUR": "3"], clock: clock) { app in
                _ = try await app.registerUser(email: "alice@example.com")
                for _ in 0..<3 {
                    let wrong = try await app.api("signInWithPassword", ["email": "alice@example.com", "password": "wrong password"])
                    #expect(wrong.errorCode == "INVALID_PASSWORD", "\(wrong.text)")
                }
                let refused = try await app.api("signInWithPassword", ["email": "alice@example.com", "password": Spec.password])
                #expect(refused.errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER", "\(refused.text)")
                _ = try await app.registerUser(email: "bob@example.com")
                #expect(try await app.api("signInWithPassword", ["email": "bob@example.com", "password": Spec.password]).status == 200)
                clock.advance(seconds: 3600)
                #expect(try await app.api("signInWithPassword", ["email": "alice@example.com", "password": Spec.password]).status == 200)
            }
        }

        @Test("failed sign-ins are limited per client, whichever accounts they try")
        func failuresPerClient() async throws {
            // A live server: the client is the socket's peer. Its requests may wait long behind the
            // other suites' scrypt work on a loaded machine: the live client's hang guard is longer
            // than the suite's time limit, not URLSession's minute.
            try await TestApp.live(environment: ["ACTIONLINKS_LIMITS_SIGN_IN_FAILURES_PER_IP_PER_HOUR": "2"]) { app in
                func signIn(_ email: String) async throws -> HTTPReply {
                    try await app.post("/v1/accounts:signInWithPassword?key=demo-api-key", ["email": email, "password": "wrong password"])
                }
                for index in 0..<2 {
                    let wrong = try await signIn("user\(index)@example.com")
                    #expect(wrong.errorCode == "EMAIL_NOT_FOUND", "\(wrong.text)")
                }
                let refused = try await signIn("user9@example.com")
                #expect(refused.errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER", "\(refused.text)")
            }
        }
    }
}
