import Foundation

// The code exchange at the provider's token endpoint.

extension FederatedSignInService {
    /// Exchanges a flow's code and checks the ID token it brings (with the flow's nonce), completed
    /// from the provider's UserInfo endpoint when it lacks the profile.
    func exchange(code: String, flow: FederatedFlow) async throws(ActionError) -> (ProviderAssertion, ProviderTokens) {
        let provider = try enabledProvider(flow.providerID)
        let configuration = try await providers.configuration(for: provider)
        let answer = try await providers.exchange(
            code: code, provider: provider, configuration: configuration, redirectURI: flow.redirectURI, codeVerifier: flow.codeVerifier)
        guard let idToken = answer.idToken else { throw ActionError(.invalidIDPResponse, "the provider sent no id_token") }
        let checked = try await verify(idToken, provider: provider, configuration: configuration, nonce: .exactly(flow.nonce))
        let token = try await withUserInfo(checked, accessToken: answer.accessToken, provider: provider, configuration: configuration)
        return (ProviderAssertion(providerID: provider.id, token: token), answer)
    }
}
