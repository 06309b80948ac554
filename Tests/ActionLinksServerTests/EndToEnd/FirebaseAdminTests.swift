import ActionLinks
import ActionLinksTestSupport
import Foundation
import Testing

/// The real firebase-admin Python SDK (pip: Tests/FirebaseAdmin/requirements.txt) against the server,
/// as a backend that used Firebase Auth would run it with FIREBASE_AUTH_EMULATOR_HOST.
@Suite("firebase-admin against the server", .timeLimit(.minutes(20)))
struct FirebaseAdminTests {
    static let script = Repository.root.appendingPathComponent("Tests/FirebaseAdmin/admin_links.py").path

    static let usersScript = Repository.root.appendingPathComponent("Tests/FirebaseAdmin/admin_users.py").path

    func python(_ arguments: [String], server: TestServer, script: String = script) async throws -> [String: Any] {
        var environment = ProcessInfo.processInfo.environment
        environment["FIREBASE_AUTH_EMULATOR_HOST"] = String(server.base.dropFirst("http://".count))
        let run = try await Command.run(
            program: URL(fileURLWithPath: "/usr/bin/env"), ["python3", script] + arguments, environment: environment)
        if run.stderr.contains("No module named 'firebase_admin'") {
            throw TestSupportError(
                "firebase-admin is not installed: run the tests with `bash scripts/test.sh`, or run `bash scripts/test-python.sh install` "
                    + "and `export PATH=\"$(bash scripts/test-python.sh bin):$PATH\"` first")
        }
        guard run.status == 0, let object = run.json else {
            throw TestSupportError("\(script) \(arguments) failed (\(run.status)):\n\(run.stderr)")
        }
        return object
    }

    @Test("firebase-admin creates a user and generates sign-in, reset and verification links that complete through the REST API")
    func adminLinks() async throws {
        let server = try await TestServer()
        let email = "admin-sdk@example.com"
        let result = try await python(["links", email], server: server)
        let uid = try #require(result["uid"] as? String)
        #expect(result["lookupUid"] as? String == uid && result["lookupEmail"] as? String == email)
        #expect(result["unknownUser"] as? String == "EmailNotFoundError", "EMAIL_NOT_FOUND, as Firebase answers")
        #expect((result["badContinueUrl"] as? String)?.contains("UNAUTHORIZED_DOMAIN") == true)

        let signInLink = try #require(result["signIn"] as? String)
        let resetLink = try #require(result["reset"] as? String)
        let verifyLink = try #require(result["verify"] as? String)
        let signIn = try #require(ActionCodeLink.parse(signInLink))
        #expect(signInLink.hasPrefix("https://links.test.example/__/auth/links?link="), "a mobile link for the app")
        #expect(signIn.mode == .signIn && signIn.continueURL == "https://app.example.com/finish" && signIn.apiKey == TestProject.apiKey)
        let reset = try #require(ActionCodeLink.parse(resetLink))
        #expect(reset.mode == .resetPassword && reset.continueURL == "https://app.example.com/reset")
        let verify = try #require(ActionCodeLink.parse(verifyLink))
        #expect(verify.mode == .verifyEmail)

        // Sign-in and verification first: a password reset retires every other outstanding code.
        let signedIn = try await server.api("signInWithEmailLink", ["email": email, "oobCode": signIn.oobCode])
        #expect(signedIn.json["localId"] as? String == uid, "\(signedIn.text)")
        let verified = try await server.api("update", ["oobCode": verify.oobCode])
        #expect(verified.json["emailVerified"] as? Bool == true, "\(verified.text)")
        let resetDone = try await server.api("resetPassword", ["oobCode": reset.oobCode, "newPassword": "reset-by-link-1"])
        #expect(resetDone.json["email"] as? String == email, "\(resetDone.text)")

        let idToken = try #require(signedIn.json["idToken"] as? String)
        let claims = try await python(["verify", idToken], server: server)
        #expect(claims["uid"] as? String == uid && claims["email"] as? String == email && claims["email_verified"] as? Bool == true)
    }

    @Test(
        "firebase-admin's whole user API: create, get by uid, email and phone, update, claims, revoke then verify_id_token(check_revoked) fails, disable, session cookies, list with paging, import with Firebase scrypt, custom tokens signed with a service account, delete, tenants"
    )
    func adminUsers() async throws {
        let server = try await TestServer()
        // The key pair whose custom tokens the server accepts, made as a user makes it.
        let account = server.dataDirectory.appendingPathComponent("service-account.json").path
        let made = try await Command.run(
            program: try Repository.executable("actionlinks"), ["service-account", "--out", account, "--config", Repository.configFile],
            environment: ProcessInfo.processInfo.environment.merging(["ACTIONLINKS_DATA_DIRECTORY": server.dataDirectory.path]) { $1 })
        #expect(made.status == 0, "\(made.stderr)")
        let result = try await python([account], server: server, script: Self.usersScript)
        func value(_ key: String) -> Any? { result[key] }

        #expect(
            (value("created") as? [String: String]) == [
                "uid": "ann-uid", "email": "ann@example.com", "phone": "+15555550100", "name": "Ann",
            ])
        #expect(value("byEmail") as? String == "ann-uid" && value("byPhone") as? String == "ann-uid")
        #expect((value("getUsers") as? [String: Any])?["notFound"] as? Int == 1)
        #expect(value("duplicateUid") as? String == "UidAlreadyExistsError")
        #expect(value("duplicateEmail") as? String == "EmailAlreadyExistsError")
        #expect(value("missing") as? String == "UserNotFoundError")
        let updated = try #require(value("updated") as? [String: Any])
        #expect(updated["name"] as? String == "Ann Example" && updated["verified"] as? Bool == true && updated["phone"] is NSNull)
        #expect((value("claims") as? [String: Any])?["role"] as? String == "admin")
        let verified = try #require(value("verified") as? [String: Any])
        #expect(
            verified["uid"] as? String == "ann-uid" && verified["role"] as? String == "admin"
                && verified["provider"] as? String == "password")
        #expect(value("notRevokedYet") as? String == "ann-uid")
        #expect(value("revoked") as? String == "RevokedIdTokenError")
        #expect((value("refreshAfterRevoke") as? [Any])?.last as? String == "TOKEN_EXPIRED")
        #expect((value("disabledSignIn") as? [Any])?.last as? String == "USER_DISABLED")
        #expect(value("sessionCookie") as? String == "ann-uid")
        let listed = try #require(value("listed") as? [String: Any])
        #expect(
            (listed["uids"] as? [String]) == ["ann-uid", "list-0", "list-1", "list-2", "list-3", "list-4"],
            "every user once, by ID, two a page: \(listed)")
        let imported = try #require(value("imported") as? [String: Any])
        #expect(imported["success"] as? Int == 1 && imported["failure"] as? Int == 1, "\(imported)")
        #expect("\(imported["errors"] ?? "")".contains("email exists in other account in database"))
        #expect((value("importedSignIn") as? [Any])?.last as? String == "imported-1", "the password imported from Firebase signs in")
        #expect((value("importedSignInAgain") as? [Any])?.last as? String == "imported-1", "and again, rehashed")
        #expect(value("customTokenHeader") as? String == "RS256")
        let custom = try #require(value("customSignIn") as? [Any])
        #expect(custom.count == 5 && custom[1] as? Bool == true && custom[2] as? String == "custom-uid" && custom[3] as? String == "gold")
        #expect((value("tamperedCustomToken") as? [Any])?.last as? String == "INVALID_CUSTOM_TOKEN")
        #expect((value("deleted") as? [String: Any])?["success"] as? Int == 3)
        #expect(value("afterDelete") as? String == "UserNotFoundError")
        let tenant = try #require(value("tenant") as? [String: Any])
        let tenantID = try #require(tenant["id"] as? String)
        #expect(tenant["name"] as? String == "Team-A" && tenant["renamed"] as? String == "Team-B" && tenant["listed"] as? Bool == true)
        #expect(
            tenant["userTenant"] as? String == tenantID && tenant["tokenTenant"] as? String == tenantID && tenant["signIn"] as? Int == 200)
        #expect(value("tenantDeleted") as? String == "TenantNotFoundError")
    }
}
