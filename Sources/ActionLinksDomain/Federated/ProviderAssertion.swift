import Crypto
import Foundation

/// What a provider asserted about a user, once checked: who they are there and what it says of
/// them. It is what the account rules decide on, and what a `pendingToken` carries.
package struct ProviderAssertion: Sendable, Codable, Hashable {
    /// The provider (`yahoo.com`, `oidc.corp`).
    package var providerID: String
    /// The user's ID at the provider (`sub`).
    package var rawID: String
    /// The address the provider gave, in lower case.
    package var email: String?
    /// Whether the provider said it verified the address (`email_verified: true`; a missing claim
    /// is unverified).
    package var emailVerified: Bool
    package var displayName: String?
    package var firstName: String?
    package var lastName: String?
    package var photoURL: String?
    /// The provider's `screen_name` claim (as Firebase's Auth emulator reads it).
    package var screenName: String?
    /// What `signInWithIdp` answers as `rawUserInfo`: for google.com, Google's userinfo shape (see
    /// ``googleUserInfo(_:email:)``); for any other provider, the ID token's payload (with what its
    /// UserInfo endpoint added).
    package var rawUserInfo: String?
    /// The address as the provider wrote it, when `email` is its lower-case form (a SAML `NameID`,
    /// answered as given, as Firebase's emulator does).
    package var answeredEmail: String?

    init(providerID: String, token: ProviderIDToken) {
        self.providerID = providerID
        rawID = token.claims.sub ?? ""
        email = token.claims.email.flatMap(EmailAddress.canonical)
        emailVerified = email != nil && token.claims.emailVerified?.value == true
        displayName = token.claims.name
        firstName = token.claims.givenName
        lastName = token.claims.familyName
        photoURL = token.claims.picture
        screenName = token.claims.screenName
        rawUserInfo = providerID == "google.com" ? Self.googleUserInfo(token.claims, email: email) : token.payload
    }

    /// A Google user's `rawUserInfo` as Firebase answers it: Google's userinfo shape (`id`, `email`,
    /// `verified_email`, `name`, `given_name`, `family_name`, `picture`, `locale`,
    /// `granted_scopes`) rather than the ID token's claims, built from the token as Firebase's Auth
    /// emulator builds it (`locale` is the token's, else `en`; `granted_scopes` name the profile,
    /// and the email when the token carries an address). Missing claims are left out.
    static func googleUserInfo(_ claims: ProviderClaims, email: String?) -> String {
        var scopes = "openid https://www.googleapis.com/auth/userinfo.profile"
        if email != nil { scopes += " https://www.googleapis.com/auth/userinfo.email" }
        var info: [String: ClaimValue] = [
            "granted_scopes": .string(scopes), "id": .string(claims.sub ?? ""),
            "verified_email": .bool(claims.emailVerified?.value == true), "locale": .string(claims.locale ?? "en"),
        ]
        let optional = [
            ("name", claims.name), ("given_name", claims.givenName), ("family_name", claims.familyName), ("email", email),
            ("picture", claims.picture),
        ]
        for case (let name, let value?) in optional { info[name] = .string(value) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(ClaimValue.object(info))) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// The identity to link to an account.
    var identity: FederatedIdentity {
        FederatedIdentity(
            providerID: providerID, rawID: rawID, email: email, displayName: displayName, photoURL: photoURL, screenName: screenName)
    }

    /// A credential taken on its unsigned `id_token`'s word, as Firebase's Auth emulator takes it:
    /// on a development server, for a provider that is not configured (`OPERATION_NOT_ALLOWED`
    /// elsewhere).
    static func emulatorCredential(providerID: String, idToken: String?, development: Bool) throws(ActionError) -> ProviderAssertion {
        guard development else {
            throw ActionError(.operationNotAllowed, "The identity provider configuration is not found: \(providerID.prefix(100))")
        }
        guard let idToken else {
            throw ActionError.notImplemented("The Auth Emulator only supports sign-in with credentials (id_token required).")
        }
        guard let token = ProviderIDToken.unverified(idToken) else {
            throw ActionError(.invalidIDPResponse, "Unable to parse id_token: \(idToken.prefix(100))")
        }
        guard let sub = token.claims.sub, !sub.isEmpty else {
            throw ActionError(.invalidIDPResponse, "Invalid Idp Response: id_token missing required fields. ((Missing \"sub\" field.))")
        }
        return ProviderAssertion(providerID: providerID, token: token)
    }
}

/// What a protocol checked for `signInWithIdp`: the assertion, and the provider's tokens answered
/// beside it (`oauthIdToken`, `oauthAccessToken`, `oauthExpireIn`).
struct ProviderCredential: Sendable {
    var assertion: ProviderAssertion
    var idToken: String?
    var accessToken: String?
    var expiresIn: Int?
}

/// `pendingToken`s: a checked assertion an app may present again within an hour (to link it after
/// signing in another way, or to sign in again), a ``SignedToken`` carrying the assertion and bound
/// to its tenant, so that it needs no storage. JS SDKs send it without the provider or its tokens, so
/// it carries everything.
struct PendingTokens: Sendable {
    let tokens: SignedToken

    init(formKey: SymmetricKey) {
        tokens = SignedToken(.pendingAssertion, formKey: formKey)
    }

    /// A token for `assertion` in `tenantID`, valid for an hour from `now` (ms).
    func token(for assertion: ProviderAssertion, tenantID: String, now: Timestamp) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return tokens.make(bound: [tenantID], payload: (try? encoder.encode(assertion)) ?? Data(), now: now)
    }

    /// The assertion of a token this server made for `tenantID`, if it is intact and not expired.
    func assertion(from token: String, tenantID: String, now: Timestamp) -> ProviderAssertion? {
        guard let payload = tokens.verify(token, bound: [tenantID], now: now) else { return nil }
        return try? JSONDecoder().decode(ProviderAssertion.self, from: payload)
    }
}
