import ActionLinks
import ActionLinksConfiguration
import Logging

/// Where the server's services are made, each from what it needs (the composition root): the
/// router hands each surface the services it uses, and nothing else.
public struct LinkDomainServices: Sendable {
    let settings: ServiceSettings
    let policy: ContinueURLPolicy
    let apps: AppsConfiguration
    let keys: ServerKeys
    let tokens: TokenIssuer
    let metrics: ServerMetrics
    let listing: IssuedLinkListing?
    let origins: WebOrigins
    let tenants: Tenants
    let passwordPolicy: PasswordPolicy
    let accounts: AccountService
    let issuer: CodeIssuer
    let completer: ActionCompleter

    /// The services over the given stores, keys and mail delivery.
    public init(
        configuration: ActionLinksConfiguration, codes: any CodeStore, accounts: any AccountStore, keys: ServerKeys,
        passwords: PasswordHasher = PasswordHasher(), mailer: Mailer, metrics: ServerMetrics = ServerMetrics(),
        clock: any ServiceClock = SystemServiceClock(), logger: Logger
    ) {
        let settings = configuration.service
        self.settings = settings
        policy = configuration.continueURLs
        apps = configuration.apps
        self.keys = keys
        self.metrics = metrics
        tokens = TokenIssuer(key: keys.signingKey, projectID: settings.project.id)
        listing = settings.emulatorListing ? IssuedLinkListing() : nil
        origins = WebOrigins(settings: settings, policy: configuration.continueURLs)
        tenants = Tenants(ids: settings.tenants)
        passwordPolicy = PasswordPolicy(settings: settings.passwords)
        let store = StoreGateway(logger: logger)
        self.accounts = AccountService(
            accounts: accounts, tokens: tokens, passwords: passwords, passwordPolicy: passwordPolicy, store: store, clock: clock)
        issuer = CodeIssuer(
            settings: settings, policy: policy, codes: codes, accounts: accounts, accountService: self.accounts, keys: keys, mailer: mailer,
            listing: listing, metrics: metrics, store: store, clock: clock)
        completer = ActionCompleter(
            settings: settings, codes: codes, accounts: accounts, keys: keys, passwords: passwords, passwordPolicy: passwordPolicy,
            tokens: tokens, issuer: issuer, metrics: metrics, store: store, clock: clock, logger: logger)
    }
}
