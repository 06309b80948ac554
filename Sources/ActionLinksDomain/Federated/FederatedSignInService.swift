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
    let flows: FederatedFlows
    let accounts: any AccountStore
    let accountService: AccountService
    let tokens: TokenService
    let providers: OpenIDProviders
    let pending: PendingTokens
    /// Which providers vouch for which addresses, from the settings.
    let trust: ProviderTrust
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
        self.flows = FederatedFlows(flows: flows, store: store, clock: clock)
        self.accounts = accounts
        self.accountService = accountService
        self.tokens = tokens
        self.providers = providers
        pending = PendingTokens(formKey: formKey)
        trust = ProviderTrust(settings: settings)
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
}
