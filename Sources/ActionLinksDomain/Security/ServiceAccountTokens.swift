import Crypto
import Foundation
import JWTKit

/// The OAuth 2 token endpoint's work, as Google's does it for service accounts: a JWT-bearer
/// assertion (RFC 7523) signed with a key that `actionlinks service-account` made for this
/// project is exchanged for an access token, and that token is an admin credential until it
/// expires (an hour), as long as its key is not removed or revoked, and only if it was asked for
/// with a scope Identity Toolkit takes.
///
/// Access tokens are not stored: each is `ya29.al.<exp>.<kid>.<scope>.<mac>`, the MAC under a key
/// derived from `keys/forms.key`, so every instance that shares the data directory accepts them;
/// the key ID in it is looked up on every use, so removing the key ends its tokens.
public final class ServiceAccountTokens: Sendable {
    /// The audience google-auth signs whatever the file's `token_uri` says.
    public static let googleTokenURL = ServiceAccountFile.googleTokenURI
    /// The grant type of RFC 7523.
    public static let jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    /// How long an access token works, in seconds (Google's hour).
    static let lifetime: Int64 = 3600
    static let prefix = "ya29.al."
    /// The scopes Identity Toolkit takes for its admin calls (its discovery document's, and the one
    /// firebase-admin adds); a token asked for with none of them (`userinfo.email` alone) is no
    /// admin credential.
    static let adminScopes: Set<String> = [
        "https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/firebase",
        "https://www.googleapis.com/auth/identitytoolkit",
    ]

    let keys: ServiceAccountKeys
    let key: SymmetricKey
    let projectID: String
    let clock: any ServiceClock

    /// Tokens for the keys in `directory` (`keys/service-accounts/`) of `projectID`'s service
    /// accounts, with a MAC key derived from the form key.
    init(keys: ServiceAccountKeys, formKey: SymmetricKey, projectID: String, clock: any ServiceClock) {
        self.keys = keys
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: formKey, info: Data("actionlinks service-account access tokens".utf8), outputByteCount: 32)
        self.projectID = projectID
        self.clock = clock
    }

    /// What the token endpoint answers.
    package struct Grant: Encodable {
        var accessToken: String
        var expiresIn: Int64
        var tokenType = "Bearer"

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case expiresIn = "expires_in"
            case tokenType = "token_type"
        }
    }

    /// An access token for `assertion`, whose `aud` must be one of `audiences`; or Google's error.
    package func grant(assertion: String, audiences: [String]) async throws(OAuthError) -> Grant {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]),
            let header = try? JSONDecoder().decode(JWTHeaderFields.self, from: headerData),
            let payloadData = Base64URL.decode(parts[1]),
            (try? JSONDecoder().decode(AssertionPayload.self, from: payloadData)) != nil
        else { throw OAuthError(.invalidGrant, "Invalid JWT: the assertion is not a JWT.") }
        guard header.alg == "RS256" else { throw OAuthError(.invalidGrant, "Invalid JWT: expected alg RS256.") }
        guard let kid = header.kid, let account = keys.key(kid) else {
            throw OAuthError(.invalidGrant, "Invalid grant: account not found")
        }
        // As a custom token from another project's key is refused (`CREDENTIAL_MISMATCH`): the
        // key's file says whose it is.
        guard account.projectID == projectID else {
            throw OAuthError(.invalidGrant, "Invalid grant: the key belongs to another project's service account")
        }
        let keys = JWTKeyCollection()
        await keys.add(rsa: account.publicKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        let now = clock.now.seconds
        let payload: AssertionPayload
        do {
            payload = try await keys.verify(
                assertion, as: AssertionPayload.self, expecting: .init(issuer: account.clientEmail, audiences: audiences, now: now))
        } catch let error as OAuthError {
            throw error
        } catch {
            throw OAuthError(.invalidGrant, "Invalid JWT Signature.")
        }
        guard let scope = payload.scope, !scope.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw OAuthError(.invalidScope, "Empty or missing scope not allowed.")
        }
        let scopes = scope.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        let standing = scopes.contains(where: Self.adminScopes.contains) ? Standing.admin : .insufficientScope
        let expires = now + Self.lifetime
        let body = String(expires) + "." + Base64URL.encode(Array(kid.utf8)) + "." + standing.mark
        return Grant(accessToken: Self.prefix + body + "." + mac(body), expiresIn: Self.lifetime)
    }

    /// What a bearer token is worth to the admin API.
    package enum Standing: Sendable, Equatable {
        /// An unexpired access token this server granted, for a key it still has, with an admin scope.
        case admin
        /// The same, but asked for without any scope Identity Toolkit takes.
        case insufficientScope
        /// Anything else: not granted here, tampered with, expired, or its key removed or revoked.
        case invalid

        var mark: String { self == .admin ? "a" : "s" }
    }

    /// What `bearer` is: checked by its MAC, its expiry and its key, which must still be in the
    /// folder (``ServiceAccountKeys``: a key removed or revoked ends the tokens granted for it).
    package func standing(of bearer: some StringProtocol) -> Standing {
        guard bearer.hasPrefix(Self.prefix) else { return .invalid }
        let rest = bearer.dropFirst(Self.prefix.count)
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, let expires = Int64(parts[0]), let dot = rest.lastIndex(of: ".") else { return .invalid }
        guard ConstantTime.equal(Array(parts[3].utf8), Array(mac(String(rest[..<dot])).utf8)) else { return .invalid }
        guard expires > clock.now.seconds, let kid = Base64URL.decode(parts[1]).map({ String(decoding: $0, as: UTF8.self) }),
            keys.key(kid)?.projectID == projectID
        else { return .invalid }
        switch String(parts[2]) {
        case Standing.admin.mark: return .admin
        case Standing.insufficientScope.mark: return .insufficientScope
        default: return .invalid
        }
    }

    private func mac(_ body: String) -> String {
        Base64URL.encode(HMAC<SHA256>.authenticationCode(for: Data(body.utf8), using: key))
    }
}

/// The claims of a JWT-bearer assertion.
struct AssertionPayload: CheckedClaims, Sendable {
    var iss: String?
    var aud: String?
    var scope: String?
    var iat: Int64?
    var exp: Int64?

    /// What an assertion must be: from the key's service account, for one of the token endpoint's
    /// addresses, issued at most five minutes ahead of `now` (seconds, the service clock's), and
    /// lasting at most an hour, unexpired.
    struct Expectations: Sendable {
        var issuer: String
        var audiences: [String]
        var now: Int64
    }

    /// Google's errors for a signed assertion whose claims do not hold (after the signature,
    /// inside jwt-kit's verification).
    func check(_ expected: Expectations) throws {
        guard iss == expected.issuer else {
            throw OAuthError(.invalidGrant, "Invalid JWT: iss is not the service account the key belongs to.")
        }
        guard let aud, expected.audiences.contains(aud) else { throw OAuthError(.invalidGrant, "Invalid JWT: Failed audience check.") }
        let now = expected.now
        guard let iat, let exp, exp > now, iat <= now + 300, exp - iat <= 3600, exp > iat else {
            throw OAuthError(
                .invalidGrant,
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
            )
        }
    }
}

/// An OAuth 2 error as Google's token endpoint answers it: `{"error", "error_description"}`.
package struct OAuthError: Error, Encodable {
    package enum Code: String, Encodable {
        case invalidRequest = "invalid_request"
        case invalidGrant = "invalid_grant"
        case invalidScope = "invalid_scope"
        case unsupportedGrantType = "unsupported_grant_type"
    }

    var error: Code
    var errorDescription: String

    package init(_ error: Code, _ description: String) {
        self.error = error
        errorDescription = description
    }

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
    }
}
