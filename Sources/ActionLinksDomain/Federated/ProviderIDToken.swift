import Crypto
import Foundation
import JWTKit

/// The claims of a provider's ID token this server reads. Their checks (``check(_:)``) run inside
/// jwt-kit's verification, with what ``ProviderIDToken/verify(_:keys:issuer:clientID:nonce:now:)``
/// expects.
struct ProviderClaims: CheckedClaims, Sendable {
    var iss: String?
    var sub: String?
    /// One string or an array of them (OpenID Connect Core §2).
    var aud: OneOrMany?
    var azp: String?
    var exp: NumericDate?
    var iat: NumericDate?
    var nonce: String?
    var email: String?
    var emailVerified: FlexibleBool?
    var name: String?
    var givenName: String?
    var familyName: String?
    var picture: String?
    var preferredUsername: String?
    var screenName: String?
    var locale: String?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, azp, exp, iat, nonce, email, name, picture, locale
        case emailVerified = "email_verified"
        case givenName = "given_name"
        case familyName = "family_name"
        case preferredUsername = "preferred_username"
        case screenName = "screen_name"
    }

    /// What a provider's ID token must be: from the provider, for this client, not expired (nor
    /// issued in the future) at `now` within ``ProviderIDToken/leeway``, about someone, with the
    /// expected nonce.
    struct Expectations: Sendable {
        var issuer: String
        var clientID: String
        var nonce: ProviderIDToken.NonceExpectation
        /// Milliseconds since 1970 (the service clock's).
        var now: Timestamp
    }

    /// `iss`, `aud` (and `azp`), `exp`, `iat`, `sub` and `nonce`, in that order; a
    /// ``ProviderIDToken/Rejection`` says which failed.
    func check(_ expected: Expectations) throws {
        guard iss == expected.issuer else { throw Rejection.invalid("the id_token was issued by '\(iss ?? "")', not '\(expected.issuer)'") }
        guard let audiences = aud?.values, audiences.contains(expected.clientID) else {
            throw Rejection.invalid("the id_token is not meant for this client")
        }
        if audiences.count > 1, let azp, azp != expected.clientID {
            throw Rejection.invalid("the id_token was presented by another client")
        }
        let seconds = expected.now.fractionalSeconds
        guard let exp = exp?.seconds, exp + ProviderIDToken.leeway > seconds else { throw Rejection.invalid("the id_token has expired") }
        if let iat = iat?.seconds, iat > seconds + ProviderIDToken.leeway {
            throw Rejection.invalid("the id_token was issued in the future")
        }
        guard let sub, !sub.isEmpty else { throw Rejection.invalid("the id_token has no subject") }
        switch expected.nonce {
        case .exactly(let value):
            guard let nonce, ConstantTime.equal(Array(nonce.utf8), Array(value.utf8)) else { throw Rejection.nonce }
        case .given(let raw?):
            guard let nonce, nonce == raw || nonce == FederatedFlow.hash(raw) else { throw Rejection.nonce }
        case .given(nil):
            if nonce != nil { throw Rejection.nonce }
        }
    }

    private typealias Rejection = ProviderIDToken.Rejection

    /// Seconds since 1970, as a number (or, leniently, a string of digits).
    struct NumericDate: Codable, Sendable {
        var seconds: Double
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(seconds)
        }
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Double.self) {
                seconds = number
            } else if let text = try? container.decode(String.self), let number = Double(text) {
                seconds = number
            } else {
                throw DecodingError.typeMismatch(Double.self, .init(codingPath: decoder.codingPath, debugDescription: "not a time"))
            }
        }
    }

    /// `email_verified`: a boolean, or the strings "true" and "false" some providers send. Anything
    /// else reads as false.
    struct FlexibleBool: Codable, Sendable {
        var value: Bool
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                value = flag
            } else {
                value = (try? container.decode(String.self)) == "true"
            }
        }
    }
}

/// A provider's ID token, checked: its signature with one of the provider's keys (RS256 or ES256
/// only), then `iss`, `aud`, `exp`, `iat` and `nonce`.
struct ProviderIDToken: Sendable {
    /// The checked claims.
    var claims: ProviderClaims
    /// The payload as the provider wrote it (a JSON object): `rawUserInfo`.
    var payload: String

    /// Why a token was refused.
    enum Rejection: Error, Equatable {
        /// The token names a key the set does not have (fetch the keys again, once).
        case unknownKey
        /// Anything else, said for the log and the error's detail.
        case invalid(String)
        /// The nonce is missing or not the one expected (`MISSING_OR_INVALID_NONCE`).
        case nonce
    }

    /// What the token's `nonce` must be.
    enum NonceExpectation: Sendable {
        /// Exactly this value (a flow this server started).
        case exactly(String)
        /// The raw nonce an app gave with its token, or its SHA-256 in hex (as Apple and Firebase's
        /// SDKs send it); `nil`: the token must carry none.
        case given(String?)
    }

    /// The algorithms accepted: none of `none`, HMAC or anything else a key could be confused with.
    static let algorithms: Set<String> = ["RS256", "ES256"]
    /// Clock skew tolerated on `exp` and `iat`, in seconds.
    static let leeway: Double = 60

    /// Checks `token` against `keys`; `now` in milliseconds.
    static func verify(_ token: String, keys: [JWK], issuer: String, clientID: String, nonce: NonceExpectation, now: Timestamp)
        async throws(Rejection) -> ProviderIDToken
    {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let payloadData = Base64URL.decode(parts[1]),
            let header = try? JSONDecoder().decode([String: ClaimValue].self, from: headerData),
            (try? JSONDecoder().decode([String: ClaimValue].self, from: payloadData)) != nil
        else { throw .invalid("the id_token is not a JWS") }
        guard let alg = header["alg"]?.stringValue, algorithms.contains(alg) else {
            let named = header["alg"].map { $0.stringValue ?? "\($0)" } ?? "none"
            throw .invalid("the id_token's algorithm '\(named.prefix(20))' is not RS256 or ES256")
        }
        let usable = keys.filter { key in
            let type = alg == "RS256" ? JWK.KeyType.rsa : JWK.KeyType.ecdsa
            return key.keyType == type && (key.algorithm == nil || key.algorithm?.rawValue == alg)
        }
        var key: JWK
        if let kid = header["kid"]?.stringValue {
            guard let named = usable.first(where: { $0.keyIdentifier?.string == kid }) else { throw .unknownKey }
            key = named
        } else {
            // A token without `kid` (oidc-provider-mock's) is checked against the only key there is.
            guard keys.count == 1, usable.count == 1 else { throw .invalid("the id_token names no key and the provider has several") }
            key = usable[0]
        }
        key.algorithm = JWK.Algorithm(rawValue: alg)
        key.keyIdentifier = JWKIdentifier(string: "provider-key")
        let claims: ProviderClaims
        do {
            let collection = JWTKeyCollection()
            try await collection.add(jwk: key, isDefault: true)
            claims = try await collection.verify(
                token, as: ProviderClaims.self, expecting: .init(issuer: issuer, clientID: clientID, nonce: nonce, now: now))
        } catch let rejection as Rejection {
            throw rejection
        } catch {
            throw .invalid("the id_token's signature does not verify with the provider's key (\(error))")
        }
        return ProviderIDToken(claims: claims, payload: String(decoding: payloadData, as: UTF8.self))
    }

    /// Claims about the token itself, never taken from a UserInfo answer.
    static let tokenOnlyClaims: Set<String> = [
        "iss", "sub", "aud", "azp", "exp", "iat", "nbf", "jti", "nonce", "auth_time", "acr", "amr", "at_hash", "c_hash", "sid",
    ]

    /// The token with the claims it lacks from the provider's UserInfo answer (OpenID Connect Core
    /// §5.3.2), whose `sub` must be the token's (§5.3.4). The token's own claims win, and its checks
    /// (`iss`, `aud`, `exp`, `nonce`, ...) never come from UserInfo; `email_verified` comes along
    /// only with the address the token ends up with. `payload` (`rawUserInfo`) becomes the union.
    func merging(userInfo: [String: ClaimValue]) throws(Rejection) -> ProviderIDToken {
        guard case .string(let sub)? = userInfo["sub"], sub == claims.sub else {
            throw .invalid("the provider's userinfo answer is about another subject than the id_token")
        }
        guard case .object(var merged)? = try? JSONDecoder().decode(ClaimValue.self, from: Data(payload.utf8)) else {
            throw .invalid("the id_token's payload is not a JSON object")
        }
        if merged["email"] == nil, let email = userInfo["email"] {
            merged["email"] = email
            merged["email_verified"] = userInfo["email_verified"]
        } else if merged["email_verified"] == nil, merged["email"] == userInfo["email"] {
            merged["email_verified"] = userInfo["email_verified"]
        }
        for (name, value) in userInfo where merged[name] == nil && !Self.tokenOnlyClaims.contains(name) {
            if name == "email" || name == "email_verified" { continue }
            merged[name] = value
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(ClaimValue.object(merged)),
            let claims = try? JSONDecoder().decode(ProviderClaims.self, from: data)
        else { throw .invalid("the provider's userinfo answer has claims of the wrong type") }
        return ProviderIDToken(claims: claims, payload: String(decoding: data, as: UTF8.self))
    }

    /// The claims of an unsigned token as Firebase's Auth emulator accepts them (a development server
    /// only, for providers that are not configured): a JWT with any or no signature, or the claims as
    /// a JSON object.
    static func unverified(_ token: String) -> ProviderIDToken? {
        let payload: Data
        if token.hasPrefix("{") {
            payload = Data(token.utf8)
        } else {
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count >= 2, let data = Base64URL.decode(parts[1]) else { return nil }
            payload = data
        }
        guard (try? JSONDecoder().decode([String: ClaimValue].self, from: payload)) != nil,
            let claims = try? JSONDecoder().decode(ProviderClaims.self, from: payload)
        else { return nil }
        return ProviderIDToken(claims: claims, payload: String(decoding: payload, as: UTF8.self))
    }
}
