import ActionLinks
import Foundation

/// Federated sign-in: the browser's round trip to the provider through `/__/auth/handler`,
/// `accounts:createAuthUri` for clients that drive it themselves, and `accounts:signInWithIdp`.
/// Each protocol is a type of its own, chosen by the provider (a `saml.` one is SAML's) or by the
/// shape of the provider's answer: ``OpenIDSignIn`` (OAuth 2 / OpenID Connect: the code exchange,
/// the ID token's checks) and ``SAMLSignIn`` (the response's checks), over the same flows
/// (``FederatedFlows``); ``FederatedAccounts`` applies Firebase's account rules (one account per
/// email, trusted providers) to what they assert.
public final class FederatedSignInService: Sendable {
    let openID: OpenIDSignIn
    let saml: SAMLSignIn
    let accounts: FederatedAccounts
    let accountService: AccountService
    let policy: ContinueURLPolicy

    init(openID: OpenIDSignIn, saml: SAMLSignIn, accounts: FederatedAccounts, accountService: AccountService, policy: ContinueURLPolicy) {
        self.openID = openID
        self.saml = saml
        self.accounts = accounts
        self.accountService = accountService
        self.policy = policy
    }

    /// Firebase's client error code for a REST code (`EMAIL_EXISTS` → `auth/email-exists`).
    package static func authCode(_ code: ActionError.Code) -> String {
        "auth/" + code.rawValue.lowercased().replacingOccurrences(of: "_", with: "-")
    }

    // MARK: - Starting a flow

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

        /// The flow this start stores, with what its protocol adds: the value the answer must
        /// carry (`nonce`: OpenID's nonce, SAML's AuthnRequest `ID`), the PKCE verifier, and where
        /// the provider answers.
        func flow(
            state: String, tenantID: String, providerID: String, nonce: String, codeVerifier: String?, redirectURI: String, now: Timestamp
        ) -> FederatedFlow {
            FederatedFlow(
                stateHash: FederatedFlow.hash(state), tenantID: tenantID, providerID: providerID, kind: kind, returnTo: returnTo,
                eventID: eventID, authType: authType, sessionHash: sessionHash, bindingHash: bindingHash, nonce: nonce,
                codeVerifier: codeVerifier, redirectURI: redirectURI, createdAt: now, expiresAt: now + FederatedFlow.lifetime,
                androidPublicKey: androidPublicKey)
        }

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

    /// Stores a new flow and answers the URL to send the browser to: the provider's, by its protocol.
    package func authorizationURL(for start: Start) async throws(ActionError) -> String {
        if SAMLSignIn.isSAML(start.providerID) { return try await saml.authorizationURL(for: start) }
        return try await openID.authorizationURL(for: start)
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

    // MARK: - The provider's return

    /// Where the handler sends the browser once the provider has answered.
    package enum Return: Sendable {
        /// Back to an app with the URL as received (its `link`).
        case app(FederatedFlow, link: String)
        /// Back to an app with an error (`firebaseError`).
        case appError(FederatedFlow, code: String, message: String)
        /// To a URL (a `createAuthUri` client's `continueUri`, or a web page with its token).
        case redirect(String)
    }

    /// The provider's answer at `/__/auth/handler`, checked by its protocol against its flow (any
    /// failure throws). `query` is the answer as received (the query, or a form's body).
    package func providerReturned(parameters: [String: String], query: String, binding: String?) async throws(ActionError) -> Return {
        if SAMLSignIn.isResponse(parameters) { return try await saml.returned(parameters: parameters, query: query, binding: binding) }
        return try await openID.returned(parameters: parameters, query: query, binding: binding)
    }

    // MARK: - signInWithIdp

    /// What `accounts:signInWithIdp` (`verifyAssertion`) asks.
    package struct Assertion: Sendable {
        package var requestURI: String?
        package var postBody: String?
        package var sessionID: String?
        package var pendingToken: String?
        package var idToken: String?
        package var autoCreate = true
        package var tenantID: String?
        /// Whether the two refusals that leave a credential (`FEDERATED_USER_ID_ALREADY_LINKED`,
        /// `EMAIL_EXISTS`) are answered with HTTP 200 and `errorMessage`.
        package var returnIdpCredential = false
        /// Asked for, and not implemented (refused).
        package var returnRefreshToken = false
        package var pendingIDToken: String?

        /// Makes the value from each of its fields.
        package init(
            requestURI: String? = nil, postBody: String? = nil, sessionID: String? = nil, pendingToken: String? = nil,
            idToken: String? = nil, autoCreate: Bool = true, tenantID: String? = nil, returnIdpCredential: Bool = false,
            returnRefreshToken: Bool = false, pendingIDToken: String? = nil
        ) {
            self.requestURI = requestURI
            self.postBody = postBody
            self.sessionID = sessionID
            self.pendingToken = pendingToken
            self.idToken = idToken
            self.autoCreate = autoCreate
            self.tenantID = tenantID
            self.returnIdpCredential = returnIdpCredential
            self.returnRefreshToken = returnRefreshToken
            self.pendingIDToken = pendingIDToken
        }
    }

    /// What `signInWithIdp` answers: the assertion and the provider's tokens, and what became of them.
    package struct Answer: Sendable {
        package var assertion: ProviderAssertion
        package var oauthIDToken: String?
        package var oauthAccessToken: String?
        package var oauthExpiresIn: Int?
        package var tenantID: String
        /// What the account rules decided; `nil` for a refusal answered with `errorMessage`.
        package var outcome: FederatedAccounts.Outcome?
        /// `emailVerified` as answered: the assertion's (none without an address), or the
        /// account's when its address is the assertion's.
        package var emailVerified: Bool?
        /// The token to present the assertion again (for `needConfirmation` and the refusals
        /// answered with `errorMessage`).
        package var pendingToken: String?
        /// The refusal's code, when `returnIdpCredential` asks for it with HTTP 200 (Firebase's
        /// way, so that the SDK can hand the app the credential: `credentialAlreadyInUse`,
        /// `emailAlreadyInUse`).
        package var errorMessage: String?
    }

    /// `accounts:signInWithIdp`; `named` is the call's tenant, resolved and enabled (the route
    /// requires it).
    package func signInWithIdp(_ request: Assertion, tenant named: TenantPolicy, caller: Caller) async throws(ActionError) -> Answer {
        if request.returnRefreshToken || request.pendingIDToken != nil {
            throw ActionError.notImplemented("returnRefreshToken and pendingIdToken are not implemented")
        }
        var tenant = named
        let now = accounts.clock.now
        let credential: ProviderCredential
        if let token = request.pendingToken, !token.isEmpty {
            guard let found = accounts.pending.assertion(from: token, tenantID: tenant.tenantID, now: now) else {
                throw ActionError(.invalidPendingToken, "The pending token is invalid, expired or of another tenant.")
            }
            try openID.checkOffered(found.providerID)
            try saml.checkOffered(found.providerID)
            credential = ProviderCredential(assertion: found)
        } else {
            guard let requestURI = request.requestURI, !requestURI.isEmpty else { throw ActionError(.missingRequestURI) }
            guard let parameters = Self.parameters(requestURI: requestURI, postBody: request.postBody) else {
                throw ActionError(.invalidRequestURI)
            }
            if SAMLSignIn.isCredential(parameters) {
                credential = try await saml.signInWithIdp(parameters: parameters, sessionID: request.sessionID, tenantID: tenant.tenantID)
            } else {
                credential = try await openID.signInWithIdp(
                    parameters: parameters, requestURI: requestURI, sessionID: request.sessionID, tenantID: tenant.tenantID)
            }
        }
        let mode: FederatedAccounts.Mode
        var linkedBy: AccountService.User?
        if let idToken = request.idToken {
            let user = try await accountService.user(idToken: idToken, caller: caller, bodyTenant: request.tenantID)
            tenant = user.tenant
            mode = .link(accountID: user.account.localID)
            linkedBy = user
        } else {
            mode = .signIn(autoCreate: request.autoCreate)
        }
        let assertion = credential.assertion
        var answer = Answer(
            assertion: assertion, oauthIDToken: credential.idToken, oauthAccessToken: credential.accessToken,
            oauthExpiresIn: credential.expiresIn, tenantID: tenant.tenantID,
            emailVerified: assertion.email == nil ? nil : assertion.emailVerified)
        do {
            let outcome = try await accounts.apply(assertion, tenant: tenant, mode: mode, linkedBy: linkedBy)
            answer.outcome = outcome
            switch outcome {
            case .signedIn(let user):
                if user.account.email == assertion.email { answer.emailVerified = user.account.emailVerified }
            case .needConfirmation:
                answer.pendingToken = accounts.pending.token(for: assertion, tenantID: tenant.tenantID, now: now)
            }
            return answer
        } catch let error where error.code == .federatedUserIDAlreadyLinked || error.code == .emailExists {
            guard request.returnIdpCredential else { throw error }
            answer.pendingToken = accounts.pending.token(for: assertion, tenantID: tenant.tenantID, now: now)
            answer.errorMessage = error.code.rawValue
            return answer
        }
    }

    /// The parameters of a `requestUri`: its query, then `postBody`'s form fields, then its
    /// fragment's, each read by ``FormFields`` (a name repeated within one of them refuses the
    /// whole), a later one's value replacing an earlier one's (as Firebase's emulator merges
    /// them); `nil` when it is not an absolute URL or a part is refused.
    static func parameters(requestURI: String, postBody: String?) -> [String: String]? {
        guard let url = URLComponents(string: requestURI), let scheme = url.scheme, !scheme.isEmpty, url.host?.isEmpty == false else {
            return nil
        }
        var parameters: [String: String] = [:]
        for part in [url.percentEncodedQuery, postBody, url.percentEncodedFragment] {
            guard let fields = FormFields.decode(part ?? "") else { return nil }
            parameters.merge(fields) { _, later in later }
        }
        return parameters
    }
}
