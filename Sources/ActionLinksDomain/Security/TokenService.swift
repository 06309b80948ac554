import Crypto
import Foundation
import JWTKit

/// ID tokens, refresh tokens and session cookies, shaped like Firebase's: RS256 JWTs with a `kid`
/// from ``SigningKeys``, verifiable with the JWKS the server publishes.
public struct TokenService: Sendable {
    let keys: SigningKeys
    let projectID: String
    /// Whether unsigned (`alg: none`) ID tokens are accepted, as Firebase's Auth emulator accepts
    /// them: a development server only.
    let acceptsUnsignedTokens: Bool

    /// ID tokens last one hour, as Firebase's do.
    public static let lifetime: Int64 = 3600
    /// A session cookie lasts 5 minutes to 14 days (Firebase's bounds), 14 days by default.
    public static let sessionCookieLifetimes: ClosedRange<Int64> = 300...1_209_600

    /// The `iss` of ID tokens.
    public var issuer: String { "https://securetoken.google.com/" + projectID }
    /// The `iss` of session cookies.
    public var sessionCookieIssuer: String { "https://session.firebase.google.com/" + projectID }

    /// The tokens of a new session: the refresh token (given to the client once), the session to
    /// store with its hash, and the sign-in provider and claims its ID tokens carry.
    public struct NewSession: Sendable {
        /// The refresh token.
        public var refreshToken: String
        /// What the store keeps.
        public var session: Session
    }

    /// A new session for `account` (stored by the caller in its transaction).
    public func newSession(accountID: String, tenantID: String, signInProvider: String, claims: String? = nil, now: Timestamp)
        -> NewSession
    {
        let token = Secrets.token() + Secrets.token()
        return NewSession(
            refreshToken: token,
            session: Session(
                hash: Self.refreshTokenHash(token), tenantID: tenantID, accountID: accountID, createdAt: now,
                signInProvider: signInProvider, authTime: now.seconds, claims: claims))
    }

    /// The claims of an ID token for `account` in `session`, issued at `now`.
    public func claims(for account: Account, session: Session, now: Timestamp) -> IDTokenClaims {
        let seconds = now.seconds
        var custom = account.customAttributes.flatMap(ClaimValue.object(json:)) ?? [:]
        // A custom token's claims come after the account's own, and win (as in Firebase).
        let sessionClaims = session.claims.flatMap(ClaimValue.object(json:))
        if let sessionClaims { custom.merge(sessionClaims.filter { $0.key != "firebase" }) { $1 } }
        var claims = IDTokenClaims(
            iss: issuer, aud: projectID, authTime: session.authTime, userID: account.localID, iat: seconds, exp: seconds + Self.lifetime,
            email: account.email, emailVerified: account.email == nil ? nil : account.emailVerified, phoneNumber: account.phoneNumber,
            name: account.displayName, picture: account.photoURL,
            providerID: session.signInProvider == "anonymous" ? "anonymous" : nil,
            firebase: .init(
                identities: account.identities, signInProvider: session.signInProvider,
                tenant: account.tenantID.isEmpty ? nil : account.tenantID),
            custom: custom)
        // A session's own Firebase claims (a SAML sign-in's attributes) ride under `firebase`, a
        // name no custom token or custom claim may use.
        let own = sessionClaims?["firebase"]?.objectValue
        claims.firebase.signInAttributes = own?["sign_in_attributes"]
        // A second factor's, likewise (``SignInCompletion``).
        claims.firebase.signInSecondFactor = own?["sign_in_second_factor"]?.stringValue
        claims.firebase.secondFactorIdentifier = own?["second_factor_identifier"]?.stringValue
        return claims
    }

    /// A signed ID token for `account` in `session`.
    public func idToken(for account: Account, session: Session, now: Timestamp) async throws(ActionError) -> String {
        try idTokenNow(for: account, session: session, now: now)
    }

    /// ``idToken(for:session:now:)`` on the caller's thread (signing never waits for anything).
    func idTokenNow(for account: Account, session: Session, now: Timestamp) throws(ActionError) -> String {
        try sign(claims(for: account, session: session, now: now))
    }

    /// A session cookie with the claims of a verified ID token, valid for `lifetime` seconds.
    public func sessionCookie(from claims: IDTokenClaims, lifetime: Int64, now: Timestamp) async throws(ActionError) -> String {
        var cookie = claims
        cookie.iss = sessionCookieIssuer
        cookie.iat = now.seconds
        cookie.exp = now.seconds + lifetime
        return try sign(cookie)
    }

    private func sign(_ claims: IDTokenClaims) throws(ActionError) -> String {
        do {
            return try keys.keys.keys[0].signer.sign(claims)
        } catch {
            throw ActionError(.internalError, "the token could not be signed", cause: error)
        }
    }

    /// The claims of an ID token this server signed (or, on a development server, an unsigned
    /// one), if it is well formed, for this project, and not expired. Whether its account still
    /// accepts it (revocation, a disabled user) is the caller's question.
    public func verifyIDToken(_ token: String, now: Timestamp) async throws(ActionError) -> IDTokenClaims {
        guard !token.isEmpty else { throw ActionError.invalidIDToken }
        let expired = ActionError(.tokenExpired, "The user's credential is no longer valid. The user must sign in again.")
        return try await verify(token, expecting: .init(audience: projectID, issuer: issuer, now: now, expired: expired))
    }

    /// The claims of a session cookie this server signed, if valid now.
    public func verifySessionCookie(_ cookie: String, now: Timestamp) async throws(ActionError) -> IDTokenClaims {
        let expired = ActionError(.invalidIDToken, "the session cookie has expired")
        return try await verify(cookie, expecting: .init(audience: projectID, issuer: sessionCookieIssuer, now: now, expired: expired))
    }

    /// The claims of `token`, checked against `expected` (``IDTokenClaims/check(_:)``): by jwt-kit
    /// after the signature, or directly for the unsigned tokens a development server takes.
    private func verify(_ token: String, expecting expected: IDTokenClaims.Expectations) async throws(ActionError) -> IDTokenClaims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]),
            let header = try? JSONDecoder().decode(JWTHeaderFields.self, from: headerData)
        else { throw ActionError.invalidIDToken }
        do {
            if header.alg == "none" {
                guard acceptsUnsignedTokens, parts[2].isEmpty, let payload = Base64URL.decode(parts[1]),
                    let unsigned = try? JSONDecoder().decode(IDTokenClaims.self, from: payload)
                else { throw ActionError.invalidIDToken }
                try unsigned.check(expected)
                return unsigned
            }
            guard header.alg == "RS256", let current = try? keys.keys else { throw ActionError.invalidIDToken }
            return try await current.collection.verify(token, as: IDTokenClaims.self, expecting: expected)
        } catch let error as ActionError {
            throw error
        } catch {
            throw ActionError.invalidIDToken
        }
    }

    /// The `iss` (and `sub`) of the one-time custom tokens this server hands a web page after
    /// signing someone in itself (the confirm page, a federated sign-in for a web app).
    public var handOffIssuer: String { "actionlinks-hand-off@\(projectID).iam.gserviceaccount.com" }

    /// A custom token for `accountID` that works once, for five minutes: the web app exchanges it
    /// with `signInWithCustomToken`.
    public func handOffToken(accountID: String, tenantID: String, now: Timestamp) async throws(ActionError) -> String {
        let seconds = now.seconds
        let claims = HandOffClaims(
            iss: handOffIssuer, sub: handOffIssuer, aud: CustomTokenVerifier.audience, uid: accountID, iat: seconds, exp: seconds + 300,
            jti: Secrets.token(), tenantID: tenantID.isEmpty ? nil : tenantID)
        do {
            return try keys.keys.keys[0].signer.sign(claims)
        } catch {
            throw ActionError(.internalError, "the token could not be signed", cause: error)
        }
    }

    /// The claims of a hand-off token this server signed (any key it still publishes), unexpired at
    /// `now`.
    func verifyHandOff(_ token: String, now: Timestamp) async -> CustomTokenPayload? {
        guard let current = try? keys.keys else { return nil }
        return try? await current.collection.verify(
            token, as: CustomTokenPayload.self, expecting: .handOff(issuer: handOffIssuer, now: now))
    }

    /// Whether `kid` names one of this server's signing keys.
    func isOwnKey(_ kid: String) -> Bool { (try? keys.keys.keys.contains { $0.id == kid }) ?? false }

    /// The JWKS of the keys that sign (and of older ones still accepted): the same bytes until the
    /// keys change.
    package var jwks: [UInt8]? { try? keys.keys.jwks }

    /// How a refresh token is kept: its SHA-256 (it is 512 random bits, so no salt is needed).
    public static func refreshTokenHash(_ token: String) -> Data { Data(SHA256.hash(data: Data(token.utf8))) }
}

/// A hand-off token's claims (a custom token, as Firebase shapes them, with a one-time `jti`).
struct HandOffClaims: Sendable {
    var iss: String
    var sub: String
    var aud: String
    var uid: String
    var iat: Int64
    var exp: Int64
    var jti: String
    var tenantID: String?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, uid, iat, exp, jti
        case tenantID = "tenant_id"
    }
}

/// Hand-off tokens are signed as ``HandOffClaims`` and read back as ``CustomTokenPayload``.
extension HandOffClaims: SignedOnlyClaims {}
