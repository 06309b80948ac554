import ActionLinks
import ActionLinksTestSupport
import Foundation
import Testing

/// The real firebase-admin Python SDK (pip: Tests/FirebaseAdmin/requirements.txt) against the server,
/// as a backend that used Firebase Auth would run it with FIREBASE_AUTH_EMULATOR_HOST.
@Suite("firebase-admin against the server")
struct FirebaseAdminTests {
    static let script = Repository.root.appendingPathComponent("Tests/FirebaseAdmin/admin_links.py").path

    func python(_ arguments: [String], server: TestServer) async throws -> [String: Any] {
        var environment = ProcessInfo.processInfo.environment
        environment["FIREBASE_AUTH_EMULATOR_HOST"] = String(server.base.dropFirst("http://".count))
        let run = try await Command.run(
            program: URL(fileURLWithPath: "/usr/bin/env"), ["python3", Self.script] + arguments, environment: environment)
        if run.stderr.contains("No module named 'firebase_admin'") {
            throw TestSupportError("firebase-admin is not installed: pip install -r Tests/FirebaseAdmin/requirements.txt")
        }
        guard run.status == 0, let object = run.json else {
            throw TestSupportError("admin_links.py \(arguments) failed (\(run.status)):\n\(run.stderr)")
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
}
