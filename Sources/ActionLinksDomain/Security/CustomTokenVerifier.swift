import Crypto
import CryptoExtras
import Foundation
import JWTKit

/// Checks the custom tokens a backend mints for `accounts:signInWithCustomToken`: RS256 JWTs signed
/// with a service-account key that `actionlinks service-account` made (its public half is kept in
/// `keys/service-accounts/` and read again when a token names a key not seen yet, so a running
/// server accepts a new key without a restart). A development server also takes the unsigned
/// tokens (and plain JSON) that Firebase's Auth emulator takes, still checking `aud` and `uid`.
public final class CustomTokenVerifier: Sendable {
    /// The audience of every custom token.
    public static let audience = "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"

    let keys: ServiceAccountKeys
    let projectID: String
    let acceptsUnsignedTokens: Bool
    /// This server's own tokens: the one-time hand-off tokens it signs.
    let tokens: TokenService
    /// Where a hand-off token's use is recorded (so it works once, on every instance).
    let codes: any CodeStore
    let store: StoreGateway

    /// A verifier for the keys in `directory` and the server's own hand-off tokens.
    init(
        keys: ServiceAccountKeys, projectID: String, acceptsUnsignedTokens: Bool, tokens: TokenService, codes: any CodeStore,
        store: StoreGateway
    ) {
        self.keys = keys
        self.projectID = projectID
        self.acceptsUnsignedTokens = acceptsUnsignedTokens
        self.tokens = tokens
        self.codes = codes
        self.store = store
    }

    /// What a valid custom token says.
    struct Token: Sendable {
        var uid: String
        var claims: [String: ClaimValue]?
        var tenantID: String?
    }

    /// The claims of a custom token, or Firebase's error for it.
    func verify(_ token: String, now: Timestamp) async throws(ActionError) -> Token {
        let payload: CustomTokenPayload
        if token.hasPrefix("{") {
            guard acceptsUnsignedTokens else { throw Self.invalid("the token is not a JWT") }
            guard let json = try? JSONDecoder().decode(CustomTokenPayload.self, from: Data(token.utf8)) else {
                throw Self.invalid("a development server takes strict JSON or JWTs as custom tokens")
            }
            return try checked(json)
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]),
            let header = try? JSONDecoder().decode(JWTHeaderFields.self, from: headerData),
            let payloadData = Base64URL.decode(parts[1]),
            let decoded = try? JSONDecoder().decode(CustomTokenPayload.self, from: payloadData)
        else { throw Self.invalid("Invalid assertion format") }
        payload = decoded
        guard payload.aud == Self.audience else {
            throw Self.invalid("the audience (aud) is not Firebase Auth's; ID tokens and third-party tokens cannot be used here")
        }
        if header.alg == "none" {
            guard acceptsUnsignedTokens, parts[2].isEmpty else { throw Self.invalid("the token is not signed") }
            return try checked(payload)
        }
        if header.alg == "RS256", let kid = header.kid, tokens.isOwnKey(kid) {
            guard let handOff = await tokens.verifyHandOff(token, now: now), let jti = handOff.jti, let exp = handOff.exp else {
                throw Self.invalid("the hand-off token is not valid any more")
            }
            let uses = try await store.call {
                try await self.codes.countEvents(keys: ["hand-off:" + jti], windowStart: Timestamp(seconds: exp))
            }
            guard uses.first == 1 else { throw Self.invalid("the hand-off token was used already") }
            return try checked(handOff)
        }
        guard header.alg == "RS256", let kid = header.kid, let key = keys.key(kid) else {
            throw Self.invalid("the token is not signed with a service-account key of this server")
        }
        let collection = JWTKeyCollection()
        await collection.add(rsa: key.publicKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        let verified: CustomTokenPayload
        do {
            verified = try await collection.verify(
                token, as: CustomTokenPayload.self, expecting: .serviceAccount(key, projectID: projectID, now: now))
        } catch let error as ActionError {
            throw error
        } catch {
            throw Self.invalid("the signature does not match the key")
        }
        return try checked(verified)
    }

    private func checked(_ payload: CustomTokenPayload) throws(ActionError) -> Token {
        guard let uid = payload.uid ?? payload.userID, !uid.isEmpty else { throw ActionError(.missingIdentifier) }
        guard uid.utf8.count <= 128 else { throw Self.invalid("uid is longer than 128 characters") }
        var claims: [String: ClaimValue]?
        if let given = payload.claims {
            guard let object = given.objectValue else { throw ActionError(.invalidClaims) }
            if let reserved = object.keys.sorted().first(where: IDTokenClaims.reservedNames.contains) {
                throw ActionError(.forbiddenClaim, reserved)
            }
            guard given.json.utf8.count <= 1000 else { throw ActionError(.claimsTooLarge) }
            claims = object
        }
        return Token(uid: uid, claims: claims, tenantID: payload.tenantID)
    }

    static func invalid(_ detail: String) -> ActionError { ActionError(.invalidCustomToken, detail) }

}

/// What a custom token carries (Firebase's custom-token claims).
struct CustomTokenPayload: CheckedClaims, Sendable {
    var aud: String?
    var iss: String?
    var sub: String?
    var iat: Int64?
    var exp: Int64?
    var uid: String?
    var userID: String?
    var claims: ClaimValue?
    var tenantID: String?
    var jti: String?

    enum CodingKeys: String, CodingKey {
        case aud, iss, sub, iat, exp, uid, claims, jti
        case userID = "user_id"
        case tenantID = "tenant_id"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        aud = try container.decodeIfPresent(String.self, forKey: .aud)
        iss = try container.decodeIfPresent(String.self, forKey: .iss)
        sub = try container.decodeIfPresent(String.self, forKey: .sub)
        iat = try container.decodeIfPresent(Int64.self, forKey: .iat)
        exp = try container.decodeIfPresent(Int64.self, forKey: .exp)
        // A uid given as a number or a boolean is read as its text, as the emulator does.
        uid = Self.text(try container.decodeIfPresent(ClaimValue.self, forKey: .uid))
        userID = Self.text(try container.decodeIfPresent(ClaimValue.self, forKey: .userID))
        claims = try container.decodeIfPresent(ClaimValue.self, forKey: .claims)
        tenantID = try container.decodeIfPresent(String.self, forKey: .tenantID)
        jti = try container.decodeIfPresent(String.self, forKey: .jti)
    }

    static func text(_ value: ClaimValue?) -> String? {
        switch value {
        case .string(let text): text
        case .integer(let number): String(number)
        case .number(let number): String(number)
        case .bool(let flag): String(flag)
        default: nil
        }
    }

    /// Whose signature a custom token carries, and the time (the service clock's) to check it at.
    enum Expectations: Sendable {
        /// A service account's key: for this project, `iss` and `sub` the account's address,
        /// issued at most five minutes ahead, unexpired, lasting at most an hour.
        case serviceAccount(ServiceAccountKey, projectID: String, now: Timestamp)
        /// A hand-off token of this server: its hand-off issuer, a `jti`, unexpired.
        case handOff(issuer: String, now: Timestamp)
    }

    /// Firebase's errors for a signed token whose claims do not hold (checked after the
    /// signature, inside jwt-kit's verification).
    func check(_ expected: Expectations) throws {
        switch expected {
        case .serviceAccount(let key, let projectID, let now):
            guard key.projectID == projectID else {
                throw ActionError(.credentialMismatch, "The custom token corresponds to a different Firebase project.")
            }
            guard iss == key.clientEmail, sub == key.clientEmail else {
                throw CustomTokenVerifier.invalid("iss and sub must be the service account's address")
            }
            let seconds = now.seconds
            guard let iat, let exp, iat <= seconds + 300, exp > seconds, iat >= exp - 3600 else {
                throw CustomTokenVerifier.invalid("the token has expired or lasts more than an hour")
            }
        case .handOff(let issuer, let now):
            guard iss == issuer, sub == issuer, jti != nil, let exp, exp > now.seconds else {
                throw CustomTokenVerifier.invalid("the hand-off token is not valid any more")
            }
        }
    }
}

/// The public half of a service-account key that `actionlinks service-account` made, as kept in
/// `keys/service-accounts/<key id>.json`.
public struct ServiceAccountKey: Codable, Sendable {
    /// The key's ID (`private_key_id` in the service-account file, `kid` in tokens).
    public var keyID: String
    /// The service account's address (`iss` and `sub` of its tokens).
    public var clientEmail: String
    /// The project the key is for.
    public var projectID: String
    /// The public key, PEM.
    public var publicKeyPEM: String

    enum CodingKeys: String, CodingKey {
        case keyID = "key_id"
        case clientEmail = "client_email"
        case projectID = "project_id"
        case publicKeyPEM = "public_key"
    }

    var publicKey: JWTKit.Insecure.RSA.PublicKey {
        // Checked when the file was read.
        try! JWTKit.Insecure.RSA.PublicKey(pem: publicKeyPEM)
    }

    /// Every readable key in `directory`, by ID (a file that is not one is skipped).
    static func readAll(_ directory: String) -> [String: ServiceAccountKey] {
        var keys: [String: ServiceAccountKey] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasSuffix(".json") {
            let path = (directory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path), let key = try? JSONDecoder().decode(Self.self, from: data),
                (try? JWTKit.Insecure.RSA.PublicKey(pem: key.publicKeyPEM)) != nil
            else { continue }
            keys[key.keyID] = key
        }
        return keys
    }
}
