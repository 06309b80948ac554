import ActionLinks
import Foundation
import Yams

/// The settings in `config/actionlinks.yaml`, checked and turned into library values.
///
/// Every problem is reported with the file, the line, the key and what was expected, so a person can
/// fix it without reading code. Each key may be overridden by an environment variable
/// (`ACTIONLINKS_` and the key's path in upper snake case); a problem with such a value names the
/// variable instead of a line.
public struct ActionLinksConfiguration: Sendable {
    /// The default configuration file, relative to the working directory.
    public static let defaultFile = "config/actionlinks.yaml"

    /// The continue-URL allow-list (`continueUrls`).
    public var continueURLs: ContinueURLPolicy
    /// The apps the association files are generated for (`apps`).
    public var apps: AppsConfiguration
    /// What `actionlinks serve` reads: server, project, link domains, codes, store, mail and limits.
    public var service: ServiceSettings
    /// What the file asks for in a way that still works but should change (a deprecated key), each
    /// as `file:line:column: key: message`; `serve` prints them.
    public var warnings: [String] = []

    /// Reads and checks the configuration file at `path`, with the overrides in `environment`.
    public static func load(file path: String, environment: [String: String] = [:]) throws(ConfigurationError) -> ActionLinksConfiguration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(file: path, mark: nil, key: nil, message: "cannot read the file: \(Self.reason(error))")
        }
        return try parse(yaml: text, file: path, environment: environment)
    }

    /// Checks configuration text; `file` names it in error messages.
    public static func parse(yaml: String, file: String, environment: [String: String] = [:]) throws(ConfigurationError)
        -> ActionLinksConfiguration
    {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            throw ConfigurationError(file: file, mark: nil, key: nil, message: "not valid YAML: \(error)")
        }
        let variables = ConfigurationEnvironment(environment)
        func located(_ problem: DecodingProblem) -> ConfigurationError {
            let key = ConfigurationDecoder.describe(problem.codingPath)
            if let key, let variable = variables.source(of: key) {
                return ConfigurationError(file: "environment variable \(variable)", mark: nil, key: key, message: problem.message)
            }
            return ConfigurationError(
                file: file, mark: problem.mark ?? locate(problem.codingPath, in: root), key: key, message: problem.message)
        }
        var configuration: ActionLinksConfiguration
        do {
            let decoded = try ConfigurationFile(from: ConfigurationDecoder(value: .file(root), codingPath: [], environment: variables))
            configuration = decoded.configuration
            configuration.warnings = decoded.warnings.map { located($0).description }
        } catch let problem as DecodingProblem {
            throw located(problem)
        } catch {
            throw ConfigurationError(file: file, mark: nil, key: nil, message: "\(error)")
        }
        try applyPlatformPort(environment, to: &configuration.service.server, variables: variables)
        if let (name, suggestion) = variables.unusedVariable() {
            throw ConfigurationError(
                file: "environment variable \(name)", mark: nil, key: nil,
                message: "not a configuration key's variable" + (suggestion.map { " (did you mean \($0)?)" } ?? ""))
        }
        return configuration
    }

    /// `PORT`, which Cloud Run, Knative, Heroku and most platforms set to say where to listen: when
    /// given, it is the port, and the host is every interface unless `server.host` was given. A
    /// development server stays on loopback (it takes `Bearer owner`), so it must say so.
    static func applyPlatformPort(
        _ environment: [String: String], to server: inout ServerSettings, variables: ConfigurationEnvironment
    ) throws(ConfigurationError) {
        guard let text = environment["PORT"] else { return }
        guard let port = Int(text), (1...65535).contains(port), text.allSatisfy(\.isASCII) else {
            throw ConfigurationError(
                file: "environment variable PORT", mark: nil, key: nil, message: "expected a port from 1 to 65535; got '\(text)'")
        }
        if let variable = variables.source(of: "server.port"), server.port != port {
            throw ConfigurationError(
                file: "environment variable PORT", mark: nil, key: "server.port",
                message: "PORT is \(port) but \(variable) is \(server.port); the platform says where to listen: unset \(variable)")
        }
        server.port = port
        guard !server.hostGiven else { return }
        server.host = "0.0.0.0"
        if server.development {
            throw ConfigurationError(
                file: "environment variable PORT", mark: nil, key: "server.development",
                message:
                    "PORT makes the server listen on every interface, but a development server accepts 'Bearer owner' as the admin credential and must stay on loopback: set server.development: false (ACTIONLINKS_SERVER_DEVELOPMENT=false) with an adminToken, or server.host: 127.0.0.1"
            )
        }
    }

    /// Creates a configuration from values.
    public init(
        continueURLs: ContinueURLPolicy, apps: AppsConfiguration = AppsConfiguration(), service: ServiceSettings = ServiceSettings()
    ) {
        self.continueURLs = continueURLs
        self.apps = apps
        self.service = service
    }

    /// The position of the value at `path`, or of the nearest enclosing one the file has.
    static func locate(_ path: [any CodingKey], in root: Node?) -> Mark? {
        var node = root
        var mark = root?.mark
        for key in path {
            switch (node, key.intValue) {
            case (.sequence(let items)?, let index?) where index < items.count:
                node = items[index]
            case (.mapping(let entries)?, nil):
                node = entries[key.stringValue]
            default:
                node = nil
            }
            guard let found = node else { break }
            mark = found.mark ?? mark
        }
        return mark
    }

    private static func reason(_ error: any Error) -> String {
        switch (error as? CocoaError)?.code {
        case .fileReadNoSuchFile?, .fileNoSuchFile?: "No such file or directory"
        case .fileReadNoPermission?: "Permission denied"
        case .fileReadInapplicableStringEncoding?: "the file is not UTF-8 text"
        default: error.localizedDescription
        }
    }
}

/// The whole file: every section, and the checks that span sections.
private struct ConfigurationFile: Decodable {
    var configuration: ActionLinksConfiguration
    var warnings: [DecodingProblem] = []

    enum CodingKeys: String, CodingKey, CaseIterable {
        case server, project, linkDomains, continueUrls, apps, codes, store, dataDirectory, passwords, users, signUp, emulatorListing
        case mail, limits, pages, tenants, providers, upstream, log, keys, mfa
    }

    init(from decoder: any Decoder) throws {
        let file = try decoder.container(keyedBy: CodingKeys.self)
        let apps = try file.decode(AppsSection.self, forKey: .apps).apps
        var service = ServiceSettings()
        service.server = try file.decode(ServerSettings.self, forKey: .server)
        service.project = try file.decode(ProjectSettings.self, forKey: .project)
        if let domains = try file.decodeIfPresent([String].self, forKey: .linkDomains) {
            var parsed: [LinkDomain] = []
            for (index, text) in domains.enumerated() {
                do throws(LinkDomainError) {
                    parsed.append(try LinkDomain(text))
                } catch {
                    throw file.problem(.linkDomains, index: index, error.message + "; got '\(text)'")
                }
            }
            guard !parsed.isEmpty else { throw file.problem(.linkDomains, "expected at least one link domain") }
            service.linkDomains = parsed
            service.linkDomainsConfigured = true
        }
        if case .domain(let mobile) = service.project.mobileLinks,
            !service.linkDomains.contains(where: { $0.host == mobile.host && $0.port == mobile.port })
        {
            throw DecodingProblem(
                file.codingPath + [CodingKeys.project, ProjectSettings.CodingKeys.mobileLinkDomain],
                "expected one of linkDomains (\(service.linkDomains.map(\.description).joined(separator: ", "))), or none; got '\(mobile)'")
        }
        service.codes = try file.decode(CodeSettings.self, forKey: .codes)
        service.dataDirectory = try file.string(.dataDirectory) ?? service.dataDirectory
        service.store = .sqlite(path: (service.dataDirectory as NSString).appendingPathComponent("actionlinks.sqlite"))
        if let text = try file.string(.store) {
            if text.hasPrefix("sqlite:"), text.count > 7 {
                service.store = .sqlite(path: String(text.dropFirst(7)))
            } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
                do {
                    service.store = .postgres(try PostgresLocation(url: text))
                } catch {
                    throw file.problem(.store, error.description)
                }
            } else {
                throw file.problem(.store, "expected sqlite:<path> or postgres://user:password@host:port/database; got '\(text)'")
            }
        }
        service.passwords = try file.decode(PasswordSettings.self, forKey: .passwords)
        let users = try file.decode(UserSettings.Section.self, forKey: .users)
        let signUp = try file.boolean(.signUp)
        if let signUp {
            if let selfServiceSignUp = users.selfServiceSignUp, selfServiceSignUp != signUp {
                throw file.problem(
                    .signUp,
                    "the deprecated signUp (\(signUp)) contradicts users.selfServiceSignUp (\(selfServiceSignUp)); remove signUp")
            }
            warnings.append(file.problem(.signUp, "deprecated; write users.selfServiceSignUp: \(signUp) instead"))
        }
        service.users = UserSettings(
            selfServiceSignUp: users.selfServiceSignUp ?? signUp ?? true, selfServiceDelete: users.selfServiceDelete ?? true,
            emailEnumerationProtection: users.emailEnumerationProtection ?? !service.server.development,
            oneAccountPerEmail: users.oneAccountPerEmail ?? true)
        service.users.recentSignInSeconds = users.recentSignInSeconds ?? service.users.recentSignInSeconds
        service.users.passwordHashConcurrency = users.passwordHashConcurrency ?? service.users.passwordHashConcurrency
        service.users.passwordHashQueue = users.passwordHashQueue ?? service.users.passwordHashQueue
        service.users.passwordHashLogRounds = users.passwordHashLogRounds ?? service.users.passwordHashLogRounds
        service.users.passwordHashParallelism = users.passwordHashParallelism ?? service.users.passwordHashParallelism
        if !service.server.development, let belowFirebaseCost = users.belowFirebaseCost { warnings.append(belowFirebaseCost) }
        service.emulatorListing = try file.boolean(.emulatorListing) ?? service.emulatorListing
        if service.emulatorListing, !service.server.development {
            throw file.problem(
                .emulatorListing,
                "the listing shows every live code to anyone who asks, as Firebase's Auth emulator does, so it is only allowed with server.development: true; set emulatorListing: false for this server"
            )
        }
        service.mail = try file.decode(MailSettings.self, forKey: .mail)
        service.log = try file.decode(LogSettings.self, forKey: .log)
        service.keys = try file.decode(KeySettings.self, forKey: .keys)
        service.limits = try file.decode(LimitSettings.self, forKey: .limits)
        service.multiFactor = try file.decode(MultiFactorSettings.self, forKey: .mfa)
        var tenants = try file.nestedUnkeyedContainer(forKey: .tenants)
        while !tenants.isAtEnd {
            let index = tenants.currentIndex
            let tenant = try TenantSettings(from: try tenants.superDecoder(), inheriting: service)
            guard service.tenantSettings[tenant.id] == nil else {
                throw file.problem(.tenants, index: index, "tenant '\(tenant.id)' is listed twice")
            }
            service.tenantSettings[tenant.id] = tenant
        }
        service.pages = try file.decode(PageSettings.self, forKey: .pages)
        var providers = try file.nestedUnkeyedContainer(forKey: .providers)
        while !providers.isAtEnd {
            let index = providers.currentIndex
            let entry = try providers.superDecoder()
            if SAMLProviderSettings.isSAML(entry) {
                let provider = try SAMLProviderSettings(from: entry, for: service)
                guard !service.samlProviders.contains(where: { $0.id == provider.id }) else {
                    throw DecodingProblem(
                        file.codingPath + [CodingKeys.providers, IndexKey(index), SAMLProviderSettings.CodingKeys.id],
                        "provider '\(provider.id)' is listed twice")
                }
                service.samlProviders.append(provider)
                continue
            }
            let provider = try ProviderSettings(from: entry, for: service)
            guard !service.providers.contains(where: { $0.id == provider.id }) else {
                throw DecodingProblem(
                    file.codingPath + [CodingKeys.providers, IndexKey(index), ProviderSettings.CodingKeys.id],
                    "provider '\(provider.id)' is listed twice")
            }
            service.providers.append(provider)
        }
        service.upstream = try file.decode(UpstreamSection.self, forKey: .upstream).settings
        let continueURLs = try file.decode(ContinueURLSection.self, forKey: .continueUrls).policy
        configuration = ActionLinksConfiguration(continueURLs: continueURLs, apps: apps, service: service)
    }
}
