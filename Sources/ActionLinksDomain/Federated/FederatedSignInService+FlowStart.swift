import ActionLinks
import ActionLinksConfiguration
import Crypto
import Foundation

// Starting a flow: the provider's authorization URL, for the handler and `createAuthUri`.

extension FederatedSignInService {
    /// What the handler (or `createAuthUri`) asks for.
    package struct Start: Sendable {
        var providerID: String
        package var tenantID: String
        package var kind: FederatedFlow.Kind
        package var returnTo: String
        var eventID: String?
        var authType: String
        package var sessionHash: String?
        package var bindingHash: String?
        package var extraScopes: [String] = []
        package var customParameters: [(String, String)] = []
        package var language: String?
        /// An Android app's Tink public keyset (`publicKey`), kept with the flow.
        package var androidPublicKey: String?

        /// Makes the value from each of its fields.
        package init(
            providerID: String, tenantID: String, kind: FederatedFlow.Kind, returnTo: String, eventID: String? = nil, authType: String,
            sessionHash: String? = nil, bindingHash: String? = nil, extraScopes: [String] = [], customParameters: [(String, String)] = [],
            language: String? = nil, androidPublicKey: String? = nil
        ) {
            self.providerID = providerID
            self.tenantID = tenantID
            self.kind = kind
            self.returnTo = returnTo
            self.eventID = eventID
            self.authType = authType
            self.sessionHash = sessionHash
            self.bindingHash = bindingHash
            self.extraScopes = extraScopes
            self.customParameters = customParameters
            self.language = language
            self.androidPublicKey = androidPublicKey
        }
    }

    /// The parameters a caller may not set: this server's own.
    static let reservedParameters: Set<String> = [
        "client_id", "response_type", "scope", "redirect_uri", "state", "nonce", "code_challenge", "code_challenge_method",
        "response_mode", "client_secret", "code_verifier",
    ]

    /// Stores a new flow and answers the provider's authorization URL (from its discovery document,
    /// never from the request) to send the browser to.
    package func authorizationURL(for start: Start) async throws(ActionError) -> String {
        if Self.isSAML(start.providerID) { return try await samlAuthorizationURL(for: start) }
        let provider = try enabledProvider(start.providerID)
        let tenant = try await accountService.tenants.policy(for: start.tenantID)
        try tenant.checkEnabled()
        let configuration = try await providers.configuration(for: provider)
        let now = clock.now
        let state = Secrets.token()
        let nonce = Secrets.token()
        let verifier = configuration.supportsPKCE ? Secrets.token() + Secrets.token() : nil
        let flow = FederatedFlow(
            stateHash: FederatedFlow.hash(state), tenantID: tenant.tenantID, providerID: provider.id, kind: start.kind,
            returnTo: start.returnTo, eventID: start.eventID, authType: start.authType, sessionHash: start.sessionHash,
            bindingHash: start.bindingHash, nonce: nonce, codeVerifier: verifier, redirectURI: provider.redirectURI, createdAt: now,
            expiresAt: now + FederatedFlow.lifetime, androidPublicKey: start.androidPublicKey)
        try await flows.start(flow)
        var scopes = provider.scopes
        for scope in start.extraScopes where !scope.isEmpty && !scopes.contains(scope) { scopes.append(scope) }
        var items = [
            ("response_type", "code"), ("client_id", provider.clientID), ("redirect_uri", provider.redirectURI),
            ("scope", scopes.joined(separator: " ")), ("state", state), ("nonce", nonce),
        ]
        if let verifier {
            items += [("code_challenge", Base64URL.encode(SHA256.hash(data: Data(verifier.utf8)))), ("code_challenge_method", "S256")]
        }
        // Apple answers with a POST when it is asked for the name or address.
        if provider.id == "apple.com" { items.append(("response_mode", "form_post")) }
        var custom = start.customParameters.filter { !Self.reservedParameters.contains($0.0.lowercased()) }
        if let language = start.language, !custom.contains(where: { $0.0 == "ui_locales" }) { custom.append(("ui_locales", language)) }
        items += custom
        return URLText.url(configuration.authorizationEndpoint, adding: items)
    }

    /// `accounts:createAuthUri` with a `providerId`: a flow for a client that drives the browser
    /// itself. The provider returns to this server's handler, which relays its answer to the
    /// allow-listed `continueUri`; the client then calls `signInWithIdp` with that URL and the same
    /// `sessionId`.
    package func authURI(
        providerID: String, continueURI: String?, sessionID: String, customParameters: [String: String], scopes: String?,
        tenantID: String
    ) async throws(ActionError) -> String {
        guard let continueURI, !continueURI.isEmpty else { throw ActionError(.missingContinueURI) }
        let target: String
        switch policy.evaluate(continueURI) {
        case .allowed(let url): target = url
        case .rejected(let rejection) where rejection.code == .notAllowed:
            throw ActionError(.unauthorizedDomain, "Domain not allowlisted by project")
        case .rejected(let rejection):
            throw ActionError(.invalidContinueURI, "The continue URL provided in the request is invalid: \(rejection.message)")
        }
        guard !target.contains("#"), let given = Self.parameters(requestURI: target, postBody: nil), given["state"] == nil else {
            throw ActionError(.invalidContinueURI, "The continue URL cannot contain a fragment or a state parameter.")
        }
        var start = Start(
            providerID: providerID, tenantID: tenantID, kind: .authURI, returnTo: target, eventID: nil, authType: "createAuthUri",
            sessionHash: FederatedFlow.hash(sessionID), bindingHash: nil)
        start.extraScopes = (scopes ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        start.customParameters = customParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        return try await authorizationURL(for: start)
    }
}
