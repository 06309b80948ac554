import ActionLinksConfiguration

// The profile of providers whose ID tokens do not carry it.

extension FederatedSignInService {
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
