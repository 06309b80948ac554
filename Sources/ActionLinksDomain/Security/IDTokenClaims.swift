import Foundation
import JWTKit

/// The claims of an ID token (and of a session cookie, which carries the same ones under another
/// issuer), as Firebase shapes them: the developer's claims first, then Firebase's own, which win.
public struct IDTokenClaims: CheckedClaims, Sendable, Hashable {
    /// Firebase's own claims.
    public struct Firebase: Codable, Sendable, Hashable {
        /// The sign-in identities by provider (`email`, `phone`, `yahoo.com`, ...).
        public var identities: [String: [String]]
        /// How the session signed in: `password` (an email link too), `anonymous`, `custom`, a provider ID.
        public var signInProvider: String
        /// The tenant, when the account is in one.
        public var tenant: String?
        /// A SAML sign-in's attributes (`sign_in_attributes`), as its session keeps them.
        public var signInAttributes: ClaimValue?
        /// The second factor the session signed in with (`totp`), when it did.
        public var signInSecondFactor: String?
        /// That factor's ID (`mfaEnrollmentId`).
        public var secondFactorIdentifier: String?

        enum CodingKeys: String, CodingKey {
            case identities, tenant
            case signInProvider = "sign_in_provider"
            case signInAttributes = "sign_in_attributes"
            case signInSecondFactor = "sign_in_second_factor"
            case secondFactorIdentifier = "second_factor_identifier"
        }
    }

    public var iss: String
    public var aud: String
    /// When the user signed in (seconds).
    public var authTime: Int64
    public var userID: String
    public var sub: String
    public var iat: Int64
    public var exp: Int64
    public var email: String?
    public var emailVerified: Bool?
    public var phoneNumber: String?
    public var name: String?
    public var picture: String?
    /// `anonymous` for an anonymous sign-in, as Firebase adds it.
    public var providerID: String?
    public var firebase: Firebase
    /// The developer's claims (`customAttributes`, a custom token's `claims`).
    public var custom: [String: ClaimValue] = [:]

    /// The claim names a developer may not set (Firebase's `FORBIDDEN_CLAIM` list).
    public static let reservedNames: Set<String> = [
        "iss", "aud", "sub", "iat", "exp", "nbf", "jti", "nonce", "azp", "acr", "amr", "cnf", "auth_time", "firebase", "at_hash", "c_hash",
    ]

    static let ownNames: Set<String> = [
        "iss", "aud", "auth_time", "user_id", "sub", "iat", "exp", "email", "email_verified", "phone_number", "name", "picture",
        "provider_id", "firebase",
    ]

    public init(
        iss: String, aud: String, authTime: Int64, userID: String, iat: Int64, exp: Int64, email: String? = nil,
        emailVerified: Bool? = nil, phoneNumber: String? = nil, name: String? = nil, picture: String? = nil, providerID: String? = nil,
        firebase: Firebase, custom: [String: ClaimValue] = [:]
    ) {
        self.iss = iss
        self.aud = aud
        self.authTime = authTime
        self.userID = userID
        self.sub = userID
        self.iat = iat
        self.exp = exp
        self.email = email
        self.emailVerified = emailVerified
        self.phoneNumber = phoneNumber
        self.name = name
        self.picture = picture
        self.providerID = providerID
        self.firebase = firebase
        self.custom = custom
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        func value<T: Decodable>(_ name: String, _ type: T.Type = T.self) throws -> T {
            try container.decode(T.self, forKey: AnyCodingKey(name))
        }
        func optional<T: Decodable>(_ name: String, _ type: T.Type = T.self) throws -> T? {
            try container.decodeIfPresent(T.self, forKey: AnyCodingKey(name))
        }
        iss = try value("iss")
        aud = try value("aud")
        authTime = try optional("auth_time") ?? 0
        sub = try value("sub")
        userID = try optional("user_id") ?? sub
        iat = try value("iat")
        exp = try value("exp")
        email = try optional("email")
        emailVerified = try optional("email_verified")
        phoneNumber = try optional("phone_number")
        name = try optional("name")
        picture = try optional("picture")
        providerID = try optional("provider_id")
        firebase = try value("firebase")
        for key in container.allKeys where !Self.ownNames.contains(key.stringValue) {
            custom[key.stringValue] = try container.decode(ClaimValue.self, forKey: key)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        for (name, value) in custom where !Self.ownNames.contains(name) { try container.encode(value, forKey: AnyCodingKey(name)) }
        try container.encodeIfPresent(name, forKey: AnyCodingKey("name"))
        try container.encodeIfPresent(picture, forKey: AnyCodingKey("picture"))
        try container.encode(iss, forKey: AnyCodingKey("iss"))
        try container.encode(aud, forKey: AnyCodingKey("aud"))
        try container.encode(authTime, forKey: AnyCodingKey("auth_time"))
        try container.encode(userID, forKey: AnyCodingKey("user_id"))
        try container.encode(sub, forKey: AnyCodingKey("sub"))
        try container.encode(iat, forKey: AnyCodingKey("iat"))
        try container.encode(exp, forKey: AnyCodingKey("exp"))
        try container.encodeIfPresent(email, forKey: AnyCodingKey("email"))
        try container.encodeIfPresent(emailVerified, forKey: AnyCodingKey("email_verified"))
        try container.encodeIfPresent(phoneNumber, forKey: AnyCodingKey("phone_number"))
        try container.encodeIfPresent(providerID, forKey: AnyCodingKey("provider_id"))
        try container.encode(firebase, forKey: AnyCodingKey("firebase"))
    }

    /// What an ID token or a session cookie of this server must be: for this project, from this
    /// issuer, about someone, and not expired at `now` (the service clock's time).
    struct Expectations: Sendable {
        var audience: String
        var issuer: String
        /// Milliseconds since 1970.
        var now: Timestamp
        /// The error for a token that checks out but has expired.
        var expired: ActionError
    }

    /// Checked inside jwt-kit's verification, with ``TokenService``'s expectations.
    public func verify(using algorithm: some JWTAlgorithm) async throws { try checkExpectations() }

    func check(_ expected: Expectations) throws {
        guard aud == expected.audience, iss == expected.issuer, !sub.isEmpty else { throw ActionError.invalidIDToken }
        guard exp > expected.now.seconds else { throw expected.expired }
    }
}

/// A JWT's header, read before its signature is checked.
struct JWTHeaderFields: Decodable, Sendable {
    var alg: String?
    var kid: String?
    var typ: String?
}
