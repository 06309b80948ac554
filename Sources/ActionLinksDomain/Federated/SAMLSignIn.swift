import ActionLinks
import ActionLinksConfiguration
import ActionLinksSAML
import Foundation
import Logging

/// SAML 2.0 sign-in (`saml.<name>` providers), SP-initiated, through the same handler, flows and
/// account rules as OpenID Connect:
///
/// - The handler stores a flow (the `RelayState` as its hash, the AuthnRequest's `ID` as the value
///   the answer must carry, the ACS URL) and sends the browser to the IdP's single sign-on URL with
///   the AuthnRequest (HTTP-Redirect binding).
/// - The IdP posts `SAMLResponse` and `RelayState` back to the handler (HTTP-POST binding). The
///   flow must be live, unused and bound to the browser; the response's hash is kept, and the
///   browser goes back to the app with the form as received (a web page's flow is completed here).
/// - `signInWithIdp` with that `SAMLResponse` and `RelayState` (in `requestUri` or `postBody`, as the
///   SDKs send them) consumes the flow once, checks the response (``SAMLResponse``: signature with a
///   configured certificate, audience, recipient, destination, validity, `InResponseTo`) and uses
///   its assertion ID once.
///
/// On a development server a provider that is not configured is taken the emulator's way: an
/// unsigned `id_token` for the subject and an optional JSON `SAMLResponse`.
struct SAMLSignIn: Sendable {
    /// The configured SAML providers.
    let configured: [SAMLProviderSettings]
    /// A development server, where a provider that is not configured is taken the emulator's way.
    let development: Bool
    let flows: FederatedFlows
    let tenants: TenantDirectory
    let accounts: FederatedAccounts
    let clock: any ServiceClock
    let logger: Logger

    init(
        settings: ServiceSettings, flows: FederatedFlows, tenants: TenantDirectory, accounts: FederatedAccounts, clock: any ServiceClock,
        logger: Logger
    ) {
        configured = settings.samlProviders
        development = settings.server.development
        self.flows = flows
        self.tenants = tenants
        self.accounts = accounts
        self.clock = clock
        self.logger = logger
    }

    /// Whether `providerID` names a SAML provider.
    static func isSAML(_ providerID: String) -> Bool { providerID.hasPrefix("saml.") }

    /// Whether the provider's answer to the handler is SAML's: the IdP's form (HTTP-POST binding)
    /// carries a `SAMLResponse`.
    static func isResponse(_ parameters: [String: String]) -> Bool { parameters["SAMLResponse"] != nil }

    /// Whether a `signInWithIdp` `requestUri` is SAML's: a `SAMLResponse`, or a `saml.` provider.
    static func isCredential(_ parameters: [String: String]) -> Bool {
        isResponse(parameters) || parameters["providerId"].map { isSAML($0.lowercased()) } == true
    }

    /// Refuses `id` when it is configured and its sign-ins are not offered.
    func checkOffered(_ id: String) throws(ActionError) { try configured.checkOffered(id) }

    // MARK: - Starting a flow

    /// Stores a new flow and answers the IdP's single sign-on URL with the AuthnRequest and the
    /// `RelayState` (the flow's state).
    func authorizationURL(for start: FederatedSignInService.Start) async throws(ActionError) -> String {
        let provider = try configured.enabled(start.providerID)
        let tenant = try await tenants.policy(for: start.tenantID)
        try tenant.checkEnabled()
        let now = clock.now
        let state = Secrets.token()
        let request = SAMLAuthnRequest(
            id: SAMLAuthnRequest.newID(), issueInstant: now.milliseconds, destination: provider.ssoURL,
            assertionConsumerServiceURL: provider.callbackURI, issuer: provider.spEntityID)
        try await flows.start(
            start.flow(
                state: state, tenantID: tenant.tenantID, providerID: provider.id, nonce: request.id, codeVerifier: nil,
                redirectURI: provider.callbackURI, now: now))
        return request.redirectURL(relayState: state)
    }

    // MARK: - The IdP's return

    /// The IdP's POST to the handler: checked against its flow as an OpenID Connect answer is (live,
    /// unused, not returned before, this browser's), the response's hash kept for `signInWithIdp`.
    func returned(parameters: [String: String], query: String, binding: String?) async throws(ActionError)
        -> FederatedSignInService.Return
    {
        guard let relayState = parameters["RelayState"], !relayState.isEmpty else {
            throw ActionError(.invalidIDPResponse, "the SAML response has no RelayState: only sign-ins this server started are accepted")
        }
        let response = parameters["SAMLResponse"] ?? ""
        let flow = try await flows.returning(
            state: relayState, binding: binding, unknown: "no SAML sign-in was started with this RelayState"
        ) { Self.isSAML($0.providerID) }
        try await flows.markReturned(flow, answer: response)
        switch flow.kind {
        case .iOSApp, .androidApp:
            return .app(flow, link: flow.redirectURI + "?" + query)
        case .authURI:
            return .redirect(URLText.url(flow.returnTo, adding: [("SAMLResponse", response), ("RelayState", relayState)]))
        case .webPage:
            return .redirect(
                await accounts.completeWebPage(flow, what: "SAML sign-in") { () async throws(ActionError) -> ProviderAssertion in
                    try await flows.consume(flow)
                    return try await check(response, flow: flow)
                })
        }
    }

    // MARK: - Checking a response

    /// Checks a `SAMLResponse` against its flow's provider and request, and uses its assertion ID
    /// (a second use is refused).
    func check(_ encoded: String, flow: FederatedFlow) async throws(ActionError) -> ProviderAssertion {
        let provider = try configured.enabled(flow.providerID)
        let expectation = SAMLExpectation(
            identityProvider: provider.idpEntityID, certificates: provider.idpCertificates, serviceProvider: provider.spEntityID,
            assertionConsumerServiceURL: flow.redirectURI, requestID: flow.nonce, now: clock.now.milliseconds)
        let checked: SAMLAssertion
        do throws(SAMLRejection) {
            checked = try SAMLResponse.validate(encoded, expectation)
        } catch {
            logger.info("SAML response refused", metadata: ["provider": "\(provider.id)", "reason": "\(error.reason)"])
            throw ActionError(.invalidIDPResponse, error.reason)
        }
        try await flows.useSAMLAssertion(
            key: FederatedFlow.hash(checked.issuer + "\n" + checked.id), expiresAt: Timestamp(milliseconds: checked.expiresAt))
        return ProviderAssertion(saml: checked, provider: provider)
    }

    // MARK: - signInWithIdp

    /// `signInWithIdp` with a SAML `requestUri` (``isCredential(_:)``): the assertion of a response
    /// to a sign-in this server started (and, the emulator's way, the `id_token` it brought).
    func signInWithIdp(parameters: [String: String], sessionID: String?, tenantID: String) async throws(ActionError)
        -> ProviderCredential
    {
        let providerID = parameters["providerId"]?.lowercased()
        if let response = parameters["SAMLResponse"], let relayState = parameters["RelayState"], !relayState.isEmpty {
            let flow = try await flows.consume(state: relayState, answer: response, error: nil, sessionID: sessionID, tenantID: tenantID)
            return ProviderCredential(assertion: try await check(response, flow: flow))
        }
        guard let providerID, Self.isSAML(providerID) else {
            throw ActionError(.invalidIDPResponse, "the SAML response has no RelayState: only sign-ins this server started are accepted")
        }
        if configured.contains(where: { $0.id == providerID }) {
            _ = try configured.enabled(providerID)
            throw ActionError(
                .invalidIDPResponse,
                "\(providerID) signs in with the identity provider's response to a sign-in this server started (SAMLResponse and RelayState)"
            )
        }
        // Not configured: the emulator's way on a development server (OPERATION_NOT_ALLOWED otherwise).
        let idToken = parameters["id_token"].flatMap { $0.isEmpty ? nil : $0 }
        var assertion = try ProviderAssertion.emulatorCredential(providerID: providerID, idToken: idToken, development: development)
        assertion.rawUserInfo = nil
        if let text = parameters["SAMLResponse"] {
            try Self.applyEmulatorResponse(text, to: &assertion)
        }
        assertion.emailVerified = assertion.email != nil
        return ProviderCredential(assertion: assertion, idToken: idToken)
    }

    /// The emulator's `SAMLResponse`: JSON `{assertion: {subject: {nameId}, attributeStatements}}`,
    /// taken on its word. The `NameID`, when an address, is the email (answered as written); the
    /// attribute statements are `rawUserInfo`.
    static func applyEmulatorResponse(_ text: String, to assertion: inout ProviderAssertion) throws(ActionError) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) as? [String: Any]
        else {
            throw ActionError(.invalidIDPResponse, "The SAMLResponse is not the Auth Emulator's JSON ({\"assertion\": ...}).")
        }
        guard let saml = object["assertion"] as? [String: Any] else {
            throw ActionError(.invalidIDPResponse, "Missing assertion in SAMLResponse.")
        }
        guard let subject = saml["subject"] as? [String: Any] else {
            throw ActionError(.invalidIDPResponse, "Missing assertion.subject in SAMLResponse.")
        }
        guard let nameID = subject["nameId"] as? String, !nameID.isEmpty else {
            throw ActionError(.invalidIDPResponse, "Missing assertion.subject.nameId in SAMLResponse.")
        }
        if let email = EmailAddress.canonical(nameID) {
            assertion.email = email
            assertion.answeredEmail = nameID == email ? nil : nameID
        }
        if let statements = saml["attributeStatements"],
            let data = try? JSONSerialization.data(withJSONObject: statements, options: [.fragmentsAllowed, .sortedKeys])
        {
            assertion.rawUserInfo = String(decoding: data, as: UTF8.self)
        }
    }
}

extension ProviderAssertion {
    /// The assertion of a checked SAML response: the `NameID` is the user's ID at the IdP, and their
    /// email when it is an address (verified when the IdP vouches for its domain); `rawUserInfo` is
    /// the attribute statements (`{name: value}`, a list for several values).
    init(saml: SAMLAssertion, provider: SAMLProviderSettings) {
        providerID = provider.id
        rawID = saml.nameID
        email = EmailAddress.canonical(saml.nameID)
        answeredEmail = email == nil || email == saml.nameID ? nil : saml.nameID
        let domain = email?.split(separator: "@").last.map(String.init)
        emailVerified = domain.map(provider.trustedEmailDomains.contains) ?? false
        var attributes: [String: ClaimValue] = [:]
        for attribute in saml.attributes {
            let values = attribute.values.map(ClaimValue.string)
            let value: ClaimValue = values.count == 1 ? values[0] : .array(values)
            if case .array(let earlier)? = attributes[attribute.name] {
                attributes[attribute.name] = .array(earlier + values)
            } else if let earlier = attributes[attribute.name] {
                attributes[attribute.name] = .array([earlier] + values)
            } else {
                attributes[attribute.name] = value
            }
        }
        rawUserInfo = ClaimValue.object(attributes).json
    }

    /// The session claims of a SAML sign-in: its attributes as `firebase.sign_in_attributes` of
    /// every ID token of the session (up to 16 KiB of them; larger ones stay in `rawUserInfo` only).
    var samlSessionClaims: String? {
        guard SAMLSignIn.isSAML(providerID), let raw = rawUserInfo, raw.utf8.count <= 16 * 1024,
            let value = try? JSONDecoder().decode(ClaimValue.self, from: Data(raw.utf8))
        else { return nil }
        return ClaimValue.object(["firebase": .object(["sign_in_attributes": value])]).json
    }
}
