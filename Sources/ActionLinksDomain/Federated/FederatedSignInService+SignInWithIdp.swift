import ActionLinks
import Foundation

// `accounts:signInWithIdp`.

extension FederatedSignInService {
    /// What `accounts:signInWithIdp` (`verifyAssertion`) asks.
    package struct Assertion: Sendable {
        package var requestURI: String?
        package var postBody: String?
        package var sessionID: String?
        package var pendingToken: String?
        package var idToken: String?
        package var autoCreate = true
        package var tenantID: String?
        /// Asked for, and not implemented (refused).
        package var returnRefreshToken = false
        package var pendingIDToken: String?

        /// Makes the value from each of its fields.
        package init(
            requestURI: String? = nil, postBody: String? = nil, sessionID: String? = nil, pendingToken: String? = nil,
            idToken: String? = nil, autoCreate: Bool = true, tenantID: String? = nil, returnRefreshToken: Bool = false,
            pendingIDToken: String? = nil
        ) {
            self.requestURI = requestURI
            self.postBody = postBody
            self.sessionID = sessionID
            self.pendingToken = pendingToken
            self.idToken = idToken
            self.autoCreate = autoCreate
            self.tenantID = tenantID
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
        package var outcome: Outcome
        /// The token to present the assertion again (for `needConfirmation` and the refusals
        /// answered with `errorMessage`).
        package var pendingToken: String?
    }

    /// What the account rules decided.
    package enum Outcome: Sendable {
        case signedIn(SignedInUser)
        case needConfirmation(verifiedProviders: [String])
    }

    /// A refusal that `returnIdpCredential` answers with HTTP 200 and `errorMessage`, with the
    /// assertion so the app can rebuild the credential.
    package struct CredentialRefusal: Error, Sendable {
        package var error: ActionError
        package var answer: Answer
    }

    /// `accounts:signInWithIdp`; `named` is the call's tenant, resolved and enabled (the route
    /// requires it).
    package func signInWithIdp(_ request: Assertion, tenant named: TenantPolicy, caller: Caller) async throws(ActionError)
        -> Result<Answer, CredentialRefusal>
    {
        if request.returnRefreshToken || request.pendingIDToken != nil {
            throw ActionError.notImplemented("returnRefreshToken and pendingIdToken are not implemented")
        }
        var tenant = named
        let now = clock.now
        var oauthIDToken: String?
        var oauthAccessToken: String?
        var oauthExpiresIn: Int?
        let assertion: ProviderAssertion
        if let token = request.pendingToken, !token.isEmpty {
            guard let found = pending.assertion(from: token, tenantID: tenant.tenantID, now: now) else {
                throw ActionError(.invalidPendingToken, "The pending token is invalid, expired or of another tenant.")
            }
            if settings.providers.contains(where: { $0.id == found.providerID }) {
                _ = try enabledProvider(found.providerID)
            }
            if settings.samlProviders.contains(where: { $0.id == found.providerID }) {
                _ = try enabledSAMLProvider(found.providerID)
            }
            assertion = found
        } else {
            guard let requestURI = request.requestURI, !requestURI.isEmpty else { throw ActionError(.missingRequestURI) }
            guard let parameters = Self.parameters(requestURI: requestURI, postBody: request.postBody) else {
                throw ActionError(.invalidRequestURI)
            }
            if let saml = try await samlAssertion(parameters: parameters, sessionID: request.sessionID, tenantID: tenant.tenantID) {
                assertion = saml.assertion
                oauthIDToken = saml.oauthIDToken
            } else if let state = parameters["state"] {
                let flow = try await flows.consume(
                    state: state, answer: parameters["code"], error: parameters["error"], sessionID: request.sessionID,
                    tenantID: tenant.tenantID)
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
                assertion = try await credential(
                    providerID: providerID, idToken: idToken, accessToken: oauthAccessToken, nonce: parameters["nonce"])
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
}
