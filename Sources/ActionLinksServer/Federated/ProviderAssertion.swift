import Crypto
import Foundation

/// What a provider asserted about a user, once checked: who they are there and what it says of
/// them. It is what the account rules decide on, and what a `pendingToken` carries.
struct ProviderAssertion: Sendable, Codable, Hashable {
    /// The provider (`yahoo.com`, `oidc.corp`).
    var providerID: String
    /// The user's ID at the provider (`sub`).
    var rawID: String
    /// The address the provider gave, in lower case.
    var email: String?
    /// Whether the provider said it verified the address (`email_verified: true`; a missing claim
    /// is unverified).
    var emailVerified: Bool
    var displayName: String?
    var firstName: String?
    var lastName: String?
    var photoURL: String?
    var screenName: String?
    /// The ID token's payload (a JSON object), answered as `rawUserInfo`.
    var rawUserInfo: String?
    /// The address as the provider wrote it, when `email` is its lower-case form (a SAML `NameID`,
    /// answered as given, as Firebase's emulator does).
    var answeredEmail: String?

    init(providerID: String, token: ProviderIDToken) {
        self.providerID = providerID
        rawID = token.claims.sub ?? ""
        email = token.claims.email.flatMap(EmailAddress.canonical)
        emailVerified = email != nil && token.claims.emailVerified?.value == true
        displayName = token.claims.name
        firstName = token.claims.givenName
        lastName = token.claims.familyName
        photoURL = token.claims.picture
        screenName = token.claims.screenName ?? token.claims.preferredUsername
        rawUserInfo = token.payload
    }

    /// The identity to link to an account.
    var identity: FederatedIdentity {
        FederatedIdentity(providerID: providerID, rawID: rawID, email: email, displayName: displayName, photoURL: photoURL)
    }
}

/// `pendingToken`s: a checked assertion an app may present again within an hour (to link it after
/// signing in another way, or to sign in again), signed with the server's form key so that it
/// needs no storage. JS SDKs send it without the provider or its tokens, so it carries everything.
struct PendingTokens: Sendable {
    let key: SymmetricKey
    /// How long a pending token works.
    static let lifetime: Int64 = 3600

    init(formKey: SymmetricKey) {
        // A key of its own, derived from the form key: a pending token can never pass for a form token.
        key = SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: Data("federated pending token".utf8), using: formKey))
    }

    private struct Body: Codable {
        var assertion: ProviderAssertion
        var tenantID: String
        var expires: Int64
    }

    /// A token for `assertion` in `tenantID`, valid for an hour from `now` (ms).
    func token(for assertion: ProviderAssertion, tenantID: String, now: Timestamp) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = (try? encoder.encode(Body(assertion: assertion, tenantID: tenantID, expires: now / 1000 + Self.lifetime))) ?? Data()
        let encoded = Base64URL.encode(body)
        return encoded + "." + Base64URL.encode(Data(HMAC<SHA256>.authenticationCode(for: Data(encoded.utf8), using: key)))
    }

    /// The assertion and tenant of a token this server made, if it is intact and not expired.
    func assertion(from token: String, now: Timestamp) -> (assertion: ProviderAssertion, tenantID: String)? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let mac = Base64URL.decode(parts[1]),
            HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Data(parts[0].utf8), using: key),
            let data = Base64URL.decode(parts[0]), let body = try? JSONDecoder().decode(Body.self, from: data), body.expires > now / 1000
        else { return nil }
        return (body.assertion, body.tenantID)
    }
}
