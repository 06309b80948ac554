import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP

/// Authenticator apps as a second factor, through the REST API as the JS, iOS and Android SDKs
/// call it (`/v2/accounts/mfaEnrollment:*`, `/v2/accounts/mfaSignIn:finalize`), on both stores:
/// enrolment, the second step of every first factor, the codes' window and single use, the
/// pending credential's single use and binding, the lockout, and withdrawal.
@Suite("TOTP second factors", .timeLimit(.minutes(5)))
struct TOTPSecondFactorTests {
    /// A project with TOTP enabled (adjacentIntervals 1, so the window's edges are near).
    static let enabled = [
        "ACTIONLINKS_MFA_STATE": "ENABLED", "ACTIONLINKS_MFA_TOTP_STATE": "ENABLED", "ACTIONLINKS_MFA_TOTP_ADJACENT_INTERVALS": "1",
    ]

    static func environment(_ kind: String, _ extra: [String: String] = [:]) async throws -> [String: String] {
        var environment = enabled.merging(extra) { $1 }
        if kind == "postgres" { environment["ACTIONLINKS_STORE"] = try await PostgresTestServer.freshDatabaseURL() }
        return environment
    }

    /// A `/v2/accounts/<operation>` call as a client.
    static func v2(_ app: TestApp, _ operation: String, _ fields: [String: Any]) async throws -> HTTPReply {
        try await app.post("/v2/accounts/\(operation)?key=\(TestProject.apiKey)", fields)
    }

    /// The code of `secret` at the clock's step plus `offset`.
    static func code(_ secret: [UInt8], _ clock: ManualClock, offset: Int64 = 0) -> String {
        TOTP.code(secret: secret, step: TOTP.step(at: clock.now.seconds) + offset)
    }

    /// An enrolled user: the address verified (an email-link sign-in), a TOTP factor enrolled.
    struct Enrolled {
        var localId: String
        var email: String
        var secret: [UInt8]
        var enrollmentID: String
        var idToken: String
        var refreshToken: String
    }

    /// A new sign-in of `enrolled` with both factors: the password, then the code of `clock`'s
    /// interval. The answer of `mfaSignIn:finalize`.
    static func signInWithBothFactors(_ app: TestApp, _ clock: ManualClock, _ enrolled: Enrolled) async throws -> HTTPReply {
        let first = try await app.api("signInWithPassword", ["email": enrolled.email, "password": Spec.password])
        return try await v2(
            app, "mfaSignIn:finalize",
            [
                "mfaPendingCredential": try #require(first.json["mfaPendingCredential"] as? String, "\(first.text)"),
                "mfaEnrollmentId": enrolled.enrollmentID,
                "totpVerificationInfo": ["verificationCode": code(enrolled.secret, clock)],
            ])
    }

    static func enroll(_ app: TestApp, _ clock: ManualClock, email: String = "two@example.com") async throws -> Enrolled {
        let user = try await app.signInWithEmailLink(email)
        _ = try await app.api("update", ["idToken": user.idToken, "password": Spec.password])
        let fresh = try await app.signInWithPassword(email)
        let start = try await v2(app, "mfaEnrollment:start", ["idToken": fresh.idToken, "totpEnrollmentInfo": [String: Any]()])
        let info = try #require(start.json["totpSessionInfo"] as? [String: Any], "\(start.text)")
        let key = try #require(info["sharedSecretKey"] as? String)
        let secret = try #require(Base32.decode(key))
        let finalize = try await v2(
            app, "mfaEnrollment:finalize",
            [
                "idToken": fresh.idToken, "displayName": "Phone",
                "totpVerificationInfo": [
                    "sessionInfo": try #require(info["sessionInfo"] as? String), "verificationCode": code(secret, clock),
                ],
            ])
        let idToken = try #require(finalize.json["idToken"] as? String, "\(finalize.text)")
        let firebase = try #require(Spec.payload(idToken)["firebase"] as? [String: Any])
        // The next code is a later step: enrolment used this one.
        clock.advance(seconds: 30)
        return Enrolled(
            localId: user.localId, email: email, secret: secret,
            enrollmentID: try #require(firebase["second_factor_identifier"] as? String), idToken: idToken,
            refreshToken: try #require(finalize.json["refreshToken"] as? String))
    }

    @Test(
        "enrolment: start answers as Google does; finalize takes the app's code, revokes older sessions, claims the factor",
        arguments: StoreFactory.kinds)
    func enrolment(kind: String) async throws {
        let clock = ManualClock.midHour()
        try await TestApp.router(environment: try await Self.environment(kind), clock: clock) { app in
            let user = try await app.signInWithEmailLink("enrol@example.com")
            let start = try await Self.v2(app, "mfaEnrollment:start", ["idToken": user.idToken, "totpEnrollmentInfo": [String: Any]()])
            #expect(start.status == 200, "\(start.text)")
            let info = try #require(start.json["totpSessionInfo"] as? [String: Any])
            let key = try #require(info["sharedSecretKey"] as? String)
            #expect(key.count == 32 && key.allSatisfy { "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".contains($0) }, "base32, no padding: \(key)")
            // Numbers, not strings (iOS reads them `as? Int`).
            #expect(start.text.contains("\"verificationCodeLength\":6") && start.text.contains("\"periodSec\":30"), "\(start.text)")
            #expect(info["hashingAlgorithm"] as? String == "SHA1")
            let deadline = try #require(info["finalizeEnrollmentTime"] as? String)
            #expect(deadline.hasSuffix("Z") && deadline.count == 24, "RFC 3339 with milliseconds: \(deadline)")
            let secret = try #require(Base32.decode(key))
            let sessionInfo = try #require(info["sessionInfo"] as? String)

            func finalize(_ fields: [String: Any]) async throws -> HTTPReply {
                try await Self.v2(app, "mfaEnrollment:finalize", ["idToken": user.idToken].merging(fields) { $1 })
            }
            #expect(try await finalize([:]).errorMessage == "INVALID_ARGUMENT : ((Missing totpVerificationInfo.))")
            #expect(try await finalize(["totpVerificationInfo": ["sessionInfo": sessionInfo]]).errorCode == "MISSING_CODE")
            #expect(try await finalize(["totpVerificationInfo": ["verificationCode": "123456"]]).errorCode == "MISSING_SESSION_INFO")
            let tampered = String(sessionInfo.dropLast(2)) + (sessionInfo.hasSuffix("AA") ? "BA" : "AA")
            #expect(
                try await finalize(["totpVerificationInfo": ["sessionInfo": tampered, "verificationCode": Self.code(secret, clock)]])
                    .errorCode
                    == "INVALID_SESSION_INFO")
            let wrong = Self.code(secret, clock) == "000000" ? "111111" : "000000"
            #expect(
                try await finalize(["totpVerificationInfo": ["sessionInfo": sessionInfo, "verificationCode": wrong]]).errorCode
                    == "INVALID_CODE")
            // Another user cannot finish this user's enrolment.
            let other = try await app.signInWithEmailLink("other@example.com")
            let foreign = try await Self.v2(
                app, "mfaEnrollment:finalize",
                [
                    "idToken": other.idToken,
                    "totpVerificationInfo": ["sessionInfo": sessionInfo, "verificationCode": Self.code(secret, clock)],
                ])
            #expect(foreign.errorCode == "INVALID_SESSION_INFO", "\(foreign.text)")

            // (A session of the enrolment's own second stays valid, as firebase-admin compares.)
            clock.advance(seconds: 1)
            let done = try await finalize([
                "displayName": NSNull(),
                "totpVerificationInfo": ["sessionInfo": sessionInfo, "verificationCode": Self.code(secret, clock)],
            ])
            #expect(done.status == 200, "\(done.text)")
            let idToken = try #require(done.json["idToken"] as? String)
            #expect(done.json["refreshToken"] is String)
            let firebase = try #require(Spec.payload(idToken)["firebase"] as? [String: Any])
            #expect(firebase["sign_in_second_factor"] as? String == "totp")
            #expect((firebase["second_factor_identifier"] as? String)?.count == 28)
            // Sessions from before the enrolment are revoked; the new one refreshes with its claims.
            let old = try await app.post(
                "/v1/token?key=\(TestProject.apiKey)", ["grant_type": "refresh_token", "refresh_token": user.refreshToken])
            #expect(old.errorCode == "TOKEN_EXPIRED", "\(old.text)")
            let refreshed = try await app.post(
                "/v1/token?key=\(TestProject.apiKey)",
                ["grant_type": "refresh_token", "refresh_token": try #require(done.json["refreshToken"] as? String)])
            let refreshedToken = try #require(refreshed.json["id_token"] as? String, "\(refreshed.text)")
            let refreshedClaims = try #require(Spec.payload(refreshedToken)["firebase"] as? [String: Any])
            #expect(refreshedClaims["sign_in_second_factor"] as? String == "totp", "\(refreshed.text)")
        }
    }

    @Test("who may enrol: not anonymous or custom-token sessions, not an unverified address, not with TOTP off")
    func enrolmentRefusals() async throws {
        let clock = ManualClock.midHour()
        try await TestApp.router(environment: Self.enabled, clock: clock) { app in
            let anonymous = try await app.registerAnonUser()
            let start = { (idToken: String) in
                try await Self.v2(app, "mfaEnrollment:start", ["idToken": idToken, "totpEnrollmentInfo": [String: Any]()])
            }
            #expect(
                try await start(anonymous.idToken).errorMessage
                    == "UNSUPPORTED_FIRST_FACTOR : MFA is not available for the given first factor.")
            let custom = try await app.phoneUser()
            #expect(try await start(custom.idToken).errorCode == "UNSUPPORTED_FIRST_FACTOR")
            let unverified = try await app.registerUser(email: "unverified@example.com")
            #expect(
                try await start(unverified.idToken).errorMessage
                    == "UNVERIFIED_EMAIL : Need to verify email first before enrolling second factors.")
            let phone = try await Self.v2(
                app, "mfaEnrollment:start", ["idToken": unverified.idToken, "phoneEnrollmentInfo": ["phoneNumber": "+15555550100"]])
            #expect(phone.errorCode == "INVALID_ARGUMENT" || phone.errorCode == "UNVERIFIED_EMAIL", "\(phone.text)")
            #expect(try await Self.v2(app, "mfaEnrollment:start", ["totpEnrollmentInfo": [String: Any]()]).errorCode == "MISSING_ID_TOKEN")
        }
        try await TestApp.router(clock: clock) { app in
            let user = try await app.signInWithEmailLink("off@example.com")
            let start = try await Self.v2(app, "mfaEnrollment:start", ["idToken": user.idToken, "totpEnrollmentInfo": [String: Any]()])
            #expect(start.errorMessage == "OPERATION_NOT_ALLOWED : TOTP based MFA not enabled.", "\(start.text)")
        }
    }

    @Test(
        "sign-in's second step: a password answers a pending credential; the code finishes it once, in its window",
        arguments: StoreFactory.kinds)
    func secondStep(kind: String) async throws {
        let clock = ManualClock.midHour()
        try await TestApp.router(environment: try await Self.environment(kind), clock: clock) { app in
            let enrolled = try await Self.enroll(app, clock)
            let before = try await app.accountInfo(localId: enrolled.localId)
            clock.advance(seconds: 5)
            func firstFactor() async throws -> HTTPReply {
                try await app.api("signInWithPassword", ["email": enrolled.email, "password": Spec.password])
            }
            let first = try await firstFactor()
            #expect(first.status == 200, "\(first.text)")
            #expect(first.json["idToken"] == nil && first.json["refreshToken"] == nil, "no tokens before the second factor: \(first.text)")
            #expect(first.json["localId"] as? String == enrolled.localId)
            let hints = try #require(first.json["mfaInfo"] as? [[String: Any]], "\(first.text)")
            #expect(hints.count == 1 && hints[0]["mfaEnrollmentId"] as? String == enrolled.enrollmentID)
            #expect((hints[0]["totpInfo"] as? [String: Any])?.isEmpty == true && hints[0]["displayName"] as? String == "Phone")
            #expect(hints[0]["phoneInfo"] == nil)
            let pending = try #require(first.json["mfaPendingCredential"] as? String)
            let after = try await app.accountInfo(localId: enrolled.localId)
            #expect(after["lastLoginAt"] as? String == before["lastLoginAt"] as? String, "the first factor alone is not a sign-in")

            func finalize(_ fields: [String: Any]) async throws -> HTTPReply {
                try await Self.v2(app, "mfaSignIn:finalize", fields)
            }
            func totp(_ code: String, pending: String = pending, id: String? = enrolled.enrollmentID) -> [String: Any] {
                var fields: [String: Any] = ["mfaPendingCredential": pending, "totpVerificationInfo": ["verificationCode": code]]
                if let id { fields["mfaEnrollmentId"] = id }
                return fields
            }
            let right = Self.code(enrolled.secret, clock)
            #expect(
                try await finalize(["totpVerificationInfo": ["verificationCode": right]]).errorMessage
                    == "MISSING_CREDENTIAL : Please set MFA Pending Credential.")
            #expect(try await finalize(totp(right, id: nil)).errorCode == "MISSING_MFA_ENROLLMENT_ID")
            #expect(try await finalize(totp(right, id: "no-such-factor")).errorCode == "MFA_ENROLLMENT_NOT_FOUND")
            let tampered = String(pending.dropLast(3)) + (pending.hasSuffix("AAA") ? "BBB" : "AAA")
            #expect(try await finalize(totp(right, pending: tampered)).errorCode == "INVALID_MFA_PENDING_CREDENTIAL")
            #expect(try await finalize(totp("")).errorCode == "MISSING_CODE")
            // Outside the window (adjacentIntervals 1): two steps away, either side.
            #expect(try await finalize(totp(Self.code(enrolled.secret, clock, offset: 2))).errorCode == "INVALID_CODE")
            #expect(try await finalize(totp(Self.code(enrolled.secret, clock, offset: -2))).errorCode == "INVALID_CODE")
            // Another tenant's call cannot use the credential.
            let done = try await finalize(totp(right))
            #expect(done.status == 200, "\(done.text)")
            let idToken = try #require(done.json["idToken"] as? String)
            let claims = Spec.payload(idToken)
            let firebase = try #require(claims["firebase"] as? [String: Any])
            #expect(firebase["sign_in_second_factor"] as? String == "totp" && firebase["sign_in_provider"] as? String == "password")
            #expect(firebase["second_factor_identifier"] as? String == enrolled.enrollmentID)
            #expect(claims["user_id"] as? String == enrolled.localId)
            let signedIn = try await app.accountInfo(localId: enrolled.localId)
            #expect(signedIn["lastLoginAt"] as? String != before["lastLoginAt"] as? String, "the second factor completes the sign-in")

            // Used once: the same credential again, even with the next code, is refused.
            clock.advance(seconds: 30)
            let again = try await finalize(totp(Self.code(enrolled.secret, clock)))
            #expect(again.errorCode == "INVALID_MFA_PENDING_CREDENTIAL", "\(again.text)")
            // A code is used once: a new first factor cannot replay the code that signed in.
            let second = try #require(try await firstFactor().json["mfaPendingCredential"] as? String)
            #expect(try await finalize(totp(right, pending: second)).errorCode == "INVALID_CODE", "a replayed code")
            #expect(try await finalize(totp(Self.code(enrolled.secret, clock), pending: second)).status == 200)
            // A credential expires after ten minutes.
            clock.advance(seconds: 30)
            let third = try #require(try await firstFactor().json["mfaPendingCredential"] as? String)
            clock.advance(seconds: 601)
            #expect(
                try await finalize(totp(Self.code(enrolled.secret, clock), pending: third)).errorCode == "INVALID_MFA_PENDING_CREDENTIAL")
        }
    }

    @Test("MANDATORY acts as ENABLED: a person without a factor signs in with the first factor alone, then enrols")
    func mandatory() async throws {
        let clock = ManualClock.midHour()
        let environment = Self.enabled.merging(["ACTIONLINKS_MFA_STATE": "MANDATORY"]) { $1 }
        try await TestApp.router(environment: environment, clock: clock) { app in
            let user = try await app.signInWithEmailLink("mandatory@example.com")
            let payload = try Spec.payload(user.idToken)
            #expect((payload["firebase"] as? [String: Any])?["sign_in_second_factor"] == nil, "no second factor yet")
            let enrolled = try await Self.enroll(app, clock, email: "mandatory@example.com")
            let again = try await app.api("signInWithPassword", ["email": enrolled.email, "password": Spec.password])
            #expect(again.json["mfaPendingCredential"] is String && again.json["idToken"] == nil, "\(again.text)")
        }
    }

    @Test(
        "no first factor skips the second step: password, email link, OpenID Connect, SAML; custom tokens are Firebase's exception")
    func everyFirstFactor() async throws {
        let clock = ManualClock.midHour()
        try await TestApp.router(environment: Self.enabled, clock: clock) { app in
            let enrolled = try await Self.enroll(app, clock, email: "table@example.com")
            // Link an OpenID Connect and a SAML provider to the account (as the signed-in user), for
            // the federated first factors; the SAML one the emulator's way (the subject in an unsigned
            // `id_token`, the assertion as JSON).
            let claims: [String: Any] = ["sub": "table-sub", "email": enrolled.email, "email_verified": true]
            let idToken = HTMLForm.encode(
                component: String(
                    decoding: Spec.json(
                        claims.merging(["iss": "example.com", "aud": "example.com", "exp": 1_597_974_008, "iat": 1_597_970_408]) { $1 }),
                    as: UTF8.self))
            let assertion = HTMLForm.encode(
                component: String(decoding: Spec.json(["assertion": ["subject": ["nameId": enrolled.email]]]), as: UTF8.self))
            let postBodies = [
                "OpenID Connect": "providerId=oidc.table&id_token=\(idToken)",
                "SAML": "providerId=saml.table&id_token=\(idToken)&SAMLResponse=\(assertion)",
            ]
            for (name, postBody) in postBodies.sorted(by: { $0.key < $1.key }) {
                let linked = try await app.api(
                    "signInWithIdp",
                    ["idToken": enrolled.idToken, "requestUri": "http://localhost", "returnSecureToken": true, "postBody": postBody])
                #expect(
                    linked.status == 200 && linked.json["idToken"] != nil,
                    "linking \(name) by a signed-in session needs no second step: \(linked.text)")
                let linkedToken = try #require(linked.json["idToken"] as? String, "\(linked.text)")
                let linkedClaims = try #require(Spec.payload(linkedToken)["firebase"] as? [String: Any])
                #expect(linkedClaims["sign_in_second_factor"] as? String == "totp", "a signed-in session's link keeps its second factor")
            }

            let signInCode = try await app.createEmailSignInOob(enrolled.email).oobCode
            let rows: [(String, () async throws -> HTTPReply)] =
                [
                    ("password", { try await app.api("signInWithPassword", ["email": enrolled.email, "password": Spec.password]) }),
                    ("email link", { try await app.api("signInWithEmailLink", ["email": enrolled.email, "oobCode": signInCode]) }),
                ]
                + postBodies.sorted(by: { $0.key < $1.key }).map { name, postBody in
                    (
                        name,
                        {
                            try await app.api(
                                "signInWithIdp", ["postBody": postBody, "requestUri": "http://localhost", "returnSecureToken": true])
                        }
                    )
                }
            for (name, firstFactor) in rows {
                let reply = try await firstFactor()
                #expect(reply.status == 200, "\(name): \(reply.text)")
                #expect(reply.json["idToken"] == nil && reply.json["refreshToken"] == nil, "\(name) gave tokens: \(reply.text)")
                #expect(reply.json["mfaPendingCredential"] is String, "\(name): \(reply.text)")
                #expect(
                    (reply.json["mfaInfo"] as? [[String: Any]])?.first?["mfaEnrollmentId"] as? String == enrolled.enrollmentID, "\(name)")
            }
            // A custom token signs in directly, as in Firebase (its backend vouches for the user).
            let custom = try await app.api("signInWithCustomToken", ["token": Spec.customToken(["uid": enrolled.localId])])
            #expect(custom.json["idToken"] is String, "\(custom.text)")
            let customToken = try #require(custom.json["idToken"] as? String)
            let customClaims = try #require(Spec.payload(customToken)["firebase"] as? [String: Any])
            #expect(customClaims["sign_in_second_factor"] == nil)
        }
    }

    @Test("wrong codes lock the second step like wrong passwords, under concurrency", arguments: StoreFactory.kinds)
    func lockout(kind: String) async throws {
        let clock = ManualClock.midHour()
        try await TestApp.live(environment: try await Self.environment(kind), clock: clock) { app in
            let enrolled = try await Self.enroll(app, clock, email: "locked@example.com")
            let first = try await app.api("signInWithPassword", ["email": enrolled.email, "password": Spec.password])
            let pending = try #require(first.json["mfaPendingCredential"] as? String, "\(first.text)")
            let right = Self.code(enrolled.secret, clock)
            let wrong = (0..<24).map { String(format: "%06d", (Int(right)! + 1 + $0 * 7919) % 1_000_000) }
            let codes = try await withThrowingTaskGroup(of: String?.self) { group in
                for code in wrong {
                    group.addTask {
                        try await Self.v2(
                            app, "mfaSignIn:finalize",
                            [
                                "mfaPendingCredential": pending, "mfaEnrollmentId": enrolled.enrollmentID,
                                "totpVerificationInfo": ["verificationCode": code],
                            ]
                        ).errorCode
                    }
                }
                var codes: [String?] = []
                for try await code in group { codes.append(code) }
                return codes
            }
            let checked = codes.filter { $0 == "INVALID_CODE" }.count
            #expect(checked <= 10 && checked + codes.filter { $0 == "TOO_MANY_ATTEMPTS_TRY_LATER" }.count == 24, "\(codes)")
            // The right code behind them waits out the hour.
            let late = try await Self.v2(
                app, "mfaSignIn:finalize",
                [
                    "mfaPendingCredential": pending, "mfaEnrollmentId": enrolled.enrollmentID,
                    "totpVerificationInfo": ["verificationCode": right],
                ])
            #expect(late.errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER", "\(late.text)")
        }
    }

    @Test("withdrawing the session's own factor in the second it signed in still revokes that session (found by the JS SDK)")
    func withdrawalInTheSameSecond() async throws {
        let clock = ManualClock.midHour()
        try await TestApp.router(environment: Self.enabled, clock: clock) { app in
            let enrolled = try await Self.enroll(app, clock, email: "same-second@example.com")
            let done = try await Self.signInWithBothFactors(app, clock, enrolled)
            let idToken = try #require(done.json["idToken"] as? String, "\(done.text)")
            let refreshToken = try #require(done.json["refreshToken"] as? String)
            // The clock has not moved: the session and the withdrawal share one second.
            let withdrawn = try await Self.v2(
                app, "mfaEnrollment:withdraw", ["idToken": idToken, "mfaEnrollmentId": enrolled.enrollmentID])
            #expect(withdrawn.status == 200 && withdrawn.json["idToken"] == nil, "\(withdrawn.text)")
            #expect(try await app.lookupError(idToken: idToken) == "TOKEN_EXPIRED")
            let refresh = try await app.post(
                "/v1/token?key=\(TestProject.apiKey)", ["grant_type": "refresh_token", "refresh_token": refreshToken])
            #expect(refresh.errorCode == "TOKEN_EXPIRED", "\(refresh.text)")
        }
    }

    @Test("withdrawing a factor from an older session also revokes a session that signed in with it in the withdrawal's second")
    func withdrawalRevokesTheSameSecondsOthers() async throws {
        let clock = ManualClock.midHour()
        try await TestApp.router(environment: Self.enabled, clock: clock) { app in
            let enrolled = try await Self.enroll(app, clock, email: "other-device@example.com")
            // Another device signs in with the factor in the second the enrolled session withdraws it.
            let other = try await Self.signInWithBothFactors(app, clock, enrolled)
            let otherRefresh = try #require(other.json["refreshToken"] as? String, "\(other.text)")
            let withdrawn = try await Self.v2(
                app, "mfaEnrollment:withdraw", ["idToken": enrolled.idToken, "mfaEnrollmentId": enrolled.enrollmentID])
            #expect(withdrawn.status == 200 && withdrawn.json["idToken"] == nil, "\(withdrawn.text)")
            for (name, token) in [("the withdrawing session", enrolled.refreshToken), ("the other device", otherRefresh)] {
                let refresh = try await app.post(
                    "/v1/token?key=\(TestProject.apiKey)", ["grant_type": "refresh_token", "refresh_token": token])
                #expect(refresh.errorCode == "TOKEN_EXPIRED", "\(name): \(refresh.text)")
            }
        }
    }

    @Test("withdrawal: another factor's session gets new tokens; withdrawing the session's own factor revokes every session")
    func withdrawal() async throws {
        let clock = ManualClock.midHour()
        try await TestApp.router(environment: Self.enabled, clock: clock) { app in
            let enrolled = try await Self.enroll(app, clock, email: "withdraw@example.com")
            #expect(
                try await Self.v2(app, "mfaEnrollment:withdraw", ["idToken": enrolled.idToken]).errorCode == "MISSING_MFA_ENROLLMENT_ID")
            let unknown = try await Self.v2(app, "mfaEnrollment:withdraw", ["idToken": enrolled.idToken, "mfaEnrollmentId": "nope"])
            #expect(unknown.errorCode == "MFA_ENROLLMENT_NOT_FOUND", "\(unknown.text)")
            let withdrawn = try await Self.v2(
                app, "mfaEnrollment:withdraw", ["idToken": enrolled.idToken, "mfaEnrollmentId": enrolled.enrollmentID])
            #expect(withdrawn.status == 200 && withdrawn.json["idToken"] == nil, "the session's own factor: \(withdrawn.text)")
            let refresh = try await app.post(
                "/v1/token?key=\(TestProject.apiKey)", ["grant_type": "refresh_token", "refresh_token": enrolled.refreshToken])
            #expect(refresh.errorCode == "TOKEN_EXPIRED", "\(refresh.text)")
            // Without the factor, a password signs in directly again.
            let signedIn = try await app.signInWithPassword(enrolled.email)
            #expect(Spec.payload(signedIn.idToken)["firebase"].flatMap { ($0 as? [String: Any])?["sign_in_second_factor"] } == nil)
        }
    }
}
