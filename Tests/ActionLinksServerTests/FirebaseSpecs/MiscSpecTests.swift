import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

extension FirebaseSpecs {
    /// firebase-tools `src/emulator/auth/misc.spec.ts`: token refresh, session cookies,
    /// `accounts:lookup`, `accounts:query` and the emulator's utility endpoints. Not ported: the
    /// emulator's run-time configuration (`GET`/`PATCH /emulator/v1/projects/<p>/config`, five cases):
    /// this server reads `users.oneAccountPerEmail` and `users.emailEnumerationProtection` from its
    /// configuration, which no request changes. Where this server answers differently on purpose, the
    /// case says why: refresh tokens are opaque (no record to forge), `project_id` is the project's ID,
    /// session cookies are signed, and another project in a path is `PROJECT_NOT_FOUND`.
    @Suite("misc.spec.ts: token refresh, session cookies, lookup, query, emulator endpoints", .timeLimit(.minutes(5)))
    struct MiscSpecTests {
        static func refresh(_ app: TestApp, form: String) async throws -> HTTPReply {
            try await app.request(
                "POST", "/securetoken.googleapis.com/v1/token?key=demo-api-key", body: Data(form.utf8),
                headers: ["Content-Type": "application/x-www-form-urlencoded"])
        }

        static func refresh(_ app: TestApp, _ refreshToken: String) async throws -> HTTPReply {
            try await refresh(app, form: "refresh_token=\(HTMLForm.encode(component: refreshToken))&grantType=refresh_token")
        }

        static func sessionCookie(_ app: TestApp, _ fields: [String: Any]) async throws -> HTTPReply {
            try await app.post(
                "/identitytoolkit.googleapis.com/v1/projects/demo-actionlinks:createSessionCookie", fields, headers: Spec.admin)
        }

        // MARK: token refresh

        @Test("lastRefreshAt is written when it is a minute old or more, as Firebase's resolution of it has it")
        func lastRefreshResolution() async throws {
            let clock = ManualClock()
            try await TestApp.router(clock: clock) { app in
                let user = try await app.registerAnonUser()
                func refreshed() async throws -> (idToken: String, lastRefreshAt: String?) {
                    let reply = try await Self.refresh(app, user.refreshToken)
                    #expect(reply.status == 200, "\(reply.text)")
                    let idToken = try #require(reply.json["id_token"] as? String)
                    return (idToken, try await app.accountInfo(idToken: idToken)["lastRefreshAt"] as? String)
                }
                let first = try #require(try await refreshed().lastRefreshAt)
                clock.advance(seconds: 59)
                #expect(try await refreshed().lastRefreshAt == first, "a refresh within the minute writes nothing")
                clock.advance(seconds: 1)
                let later = try #require(try await refreshed().lastRefreshAt)
                #expect(later != first, "a minute later it is written again")
            }
        }

        @Test("should exchange refresh token for new tokens")
        func exchange() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                let reply = try await Self.refresh(app, user.refreshToken)
                #expect(reply.status == 200, "\(reply.text)")
                let idToken = try #require(reply.json["id_token"] as? String)
                #expect(reply.json["access_token"] as? String == idToken && reply.json["refresh_token"] is String)
                #expect((reply.json["expires_in"] as? String).map { !$0.isEmpty && $0.allSatisfy(\.isNumber) } == true)
                #expect(reply.json["token_type"] as? String == "Bearer" && reply.json["user_id"] as? String == user.localId)
                // The project's ID: this server has no project number (the emulator answers "12345").
                #expect(reply.json["project_id"] as? String == "demo-actionlinks")
            }
        }

        @Test("should exchange refresh tokens for new tokens in a tenant project")
        func exchangeInTenant() async throws {
            try await TestApp.router { app in
                let tenant = try await app.registerTenant(["disableAuth": false, "allowPasswordSignup": true])
                let user = try await app.registerUser(email: "alice@example.com", tenant: tenant)
                let reply = try await Self.refresh(app, user.refreshToken)
                #expect(reply.status == 200 && reply.json["user_id"] as? String == user.localId, "\(reply.text)")
                let idToken = reply.json["id_token"] as? String ?? ""
                #expect((Spec.payload(idToken)["firebase"] as? [String: Any])?["tenant"] as? String == tenant)
                // The refresh token is opaque here; what it stands for is the tenant's session.
                let again = try await Self.refresh(app, reply.json["refresh_token"] as? String ?? "")
                #expect(again.status == 200 && again.json["user_id"] as? String == user.localId, "\(again.text)")
            }
        }

        @Test("should populate auth_time to match lastLoginAt (in seconds since epoch)")
        func authTime() async throws {
            let clock = ManualClock(start: Timestamp(milliseconds: 1_700_000_000_444))
            try await TestApp.router(clock: clock) { app in
                let user = try await app.registerUser(email: "alice@example.com")
                clock.advance(seconds: 2)
                let reply = try await Self.refresh(app, user.refreshToken)
                let idToken = try #require(reply.json["id_token"] as? String, "\(reply.text)")
                let info = try await app.accountInfo(idToken: idToken)
                let lastLogin = try #require(Int64(info["lastLoginAt"] as? String ?? ""))
                #expect(Spec.payload(idToken)["auth_time"] as? Int64 == lastLogin / 1000)
                #expect((Spec.payload(idToken)["iat"] as? Int64).map { $0 > lastLogin / 1000 } == true)
            }
        }

        @Test("should error if grant type is missing")
        func missingGrantType() async throws {
            try await TestApp.router { app in
                let reply = try await Self.refresh(app, form: "refresh_token=whatever")
                #expect(reply.status == 400 && reply.errorMessage.contains("MISSING_GRANT_TYPE"), "\(reply.text)")
            }
        }

        @Test("should error if grant type is not refresh_token")
        func wrongGrantType() async throws {
            try await TestApp.router { app in
                let reply = try await Self.refresh(app, form: "refresh_token=whatever&grant_type=other_grant_type")
                #expect(reply.status == 400 && reply.errorMessage.contains("INVALID_GRANT_TYPE"), "\(reply.text)")
            }
        }

        @Test("should error if refresh token is missing")
        func missingRefreshToken() async throws {
            try await TestApp.router { app in
                let reply = try await Self.refresh(app, form: "grant_type=refresh_token")
                #expect(reply.status == 400 && reply.errorMessage.contains("MISSING_REFRESH_TOKEN"), "\(reply.text)")
            }
        }

        @Test("should error on malformed refresh tokens")
        func malformedRefreshToken() async throws {
            try await TestApp.router { app in
                let reply = try await Self.refresh(app, "malformedToken")
                #expect(reply.status == 400 && reply.errorMessage.contains("INVALID_REFRESH_TOKEN"), "\(reply.text)")
            }
        }

        @Test("should error if user is disabled")
        func disabledUser() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                try await app.updateAccount(localId: user.localId, ["disableUser": true])
                let reply = try await Self.refresh(
                    app, form: "refreshToken=\(HTMLForm.encode(component: user.refreshToken))&grantType=refresh_token")
                #expect(reply.isError("USER_DISABLED"), "\(reply.text)")
            }
        }

        @Test(
            "should error when refresh tokens are from a different project; should error on refresh tokens without required fields (a token this server did not issue)"
        )
        func foreignRefreshToken() async throws {
            try await TestApp.router { app in
                // The emulator's refresh tokens are base64 JSON records that can be forged; this
                // server's are random and stored by hash, so a record of the emulator's is just unknown.
                let record = #"{"_AuthEmulatorRefreshToken":"DO NOT MODIFY","localId":"localId","provider":"provider","projectId":"other"}"#
                let reply = try await Self.refresh(app, Data(record.utf8).base64EncodedString())
                #expect(reply.isError("INVALID_REFRESH_TOKEN"), "\(reply.text)")
            }
        }

        @Test("should error if the refresh token is for a user that does not exist")
        func deletedUser() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                #expect(try await app.api("delete", ["idToken": user.idToken]).status == 200)
                let reply = try await Self.refresh(app, user.refreshToken)
                #expect(reply.status == 400 && reply.errorMessage.contains("INVALID_REFRESH_TOKEN"), "\(reply.text)")
            }
        }

        @Test("a JSON body works as the form does (the iOS SDK's), snake_case or camelCase")
        func jsonBody() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                for fields in [
                    ["grantType": "refresh_token", "refreshToken": user.refreshToken],
                    ["grant_type": "refresh_token", "refresh_token": user.refreshToken],
                ] {
                    let reply = try await app.post("/securetoken.googleapis.com/v1/token?key=demo-api-key", fields)
                    #expect(
                        reply.status == 200 && reply.json["id_token"] is String && reply.json["access_token"] is String, "\(reply.text)")
                    #expect(reply.json["refresh_token"] is String && reply.json["expires_in"] as? String == "3600")
                    #expect(reply.json["user_id"] as? String == user.localId && reply.json["project_id"] as? String == "demo-actionlinks")
                }
                #expect(
                    try await app.post("/v1/token?key=demo-api-key", ["grantType": "refresh_token", "refreshToken": user.refreshToken])
                        .status
                        == 200)
            }
        }

        @Test("concurrent refreshes of one refresh token all succeed")
        func concurrentRefreshes() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<8 { group.addTask { try await Self.refresh(app, user.refreshToken).status } }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses == Array(repeating: 200, count: 8))
            }
        }

        @Test("refresh tokens are revoked by validSince (TOKEN_EXPIRED; the emulator never revokes them)")
        func revokedRefreshToken() async throws {
            let clock = ManualClock()
            try await TestApp.router(clock: clock) { app in
                let user = try await app.registerUser(email: "alice@example.com")
                clock.advance(seconds: 2)
                try await app.updateAccount(localId: user.localId, ["validSince": clock.now.seconds])
                let reply = try await Self.refresh(app, user.refreshToken)
                #expect(reply.isError("TOKEN_EXPIRED"), "\(reply.text)")
                let again = try await app.signInWithPassword("alice@example.com")
                #expect(try await Self.refresh(app, again.refreshToken).status == 200)
            }
        }

        @Test("the token endpoint needs the API key (403 PERMISSION_DENIED without it)")
        func tokenNeedsKey() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                let reply = try await app.post(
                    "/securetoken.googleapis.com/v1/token", ["grantType": "refresh_token", "refreshToken": user.refreshToken])
                #expect(
                    reply.status == 403 && (reply.json["error"] as? [String: Any])?["status"] as? String == "PERMISSION_DENIED",
                    "\(reply.text)"
                )
            }
        }

        // MARK: createSessionCookie

        @Test("should return a valid sessionCookie")
        func sessionCookie() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                let reply = try await Self.sessionCookie(app, ["idToken": user.idToken, "validDuration": "7777"])
                let cookie = try #require(reply.json["sessionCookie"] as? String, "\(reply.text)")
                // Signed RS256, where the emulator's are unsigned.
                #expect(Spec.header(cookie)["alg"] as? String == "RS256")
                let payload = Spec.payload(cookie)
                let iat = try #require(payload["iat"] as? Int64)
                #expect(abs(iat - Int64(Date().timeIntervalSince1970)) < 60 && payload["exp"] as? Int64 == iat + 7777)
                #expect(payload["iss"] as? String == "https://session.firebase.google.com/demo-actionlinks")
                let token = Spec.payload(user.idToken)
                for key in ["aud", "sub", "user_id", "auth_time", "provider_id"] {
                    #expect("\(payload[key] ?? "-")" == "\(token[key] ?? "-")", "\(key)")
                }
            }
        }

        @Test("should throw if idToken is missing")
        func sessionCookieWithoutIDToken() async throws {
            try await TestApp.router { app async throws in
                #expect(try await Self.sessionCookie(app, ["validDuration": "7777"]).isError("MISSING_ID_TOKEN"))
            }
        }

        @Test("should throw if idToken is invalid")
        func sessionCookieInvalidIDToken() async throws {
            try await TestApp.router { app async throws in
                #expect(try await Self.sessionCookie(app, ["idToken": "invalid", "validDuration": "7777"]).isError("INVALID_ID_TOKEN"))
            }
        }

        @Test("should use default session cookie validDuration if not specified")
        func sessionCookieDefaultDuration() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                let reply = try await Self.sessionCookie(app, ["idToken": user.idToken])
                let payload = Spec.payload(reply.json["sessionCookie"] as? String ?? "")
                let iat = try #require(payload["iat"] as? Int64, "\(reply.text)")
                #expect(payload["exp"] as? Int64 == iat + 1_209_600)
            }
        }

        @Test("should throw if validDuration is too short or too long")
        func sessionCookieDuration() async throws {
            try await TestApp.router { app in
                let user = try await app.registerAnonUser()
                for duration in ["1", "999999999999"] {
                    #expect(
                        try await Self.sessionCookie(app, ["idToken": user.idToken, "validDuration": duration]).isError("INVALID_DURATION"))
                }
            }
        }
    }
}
