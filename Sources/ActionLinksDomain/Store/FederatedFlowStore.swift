import Crypto
import Foundation

/// One federated sign-in in flight: what the server must remember between sending a browser to a
/// provider and the app completing the sign-in (`accounts:signInWithIdp`). The `state` sent to the
/// provider is stored only as its hash; the flow lives ten minutes and is consumed once.
public struct FederatedFlow: Sendable, Hashable, Codable {
    /// Where the browser goes once the provider has answered.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// An iOS app: its callback scheme, `<scheme>://firebaseauth/link?deep_link_id=...`.
        case iOSApp
        /// An Android app: an intent for `genericidp://firebase.auth/` in its package.
        case androidApp
        /// A web app without Firebase's iframe: its allow-listed page, with a one-time custom token
        /// in the fragment (the server completes the sign-in itself).
        case webPage
        /// A client that asked `accounts:createAuthUri`: its allow-listed `continueUri`, with the
        /// provider's answer in the query, for it to send to `accounts:signInWithIdp`.
        case authURI
    }

    /// The lower-case hex SHA-256 of the `state` sent to the provider.
    public var stateHash: String
    /// The tenant ("" for the project).
    public var tenantID: String
    /// The provider (`yahoo.com`, `oidc.corp`).
    public var providerID: String
    /// Where the browser returns.
    public var kind: Kind
    /// The iOS callback scheme or Android package (from the configuration, never from the request),
    /// or the allow-listed URL of a web page or `continueUri`.
    public var returnTo: String
    /// The SDK's `eventId`, sent back with the result.
    public var eventID: String?
    /// The SDK's `authType`.
    public var authType: String
    /// The lower-case hex SHA-256 of the session secret the app keeps (`sessionId` at
    /// `signInWithIdp`); `nil` for a web page, which the server completes itself.
    public var sessionHash: String?
    /// The lower-case hex SHA-256 of the browser's binding cookie; `nil` for `createAuthUri` flows,
    /// whose browser never visited the server before the provider.
    public var bindingHash: String?
    /// The `nonce` the provider's ID token must carry (SAML: the AuthnRequest's `ID`, which the
    /// response must answer with `InResponseTo`).
    public var nonce: String
    /// The PKCE verifier, for a provider that supports S256.
    public var codeVerifier: String?
    /// The `redirect_uri` sent to the provider (needed again at the token endpoint).
    public var redirectURI: String
    /// When the flow started (ms).
    public var createdAt: Timestamp
    /// When it stops working (ms).
    public var expiresAt: Timestamp
    /// When the provider sent the browser back (once only).
    public var returnedAt: Timestamp?
    /// The lower-case hex SHA-256 of the authorization code the browser brought back.
    public var codeHash: String?
    /// When the flow was used up.
    public var consumedAt: Timestamp?
    /// The Tink public keyset an Android app sent as `publicKey`: the `link` it gets back is
    /// encrypted to it (see TinkHybridEncrypt.swift).
    public var androidPublicKey: String?

    /// How long a flow lives: ten minutes.
    public static let lifetime: Duration = .seconds(600)

    /// The fields kept as one JSON column (the others are columns the store's conditions read).
    struct Details: Codable {
        var providerID: String
        var kind: Kind
        var returnTo: String
        var eventID: String?
        var authType: String
        var sessionHash: String?
        var bindingHash: String?
        var nonce: String
        var codeVerifier: String?
        var redirectURI: String
        var createdAt: Timestamp
        var androidPublicKey: String?
    }

    package var details: String {
        let details = Details(
            providerID: providerID, kind: kind, returnTo: returnTo, eventID: eventID, authType: authType, sessionHash: sessionHash,
            bindingHash: bindingHash, nonce: nonce, codeVerifier: codeVerifier, redirectURI: redirectURI, createdAt: createdAt,
            androidPublicKey: androidPublicKey)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(details)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// A flow from a stored row.
    package init?(
        stateHash: String, tenantID: String, expiresAt: Timestamp, returnedAt: Timestamp?, codeHash: String?, consumedAt: Timestamp?,
        details json: String
    ) {
        guard let details = try? JSONDecoder().decode(Details.self, from: Data(json.utf8)) else { return nil }
        self.init(
            stateHash: stateHash, tenantID: tenantID, providerID: details.providerID, kind: details.kind, returnTo: details.returnTo,
            eventID: details.eventID, authType: details.authType, sessionHash: details.sessionHash, bindingHash: details.bindingHash,
            nonce: details.nonce, codeVerifier: details.codeVerifier, redirectURI: details.redirectURI, createdAt: details.createdAt,
            expiresAt: expiresAt, returnedAt: returnedAt, codeHash: codeHash, consumedAt: consumedAt,
            androidPublicKey: details.androidPublicKey)
    }

    /// Creates a flow value.
    public init(
        stateHash: String, tenantID: String, providerID: String, kind: Kind, returnTo: String, eventID: String?, authType: String,
        sessionHash: String?, bindingHash: String?, nonce: String, codeVerifier: String?, redirectURI: String, createdAt: Timestamp,
        expiresAt: Timestamp, returnedAt: Timestamp? = nil, codeHash: String? = nil, consumedAt: Timestamp? = nil,
        androidPublicKey: String? = nil
    ) {
        self.stateHash = stateHash
        self.tenantID = tenantID
        self.providerID = providerID
        self.kind = kind
        self.returnTo = returnTo
        self.eventID = eventID
        self.authType = authType
        self.sessionHash = sessionHash
        self.bindingHash = bindingHash
        self.nonce = nonce
        self.codeVerifier = codeVerifier
        self.redirectURI = redirectURI
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.returnedAt = returnedAt
        self.codeHash = codeHash
        self.consumedAt = consumedAt
        self.androidPublicKey = androidPublicKey
    }

    /// The lower-case hex SHA-256 of `text`: how states, session secrets, cookies and codes are kept.
    public static func hash(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

/// Where federated sign-in flows live between the provider's round trip and `signInWithIdp`. Each
/// step is one conditional statement, so two instances (or two requests) can never both take it.
public protocol FederatedFlowStore: Sendable {
    /// Stores a new flow (and drops flows that expired a day ago).
    func saveFlow(_ flow: FederatedFlow) async throws
    /// The flow of a state's hash, whatever its condition.
    func flow(stateHash: String) async throws -> FederatedFlow?
    /// Records that the provider sent the browser back with a code (its hash): only once, and only
    /// while the flow is live and unconsumed. Returns whether this call recorded it.
    func markReturned(stateHash: String, codeHash: String?, now: Timestamp) async throws -> Bool
    /// Uses the flow up: only once, only after the provider's return and before expiry. Returns
    /// whether this call consumed it.
    func consumeFlow(stateHash: String, now: Timestamp) async throws -> Bool
    /// Records a SAML assertion as used until `expiresAt` (its key: the hash of its issuer and ID);
    /// `false` when it already was. Each assertion ID an IdP issued is accepted once, and
    /// remembered until the assertion could no longer be accepted anyway (its NotOnOrAfter plus
    /// the clock skew); expired keys are dropped on the way. The table is schema v5.
    func useSAMLAssertion(key: String, expiresAt: Timestamp, now: Timestamp) async throws -> Bool
}
