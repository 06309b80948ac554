import ActionLinksConfiguration
import Foundation

// ID token checks: a flow's, and a credential an app already holds.

extension FederatedSignInService {
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

    /// A credential an app already holds (`postBody` with `providerId` and `id_token`): checked
    /// with the provider's keys, audience and the `nonce` given with it. On a development server, a
    /// provider that is not configured is taken on the token's word, as Firebase's Auth emulator does.
    /// A configured provider's token without the profile is completed from its UserInfo endpoint
    /// with the `access_token` given beside it, if any.
    func credential(providerID: String, idToken: String?, accessToken: String? = nil, nonce: String?) async throws(ActionError)
        -> ProviderAssertion
    {
        if settings.providers.contains(where: { $0.id == providerID }) {
            let provider = try enabledProvider(providerID)
            guard let idToken else { throw ActionError(.invalidIDPResponse, "An id_token is needed to sign in with \(providerID).") }
            let configuration = try await providers.configuration(for: provider)
            let checked = try await verify(idToken, provider: provider, configuration: configuration, nonce: .given(nonce))
            let token = try await withUserInfo(checked, accessToken: accessToken, provider: provider, configuration: configuration)
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
}
