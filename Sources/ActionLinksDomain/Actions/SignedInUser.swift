import Foundation

/// An account that just signed in (or was created, or changed in a way that issues new tokens),
/// with the session it got: the ID token is signed from it once the transaction is over.
public struct SignedInUser: Sendable {
    /// The account after the sign-in.
    public var account: Account
    /// The new session (its refresh token and what the store kept).
    public var session: TokenService.NewSession
    /// Whether the sign-in created the account.
    public var isNewUser: Bool

    /// What a sign-in answer carries: `idToken`, `refreshToken`, `expiresIn` (a string, as iOS
    /// reads it).
    public struct Tokens: Sendable, Encodable {
        public var idToken: String
        public var refreshToken: String
        public var expiresIn: String
    }

    /// Signs the session's first ID token.
    package func tokens(_ service: TokenService, now: Timestamp) async throws(ActionError) -> Tokens {
        Tokens(
            idToken: try await service.idToken(for: account, session: session.session, now: now), refreshToken: session.refreshToken,
            expiresIn: String(TokenService.lifetime))
    }
}
