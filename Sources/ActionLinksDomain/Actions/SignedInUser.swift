import Foundation

/// An account that just signed in (or was created, or changed in a way that issues new tokens),
/// with the session it got, or the second factor its sign-in waits for (``SignInCompletion``):
/// the ID token is signed from the session once the transaction is over.
public struct SignedInUser: Sendable {
    /// The account after the sign-in.
    public var account: Account
    /// Whether the sign-in created the account.
    public var isNewUser: Bool
    /// What the sign-in came to.
    package var step: Step

    /// A session, or a second factor to prove first.
    package enum Step: Sendable {
        /// The new session (its refresh token and what the store kept).
        case session(TokenService.NewSession)
        /// The sign-in waits for a second factor (``SecondFactorService``).
        case secondFactor(PendingSecondFactor)
    }

    /// The new session, unless the sign-in waits for a second factor.
    public var session: TokenService.NewSession? {
        if case .session(let session) = step { return session }
        return nil
    }

    /// The second factor the sign-in waits for, if any.
    package var pendingSecondFactor: PendingSecondFactor? {
        if case .secondFactor(let pending) = step { return pending }
        return nil
    }

    /// What a sign-in answer carries: `idToken`, `refreshToken`, `expiresIn` (a string, as iOS
    /// reads it).
    public struct Tokens: Sendable, Encodable {
        public var idToken: String
        public var refreshToken: String
        public var expiresIn: String
    }

    /// Signs the session's first ID token: **the one place a sign-in's tokens are minted**. `nil`
    /// when the sign-in waits for a second factor (its answer then carries the pending credential).
    package func tokens(_ service: TokenService, now: Timestamp) async throws(ActionError) -> Tokens? {
        guard let session else { return nil }
        return Tokens(
            idToken: try await service.idToken(for: account, session: session.session, now: now), refreshToken: session.refreshToken,
            expiresIn: String(TokenService.lifetime))
    }

    /// ``tokens(_:now:)`` for a path that cannot present a second factor (a change made by a
    /// signed-in session, which never asks for one): a pending one there is a server error.
    package func requiredTokens(_ service: TokenService, now: Timestamp) async throws(ActionError) -> Tokens {
        guard let tokens = try await tokens(service, now: now) else {
            throw ActionError(.internalError, "a sign-in that waits for its second factor has no tokens here")
        }
        return tokens
    }
}
