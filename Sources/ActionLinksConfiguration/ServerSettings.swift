import ActionLinks
import ActionLinksHeaders
import Foundation
import Yams

/// Where the server listens and who may use its admin API (`server`).
public struct ServerSettings: Sendable, Hashable {
    /// The address to bind (default `127.0.0.1`).
    public var host = "127.0.0.1"
    /// The port to bind (default 8080; 0 picks a free one and the start line says which).
    public var port = 8080
    /// A development server: `Authorization: Bearer owner` is the admin credential, as on Firebase's
    /// emulator, so firebase-admin works against it unchanged. Only allowed on a loopback address.
    public var development = false
    /// The admin credential (`Authorization: Bearer <token>`) of a production server.
    public var adminToken: String?
    /// The credential a Prometheus scraper sends for `/metrics` (`Authorization: Bearer <token>`);
    /// the admin credential works too.
    public var metricsToken: String?
    /// TLS certificate and key files (PEM); without them the server speaks plain HTTP, for a proxy
    /// that terminates TLS in front of it.
    public var tls: TLSFiles?
    /// The largest request body accepted; larger ones get 413.
    public var maximumBodyBytes = 64 * 1024
    /// The reverse proxies whose `Forwarded` / `X-Forwarded-For` / `X-Forwarded-Proto` headers are
    /// believed (addresses or CIDR blocks). From any other peer those headers are ignored.
    public var trustedProxies: [IPNetwork] = []
    /// Seconds a connection may stay open with no request on it.
    public var idleTimeout = 60
    /// Seconds a request's head (request line and headers) may take to arrive, from its first byte
    /// (from the accept, for a connection's first request, so a TLS handshake counts too).
    public var headerTimeout = 10
    /// Seconds a request's body may take to arrive after its head.
    public var bodyTimeout = 30
    /// Connections open at once; beyond it new connections wait in the listen queue until one closes.
    ///
    /// Each open connection holds a file descriptor and, while it sends a request, up to about
    /// 150 KB of buffers (80 KB of headers, the largest body); 1024 bounds that near 150 MB and fits
    /// the usual descriptor limit (the server raises its soft limit to fit when the hard one allows).
    public var maximumConnections = 1024

    /// PEM files for TLS.
    public struct TLSFiles: Sendable, Hashable {
        /// The certificate chain (PEM).
        public var certificate: String
        /// The private key (PEM).
        public var privateKey: String
    }

    /// Whether `host` only accepts connections from this machine.
    public var isLoopback: Bool { Loopback.isLoopback(host) }
}

/// The project the server stands in for (`project`).
public struct ProjectSettings: Sendable, Hashable {
    /// The project ID in REST paths (`/v1/projects/<id>/...`).
    public var id = "demo-actionlinks"
    /// The API key clients pass as `?key=` or `x-goog-api-key`; it goes into every link.
    public var apiKey = "demo-api-key"
    /// The app's name, as emails and pages show it.
    public var appName = "ActionLinks"
}

/// How long a code stays valid, per mode (`codes.lifetimes`).
public struct CodeSettings: Sendable, Hashable {
    /// Lifetimes in seconds.
    public var lifetimes: [ActionCodeLink.Mode: Int] = [
        .signIn: 3600, .resetPassword: 3600, .verifyEmail: 72 * 3600, .recoverEmail: 72 * 3600,
        .verifyAndChangeEmail: 72 * 3600, .revertSecondFactorAddition: 72 * 3600,
    ]

    /// The lifetime of a code for `mode`, in seconds.
    public func lifetime(of mode: ActionCodeLink.Mode) -> Int { lifetimes[mode] ?? 3600 }
}

/// Where accounts and codes are kept (`store`).
public enum StoreLocation: Sendable, Hashable, CustomStringConvertible {
    /// An SQLite file (relative paths are relative to the working directory).
    case sqlite(path: String)
    /// A PostgreSQL server shared by several instances.
    case postgres(PostgresLocation)

    /// `sqlite:<path>`, or the PostgreSQL URL without its password.
    public var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:" + path
        case .postgres(let location): return location.description
        }
    }
}

/// The password policy (`passwords`).
public struct PasswordSettings: Sendable, Hashable {
    /// The fewest characters a password may have (Firebase's default is 6).
    public var minimumLength = 8
    /// The most characters a password may have (scrypt cost grows with it).
    public var maximumLength = 4096
}

/// How emails go out (`mail`).
public struct MailSettings: Sendable, Hashable {
    /// The delivery backend.
    public enum Backend: Sendable, Hashable {
        /// Print each message (and its link) to standard output: development only.
        case log
        /// Pipe each message to a sendmail-compatible command (`msmtp -t`, `sendmail -t -i`).
        case sendmail(command: [String])
        /// POST each message as JSON to a URL (an email API or a relay of your own).
        case webhook(url: String, bearerToken: String?)
    }

    /// The delivery backend (default `log`).
    public var backend = Backend.log
    /// The `From:` address.
    public var from = "ActionLinks <noreply@localhost>"
    /// How many times a failed delivery is tried in all before it is reported as failed.
    public var attempts = 5
}

/// Limits on how often links are sent (`limits`); answers look the same whether or not an address exists.
public struct LimitSettings: Sendable, Hashable {
    /// Sends to one address per hour.
    public var sendsPerAddressPerHour = 10
    /// Sends requested by one client IP per hour.
    public var sendsPerIPPerHour = 100
    /// Failed password sign-ins for one address per hour before further attempts are refused.
    public var signInFailuresPerAccountPerHour = 10
    /// Failed password sign-ins from one client IP per hour before further attempts are refused.
    public var signInFailuresPerIPPerHour = 100
}

/// The hosted pages (`pages`).
public struct PageSettings: Sendable, Hashable {
    /// The language of pages and emails when neither the link's `lang` nor the browser's
    /// `Accept-Language` names one there are strings for (`www/strings/<language>.json`).
    public var defaultLanguage = "en"
}

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
    /// `signUp`: whether signing in with an email link may create an account.
    public var signUpAllowed = true
    /// `emulatorListing`: whether `GET /emulator/v1/projects/<id>/oobCodes` lists issued links.
    public var emulatorListing = false
    /// `mail`.
    public var mail = MailSettings()
    /// `limits`.
    public var limits = LimitSettings()
    /// `pages`.
    public var pages = PageSettings()
    /// `tenants`: the tenant IDs this project has. A REST call or link that names any other tenant
    /// gets `TENANT_NOT_FOUND`.
    public var tenants: Set<String> = []

    /// Whether `id` has the shape of a tenant ID: 1 to 64 ASCII letters, digits and hyphens.
    public static func isWellFormedTenantID(_ id: some StringProtocol) -> Bool {
        !id.isEmpty && id.utf8.count <= 64
            && id.utf8.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == UInt8(ascii: "-")
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

extension Reader {
    /// Reads every section `serve` needs; each key may be overridden by an environment variable.
    func service(_ top: [String: Node]) throws(ConfigurationError) -> ServiceSettings {
        var settings = ServiceSettings()

        let server = try mapping(
            top["server"], key: "server",
            known: [
                "host", "port", "development", "adminToken", "metricsToken", "trustedProxies", "tls", "maximumBodyBytes", "idleTimeout",
                "headerTimeout", "bodyTimeout", "maximumConnections",
            ])
        if let host = try optionalString(server["host"], key: "server.host") { settings.server.host = host }
        if let port = server["port"] { settings.server.port = try integer(port, key: "server.port", in: 0...65535) }
        if let flag = server["development"] { settings.server.development = try boolean(flag, key: "server.development") }
        settings.server.adminToken = try optionalString(server["adminToken"], key: "server.adminToken")
        if let size = server["maximumBodyBytes"] {
            settings.server.maximumBodyBytes = try integer(size, key: "server.maximumBodyBytes", in: 1024...(16 << 20))
        }
        if let node = server["idleTimeout"] {
            settings.server.idleTimeout = try duration(
                node, key: "server.idleTimeout", in: 1...3600, kind: "a timeout", examples: "60s or 5m")
        }
        if let node = server["headerTimeout"] {
            settings.server.headerTimeout = try duration(
                node, key: "server.headerTimeout", in: 1...600, kind: "a timeout", examples: "10s or 1m")
        }
        if let node = server["bodyTimeout"] {
            settings.server.bodyTimeout = try duration(
                node, key: "server.bodyTimeout", in: 1...3600, kind: "a timeout", examples: "30s or 5m")
        }
        if let node = server["maximumConnections"] {
            settings.server.maximumConnections = try integer(node, key: "server.maximumConnections", in: 1...1_000_000)
        }
        if let tlsNode = server["tls"] {
            let tls = try mapping(tlsNode, key: "server.tls", known: ["certificate", "privateKey"])
            guard let certificate = try optionalString(tls["certificate"], key: "server.tls.certificate"),
                let key = try optionalString(tls["privateKey"], key: "server.tls.privateKey")
            else { throw fail(tlsNode, "server.tls", "expected both certificate and privateKey (PEM file paths)") }
            settings.server.tls = .init(certificate: certificate, privateKey: key)
        }
        if settings.server.development, !settings.server.isLoopback {
            throw fail(
                server["development"], "server.development",
                "a development server accepts 'Bearer owner' as the admin credential, so it must listen on a loopback address (127.0.0.1, ::1 or localhost), not '\(settings.server.host)'"
            )
        }
        if let token = settings.server.adminToken, token.count < 32 {
            throw fail(server["adminToken"], "server.adminToken", "expected at least 32 characters (use `openssl rand -hex 32`)")
        }
        settings.server.metricsToken = try optionalString(server["metricsToken"], key: "server.metricsToken")
        if let token = settings.server.metricsToken,
            token.utf8.count < 32 || !token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        {
            throw fail(
                server["metricsToken"], "server.metricsToken",
                "expected at least 32 printable ASCII characters without spaces (use `openssl rand -hex 32`)")
        }
        if let proxies = server["trustedProxies"] {
            for (index, item) in try sequence(proxies, key: "server.trustedProxies").enumerated() {
                let text = try string(item, key: "server.trustedProxies[\(index)]")
                guard let network = IPNetwork(text) else {
                    throw fail(
                        item, "server.trustedProxies[\(index)]",
                        "expected an IP address or a CIDR block such as 10.0.0.0/8 or ::1/128; got '\(text)'")
                }
                settings.server.trustedProxies.append(network)
            }
        }

        let project = try mapping(top["project"], key: "project", known: ["id", "apiKey", "appName"])
        if let id = try optionalString(project["id"], key: "project.id") {
            guard id.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) }) else {
                throw fail(project["id"], "project.id", "expected lower-case letters, digits and hyphens; got '\(id)'")
            }
            settings.project.id = id
        }
        if let key = try optionalString(project["apiKey"], key: "project.apiKey") {
            guard key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "&") && $0 != UInt8(ascii: "#") }) else {
                throw fail(project["apiKey"], "project.apiKey", "expected printable ASCII without spaces, '&' or '#'")
            }
            settings.project.apiKey = key
        }
        if let name = try optionalString(project["appName"], key: "project.appName") { settings.project.appName = name }

        if let domains = top["linkDomains"] {
            var parsed: [LinkDomain] = []
            for (index, item) in try sequence(domains, key: "linkDomains").enumerated() {
                let text = try string(item, key: "linkDomains[\(index)]")
                do throws(LinkDomainError) {
                    parsed.append(try LinkDomain(text))
                } catch {
                    throw fail(item, "linkDomains[\(index)]", error.message + "; got '\(text)'")
                }
            }
            guard !parsed.isEmpty else { throw fail(domains, "linkDomains", "expected at least one link domain") }
            settings.linkDomains = parsed
            settings.linkDomainsConfigured = true
        }

        let codes = try mapping(top["codes"], key: "codes", known: ["lifetimes"])
        let modes = ActionCodeLink.Mode.allCases.map(\.rawValue)
        for (name, node) in try mapping(codes["lifetimes"], key: "codes.lifetimes", known: modes) {
            settings.codes.lifetimes[ActionCodeLink.Mode(rawValue: name)!] = try duration(node, key: "codes.lifetimes." + name)
        }

        if let directory = try optionalString(top["dataDirectory"], key: "dataDirectory") { settings.dataDirectory = directory }
        settings.store = .sqlite(path: (settings.dataDirectory as NSString).appendingPathComponent("actionlinks.sqlite"))
        if let storeNode = top["store"] {
            let text = try string(storeNode, key: "store")
            if text.hasPrefix("sqlite:"), text.count > 7 {
                settings.store = .sqlite(path: String(text.dropFirst(7)))
            } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
                do {
                    settings.store = .postgres(try PostgresLocation(url: text))
                } catch {
                    throw fail(storeNode, "store", error.description)
                }
            } else {
                throw fail(storeNode, "store", "expected sqlite:<path> or postgres://user:password@host:port/database; got '\(text)'")
            }
        }

        let passwords = try mapping(top["passwords"], key: "passwords", known: ["minimumLength", "maximumLength"])
        if let value = passwords["minimumLength"] {
            settings.passwords.minimumLength = try integer(value, key: "passwords.minimumLength", in: 6...128)
        }
        if let value = passwords["maximumLength"] {
            settings.passwords.maximumLength = try integer(
                value, key: "passwords.maximumLength", in: settings.passwords.minimumLength...4096)
        }
        if let flag = top["signUp"] { settings.signUpAllowed = try boolean(flag, key: "signUp") }
        if let flag = top["emulatorListing"] {
            settings.emulatorListing = try boolean(flag, key: "emulatorListing")
            if settings.emulatorListing, !settings.server.development {
                throw fail(
                    flag, "emulatorListing",
                    "the listing shows every live code to anyone who asks, as Firebase's Auth emulator does, so it is only allowed with server.development: true; set emulatorListing: false for this server"
                )
            }
        }

        let mail = try mapping(
            top["mail"], key: "mail", known: ["backend", "from", "sendmailCommand", "webhookUrl", "webhookToken", "attempts"])
        if let from = try optionalString(mail["from"], key: "mail.from") { settings.mail.from = from }
        if let attempts = mail["attempts"] { settings.mail.attempts = try integer(attempts, key: "mail.attempts", in: 1...20) }
        switch try optionalString(mail["backend"], key: "mail.backend") ?? "log" {
        case "log":
            settings.mail.backend = .log
        case "sendmail":
            let command = try optionalString(mail["sendmailCommand"], key: "mail.sendmailCommand") ?? "/usr/sbin/sendmail -t -i"
            settings.mail.backend = .sendmail(command: command.split(separator: " ").map(String.init))
        case "webhook":
            guard let url = try optionalString(mail["webhookUrl"], key: "mail.webhookUrl"),
                url.hasPrefix("https://") || url.hasPrefix("http://127.0.0.1") || url.hasPrefix("http://localhost")
            else {
                throw fail(
                    mail["webhookUrl"] ?? mail["backend"], "mail.webhookUrl",
                    "expected the https URL the webhook backend POSTs each message to (http only on 127.0.0.1 or localhost)")
            }
            settings.mail.backend = .webhook(url: url, bearerToken: try optionalString(mail["webhookToken"], key: "mail.webhookToken"))
        case let other:
            throw fail(mail["backend"], "mail.backend", "expected log, sendmail or webhook; got '\(other)'")
        }

        let limits = try mapping(top["limits"], key: "limits", known: ["sendsPerAddressPerHour", "sendsPerIPPerHour"])
        if let value = limits["sendsPerAddressPerHour"] {
            settings.limits.sendsPerAddressPerHour = try integer(value, key: "limits.sendsPerAddressPerHour", in: 1...1_000_000)
        }
        if let value = limits["sendsPerIPPerHour"] {
            settings.limits.sendsPerIPPerHour = try integer(value, key: "limits.sendsPerIPPerHour", in: 1...100_000_000)
        }

        if let tenants = top["tenants"] {
            for (index, item) in try sequence(tenants, key: "tenants").enumerated() {
                let id = try string(item, key: "tenants[\(index)]")
                guard ServiceSettings.isWellFormedTenantID(id) else {
                    throw fail(item, "tenants[\(index)]", "expected a tenant ID of 1 to 64 letters, digits and hyphens; got '\(id)'")
                }
                settings.tenants.insert(id)
            }
        }

        let pages = try mapping(top["pages"], key: "pages", known: ["defaultLanguage"])
        if let node = pages["defaultLanguage"] {
            let language = try string(node, key: "pages.defaultLanguage")
            guard !language.isEmpty,
                language.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x41...0x5A).contains($0) || $0 == UInt8(ascii: "-") })
            else {
                throw fail(node, "pages.defaultLanguage", "expected a language code such as en, ru or pt-BR; got '\(language)'")
            }
            settings.pages.defaultLanguage = language.lowercased()
        }
        return settings
    }

    func integer(_ node: Node, key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let value = node.int, range.contains(value) else {
            throw fail(
                node, key,
                "expected a whole number from \(range.lowerBound) to \(range.upperBound); got '\(node.scalar?.string ?? "a non-scalar")'")
        }
        return value
    }

    func boolean(_ node: Node, key: String) throws(ConfigurationError) -> Bool {
        guard let value = node.bool else { throw fail(node, key, "expected true or false; got '\(node.scalar?.string ?? "a non-scalar")'") }
        return value
    }

    /// `90s`, `30m`, `1h`, `3d` or a number of seconds, within `range` (seconds); `kind` and
    /// `examples` word the error.
    func duration(
        _ node: Node, key: String, in range: ClosedRange<Int> = 1...(30 * 86400), kind: String = "a lifetime",
        examples: String = "90m, 1h or 3d"
    ) throws(ConfigurationError) -> Int {
        let text = node.scalar?.string ?? ""
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var seconds: Int?
        if let last = text.last, let unit = units[last], let count = Int(text.dropLast()) {
            seconds = count * unit
        } else if let count = Int(text) {
            seconds = count
        }
        guard let seconds, range.contains(seconds) else {
            throw fail(
                node, key,
                "expected \(kind) from \(Self.spelled(range.lowerBound)) to \(Self.spelled(range.upperBound)) such as \(examples); got '\(text)'"
            )
        }
        return seconds
    }

    /// `seconds` in the largest unit that divides it: `30d`, `1h`, `10m`, `45s`.
    static func spelled(_ seconds: Int) -> String {
        for (unit, size) in [("d", 86400), ("h", 3600), ("m", 60)] where seconds % size == 0 { return "\(seconds / size)\(unit)" }
        return "\(seconds)s"
    }
}

/// Environment variables that override configuration keys.
///
/// The name of a key's variable is `ACTIONLINKS_` followed by its path in upper snake case, a `_`
/// between the parts: `server.port` → `ACTIONLINKS_SERVER_PORT`, `project.apiKey` →
/// `ACTIONLINKS_PROJECT_API_KEY`, `codes.lifetimes.signIn` → `ACTIONLINKS_CODES_LIFETIMES_SIGN_IN`.
/// List keys (`linkDomains`, `continueUrls.allow`) take comma-separated values.
public enum EnvironmentOverrides {
    /// Every key that an environment variable may set.
    public static let keys: [String] =
        [
            "server.host", "server.port", "server.development", "server.adminToken", "server.metricsToken", "server.trustedProxies",
            "server.maximumBodyBytes", "server.idleTimeout", "server.headerTimeout", "server.bodyTimeout", "server.maximumConnections",
            "server.tls.certificate", "server.tls.privateKey", "project.id", "project.apiKey", "project.appName",
            "linkDomains", "continueUrls.allow", "continueUrls.defaultOrigin", "store", "dataDirectory",
            "passwords.minimumLength", "passwords.maximumLength", "signUp", "emulatorListing", "mail.backend", "mail.from",
            "mail.sendmailCommand", "mail.webhookUrl", "mail.webhookToken", "mail.attempts", "limits.sendsPerAddressPerHour",
            "limits.sendsPerIPPerHour", "pages.defaultLanguage", "tenants",
        ] + ActionCodeLink.Mode.allCases.map { "codes.lifetimes." + $0.rawValue }

    static let listKeys: Set<String> = ["linkDomains", "continueUrls.allow", "tenants", "server.trustedProxies"]

    /// `ACTIONLINKS_` variables that are not configuration keys (read by the CLI and the tests).
    static let otherVariables: Set<String> = ["ACTIONLINKS_ADMIN_TOKEN", "ACTIONLINKS_VECTORS"]

    /// The variable that overrides `key`.
    public static func variable(for key: String) -> String {
        var name = "ACTIONLINKS"
        for part in key.split(separator: ".") {
            name += "_"
            // A run of capitals is one word: sendsPerIPPerHour -> SENDS_PER_IP_PER_HOUR.
            let characters = Array(part)
            for (index, character) in characters.enumerated() {
                if character.isUppercase, index > 0 {
                    let previous = characters[index - 1]
                    let next = index + 1 < characters.count ? characters[index + 1] : nil
                    if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) { name += "_" }
                }
                name += character.uppercased()
            }
        }
        return name
    }

    /// The tree with each set variable's value in place of its key; also returns which keys came
    /// from which variable, so errors can name the variable instead of a line.
    static func apply(_ environment: [String: String], to root: Node?, unknown: inout [String]) -> (Node, [String: String]) {
        var tree = root ?? Node.mapping([:])
        if case .scalar = tree, tree.null != nil { tree = Node.mapping([:]) }
        var sources: [String: String] = [:]
        let known = Set(keys.map(variable(for:)))
        for name in environment.keys.sorted()
        where name.hasPrefix("ACTIONLINKS_") && !known.contains(name) && !otherVariables.contains(name) {
            unknown.append(name)
        }
        for key in keys {
            let variable = variable(for: key)
            guard let value = environment[variable] else { continue }
            let node: Node =
                listKeys.contains(key)
                ? .sequence(.init(value.split(separator: ",").map { Node.scalar(.init($0.trimmingCharacters(in: .whitespaces))) }))
                : .scalar(.init(value))
            tree = set(node, at: key.split(separator: ".").map(String.init)[...], in: tree)
            sources[key] = variable
        }
        return (tree, sources)
    }

    private static func set(_ value: Node, at path: ArraySlice<String>, in node: Node) -> Node {
        guard let first = path.first else { return value }
        var mapping = node.mapping ?? Node.Mapping([])
        let child = mapping[first] ?? Node.mapping([:])
        mapping[first] = set(value, at: path.dropFirst(), in: child.mapping == nil ? Node.mapping([:]) : child)
        return .mapping(mapping)
    }
}
