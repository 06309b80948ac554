import JWTKit
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// Claims checked inside jwt-kit's verification (``CheckedClaims``): with the caller's
/// expectations and clock they decide, and without them no token is accepted.
@Suite("Claims checked in jwt-kit's verify", .timeLimit(.minutes(5)))
struct CheckedClaimsTests {
    static let now: Int64 = 1_800_000_000

    /// A service-account assertion signed with an HMAC key (the checks come after any signature).
    func signed(_ payload: AssertionPayload) async throws -> (JWTKeyCollection, String) {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: "a test key of 32 bytes or more..."), digestAlgorithm: .sha256)
        return (keys, try await keys.sign(payload))
    }

    func assertion(iat: Int64 = now, exp: Int64 = now + 3600, aud: String = "https://oauth2.googleapis.com/token") -> AssertionPayload {
        AssertionPayload(iss: "sa@example.iam.gserviceaccount.com", aud: aud, scope: "a", iat: iat, exp: exp)
    }

    func expected(now: Int64 = now) -> AssertionPayload.Expectations {
        .init(issuer: "sa@example.iam.gserviceaccount.com", audiences: ["https://oauth2.googleapis.com/token"], now: now)
    }

    @Test func aTokenVerifiedWithoutExpectationsIsRefused() async throws {
        let (keys, token) = try await signed(assertion())
        await #expect(throws: ClaimExpectations.Missing.self) { try await keys.verify(token, as: AssertionPayload.self) }
        let verified = try await keys.verify(token, as: AssertionPayload.self, expecting: expected())
        #expect(verified.scope == "a")
    }

    @Test func theInjectedClockDecides() async throws {
        let (keys, token) = try await signed(assertion())
        // One second before expiry it is good; at expiry it is not.
        _ = try await keys.verify(token, as: AssertionPayload.self, expecting: expected(now: Self.now + 3599))
        await #expect(throws: OAuthError.self) {
            try await keys.verify(token, as: AssertionPayload.self, expecting: expected(now: Self.now + 3600))
        }
        // Issued more than five minutes ahead of the clock.
        await #expect(throws: OAuthError.self) {
            try await keys.verify(token, as: AssertionPayload.self, expecting: expected(now: Self.now - 301))
        }
    }

    @Test func theExpectedAudienceDecides() async throws {
        let (keys, token) = try await signed(assertion(aud: "https://elsewhere.example/token"))
        await #expect(throws: OAuthError.self) { try await keys.verify(token, as: AssertionPayload.self, expecting: expected()) }
    }

    /// Claims this server only signs are never accepted as that type.
    @Test func signedOnlyClaimsAreNeverAccepted() async throws {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: "a test key of 32 bytes or more..."), digestAlgorithm: .sha256)
        let token = try await keys.sign(
            GrantAssertion(iss: "sa@example.iam.gserviceaccount.com", scope: "a", aud: "b", iat: Self.now, exp: Self.now + 60))
        await #expect(throws: ClaimExpectations.Missing.self) { try await keys.verify(token, as: GrantAssertion.self) }
    }
}
