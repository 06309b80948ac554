import ActionLinks

/// Everything `actionlinks serve` reads beyond the allow-list and the apps.
public struct ServiceSettings: Sendable {
    /// `server`.
    public var server = ServerSettings()
    /// `project`.
    public var project = ProjectSettings()
    /// `linkDomains`; the first is the default link domain.
    public var linkDomains: [LinkDomain]
    /// Whether `linkDomains` was given (a production server must say which domains it answers for).
    public var linkDomainsConfigured = false
    /// `codes`.
    public var codes = CodeSettings()
    /// `store` (default `sqlite:<dataDirectory>/actionlinks.sqlite`).
    public var store: StoreLocation
    /// `dataDirectory`: keys generated on first start, and the default SQLite file.
    public var dataDirectory = "data"
    /// `passwords`.
    public var passwords = PasswordSettings()
    /// `users`: what people may do with their own accounts.
    public var users = UserSettings()
    /// `mfa`: the project's multi-factor authentication (authenticator apps).
    public var multiFactor = MultiFactorSettings()
    /// `emulatorListing`: whether `GET /emulator/v1/projects/<id>/oobCodes` lists issued links.
    public var emulatorListing = false
    /// `mail`.
    public var mail = MailSettings()
    /// `log`.
    public var log = LogSettings()
    /// `keys`.
    public var keys = KeySettings()
    /// `limits`.
    public var limits = LimitSettings()
    /// `pages`.
    public var pages = PageSettings()
    /// `tenants`, by ID: the project's tenants and what each sets differently from the project (see
    /// ``accountSettings(forTenant:)``).
    public var tenantSettings: [String: TenantSettings] = [:]
    /// `providers`: the federated sign-in providers, in the order given.
    public var providers: [ProviderSettings] = []
    /// The `saml.<name>` entries of `providers`, in the order given.
    public var samlProviders: [SAMLProviderSettings] = []
    /// `upstream`: the Firebase project this server fronts; nil when this server is the account store.
    public var upstream: UpstreamSettings?

    /// Whether `id` has the shape of a tenant ID: 1 to 64 ASCII letters, digits and hyphens.
    public static func isWellFormedTenantID(_ id: some StringProtocol) -> Bool {
        !id.isEmpty && id.utf8.count <= 64
            && id.utf8.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == UInt8(ascii: "-")
            }
    }

    /// The link domain that wraps mobile links (`project.mobileLinkDomain`), or `nil` when the
    /// project has none (`none`).
    public var mobileLinkDomain: LinkDomain? {
        switch project.mobileLinks {
        case .firstLinkDomain: linkDomains.first
        case .domain(let domain): linkDomains.first { $0.host == domain.host && $0.port == domain.port } ?? domain
        case .notActivated: nil
        }
    }

    /// Whether people may create their own accounts (`users.selfServiceSignUp`).
    public var signUpAllowed: Bool {
        get { users.selfServiceSignUp }
        set { users.selfServiceSignUp = newValue }
    }

    /// The tenant IDs this project has. A REST call or link that names any other tenant gets
    /// `TENANT_NOT_FOUND`. Setting it adds a tenant that inherits everything for each new ID and
    /// drops the tenants it leaves out.
    public var tenants: Set<String> {
        get { Set(tenantSettings.keys) }
        set {
            tenantSettings = tenantSettings.filter { newValue.contains($0.key) }
            for id in newValue where tenantSettings[id] == nil { tenantSettings[id] = TenantSettings(id: id) }
        }
    }

    /// The default settings: a development server on `http://localhost:8080`.
    public init() {
        linkDomains = [try! LinkDomain("http://localhost:8080")]
        store = .sqlite(path: "data/actionlinks.sqlite")
    }
}

extension ServiceSettings {
    /// The checks that only matter to `serve` (`inspect --config` reads files without a server section):
    /// a production server needs an admin token and its link domains.
    public func checkServable(file: String) throws(ConfigurationError) {
        if !server.development, server.adminToken == nil {
            throw ConfigurationError(
                file: file, mark: nil, key: "server.adminToken",
                message:
                    "expected an admin token (at least 32 characters) when server.development is false; set it here or in ACTIONLINKS_SERVER_ADMIN_TOKEN"
            )
        }
        if !server.development, !linkDomainsConfigured {
            throw ConfigurationError(
                file: file, mark: nil, key: "linkDomains",
                message: "expected the link domain(s) this server answers for, e.g. [links.example.com]")
        }
    }
}
