import ActionLinksTestSupport
import Foundation
import JWTKit
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The server as Google's token endpoint for its own service accounts (the JWT-bearer grant), so
/// that one ActionLinks is another's upstream: google-auth, as firebase-admin uses it, against a
/// production server (`development: false`, where only a granted token is an admin credential).
@Suite("Upstream: the token endpoint with google-auth", .timeLimit(.minutes(5)))
struct UpstreamTokenEndpointTests {
    static let script = Repository.root.appendingPathComponent("Tests/FirebaseAdmin/service_account_token.py").path
    static let production = [
        "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": String(repeating: "t", count: 40),
    ]

    /// `actionlinks service-account --token-uri` for `server`, as a user runs it.
    static func serviceAccount(for server: TestServer, tokenURI: String) async throws -> String {
        let path = server.dataDirectory.appendingPathComponent("service-account.json").path
        let made = try await Command.run(
            program: try Repository.executable("actionlinks"),
            ["service-account", "--out", path, "--config", Repository.configFile, "--token-uri", tokenURI],
            environment: ProcessInfo.processInfo.environment.merging(["ACTIONLINKS_DATA_DIRECTORY": server.dataDirectory.path]) { $1 })
        #expect(made.status == 0, "\(made.stderr)")
        return path
    }

    @Test(
        "google-auth exchanges a file made with --token-uri for an access token that works as admin; tampered, expired, too long, wrong-aud (the loopback URL included), unscoped and unknown-key assertions are refused as Google refuses them"
    )
    func googleAuth() async throws {
        let server = try await TestServer(environment: Self.production)
        for path in ["/token", "/oauth2.googleapis.com/token"] {
            let tokenURI = server.base + path
            let account = server.dataDirectory.appendingPathComponent("service-account.json").path
            try? FileManager.default.removeItem(atPath: account)
            _ = try await Self.serviceAccount(for: server, tokenURI: tokenURI)
            let run = try await Command.run(
                program: URL(fileURLWithPath: "/usr/bin/env"), ["python3", Self.script, account, server.base, "demo-actionlinks"],
                environment: ProcessInfo.processInfo.environment)
            if run.stderr.contains("No module named 'google'") {
                throw TestSupportError(
                    "google-auth is not installed: run the tests with `bash scripts/test.sh`, or run `bash scripts/test-python.sh install` "
                        + "and `export PATH=\"$(bash scripts/test-python.sh bin):$PATH\"` first")
            }
            let result = try #require(run.status == 0 ? run.json : nil, "\(run.stderr)")
            #expect(result["tokenUri"] as? String == tokenURI)
            #expect(result["tokenPrefix"] as? String == "ya29.al.")
            #expect(result["expiresInFuture"] as? Bool == true, "an hour, as Google's")
            #expect(result["adminWithToken"] as? Int == 200, "the granted token is the admin credential")
            #expect(result["adminWithForgedToken"] as? Int == 401)
            // google-auth signs Google's token URL whatever the file says (the refresh above); an
            // assertion naming the loopback URL itself is refused by a production server, which
            // takes only Google's URL, its link domains' and server.tokenAudiences (RFC 7523 §3).
            let own = try #require(result["ownAudience"] as? [String: Any])
            #expect(own["status"] as? Int == 400 && own["error"] as? String == "invalid_grant", "\(own)")
            let refused: [(String, String, String)] = [
                ("tampered", "invalid_grant", "Invalid JWT Signature."),
                ("expired", "invalid_grant", "short-lived"),
                ("tooLong", "invalid_grant", "short-lived"),
                ("wrongAudience", "invalid_grant", "audience"),
                ("noScope", "invalid_scope", "scope"),
                ("unknownKey", "invalid_grant", "account not found"),
                ("otherKeySameId", "invalid_grant", "Invalid JWT Signature."),
                ("otherGrant", "unsupported_grant_type", "client_credentials"),
            ]
            for (name, error, description) in refused {
                let answer = try #require(result[name] as? [String: Any], "\(name)")
                #expect(answer["status"] as? Int == 400, "\(name): \(answer)")
                #expect(answer["error"] as? String == error, "\(name): \(answer)")
                #expect((answer["error_description"] as? String)?.contains(description) == true, "\(name): \(answer)")
                #expect(answer["access_token"] == nil, "\(name)")
            }
        }
        #expect(!server.standardError.contains("ya29.al."), "access tokens never reach the log")
    }

    @Test("a made-up access token is no admin credential in production, and --token-uri takes only https or loopback http")
    func madeUpToken() async throws {
        let server = try await TestServer(environment: Self.production)
        let reply = try await server.request(
            "POST", "/v1/projects/demo-actionlinks/accounts:query", body: Data("{}".utf8),
            headers: ["Authorization": "Bearer ya29.al.99999999999.AAAA.AAAA", "Content-Type": "application/json"])
        #expect(reply.status == 401)
        let path = server.dataDirectory.appendingPathComponent("other.json").path
        let made = try await Command.run(
            program: try Repository.executable("actionlinks"),
            ["service-account", "--out", path, "--config", Repository.configFile, "--token-uri", "http://tokens.example.com/token"],
            environment: ProcessInfo.processInfo.environment.merging(["ACTIONLINKS_DATA_DIRECTORY": server.dataDirectory.path]) { $1 })
        #expect(made.status == 64 && made.stderr.contains("--token-uri must be an https URL"), "\(made.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// The assertion the server's own upstream client signs, signed here by the test.
    typealias Assertion = GrantAssertion

    @Test(
        "the access token is an admin credential until it expires an hour later, then 401; the assertion, once expired, gets no new one"
    )
    func expiry() async throws {
        let clock = ManualClock()
        try await TestApp.router(environment: Self.production, clock: clock) { app in
            let path = app.dataDirectory.appendingPathComponent("sa.json").path
            _ = try ServiceAccountFile.make(
                dataDirectory: app.dataDirectory.path, projectID: TestProject.id, name: "tokens", output: path,
                tokenURI: "https://links.test.example/token")
            let file = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: String])
            let keys = JWTKeyCollection()
            let kid = JWKIdentifier(string: try #require(file["private_key_id"]))
            await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: try #require(file["private_key"])), digestAlgorithm: .sha256, kid: kid)
            let now = clock.now.seconds
            let assertion = try await keys.sign(
                Assertion(
                    iss: try #require(file["client_email"]), scope: "https://www.googleapis.com/auth/firebase",
                    aud: "https://links.test.example/token", iat: now, exp: now + 3600),
                kid: kid)
            let granted = try await app.request(
                "POST", "/token",
                body: Data("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)".utf8),
                headers: ["Content-Type": "application/x-www-form-urlencoded"])
            let token = try #require(granted.json["access_token"] as? String, "\(granted.text)")
            func query() async throws -> Int {
                try await app.request(
                    "POST", "/v1/projects/\(TestProject.id)/accounts:query", body: Data("{}".utf8),
                    headers: ["Authorization": "Bearer " + token, "Content-Type": "application/json"]
                ).status
            }
            #expect(try await query() == 200)
            clock.advance(seconds: 3599)
            #expect(try await query() == 200)
            clock.advance(seconds: 2)
            #expect(try await query() == 401, "expired")
            let late = try await app.request(
                "POST", "/token",
                body: Data("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)".utf8),
                headers: ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(late.status == 400 && late.json["error"] as? String == "invalid_grant", "the assertion expired too: \(late.text)")
        }
    }
}

@Suite("Service-account keys", .timeLimit(.minutes(5)))
struct ServiceAccountKeysTests {
    @Test("a key made right after a lookup missed is found at once; a made-up key ID stays unknown")
    func newKeyAtOnce() throws {
        let data = TestProject.temporaryDirectory("actionlinks-service-accounts")
        defer { try? FileManager.default.removeItem(at: data) }
        let folder = data.appendingPathComponent("keys/service-accounts")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let keys = ServiceAccountKeys(directory: folder.path)
        #expect(keys.key("made-up") == nil)
        // Within the same second as the miss: the folder changed, so it is read again.
        let made = try ServiceAccountFile.make(
            dataDirectory: data.path, projectID: TestProject.id, name: "fresh-key", output: data.appendingPathComponent("sa.json").path)
        #expect(keys.key(made.keyID)?.clientEmail == made.clientEmail)
        #expect(keys.key("made-up") == nil)
    }
}

extension ServiceAccountKeysTests {
    @Test("a key removed from the folder is gone at the next lookup; a revoked one stays gone when its file comes back")
    func removedAndRevoked() throws {
        let data = TestProject.temporaryDirectory("actionlinks-service-accounts")
        defer { try? FileManager.default.removeItem(at: data) }
        let folder = data.appendingPathComponent("keys/service-accounts")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let first = try ServiceAccountFile.make(
            dataDirectory: data.path, projectID: TestProject.id, name: "first-key", output: data.appendingPathComponent("1.json").path)
        let second = try ServiceAccountFile.make(
            dataDirectory: data.path, projectID: TestProject.id, name: "second-key", output: data.appendingPathComponent("2.json").path)
        let keys = ServiceAccountKeys(directory: folder.path)
        #expect(keys.key(first.keyID) != nil && keys.key(second.keyID) != nil)

        try FileManager.default.removeItem(atPath: first.publicKeyPath)
        #expect(keys.key(first.keyID) == nil, "removing a file changes the folder: read again at once")
        #expect(keys.key(second.keyID) != nil)

        let saved = try Data(contentsOf: URL(fileURLWithPath: second.publicKeyPath))
        let revoked = try ServiceAccountKeys.revoke(second.keyID, in: folder.path)
        #expect(revoked.movedFiles.count == 1 && !revoked.wasRevoked)
        #expect(keys.key(second.keyID) == nil)
        try saved.write(to: URL(fileURLWithPath: second.publicKeyPath))
        #expect(keys.key(second.keyID) == nil, "the marker keeps it revoked")
        #expect(try ServiceAccountKeys.revoke(second.keyID, in: folder.path).wasRevoked)
        #expect(throws: ServerKeysError.self) { try ServiceAccountKeys.revoke("never-made", in: folder.path) }
        #expect(throws: ServerKeysError.self) { try ServiceAccountKeys.revoke("../escape", in: folder.path) }
    }
}
