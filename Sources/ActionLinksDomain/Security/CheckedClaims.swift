import JWTKit

/// Claims whose checks run inside jwt-kit's verification (`verify(using:)`, after the signature)
/// against what the caller expects, the service clock's time included: the expectations are handed
/// in for one verification by ``JWTKeyCollection/verify(_:as:expecting:)``, and a verification
/// without them refuses the token, so no token of such a type is accepted unchecked.
protocol CheckedClaims: JWTPayload {
    /// What a token must match: its audience, issuer, nonce, and the time to check it at.
    associatedtype Expectations: Sendable
    /// Throws the error the caller answers with when the claims do not match `expected`.
    func check(_ expected: Expectations) throws
}

/// The expectations of the verification in progress (a task-local value).
enum ClaimExpectations {
    @TaskLocal static var current: (any Sendable)?

    /// A verification that was given no expectations: the token is refused.
    struct Missing: Error, CustomStringConvertible {
        var description: String { "the token's claims were verified without expectations" }
    }
}

extension CheckedClaims {
    func verify(using algorithm: some JWTAlgorithm) async throws { try checkExpectations() }

    /// Checks the claims against the verification's expectations (refused without any); what a
    /// public type's own `verify(using:)` calls.
    func checkExpectations() throws {
        guard let expected = ClaimExpectations.current as? Expectations else { throw ClaimExpectations.Missing() }
        try check(expected)
    }
}

extension JWTKeyCollection {
    /// `token`'s claims if its signature verifies with one of the keys and they match `expected`
    /// (``CheckedClaims/check(_:)``'s error otherwise).
    func verify<Claims: CheckedClaims>(_ token: String, as type: Claims.Type, expecting expected: Claims.Expectations)
        async throws -> Claims
    {
        try await ClaimExpectations.$current.withValue(expected) { try await self.verify(token, as: type) }
    }
}

/// Claims this server only signs (never accepted as this type): verifying one always fails.
protocol SignedOnlyClaims: JWTPayload {}

extension SignedOnlyClaims {
    func verify(using algorithm: some JWTAlgorithm) async throws { throw ClaimExpectations.Missing() }
}
