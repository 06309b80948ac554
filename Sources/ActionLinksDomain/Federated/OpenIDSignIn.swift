import ActionLinks
import ActionLinksConfiguration
import Crypto
import Foundation

/// OpenID Connect sign-in (the well-known providers and `oidc.<name>`): a flow's authorization URL,
/// the provider's answer at the handler (checked against its flow and, RFC 9207, its issuer), the
/// code exchange, the ID token's checks with the provider's keys, the profile from its UserInfo
/// endpoint, and a credential an app already holds. The flow's life is ``FederatedFlows``'s, what
/// becomes of the assertion ``FederatedAccounts``'s.
struct OpenIDSignIn: Sendable {
    /// The configured OpenID Connect providers.
    let configured: [ProviderSettings]
    /// A development server, where a provider that is not configured is taken the emulator's way.
    let development: Bool
    let providers: OpenIDProviders
    let flows: FederatedFlows
    let tenants: TenantDirectory
    let accounts: FederatedAccounts
    let clock: any ServiceClock

    init(
        settings: ServiceSettings, providers: OpenIDProviders = OpenIDProviders(), flows: FederatedFlows, tenants: TenantDirectory,
        accounts: FederatedAccounts, clock: any ServiceClock
    ) {
        configured = settings.providers
        development = settings.server.development
        self.providers = providers
        self.flows = flows
        self.tenants = tenants
        self.accounts = accounts
        self.clock = clock
    }

    /// Refuses `id` when it is configured and its sign-ins are not offered.
    func checkOffered(_ id: String) throws(ActionError) { try configured.checkOffered(id) }

    // MARK: - Starting a flow

    /// The parameters a caller may not set: this server's own.
    static let reservedParameters: Set<String> = [
        "client_id", "response_type", "scope", "redirect_uri", "state", "nonce", "code_challenge", "code_challenge_method",
        "response_mode", "client_secret", "code_verifier",
    ]

    /// Stores a new flow and answers the provider's authorization URL (from its discovery document,
    /// never from the request) to send the browser to.
    func authorizationURL(for start: FederatedSignInService.Start) async throws(ActionError) -> String {
        let provider = try configured.enabled(start.providerID)
        let tenant = try await tenants.policy(for: start.tenantID)
        try tenant.checkEnabled()
        let configuration = try await providers.configuration(for: provider)
        let state = Secrets.token()
        let nonce = Secrets.token()
        let verifier = configuration.supportsPKCE ? Secrets.token() + Secrets.token() : nil
        try await flows.start(
            start.flow(
                state: state, tenantID: tenant.tenantID, providerID: provider.id, nonce: nonce, codeVerifier: verifier,
                redirectURI: provider.redirectURI, now: clock.now))
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

    // MARK: - The provider's return

    /// Checks the provider's answer against its flow: the flow must exist, be live, unused, not
    /// returned before, bound to this browser (`binding`, the cookie) unless `createAuthUri` made it,
    /// and `iss`, when given, must be the provider's. Any failure throws (the handler shows an error
    /// page: nothing identifies an app to return to that the request did not choose). `query` is the
    /// answer as received (the query, or a `form_post` body): the app's `link` is the redirect URI
    /// with it.
    func returned(parameters: [String: String], query: String, binding: String?) async throws(ActionError)
        -> FederatedSignInService.Return
    {
        guard let state = parameters["state"], !state.isEmpty else {
            throw ActionError(.invalidIDPResponse, "the provider's answer has no state")
        }
        let flow = try await flows.returning(state: state, binding: binding, unknown: "no sign-in was started with this state") { _ in true
        }
        if let provider = configured.first(where: { $0.id == flow.providerID }) {
            // RFC 9207: a mix-up attack shows as an answer from an issuer other than the flow's.
            if let issuer = parameters["iss"], issuer != provider.issuer {
                throw ActionError(.invalidIDPResponse, "the answer comes from another issuer")
            }
            if parameters["iss"] == nil,
                (try? await providers.configuration(for: provider))?.authorizationResponseIssParameterSupported == true
            {
                throw ActionError(.invalidIDPResponse, "the answer lacks the issuer the provider always sends")
            }
        }
        let code = parameters["code"].flatMap { $0.isEmpty ? nil : $0 }
        try await flows.markReturned(flow, answer: code)
        let refusal = parameters["error"].map { error in
            (
                code: error == "access_denied" ? "auth/user-cancelled" : "auth/invalid-credential",
                message: "The provider answered \(error.prefix(64))"
                    + (parameters["error_description"].map { ": " + String($0.prefix(200)) } ?? "")
            )
        }
        switch flow.kind {
        case .iOSApp, .androidApp:
            if let refusal { return .appError(flow, code: refusal.code, message: refusal.message) }
            guard code != nil else { return .appError(flow, code: "auth/invalid-credential", message: "The provider sent no code.") }
            return .app(flow, link: flow.redirectURI + "?" + query)
        case .authURI:
            let relayed = ["code", "state", "iss", "error", "error_description"].compactMap { name in parameters[name].map { (name, $0) } }
            return .redirect(URLText.url(flow.returnTo, adding: relayed))
        case .webPage:
            if let refusal { return .redirect(flow.webPageReturn([("error", refusal.code)])) }
            return .redirect(
                await accounts.completeWebPage(flow, what: "federated sign-in") { () async throws(ActionError) -> ProviderAssertion in
                    try await flows.consume(flow)
                    guard let code else { throw ActionError(.invalidIDPResponse, "the provider sent no code") }
                    return try await exchange(code: code, flow: flow).assertion
                })
        }
    }

    // MARK: - signInWithIdp

    /// `signInWithIdp` with a `requestUri` (its `parameters`): the answer to a flow this server
    /// started (`state`), exchanged here, or a credential an app already holds (`providerId` with
    /// `id_token`, and `access_token` for the profile).
    func signInWithIdp(parameters: [String: String], requestURI: String, sessionID: String?, tenantID: String) async throws(ActionError)
        -> ProviderCredential
    {
        if let state = parameters["state"] {
            let flow = try await flows.consume(
                state: state, answer: parameters["code"], error: parameters["error"], sessionID: sessionID, tenantID: tenantID)
            return try await exchange(code: parameters["code"] ?? "", flow: flow)
        }
        guard let providerID = parameters["providerId"]?.lowercased(), !providerID.isEmpty else {
            throw ActionError(.invalidCredentialOrProviderID, "Invalid IdP response/credential: \(requestURI.prefix(200))")
        }
        let idToken = parameters["id_token"].flatMap { $0.isEmpty ? nil : $0 }
        let accessToken = parameters["access_token"]
        let assertion = try await credential(providerID: providerID, idToken: idToken, accessToken: accessToken, nonce: parameters["nonce"])
        return ProviderCredential(assertion: assertion, idToken: idToken, accessToken: accessToken)
    }

    /// Exchanges a flow's code and checks the ID token it brings (with the flow's nonce), completed
    /// from the provider's UserInfo endpoint when it lacks the profile.
    func exchange(code: String, flow: FederatedFlow) async throws(ActionError) -> ProviderCredential {
        let provider = try configured.enabled(flow.providerID)
        let configuration = try await providers.configuration(for: provider)
        let answer = try await providers.exchange(
            code: code, provider: provider, configuration: configuration, redirectURI: flow.redirectURI, codeVerifier: flow.codeVerifier)
        guard let idToken = answer.idToken else { throw ActionError(.invalidIDPResponse, "the provider sent no id_token") }
        let checked = try await verify(idToken, provider: provider, configuration: configuration, nonce: .exactly(flow.nonce))
        let token = try await withUserInfo(checked, accessToken: answer.accessToken, provider: provider, configuration: configuration)
        return ProviderCredential(
            assertion: ProviderAssertion(providerID: provider.id, token: token), idToken: answer.idToken, accessToken: answer.accessToken,
            expiresIn: answer.expiresIn)
    }

    /// A credential an app already holds (`postBody` with `providerId` and `id_token`): checked
    /// with the provider's keys, audience and the `nonce` given with it. On a development server, a
    /// provider that is not configured is taken on the token's word, as Firebase's Auth emulator does.
    /// A configured provider's token without the profile is completed from its UserInfo endpoint
    /// with the `access_token` given beside it, if any.
    func credential(providerID: String, idToken: String?, accessToken: String?, nonce: String?) async throws(ActionError)
        -> ProviderAssertion
    {
        guard configured.contains(where: { $0.id == providerID }) else {
            return try ProviderAssertion.emulatorCredential(providerID: providerID, idToken: idToken, development: development)
        }
        let provider = try configured.enabled(providerID)
        guard let idToken else { throw ActionError(.invalidIDPResponse, "An id_token is needed to sign in with \(providerID).") }
        let configuration = try await providers.configuration(for: provider)
        let checked = try await verify(idToken, provider: provider, configuration: configuration, nonce: .given(nonce))
        let token = try await withUserInfo(checked, accessToken: accessToken, provider: provider, configuration: configuration)
        return ProviderAssertion(providerID: providerID, token: token)
    }

    // MARK: - ID tokens and the profile

    /// Checks an ID token with the provider's keys, fetching them again once when it names a key
    /// they lack.
    func verify(
        _ idToken: String, provider: ProviderSettings, configuration: OpenIDConfiguration, nonce: ProviderIDToken.NonceExpectation
    ) async throws(ActionError) -> ProviderIDToken {
        var refresh = false
        while true {
            let keys = try await providers.keys(for: provider, configuration: configuration, refresh: refresh)
            do throws(ProviderIDToken.Rejection) {
                return try await ProviderIDToken.verify(
                    idToken, keys: keys, issuer: configuration.issuer, clientID: provider.clientID, nonce: nonce, now: clock.now)
            } catch {
                switch error {
                case .unknownKey where !refresh:
                    refresh = true
                case .unknownKey:
                    throw ActionError(.invalidIDPResponse, "the id_token names a key the provider does not publish")
                case .nonce:
                    throw ActionError(.missingOrInvalidNonce, "Nonce is missing or does not match the one of the request.")
                case .invalid(let detail):
                    throw ActionError(.invalidIDPResponse, detail)
                }
            }
        }
    }

    /// `token` with the profile from the provider's UserInfo endpoint when the token lacks what the
    /// provider was asked for (no `email` with the `email` scope, no `name` with `profile`), the
    /// provider has a `userinfo_endpoint` and there is an access token; else `token` as it is. Some
    /// providers (django-oidc-provider by default) put only `iss sub aud exp iat auth_time nonce
    /// at_hash` in the ID token: without this, the account rules would see no address.
    func withUserInfo(
        _ token: ProviderIDToken, accessToken: String?, provider: ProviderSettings, configuration: OpenIDConfiguration
    ) async throws(ActionError) -> ProviderIDToken {
        let lacksEmail = token.claims.email == nil && provider.scopes.contains("email")
        let lacksName = token.claims.name == nil && provider.scopes.contains("profile")
        guard lacksEmail || lacksName, let endpoint = configuration.userinfoEndpoint, let accessToken, !accessToken.isEmpty else {
            return token
        }
        let userInfo = try await providers.userInfo(accessToken: accessToken, endpoint: endpoint, provider: provider)
        do throws(ProviderIDToken.Rejection) {
            return try token.merging(userInfo: userInfo)
        } catch {
            if case .invalid(let detail) = error { throw ActionError(.invalidIDPResponse, detail) }
            throw ActionError(.invalidIDPResponse, "the provider's userinfo answer cannot be used")
        }
    }
}
