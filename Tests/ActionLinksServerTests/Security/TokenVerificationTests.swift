import ActionLinksTestSupport
import Foundation
import JWTKit
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// ID tokens verify as docs/ACCOUNTS.md tells a backend to verify them (jwt-kit in Swift, PyJWT in
/// Python) with nothing but the JWKS the server publishes; and the signing keys rotate.
@Suite("ID tokens verified by a backend", .timeLimit(.minutes(5)))
struct TokenVerificationTests {
    /// docs/ACCOUNTS.md's jwt-kit example, as written there.
    struct FirebaseClaims: JWTPayload {
        var sub: SubjectClaim
        var aud: AudienceClaim
        var iss: IssuerClaim
        var exp: ExpirationClaim
        var email: String?
        func verify(using algorithm: some JWTAlgorithm) throws {
            try exp.verifyNotExpired()
            try aud.verifyIntendedAudience(includes: "demo-actionlinks")
            guard iss.value == "https://securetoken.google.com/demo-actionlinks" else {
                throw JWTError.claimVerificationFailure(failedClaim: iss, reason: "issuer")
            }
        }
    }

    @Test("jwt-kit and PyJWT verify a token with the published JWKS; a tampered one fails both")
    func backendsVerify() async throws {
        try await TestApp.live { app in
            let signedUp = try await app.api(
                "signUp", ["email": "ann@example.com", "password": "a-long-password", "returnSecureToken": true])
            let token = try #require(signedUp.json["idToken"] as? String, "\(signedUp.text)")
            let jwks = try await app.request("GET", "/.well-known/jwks.json")
            #expect(jwks.header("Content-Type") == "application/json")
            let keys = try await JWTKeyCollection().add(jwksJSON: jwks.text)
            let claims = try await keys.verify(token, as: FirebaseClaims.self)
            #expect(claims.email == "ann@example.com" && claims.sub.value == signedUp.json["localId"] as? String)
            let parts = token.split(separator: ".")
            let tampered = parts[0] + "." + parts[1].dropLast(2) + "AA." + parts[2]
            await #expect(throws: (any Error).self) { _ = try await keys.verify(String(tampered), as: FirebaseClaims.self) }

            let script = Repository.root.appendingPathComponent("Tests/Backend/verify_with_pyjwt.py").path
            let python = try await Command.run(
                program: URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, app.base, "demo-actionlinks", token])
            #expect(python.status == 0, "\(python.stderr)")
            #expect(python.json?["email"] as? String == "ann@example.com")
            let refused = try await Command.run(
                program: URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, app.base, "demo-actionlinks", String(tampered)])
            #expect(refused.status == 1, "PyJWT refuses the tampered token: \(refused.stderr)")
        }
    }

    @Test("a rotated key signs from then on; the older one stays published, so tokens it signed still verify")
    func rotation() async throws {
        let directory = TestProject.temporaryDirectory("actionlinks-keys")
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = SigningKeys(directory: directory.path, rotation: 30 * 86_400, retention: 15 * 86_400)
        let start: Timestamp = Timestamp(milliseconds: 1_800_000_000_000)
        try await keys.refresh(now: start)
        let tokens = TokenService(keys: keys, projectID: "demo-actionlinks", acceptsUnsignedTokens: false)
        let account = Account(localID: "u1", email: "ann@example.com", createdAt: start)
        let session = Session(
            hash: Data(), tenantID: "", accountID: "u1", createdAt: start, signInProvider: "password", authTime: start.seconds)
        let first = try await tokens.idToken(for: account, session: session, now: start)
        let firstKey = try keys.keys.keys[0].id
        // 31 days on: due for rotation.
        let later = start + .seconds(31 * 86_400)
        try await keys.refresh(now: later)
        let current = try keys.keys
        #expect(current.keys.count == 2 && current.keys[0].id != firstKey && current.keys[1].id == firstKey)
        let second = try await tokens.idToken(for: account, session: session, now: later)
        #expect(try await tokens.verifyIDToken(second, now: later).sub == "u1")
        #expect(try await tokens.verifyIDToken(first, now: start + .milliseconds(1000)).sub == "u1", "the old key still verifies")
        // Past the retention, the old key is no longer published.
        try await keys.refresh(now: later + .seconds(16 * 86_400))
        #expect(try keys.keys.keys.map(\.id) == [current.keys[0].id])
        // `keys rotate` adds a key that the next refresh signs with.
        let rotated = try SigningKeys.rotate(in: directory.path, now: later + .seconds(16 * 86_400))
        try await keys.refresh(now: later + .seconds(16 * 86_400 + 1))
        #expect(try keys.keys.keys[0].id == rotated)
    }
}
