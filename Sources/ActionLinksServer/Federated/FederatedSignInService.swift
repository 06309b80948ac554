import ActionLinks
import ActionLinksConfiguration
import Crypto
import Foundation
import Logging

/// Federated sign-in (OAuth 2 / OpenID Connect): the browser's round trip to the provider through
/// `/__/auth/handler`, `accounts:createAuthUri` for clients that drive it themselves, and
/// `accounts:signInWithIdp`, which exchanges the code, checks the ID token and applies Firebase's
/// account rules (one account per email, trusted providers).
public final class FederatedSignInService: Sendable {
    let settings: ServiceSettings
    let policy: ContinueURLPolicy
    let flows: any FederatedFlowStore
    let accounts: any AccountStore
    let accountService: AccountService
    let tokens: TokenService
    let providers: OpenIDProviders
    let pending: PendingTokens
    let store: StoreGateway
    let clock: any ServiceClock
    let logger: Logger

    init(
        settings: ServiceSettings, policy: ContinueURLPolicy, flows: any FederatedFlowStore, accounts: any AccountStore,
        accountService: AccountService,
        tokens: TokenService, formKey: SymmetricKey, providers: OpenIDProviders = OpenIDProviders(), store: StoreGateway,
        clock: any ServiceClock, logger: Logger
    ) {
        self.settings = settings
        self.policy = policy
        self.flows = flows
        self.accounts = accounts
        self.accountService = accountService
        self.tokens = tokens
        self.providers = providers
        pending = PendingTokens(formKey: formKey)
        self.store = store
        self.clock = clock
        self.logger = logger
    }

    /// The configured provider `id`, if sign-ins with it are offered (`OPERATION_NOT_ALLOWED`
    /// otherwise).
    func enabledProvider(_ id: String) throws(ActionError) -> ProviderSettings {
        guard let provider = settings.providers.first(where: { $0.id == id }), provider.enabled else {
            throw ActionError(.operationNotAllowed, "The identity provider configuration is not found or is disabled: \(id.prefix(100))")
        }
        return provider
    }

    // MARK: - Trust

    /// The domains each well-known provider is the mail provider of (Firebase's trusted providers).
    static let builtInTrustedDomains: [String: Set<String>] = [
        "google.com": ["gmail.com"], "yahoo.com": ["yahoo.com"], "microsoft.com": ["outlook.com", "hotmail.com"],
    ]

    /// Whether `providerID` vouches for addresses like `email`: Apple for every address (it relays
    /// or verifies them), the well-known providers for their own mail domains, and each provider for
    /// its configured `trustedEmailDomains`.
    static func vouches(providerID: String, email: String, settings: ServiceSettings) -> Bool {
        if providerID == "apple.com" { return true }
        guard let domain = email.split(separator: "@").last.map(String.init) else { return false }
        if builtInTrustedDomains[providerID]?.contains(domain) == true { return true }
        if settings.samlProviders.first(where: { $0.id == providerID })?.trustedEmailDomains.contains(domain) == true { return true }
        return settings.providers.first { $0.id == providerID }?.trustedEmailDomains.contains(domain) == true
    }

    /// Whether an assertion proves the address it carries: a provider that vouches for it, and
    /// `email_verified: true`.
    func isTrusted(_ assertion: ProviderAssertion) -> Bool {
        guard let email = assertion.email, assertion.emailVerified else { return false }
        return Self.vouches(providerID: assertion.providerID, email: email, settings: settings)
    }

    // MARK: - Starting a flow

    /// What the handler (or `createAuthUri`) asks for.
    struct Start: Sendable {
        var providerID: String
        var tenantID: String
        var kind: FederatedFlow.Kind
        var returnTo: String
        var eventID: String?
        var authType: String
        var sessionHash: String?
        var bindingHash: String?
        var extraScopes: [String] = []
        var customParameters: [(String, String)] = []
        var language: String?
    }

    /// The parameters a caller may not set: this server's own.
    static let reservedParameters: Set<String> = [
        "client_id", "response_type", "scope", "redirect_uri", "state", "nonce", "code_challenge", "code_challenge_method",
        "response_mode", "client_secret", "code_verifier",
    ]

    /// Stores a new flow and answers the provider's authorization URL (from its discovery document,
    /// never from the request) to send the browser to.
    func authorizationURL(for start: Start) async throws(ActionError) -> String {
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
            expiresAt: now + FederatedFlow.lifetime)
        try await store.call { try await self.flows.saveFlow(flow) }
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
        return ActionPages.url(configuration.authorizationEndpoint, adding: items)
    }

    /// `accounts:createAuthUri` with a `providerId`: a flow for a client that drives the browser
    /// itself. The provider returns to this server's handler, which relays its answer to the
    /// allow-listed `continueUri`; the client then calls `signInWithIdp` with that URL and the same
    /// `sessionId`.
    func authURI(
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
        guard !target.contains("#"), Self.parameters(requestURI: target, postBody: nil)?["state"] == nil else {
            throw ActionError(.invalidContinueURI, "The continue URL cannot contain a fragment or a state parameter.")
        }
        var start = Start(
            providerID: providerID, tenantID: tenantID, kind: .authURI, returnTo: target, eventID: nil, authType: "createAuthUri",
            sessionHash: FederatedFlow.hash(sessionID), bindingHash: nil)
        start.extraScopes = (scopes ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        start.customParameters = customParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        return try await authorizationURL(for: start)
    }

    // MARK: - The provider's return

    /// Where the handler sends the browser once the provider has answered.
    enum Return: Sendable {
        /// Back to an app with the URL as received (its `link`).
        case app(FederatedFlow, link: String)
        /// Back to an app with an error (`firebaseError`).
        case appError(FederatedFlow, code: String, message: String)
        /// To a URL (a `createAuthUri` client's `continueUri`, or a web page with its token).
        case redirect(String)
    }

    /// Checks the provider's answer against its flow: the flow must exist, be live, unused, not
    /// returned before, bound to this browser (`binding`, the cookie) unless `createAuthUri` made it,
    /// and `iss`, when given, must be the provider's. Any failure throws (the handler shows an error
    /// page: nothing identifies an app to return to that the request did not choose). `query` is the
    /// answer as received (the query, or a `form_post` body): the app's `link` is the redirect URI
    /// with it.
    func providerReturned(parameters: [String: String], query: String, binding: String?) async throws(ActionError) -> Return {
        if parameters["SAMLResponse"] != nil { return try await samlReturned(parameters: parameters, query: query, binding: binding) }
        guard let state = parameters["state"], !state.isEmpty else {
            throw ActionError(.invalidIDPResponse, "the provider's answer has no state")
        }
        let now = clock.now
        let stateHash = FederatedFlow.hash(state)
        guard let flow = try await store.call({ try await self.flows.flow(stateHash: stateHash) }) else {
            throw ActionError(.invalidIDPResponse, "no sign-in was started with this state")
        }
        guard flow.expiresAt > now else { throw ActionError(.expiredOOBCode, "the sign-in has expired") }
        guard flow.returnedAt == nil, flow.consumedAt == nil else { throw ActionError(.invalidIDPResponse, "the sign-in was already used") }
        if let expected = flow.bindingHash {
            guard let binding, ConstantTime.equal(Array(FederatedFlow.hash(binding).utf8), Array(expected.utf8)) else {
                throw ActionError(.invalidIDPResponse, "the sign-in was started in another browser")
            }
        }
        if let provider = settings.providers.first(where: { $0.id == flow.providerID }) {
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
        guard
            try await store.call({
                try await self.flows.markReturned(stateHash: stateHash, codeHash: code.map(FederatedFlow.hash), now: now)
            })
        else { throw ActionError(.invalidIDPResponse, "the sign-in was already used") }
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
            return .redirect(ActionPages.url(flow.returnTo, adding: relayed))
        case .webPage:
            return .redirect(await completeWebPage(flow, code: code, refusal: refusal?.code))
        }
    }

    /// A web page's flow, completed here: the page gets a one-time custom token in the fragment,
    /// or `error=<auth/...>` (with `email` and `pendingToken` when the address belongs to another
    /// account).
    func completeWebPage(_ flow: FederatedFlow, code: String?, refusal: String?) async -> String {
        func fragment(_ items: [(String, String)]) -> String {
            ActionPages.url(
                flow.returnTo, fragment: items.map { "\($0.0)=\(PercentEncoding.encodeComponent($0.1))" }.joined(separator: "&"))
        }
        if let refusal { return fragment([("error", refusal)]) }
        do throws(ActionError) {
            guard let code else { throw ActionError(.invalidIDPResponse, "the provider sent no code") }
            guard try await store.call({ try await self.flows.consumeFlow(stateHash: flow.stateHash, now: self.clock.now) }) else {
                throw ActionError(.invalidIDPResponse, "the sign-in was already used")
            }
            let (assertion, _) = try await exchange(code: code, flow: flow)
            let tenant = try await accountService.tenants.policy(for: flow.tenantID)
            let outcome = try await apply(assertion, tenant: tenant, mode: .signIn(autoCreate: true))
            switch outcome {
            case .signedIn(let user):
                let token = try await tokens.handOffToken(accountID: user.account.localID, tenantID: flow.tenantID, now: clock.now)
                return fragment([("customToken", token)])
            case .needConfirmation:
                return fragment([
                    ("error", "auth/account-exists-with-different-credential"), ("email", assertion.email ?? ""),
                    ("pendingToken", pending.token(for: assertion, tenantID: flow.tenantID, now: clock.now)),
                ])
            }
        } catch {
            logger.info("federated sign-in for a web page refused", metadata: ["error": "\(error)"])
            return fragment([("error", Self.authCode(error.code))])
        }
    }

    /// Firebase's client error code for a REST code (`EMAIL_EXISTS` → `auth/email-exists`).
    static func authCode(_ code: ActionError.Code) -> String {
        "auth/" + code.rawValue.lowercased().replacingOccurrences(of: "_", with: "-")
    }

    // MARK: - The code exchange

    /// Exchanges a flow's code and checks the ID token it brings (with the flow's nonce).
    func exchange(code: String, flow: FederatedFlow) async throws(ActionError) -> (ProviderAssertion, ProviderTokens) {
        let provider = try enabledProvider(flow.providerID)
        let configuration = try await providers.configuration(for: provider)
        let answer = try await providers.exchange(
            code: code, provider: provider, configuration: configuration, redirectURI: flow.redirectURI, codeVerifier: flow.codeVerifier)
        guard let idToken = answer.idToken else { throw ActionError(.invalidIDPResponse, "the provider sent no id_token") }
        let token = try await verify(idToken, provider: provider, configuration: configuration, nonce: .exactly(flow.nonce))
        return (ProviderAssertion(providerID: provider.id, token: token), answer)
    }

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

    // MARK: - signInWithIdp

    /// What `accounts:signInWithIdp` (`verifyAssertion`) asks.
    struct Assertion: Sendable {
        var requestURI: String?
        var postBody: String?
        var sessionID: String?
        var pendingToken: String?
        var idToken: String?
        var autoCreate = true
        var tenantID: String?
    }

    /// What `signInWithIdp` answers: the assertion and the provider's tokens, and what became of them.
    struct Answer: Sendable {
        var assertion: ProviderAssertion
        var oauthIDToken: String?
        var oauthAccessToken: String?
        var oauthExpiresIn: Int?
        var tenantID: String
        var outcome: Outcome
        /// The token to present the assertion again (for `needConfirmation` and the refusals
        /// answered with `errorMessage`).
        var pendingToken: String?
    }

    /// What the account rules decided.
    enum Outcome: Sendable {
        case signedIn(SignedInUser)
        case needConfirmation(verifiedProviders: [String])
    }

    /// A refusal that `returnIdpCredential` answers with HTTP 200 and `errorMessage`, with the
    /// assertion so the app can rebuild the credential.
    struct CredentialRefusal: Error, Sendable {
        var error: ActionError
        var answer: Answer
    }

    /// `accounts:signInWithIdp`.
    func signInWithIdp(_ request: Assertion, caller: Caller) async throws(ActionError) -> Result<Answer, CredentialRefusal> {
        var tenant = try await caller.tenant(body: request.tenantID, tenants: accountService.tenants)
        try tenant.checkEnabled()
        let now = clock.now
        var oauthIDToken: String?
        var oauthAccessToken: String?
        var oauthExpiresIn: Int?
        let assertion: ProviderAssertion
        if let token = request.pendingToken, !token.isEmpty {
            guard let found = pending.assertion(from: token, now: now), found.tenantID == tenant.tenantID else {
                throw ActionError(.invalidPendingToken, "The pending token is invalid, expired or of another tenant.")
            }
            if settings.providers.contains(where: { $0.id == found.assertion.providerID }) {
                _ = try enabledProvider(found.assertion.providerID)
            }
            if settings.samlProviders.contains(where: { $0.id == found.assertion.providerID }) {
                _ = try enabledSAMLProvider(found.assertion.providerID)
            }
            assertion = found.assertion
        } else {
            guard let requestURI = request.requestURI, !requestURI.isEmpty else { throw ActionError(.missingRequestURI) }
            guard let parameters = Self.parameters(requestURI: requestURI, postBody: request.postBody) else {
                throw ActionError(.invalidRequestURI)
            }
            if let saml = try await samlAssertion(parameters: parameters, sessionID: request.sessionID, tenantID: tenant.tenantID) {
                assertion = saml.assertion
                oauthIDToken = saml.oauthIDToken
            } else if let state = parameters["state"] {
                let flow = try await flow(state: state, parameters: parameters, sessionID: request.sessionID, tenantID: tenant.tenantID)
                let (checked, answer) = try await exchange(code: parameters["code"] ?? "", flow: flow)
                assertion = checked
                (oauthIDToken, oauthAccessToken, oauthExpiresIn) = (answer.idToken, answer.accessToken, answer.expiresIn)
            } else {
                guard let providerID = parameters["providerId"]?.lowercased(), !providerID.isEmpty else {
                    throw ActionError(.invalidCredentialOrProviderID, "Invalid IdP response/credential: \(requestURI.prefix(200))")
                }
                let idToken = parameters["id_token"].flatMap { $0.isEmpty ? nil : $0 }
                oauthIDToken = idToken
                oauthAccessToken = parameters["access_token"]
                assertion = try await credential(providerID: providerID, idToken: idToken, nonce: parameters["nonce"])
            }
        }
        let mode: RulesMode
        if let idToken = request.idToken {
            let user = try await accountService.user(idToken: idToken, caller: caller, bodyTenant: request.tenantID)
            tenant = user.tenant
            mode = .link(accountID: user.account.localID)
        } else {
            mode = .signIn(autoCreate: request.autoCreate)
        }
        var answer = Answer(
            assertion: assertion, oauthIDToken: oauthIDToken, oauthAccessToken: oauthAccessToken, oauthExpiresIn: oauthExpiresIn,
            tenantID: tenant.tenantID, outcome: .needConfirmation(verifiedProviders: []))
        do {
            answer.outcome = try await apply(assertion, tenant: tenant, mode: mode)
            if case .needConfirmation = answer.outcome {
                answer.pendingToken = pending.token(for: assertion, tenantID: tenant.tenantID, now: now)
            }
            return .success(answer)
        } catch let error where error.code == .federatedUserIDAlreadyLinked || error.code == .emailExists {
            answer.pendingToken = pending.token(for: assertion, tenantID: tenant.tenantID, now: now)
            return .failure(CredentialRefusal(error: error, answer: answer))
        }
    }

    /// The live flow of `state`, checked against the answer and the app's session secret, and
    /// consumed (once: a second `signInWithIdp` with the same URL fails).
    func flow(state: String, parameters: [String: String], sessionID: String?, tenantID: String) async throws(ActionError)
        -> FederatedFlow
    {
        let now = clock.now
        let stateHash = FederatedFlow.hash(state)
        guard let flow = try await store.call({ try await self.flows.flow(stateHash: stateHash) }),
            flow.kind == .iOSApp || flow.kind == .androidApp || flow.kind == .authURI
        else { throw ActionError(.invalidIDPResponse, "No sign-in was started with this state.") }
        guard flow.consumedAt == nil else { throw ActionError(.invalidIDPResponse, "The sign-in was already completed.") }
        guard flow.expiresAt > now else { throw ActionError(.invalidIDPResponse, "The sign-in has expired; start it again.") }
        guard let codeHash = flow.codeHash, let code = parameters["code"],
            ConstantTime.equal(Array(FederatedFlow.hash(code).utf8), Array(codeHash.utf8))
        else {
            if let error = parameters["error"] { throw ActionError(.invalidIDPResponse, "The provider answered \(error.prefix(64)).") }
            throw ActionError(.invalidIDPResponse, "The answer is not the one the provider sent to the browser.")
        }
        guard let expected = flow.sessionHash, let sessionID, !sessionID.isEmpty,
            ConstantTime.equal(Array(FederatedFlow.hash(sessionID).utf8), Array(expected.utf8))
        else { throw ActionError(.invalidIDPResponse, "The sessionId does not match the one the sign-in started with.") }
        guard flow.tenantID == tenantID else { throw ActionError(.tenantIDMismatch) }
        guard try await store.call({ try await self.flows.consumeFlow(stateHash: stateHash, now: now) }) else {
            throw ActionError(.invalidIDPResponse, "The sign-in was already completed.")
        }
        return flow
    }

    /// A credential an app already holds (`postBody` with `providerId` and `id_token`): checked
    /// with the provider's keys, audience and the `nonce` given with it. On a development server, a
    /// provider that is not configured is taken on the token's word, as Firebase's Auth emulator does.
    func credential(providerID: String, idToken: String?, nonce: String?) async throws(ActionError) -> ProviderAssertion {
        if settings.providers.contains(where: { $0.id == providerID }) {
            let provider = try enabledProvider(providerID)
            guard let idToken else { throw ActionError(.invalidIDPResponse, "An id_token is needed to sign in with \(providerID).") }
            let configuration = try await providers.configuration(for: provider)
            let token = try await verify(idToken, provider: provider, configuration: configuration, nonce: .given(nonce))
            return ProviderAssertion(providerID: providerID, token: token)
        }
        guard settings.server.development else {
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

    /// The parameters of a `requestUri`: its query, then `postBody`'s form fields, then its
    /// fragment's, the later winning (as Firebase's emulator merges them); `nil` when it is not an
    /// absolute URL.
    static func parameters(requestURI: String, postBody: String?) -> [String: String]? {
        guard let url = URLComponents(string: requestURI), let scheme = url.scheme, !scheme.isEmpty, url.host?.isEmpty == false else {
            return nil
        }
        var parameters: [String: String] = [:]
        func add(_ query: String?) {
            for pair in (query ?? "").split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let decode = { (text: Substring) in
                    PercentEncoding.decode(text.replacingOccurrences(of: "+", with: " ")) ?? String(text)
                }
                parameters[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
            }
        }
        add(url.percentEncodedQuery)
        add(postBody)
        add(url.percentEncodedFragment)
        return parameters
    }

    // MARK: - Account rules

    /// How the assertion is used.
    enum RulesMode: Sendable {
        /// Sign in (or up, unless `autoCreate` is false: a reauthentication).
        case signIn(autoCreate: Bool)
        /// Link to the signed-in user.
        case link(accountID: String)
    }

    /// Applies the account rules in one transaction and, when someone is signed in, starts the session.
    func apply(_ assertion: ProviderAssertion, tenant: TenantPolicy, mode: RulesMode) async throws(ActionError) -> Outcome {
        let now = clock.now
        let newSession = tokens.newSession(
            accountID: "", tenantID: tenant.tenantID, signInProvider: assertion.providerID, claims: assertion.samlSessionClaims, now: now)
        let rules = AccountRules(
            assertion: assertion, trusted: isTrusted(assertion), oneAccountPerEmail: settings.users.oneAccountPerEmail,
            selfServiceSignUp: tenant.selfServiceSignUp, newID: Secrets.accountID(), session: newSession.session,
            vouches: { [settings] provider, email in Self.vouches(providerID: provider, email: email, settings: settings) })
        let decision = try await store.call {
            try await self.accounts.transaction(tenantID: tenant.tenantID, now: now) { tx in try rules.apply(mode, in: tx) }
        }
        switch decision {
        case .signedIn(let account, let isNew):
            var session = newSession
            session.session.accountID = account.localID
            return .signedIn(SignedInUser(account: account, session: session, isNewUser: isNew))
        case .needConfirmation(let providers):
            return .needConfirmation(verifiedProviders: providers)
        }
    }
}

/// Firebase's account rules for a provider's assertion, as one unit of work over a tenant's
/// accounts (a pure function of what it reads, see ``AccountTransaction``).
struct AccountRules: Sendable {
    var assertion: ProviderAssertion
    /// Whether the provider vouches for the address and said it verified it.
    var trusted: Bool
    var oneAccountPerEmail: Bool
    var selfServiceSignUp: Bool
    /// The ID of an account this sign-in creates.
    var newID: String
    /// The new session (its account is filled in here).
    var session: Session
    /// Whether a provider vouches for an address (which links survive a takeover).
    var vouches: @Sendable (String, String) -> Bool

    enum Decision: Sendable {
        case signedIn(Account, isNew: Bool)
        case needConfirmation([String])
    }

    func apply(_ mode: FederatedSignInService.RulesMode, in tx: any AccountTransaction) throws -> Decision {
        let now = tx.now
        var keys: [AccountKey] = [.federated(providerID: assertion.providerID, rawID: assertion.rawID)]
        if let email = assertion.email { keys.append(.email(email)) }
        if case .link(let id) = mode { keys.append(.id(id)) }
        try tx.prefetch(keys)
        let linked = try tx.account(providerID: assertion.providerID, rawID: assertion.rawID)
        switch mode {
        case .link(let accountID):
            var user = try tx.existingAccount(id: accountID)
            if user.disabled { throw ActionError.userDisabled }
            if linked != nil { throw ActionError(.federatedUserIDAlreadyLinked) }
            if oneAccountPerEmail, let email = assertion.email, let owner = try tx.account(email: email), owner.localID != user.localID {
                throw ActionError.emailExists
            }
            user.federatedIdentities.append(assertion.identity)
            if oneAccountPerEmail, user.email == nil, let email = assertion.email {
                user.email = email
                user.emailVerified = assertion.emailVerified
            } else if user.email != nil, user.email == assertion.email, assertion.emailVerified {
                user.emailVerified = true
            }
            return try signIn(user, isNew: false, in: tx)
        case .signIn(let autoCreate):
            if var account = linked {
                if account.disabled { throw ActionError.userDisabled }
                if let index = account.federatedIdentities.firstIndex(where: {
                    $0.providerID == assertion.providerID && $0.rawID == assertion.rawID
                }) {
                    account.federatedIdentities[index] = assertion.identity
                }
                return try signIn(account, isNew: false, in: tx)
            }
            if oneAccountPerEmail, let email = assertion.email, var owner = try tx.account(email: email) {
                guard trusted else {
                    var providers: [String] = []
                    for identity in owner.federatedIdentities where !providers.contains(identity.providerID) {
                        providers.append(identity.providerID)
                    }
                    return .needConfirmation(providers)
                }
                if owner.disabled { throw ActionError.userDisabled }
                if !owner.emailVerified {
                    // Whoever set up the unproven account (perhaps not the address's owner) loses
                    // every way in that the provider does not vouch for, and every session.
                    owner.passwordHash = nil
                    owner.passwordUpdatedAt = nil
                    owner.federatedIdentities.removeAll { !vouches($0.providerID, email) }
                    owner.validSince = now / 1000
                    owner.displayName = assertion.displayName
                    owner.photoURL = assertion.photoURL
                } else {
                    owner.displayName = owner.displayName ?? assertion.displayName
                    owner.photoURL = owner.photoURL ?? assertion.photoURL
                }
                owner.emailVerified = true
                owner.federatedIdentities.append(assertion.identity)
                return try signIn(owner, isNew: false, in: tx)
            }
            guard autoCreate else { throw ActionError.userNotFound }
            guard selfServiceSignUp else {
                throw ActionError(.adminOnlyOperation, "signing up is turned off for this project; an administrator creates accounts")
            }
            var account = Account(
                localID: newID, tenantID: tx.tenantID, displayName: assertion.displayName, photoURL: assertion.photoURL, createdAt: now,
                federatedIdentities: [assertion.identity])
            if oneAccountPerEmail, let email = assertion.email {
                account.email = email
                account.emailVerified = assertion.emailVerified
            }
            return try signIn(account, isNew: true, in: tx)
        }
    }

    private func signIn(_ given: Account, isNew: Bool, in tx: any AccountTransaction) throws -> Decision {
        var account = given
        account.lastLoginAt = tx.now
        if isNew { try tx.insert(account) } else { try tx.update(account) }
        var session = session
        session.accountID = account.localID
        try tx.addSession(session)
        return .signedIn(account, isNew: isNew)
    }
}
