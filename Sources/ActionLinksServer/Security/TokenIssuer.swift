import Crypto
import Foundation

/// Signs ID tokens (ES256 JWTs shaped like Firebase's) and publishes their public key as a JWKS.
public struct TokenIssuer: Sendable {
    let key: P256.Signing.PrivateKey
    let projectID: String
    /// The key ID in every token's header and in the JWKS.
    public let keyID: String
    /// ID tokens last one hour, as Firebase's do.
    public static let lifetime = 3600

    /// An issuer that signs with `key` for `projectID`.
    public init(key: P256.Signing.PrivateKey, projectID: String) {
        self.key = key
        self.projectID = projectID
        keyID = SHA256.hash(data: key.publicKey.rawRepresentation).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// The `iss` claim.
    public var issuer: String { "https://securetoken.google.com/" + projectID }

    /// A signed ID token for `account`.
    public func idToken(for account: Account, signInProvider: String, now: Timestamp) -> String {
        let seconds = Int(now / 1000)
        var claims: [String: Any] = [
            "iss": issuer, "aud": projectID, "auth_time": seconds, "user_id": account.localID, "sub": account.localID, "iat": seconds,
            "exp": seconds + Self.lifetime, "email_verified": account.emailVerified,
        ]
        var firebase: [String: Any] = ["sign_in_provider": signInProvider, "identities": ["email": account.email.map { [$0] } ?? []]]
        if let email = account.email { claims["email"] = email }
        if !account.tenantID.isEmpty { firebase["tenant"] = account.tenantID }
        claims["firebase"] = firebase
        let header = ["alg": "ES256", "kid": keyID, "typ": "JWT"]
        let signingInput = Self.segment(header) + "." + Self.segment(claims)
        let signature = (try? key.signature(for: Data(signingInput.utf8)).rawRepresentation) ?? Data()
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// The claims of an ID token this server signed, if the signature is good and it has not expired.
    public func verify(_ token: String, now: Timestamp) -> [String: Any]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let signatureBytes = Base64URL.decode(parts[2]),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)),
            let payload = Base64URL.decode(parts[1]),
            let claims = try? JSONSerialization.jsonObject(with: payload) as? [String: Any],
            let expiry = claims["exp"] as? Int, expiry > Int(now / 1000), claims["aud"] as? String == projectID
        else { return nil }
        return claims
    }

    /// `{"keys":[...]}` with the public key, for `/.well-known/jwks.json`.
    public var jwks: Data {
        let raw = key.publicKey.rawRepresentation
        let jwk: [String: String] = [
            "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": keyID,
            "x": Base64URL.encode(raw.prefix(32)), "y": Base64URL.encode(raw.suffix(32)),
        ]
        return (try? JSONSerialization.data(withJSONObject: ["keys": [jwk]], options: [.sortedKeys])) ?? Data()
    }

    private static func segment(_ object: Any) -> String {
        Base64URL.encode((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }
}
