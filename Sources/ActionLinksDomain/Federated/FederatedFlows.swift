import Foundation

/// The life of a federated sign-in flow, the same for OpenID Connect and SAML: started (stored with
/// its state's hash), returned to the handler (once, by the browser that started it), and consumed
/// (once: by `signInWithIdp`, or here for a web page). Each check is written here once; what
/// differs between the protocols (the issuer of an OpenID answer, the SAML response) is theirs.
struct FederatedFlows: Sendable {
    let flows: any FederatedFlowStore
    let store: StoreGateway
    let clock: any ServiceClock

    /// Stores a new flow.
    func start(_ flow: FederatedFlow) async throws(ActionError) {
        try await store.call { try await self.flows.saveFlow(flow) }
    }

    /// The flow a provider's answer returns to the handler with (`state`, or SAML's `RelayState`):
    /// it must exist and be of the answer's protocol (`unknown` otherwise), be live
    /// (`EXPIRED_OOB_CODE`), not returned or consumed before, and bound to this browser (`binding`,
    /// the cookie) unless `createAuthUri` made it.
    func returning(state: String, binding: String?, unknown: String, isOfProtocol: (FederatedFlow) -> Bool) async throws(ActionError)
        -> FederatedFlow
    {
        guard let flow = try await store.call({ try await self.flows.flow(stateHash: FederatedFlow.hash(state)) }), isOfProtocol(flow)
        else { throw ActionError(.invalidIDPResponse, unknown) }
        guard flow.expiresAt > clock.now else { throw ActionError(.expiredOOBCode, "the sign-in has expired") }
        guard flow.returnedAt == nil, flow.consumedAt == nil else { throw ActionError(.invalidIDPResponse, "the sign-in was already used") }
        if let expected = flow.bindingHash {
            guard let binding, ConstantTime.equal(Array(FederatedFlow.hash(binding).utf8), Array(expected.utf8)) else {
                throw ActionError(.invalidIDPResponse, "the sign-in was started in another browser")
            }
        }
        return flow
    }

    /// Marks a flow returned, keeping the hash of what the provider answered (its `code`, or the
    /// SAML response) for `signInWithIdp` to match; a flow returned a moment ago by another request
    /// is refused.
    func markReturned(_ flow: FederatedFlow, answer: String?) async throws(ActionError) {
        let now = clock.now
        guard
            try await store.call({
                try await self.flows.markReturned(stateHash: flow.stateHash, codeHash: answer.map(FederatedFlow.hash), now: now)
            })
        else { throw ActionError(.invalidIDPResponse, "the sign-in was already used") }
    }

    /// `signInWithIdp`'s flow: the live flow of `state` that an app (or a `createAuthUri` client)
    /// started, whose returned answer is `answer` (the provider's `code`, or the SAML response), of
    /// the app's session secret (`sessionID`) and the call's tenant; consumed, so a second
    /// `signInWithIdp` with the same URL fails. `error` is the provider's refusal, if the URL
    /// carries one instead of the answer.
    func consume(state: String, answer: String?, error: String?, sessionID: String?, tenantID: String) async throws(ActionError)
        -> FederatedFlow
    {
        let now = clock.now
        let stateHash = FederatedFlow.hash(state)
        guard let flow = try await store.call({ try await self.flows.flow(stateHash: stateHash) }),
            flow.kind == .iOSApp || flow.kind == .androidApp || flow.kind == .authURI
        else { throw ActionError(.invalidIDPResponse, "No sign-in was started with this state.") }
        guard flow.consumedAt == nil else { throw ActionError(.invalidIDPResponse, "The sign-in was already completed.") }
        guard flow.expiresAt > now else { throw ActionError(.invalidIDPResponse, "The sign-in has expired; start it again.") }
        guard let codeHash = flow.codeHash, let answer, ConstantTime.equal(Array(FederatedFlow.hash(answer).utf8), Array(codeHash.utf8))
        else {
            if let error { throw ActionError(.invalidIDPResponse, "The provider answered \(error.prefix(64)).") }
            throw ActionError(.invalidIDPResponse, "The answer is not the one the provider sent to the browser.")
        }
        guard let expected = flow.sessionHash, let sessionID, !sessionID.isEmpty,
            ConstantTime.equal(Array(FederatedFlow.hash(sessionID).utf8), Array(expected.utf8))
        else { throw ActionError(.invalidIDPResponse, "The sessionId does not match the one the sign-in started with.") }
        guard flow.tenantID == tenantID else { throw ActionError(.tenantIDMismatch) }
        try await consume(flow, refusal: "The sign-in was already completed.")
        return flow
    }

    /// Consumes a returned flow (a web page's, completed on the server): once.
    func consume(_ flow: FederatedFlow, refusal: String = "the sign-in was already used") async throws(ActionError) {
        let now = clock.now
        guard try await store.call({ try await self.flows.consumeFlow(stateHash: flow.stateHash, now: now) }) else {
            throw ActionError(.invalidIDPResponse, refusal)
        }
    }

    /// Uses a SAML assertion's key once, until it expires (a second use is refused).
    func useSAMLAssertion(key: String, expiresAt: Timestamp) async throws(ActionError) {
        let now = clock.now
        guard try await store.call({ try await self.flows.useSAMLAssertion(key: key, expiresAt: expiresAt, now: now) }) else {
            throw ActionError(.invalidIDPResponse, "the assertion was already used")
        }
    }
}
