import Foundation

// The code exchange at the provider's token endpoint.

extension FederatedSignInService {
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
}
