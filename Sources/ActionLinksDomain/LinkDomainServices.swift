import ActionLinks
import ActionLinksConfiguration
import Foundation
import Logging

/// Where the server's services are made, each from what it needs (the composition root): the
/// router hands each surface the services it uses, and nothing else.
public struct LinkDomainServices: Sendable {
    package let settings: ServiceSettings
    package let policy: ContinueURLPolicy
    package let apps: AppsConfiguration
    package let keys: ServerKeys
    package let signingKeys: SigningKeys
    package let tokens: TokenService
    package let metrics: ServerMetrics
    package let listing: IssuedLinkListing?
    package let origins: WebOrigins
    package let codes: any CodeStore
    package let accountStore: any AccountStore
    let tenantStore: any TenantStore
    package let store: StoreGateway
    package let tenants: TenantDirectory
    package let accounts: AccountService
    package let signIn: SignInService
    /// Authenticator apps as a second factor.
    package let secondFactors: SecondFactorService
    package let issuer: CodeIssuer
    /// The short codes beside sign-in links, and their exchange.
    package let signInCodes: SignInCodes
    package let completer: ActionCompleter
    /// `accounts:update`.
    package let updater: AccountUpdater
    package let federated: FederatedSignInService
    /// The OAuth token endpoint's grants for this server's service accounts, and their access tokens.
    package let serviceAccountTokens: ServiceAccountTokens
    /// The project this server fronts (`upstream`), if any: it checks and applies every code.
    package let upstream: UpstreamClient?
    /// What `/readyz` checks: the store, and upstream when fronting a project.
    package let readiness: Readiness
    package let clock: any ServiceClock

    /// The services over the given stores, keys and mail delivery.
    public init(
        configuration: ActionLinksConfiguration, codes: any CodeStore, accounts: any AccountStore, tenants tenantStore: any TenantStore,
        flows: any FederatedFlowStore, signInCodes signInCodeStore: any SignInCodeStore, keys: ServerKeys,
        signingKeys signingOrigin: SigningKeys.Origin? = nil, passwords: PasswordHasher? = nil, mailer: Mailer,
        deliverer: MailDeliverer? = nil,
        metrics: ServerMetrics = ServerMetrics(),
        clock: any ServiceClock = SystemServiceClock(), logger: Logger
    ) {
        let settings = configuration.service
        self.settings = settings
        let passwords =
            passwords
            ?? PasswordHasher(
                logRounds: settings.users.passwordHashLogRounds, parallelism: settings.users.passwordHashParallelism,
                concurrency: settings.users.passwordHashConcurrency, queueLimit: settings.users.passwordHashQueue)
        policy = configuration.continueURLs
        apps = configuration.apps
        self.keys = keys
        self.metrics = metrics
        self.clock = clock
        self.codes = codes
        accountStore = accounts
        self.tenantStore = tenantStore
        let keysDirectory = (settings.dataDirectory as NSString).appendingPathComponent("keys")
        signingKeys = SigningKeys(
            origin: signingOrigin ?? .directory((keysDirectory as NSString).appendingPathComponent("id-tokens"), makes: true))
        let development = settings.server.development
        tokens = TokenService(keys: signingKeys, projectID: settings.project.id, acceptsUnsignedTokens: development)
        listing = development || settings.emulatorListing ? IssuedLinkListing() : nil
        origins = WebOrigins(settings: settings, policy: configuration.continueURLs)
        let store = StoreGateway(logger: logger)
        self.store = store
        tenants = TenantDirectory(settings: settings, store: tenantStore, gateway: store)
        let completion = SignInCompletion(tokens: tokens, formKey: keys.formKey)
        self.accounts = AccountService(
            accounts: accounts, tokens: tokens, completion: completion, tenants: tenants, store: store, clock: clock)
        // A key restricted to websites must see the link domain as the page that calls.
        let referer = settings.linkDomains.first.map { $0.origin + "/" }
        upstream = settings.upstream.map {
            UpstreamClient(settings: $0, apps: configuration.apps, referer: referer, metrics: metrics, logger: logger)
        }
        readiness = Readiness(
            checks: [Readiness.store(tenantStore, logger: logger)] + (upstream.map { [Readiness.upstream($0, clock: clock)] } ?? [])
                + (deliverer.map { [Readiness.mail($0, clock: clock)] } ?? []))
        let serviceAccounts = ServiceAccountKeys(directory: (keysDirectory as NSString).appendingPathComponent("service-accounts"))
        serviceAccountTokens = ServiceAccountTokens(
            keys: serviceAccounts, formKey: keys.formKey, projectID: settings.project.id, clock: clock)
        let customTokens = CustomTokenVerifier(
            keys: serviceAccounts, projectID: settings.project.id,
            acceptsUnsignedTokens: development, tokens: tokens, codes: codes, store: store)
        signIn = SignInService(
            settings: settings, accounts: accounts, codes: codes, accountService: self.accounts, tokens: tokens,
            completion: completion, customTokens: customTokens, passwords: passwords, store: store, clock: clock, logger: logger)
        var signInCodes = SignInCodes(
            settings: settings.codes.signInCode, limits: settings.limits, keys: SignInCodeKeys(formKey: keys.formKey),
            store: signInCodeStore, gateway: store, clock: clock, metrics: metrics)
        // A front's sign-in codes carry Google's links, which die there: Google is asked first.
        if let upstream { signInCodes.liveLink = { link throws(ActionError) in try await upstream.accepts(link: link) } }
        self.signInCodes = signInCodes
        // Fronting a Firebase project, its codes are its own (and the emulator's listing shows
        // only this server's).
        let source: any CodeSource =
            upstream.map { UpstreamCodeSource(upstream: $0, settings: settings, clock: clock) }
            ?? LocalCodeSource(
                settings: settings, codes: codes, accounts: accounts, accountService: self.accounts, keys: keys, store: store)
        issuer = CodeIssuer(
            settings: settings, policy: policy, source: source, codes: codes, keys: keys, mailer: mailer,
            listing: upstream == nil ? listing : nil, metrics: metrics, store: store, clock: clock, signInCodes: signInCodes)
        secondFactors = SecondFactorService(
            settings: settings, accounts: accounts, codes: codes, accountService: self.accounts, completion: completion,
            formKey: keys.formKey, store: store, issuer: issuer, clock: clock, logger: logger)
        completer = ActionCompleter(
            settings: settings, codes: codes, accounts: accounts, keys: keys, passwords: passwords, tokens: tokens,
            completion: completion, accountService: self.accounts, issuer: issuer, metrics: metrics, store: store, clock: clock,
            logger: logger)
        updater = AccountUpdater(
            accounts: self.accounts, completer: completer, issuer: issuer, signIn: signIn, tokens: tokens, settings: settings, clock: clock)
        // Each federated protocol over the same flows and account rules.
        let federatedFlows = FederatedFlows(flows: flows, store: store, clock: clock)
        let federatedAccounts = FederatedAccounts(
            settings: settings, accounts: accounts, tenants: tenants, tokens: tokens, completion: completion, formKey: keys.formKey,
            store: store, clock: clock, logger: logger)
        federated = FederatedSignInService(
            openID: OpenIDSignIn(settings: settings, flows: federatedFlows, tenants: tenants, accounts: federatedAccounts, clock: clock),
            saml: SAMLSignIn(
                settings: settings, flows: federatedFlows, tenants: tenants, accounts: federatedAccounts, clock: clock, logger: logger),
            accounts: federatedAccounts, accountService: self.accounts, policy: policy)
    }
}

extension LinkDomainServices {
    /// The domains a web page may sign in from, as Firebase's project configuration lists them
    /// (`authorizedDomains`): the link domains, then the host of each continue-URL allow-list entry
    /// that names one, and `localhost` on a development server.
    package var authorizedDomains: [String] {
        var domains = settings.linkDomains.map { $0.host }
        for entry in policy.entries {
            let host: String?
            switch entry.kind {
            case .domain: host = entry.description.lowercased()
            case .urlPrefix, .loopback: host = (try? URLParts(entry.description))?.host?.lowercased()
            case .wildcardDomain, .appScheme: host = nil
            }
            if let host, !domains.contains(host) { domains.append(host) }
        }
        if settings.server.development, !domains.contains("localhost") { domains.append("localhost") }
        return domains
    }
}
