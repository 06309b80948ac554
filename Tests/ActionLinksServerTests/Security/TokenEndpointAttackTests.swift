import ActionLinksTestSupport
import Foundation
import JWTKit
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// Issue 32's findings on `POST /token`, through the real binary in production mode: a key removed
/// or revoked keeps nothing working, a key of another project gets nothing, an assertion must name
/// this server whatever the request's `Host` says, and only an admin scope makes an admin.
@Suite("The token endpoint under attack", .timeLimit(.minutes(5)))
struct TokenEndpointAttackTests {
    static let configuredAudience = "https://auth.internal.example/token"
    static let production = [
        "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": String(repeating: "t", count: 40),
        "ACTIONLINKS_SERVER_TOKEN_AUDIENCES": configuredAudience,
    ]

    /// A service-account file made by the real command for `server` (for `project`, by default its own).
    static func serviceAccount(_ server: TestServer, name: String, project: String? = nil) async throws -> [String: String] {
        let path = server.dataDirectory.appendingPathComponent("\(name).json").path
        var environment = ProcessInfo.processInfo.environment.merging(["ACTIONLINKS_DATA_DIRECTORY": server.dataDirectory.path]) { $1 }
        if let project { environment["ACTIONLINKS_PROJECT_ID"] = project }
        let made = try await Command.run(
            program: try Repository.executable("actionlinks"),
            ["service-account", "--out", path, "--config", Repository.configFile, "--name", name], environment: environment)
        guard made.status == 0 else { throw TestSupportError("service-account failed: \(made.stderr)") }
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: String])
    }

    /// A JWT-bearer assertion signed with the file's key.
    static func assertion(_ file: [String: String], audience: String = ServiceAccountTokens.googleTokenURL, scope: String) async throws
        -> String
    {
        let keys = JWTKeyCollection()
        let kid = JWKIdentifier(string: try #require(file["private_key_id"]))
        await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: try #require(file["private_key"])), digestAlgorithm: .sha256, kid: kid)
        let now = Int64(Date().timeIntervalSince1970)
        return try await keys.sign(
            GrantAssertion(iss: try #require(file["client_email"]), scope: scope, aud: audience, iat: now, exp: now + 3600), kid: kid)
    }

    /// `POST /token` with `assertion`, on a raw connection whose `Host` header is `host`.
    static func grant(_ server: TestServer, _ assertion: String, host: String? = nil) async throws -> (status: Int, json: [String: Any]) {
        let body = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        let (address, port) = try RawHTTP.hostAndPort(server.base)
        let head =
            "POST /token HTTP/1.1\r\nHost: \(host ?? "\(address):\(port)")\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
        let answer = String(decoding: try await RawHTTP.exchangeOffThread(base: server.base, Array((head + body).utf8)), as: UTF8.self)
        let status = Int(answer.split(separator: " ").dropFirst().first ?? "") ?? 0
        let json = answer.range(of: "\r\n\r\n").flatMap { try? JSONSerialization.jsonObject(with: Data(answer[$0.upperBound...].utf8)) }
        return (status, json as? [String: Any] ?? [:])
    }

    /// The status of an admin call with `token`.
    static func adminCall(_ server: TestServer, _ token: String) async throws -> HTTPReply {
        try await server.request(
            "POST", "/v1/projects/\(TestProject.id)/accounts:query", body: Data("{}".utf8),
            headers: ["Authorization": "Bearer " + token, "Content-Type": "application/json"])
    }

    static let firebaseScope = "https://www.googleapis.com/auth/firebase"

    @Test(
        "an assertion must name this server: Google's token URL, a link domain's, or server.tokenAudiences; never what the Host header says, nor loopback in production"
    )
    func audience() async throws {
        let server = try await TestServer(environment: Self.production)
        let file = try await Self.serviceAccount(server, name: "audience")
        let (address, port) = try RawHTTP.hostAndPort(server.base)
        for accepted in [
            ServiceAccountTokens.googleTokenURL, "https://links.test.example/token",
            "https://links.test.example/oauth2.googleapis.com/token",
            Self.configuredAudience,
        ] {
            let granted = try await Self.grant(server, try await Self.assertion(file, audience: accepted, scope: Self.firebaseScope))
            #expect(granted.status == 200 && granted.json["access_token"] != nil, "\(accepted): \(granted.json)")
        }
        for (audience, host) in [
            ("https://evil.example/token", "evil.example"), ("http://\(address):\(port)/token", "\(address):\(port)"),
            ("https://\(address):\(port)/token", "\(address):\(port)"),
            ("https://links.test.example.evil/token", "links.test.example.evil"),
        ] {
            let refused = try await Self.grant(
                server, try await Self.assertion(file, audience: audience, scope: Self.firebaseScope), host: host)
            #expect(refused.status == 400 && refused.json["error"] as? String == "invalid_grant", "\(audience): \(refused.json)")
            #expect((refused.json["error_description"] as? String)?.contains("audience") == true, "\(refused.json)")
        }
    }

    @Test("a key made for another project gets no access token (invalid_grant), as its custom tokens get CREDENTIAL_MISMATCH")
    func otherProject() async throws {
        let server = try await TestServer(environment: Self.production)
        let file = try await Self.serviceAccount(server, name: "elsewhere", project: "another-project")
        let refused = try await Self.grant(server, try await Self.assertion(file, scope: Self.firebaseScope))
        #expect(refused.status == 400 && refused.json["error"] as? String == "invalid_grant", "\(refused.json)")
        #expect(refused.json["access_token"] == nil)
    }

    @Test(
        "a token asked for with userinfo.email alone is granted, as Google grants it, but is no admin credential (403); firebase-admin's scopes are"
    )
    func scopes() async throws {
        let server = try await TestServer(environment: Self.production)
        let file = try await Self.serviceAccount(server, name: "scopes")
        let email = try await Self.grant(
            server, try await Self.assertion(file, scope: "https://www.googleapis.com/auth/userinfo.email"))
        let emailToken = try #require(email.json["access_token"] as? String, "\(email.json)")
        let refused = try await Self.adminCall(server, emailToken)
        #expect(refused.status == 403 && refused.text.contains("insufficient authentication scopes"), "\(refused.text)")
        for scope in [
            "https://www.googleapis.com/auth/cloud-platform", Self.firebaseScope, "https://www.googleapis.com/auth/identitytoolkit",
            "https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/cloud-platform",
        ] {
            let granted = try await Self.grant(server, try await Self.assertion(file, scope: scope))
            let token = try #require(granted.json["access_token"] as? String, "\(granted.json)")
            #expect(try await Self.adminCall(server, token).status == 200, "\(scope)")
        }
    }

    @Test(
        "a key file removed while the server runs stops working within seconds: no new token, the granted one is no admin, its custom tokens are refused"
    )
    func removedKey() async throws {
        let server = try await TestServer(environment: Self.production)
        let file = try await Self.serviceAccount(server, name: "leaked")
        let kid = try #require(file["private_key_id"])
        let granted = try await Self.grant(server, try await Self.assertion(file, scope: Self.firebaseScope))
        let token = try #require(granted.json["access_token"] as? String, "\(granted.json)")
        #expect(try await Self.adminCall(server, token).status == 200)
        let customToken = try await CustomTokens.sign(file: file, uid: "leaked-user")
        #expect(try await server.api("signInWithCustomToken", ["token": customToken, "returnSecureToken": true]).status == 200)

        try FileManager.default.removeItem(at: server.dataDirectory.appendingPathComponent("keys/service-accounts/\(kid).json"))
        try await Eventually.wait(for: "the removed key's access token to stop working") {
            try await Self.adminCall(server, token).status == 401
        }
        let again = try await Self.grant(server, try await Self.assertion(file, scope: Self.firebaseScope))
        #expect(again.status == 400 && again.json["error"] as? String == "invalid_grant", "\(again.json)")
        let signIn = try await server.api("signInWithCustomToken", ["token": customToken, "returnSecureToken": true])
        #expect(signIn.status == 400 && signIn.errorCode == "INVALID_CUSTOM_TOKEN", "\(signIn.text)")
    }

    @Test(
        "`actionlinks keys revoke` ends a key and the tokens granted for it at once, and the key stays revoked when its file comes back; an unknown key ID is an error"
    )
    func revoke() async throws {
        let server = try await TestServer(environment: Self.production)
        let file = try await Self.serviceAccount(server, name: "revoked")
        let kid = try #require(file["private_key_id"])
        let token = try #require(
            try await Self.grant(server, try await Self.assertion(file, scope: Self.firebaseScope)).json["access_token"] as? String)
        #expect(try await Self.adminCall(server, token).status == 200)
        let keyFile = server.dataDirectory.appendingPathComponent("keys/service-accounts/\(kid).json")
        let saved = try Data(contentsOf: keyFile)

        let environment = ProcessInfo.processInfo.environment.merging(["ACTIONLINKS_DATA_DIRECTORY": server.dataDirectory.path]) { $1 }
        let revoke = try await Command.run(
            program: try Repository.executable("actionlinks"), ["keys", "revoke", kid, "--config", Repository.configFile],
            environment: environment)
        #expect(revoke.status == 0 && revoke.stdout.contains("revoked key \(kid)"), "\(revoke.stdout) \(revoke.stderr)")
        try await Eventually.wait(for: "the revoked key's access token to stop working") {
            try await Self.adminCall(server, token).status == 401
        }
        // A backup restored, or a deployment that copies the folder again: still revoked.
        try saved.write(to: keyFile)
        let restored = try await Self.grant(server, try await Self.assertion(file, scope: Self.firebaseScope))
        #expect(restored.status == 400 && restored.json["error"] as? String == "invalid_grant", "\(restored.json)")
        #expect(try await Self.adminCall(server, token).status == 401)

        let unknown = try await Command.run(
            program: try Repository.executable("actionlinks"), ["keys", "revoke", "no-such-key", "--config", Repository.configFile],
            environment: environment)
        #expect(unknown.status != 0 && unknown.stderr.contains("no service-account key 'no-such-key'"), "\(unknown.stderr)")
    }
}

/// Custom tokens as firebase-admin's `create_custom_token` signs them (the claims of the server's
/// own hand-off tokens are the same shape).
enum CustomTokens {
    static func sign(file: [String: String], uid: String) async throws -> String {
        let keys = JWTKeyCollection()
        let kid = JWKIdentifier(string: try #require(file["private_key_id"]))
        await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: try #require(file["private_key"])), digestAlgorithm: .sha256, kid: kid)
        let email = try #require(file["client_email"])
        let now = Int64(Date().timeIntervalSince1970)
        let claims = HandOffClaims(
            iss: email, sub: email, aud: CustomTokenVerifier.audience, uid: uid, iat: now, exp: now + 3600, jti: UUID().uuidString)
        return try await keys.sign(claims, kid: kid)
    }
}
