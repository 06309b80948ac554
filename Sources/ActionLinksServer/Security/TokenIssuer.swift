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
        let seconds = Int64(now / 1000)
        let claims = IDTokenClaims(
            iss: issuer, aud: projectID, authTime: seconds, userID: account.localID, sub: account.localID, iat: seconds,
            exp: seconds + Int64(Self.lifetime), email: account.email, emailVerified: account.emailVerified,
            firebase: .init(
                identities: ["email": account.email.map { [$0] } ?? []], signInProvider: signInProvider,
                tenant: account.tenantID.isEmpty ? nil : account.tenantID))
        let header = JWTHeader(alg: "ES256", kid: keyID, typ: "JWT")
        let signingInput = Self.segment(header) + "." + Self.segment(claims)
        let signature = (try? key.signature(for: Data(signingInput.utf8)).rawRepresentation).map(LowS.normalized) ?? []
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// The claims of an ID token this server signed, if the signature is good and it has not expired.
    ///
    /// Only the low-S form of a signature is accepted, so each token has exactly one encoding.
    public func verify(_ token: String, now: Timestamp) -> IDTokenClaims? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let signatureBytes = Base64URL.decode(parts[2]), signatureBytes.count == 64,
            !LowS.isHigh(signatureBytes.suffix(32)),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)),
            let payload = Base64URL.decode(parts[1]),
            let claims = try? JSONDecoder().decode(IDTokenClaims.self, from: payload),
            claims.exp > Int64(now / 1000), claims.aud == projectID
        else { return nil }
        return claims
    }

    /// `{"keys":[...]}` with the public key, for `/.well-known/jwks.json`.
    public var jwks: Data {
        let raw = key.publicKey.rawRepresentation
        let jwk = JWK(kid: keyID, x: Base64URL.encode(raw.prefix(32)), y: Base64URL.encode(raw.suffix(32)))
        return (try? Self.encoder.encode(JWKSet(keys: [jwk]))) ?? Data()
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    private static func segment(_ value: some Encodable) -> String {
        Base64URL.encode((try? encoder.encode(value)) ?? Data())
    }
}

/// A JWT's header.
struct JWTHeader: Codable, Sendable {
    var alg: String
    var kid: String
    var typ: String
}

/// The claims of an ID token, as Firebase's are shaped.
public struct IDTokenClaims: Codable, Sendable, Hashable {
    /// Firebase's own claims.
    public struct Firebase: Codable, Sendable, Hashable {
        /// The sign-in identities by provider (`email`: the address).
        public var identities: [String: [String]]
        /// The provider of this sign-in (`password` for email links, as Firebase says).
        public var signInProvider: String
        /// The tenant, when the account is in one.
        public var tenant: String?

        enum CodingKeys: String, CodingKey {
            case identities, tenant
            case signInProvider = "sign_in_provider"
        }
    }

    public var iss: String
    public var aud: String
    public var authTime: Int64
    public var userID: String
    public var sub: String
    public var iat: Int64
    public var exp: Int64
    public var email: String?
    public var emailVerified: Bool
    public var firebase: Firebase

    enum CodingKeys: String, CodingKey {
        case iss, aud, sub, iat, exp, email, firebase
        case authTime = "auth_time"
        case userID = "user_id"
        case emailVerified = "email_verified"
    }
}

/// One public key of the JWKS.
struct JWK: Codable, Sendable {
    var kty = "EC"
    var crv = "P-256"
    var alg = "ES256"
    var use = "sig"
    var kid: String
    var x: String
    var y: String
}

/// `/.well-known/jwks.json`.
struct JWKSet: Codable, Sendable {
    var keys: [JWK]
}

/// ECDSA P-256 signatures with S in the lower half of the group order.
///
/// `(r, s)` and `(r, n - s)` both verify, so without a rule a token has two valid encodings (and a
/// holder can mint the second). We sign with the low one only and refuse the high one, as Bitcoin
/// (BIP 62) and Ethereum do. The arithmetic is on 32-byte big-endian numbers.
enum LowS {
    /// The order n of P-256's base point.
    static let order: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]
    /// (n - 1) / 2: the largest low S.
    static let halfOrder: [UInt8] = [
        0x7F, 0xFF, 0xFF, 0xFF, 0x80, 0x00, 0x00, 0x00, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xDE, 0x73, 0x7D, 0x56, 0xD3, 0x8B, 0xCF, 0x42, 0x79, 0xDC, 0xE5, 0x61, 0x7E, 0x31, 0x92, 0xA8,
    ]

    /// Whether the 32-byte big-endian `s` is above n / 2.
    static func isHigh<Bytes: Collection<UInt8>>(_ s: Bytes) -> Bool {
        precondition(s.count == 32)
        for (byte, limit) in zip(s, halfOrder) where byte != limit { return byte > limit }
        return false
    }

    /// n - s for a 32-byte big-endian `s` below n.
    static func negated<Bytes: Collection<UInt8>>(_ s: Bytes) -> [UInt8] {
        precondition(s.count == 32)
        var result = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for (index, byte) in s.enumerated().reversed() {
            var difference = Int(order[index]) - Int(byte) - borrow
            borrow = difference < 0 ? 1 : 0
            if difference < 0 { difference += 256 }
            result[index] = UInt8(difference)
        }
        return result
    }

    /// A raw `r || s` signature with S replaced by n - S when it is high.
    static func normalized(_ raw: Data) -> [UInt8] {
        let bytes = Array(raw)
        guard bytes.count == 64, isHigh(bytes[32...]) else { return bytes }
        return Array(bytes[..<32]) + negated(bytes[32...])
    }
}
