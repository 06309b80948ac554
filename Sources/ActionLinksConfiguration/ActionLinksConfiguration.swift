import ActionLinks
import Foundation
import Yams

/// The settings in `config/actionlinks.yaml`, checked and turned into library values.
///
/// Every problem is reported with the file, the line, the key and what was expected, so a person can
/// fix it without reading code.
public struct ActionLinksConfiguration: Sendable {
    /// The default configuration file, relative to the working directory.
    public static let defaultFile = "config/actionlinks.yaml"

    /// The continue-URL allow-list (`continueUrls`).
    public var continueURLs: ContinueURLPolicy
    /// The apps the association files are generated for (`apps`).
    public var apps: AppsConfiguration
    /// What `actionlinks serve` reads: server, project, link domains, codes, store, mail and limits.
    public var service: ServiceSettings

    /// The top-level keys a configuration file may have.
    static let topLevelKeys = [
        "server", "project", "linkDomains", "continueUrls", "apps", "codes", "store", "dataDirectory", "passwords", "signUp",
        "emulatorListing", "mail", "limits", "pages", "tenants",
    ]

    /// Reads and checks the configuration file at `path`, with the overrides in `environment`
    /// (see ``EnvironmentOverrides``).
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
        var unknown: [String] = []
        let (tree, sources) = EnvironmentOverrides.apply(environment, to: root, unknown: &unknown)
        if let name = unknown.first {
            let variables = EnvironmentOverrides.keys.map(EnvironmentOverrides.variable(for:))
            var message = "not a configuration key's variable"
            if let near = variables.min(by: { editDistance($0, name) < editDistance($1, name) }), editDistance(near, name) <= 4 {
                message += " (did you mean \(near)?)"
            }
            throw ConfigurationError(file: "environment variable \(name)", mark: nil, key: nil, message: message)
        }
        let reader = Reader(file: file, sources: sources)
        let top = try reader.mapping(tree, key: nil, known: topLevelKeys)
        let apps = try reader.apps(top["apps"])
        let service = try reader.service(top)
        var allow: [String] = []
        var defaultOrigin: String?
        var allowMarks: [Mark?] = []
        var sectionNode: Node?
        if let section = top["continueUrls"] {
            sectionNode = section
            let fields = try reader.mapping(section, key: "continueUrls", known: ["allow", "defaultOrigin"])
            if let list = fields["allow"] {
                let items = try reader.sequence(list, key: "continueUrls.allow")
                for (index, item) in items.enumerated() {
                    allow.append(try reader.string(item, key: "continueUrls.allow[\(index)]"))
                    allowMarks.append(item.mark)
                }
            }
            if let origin = fields["defaultOrigin"] {
                defaultOrigin = try reader.string(origin, key: "continueUrls.defaultOrigin")
            }
        }
        do throws(ContinueURLPolicy.ConfigurationError) {
            return ActionLinksConfiguration(
                continueURLs: try ContinueURLPolicy(allow: allow, defaultOrigin: defaultOrigin), apps: apps, service: service)
        } catch {
            var mark = sectionNode?.mark
            if error.key.hasPrefix("allow["), let index = Int(error.key.dropFirst(6).dropLast()), index < allowMarks.count {
                mark = allowMarks[index]
            } else if error.key == "defaultOrigin", let node = sectionNode?.mapping?["defaultOrigin"] {
                mark = node.mark
            }
            throw reader.fail(mark, "continueUrls." + error.key, "expected \(error.expected); got '\(error.value)'")
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

    private static func reason(_ error: any Error) -> String {
        switch (error as? CocoaError)?.code {
        case .fileReadNoSuchFile?, .fileNoSuchFile?: "No such file or directory"
        case .fileReadNoPermission?: "Permission denied"
        case .fileReadInapplicableStringEncoding?: "the file is not UTF-8 text"
        default: error.localizedDescription
        }
    }
}

/// A configuration problem: which file, where in it, which key, and what was expected.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    /// The configuration file.
    public let file: String
    /// The line, when known.
    public let line: Int?
    /// The column, when known.
    public let column: Int?
    /// The dotted key, such as `continueUrls.allow[1]`, when the problem is about one.
    public let key: String?
    /// What is wrong and what was expected.
    public let message: String

    init(file: String, mark: Mark?, key: String?, message: String) {
        self.file = file
        self.line = mark?.line
        self.column = mark?.column
        self.key = key
        self.message = message
    }

    /// `file:line:column: key: message`.
    public var description: String {
        var text = file
        if let line { text += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        text += ": "
        if let key { text += key + ": " }
        return text + message
    }
}

/// Walks the YAML tree, turning each unexpected shape into a ``ConfigurationError``.
struct Reader {
    let file: String
    /// Keys set by environment variables, and which variable set each.
    var sources: [String: String] = [:]

    func fail(_ node: Node?, _ key: String?, _ message: String) -> ConfigurationError {
        fail(node?.mark, key, message)
    }

    func fail(_ mark: Mark?, _ key: String?, _ message: String) -> ConfigurationError {
        if let key, let variable = sources.first(where: { key == $0.key || key.hasPrefix($0.key + "[") })?.value {
            return ConfigurationError(file: "environment variable \(variable)", mark: nil, key: key, message: message)
        }
        return ConfigurationError(file: file, mark: mark, key: key, message: message)
    }

    /// The entries of a mapping; refuses unknown and repeated keys (suggesting the nearest known one).
    func mapping(_ node: Node?, key: String?, known: [String]) throws(ConfigurationError) -> [String: Node] {
        guard let node else { return [:] }
        if case .scalar(let scalar) = node, scalar.string.isEmpty || node.null != nil { return [:] }
        guard case .mapping(let mapping) = node else {
            throw fail(node, key, "expected a mapping of \(known.joined(separator: ", "))")
        }
        var out: [String: Node] = [:]
        for (keyNode, value) in mapping {
            guard let name = keyNode.scalar?.string else { throw fail(keyNode, key, "expected a plain key") }
            let path = key.map { "\($0).\(name)" } ?? name
            guard known.contains(name) else {
                var message = "unknown key; expected one of \(known.joined(separator: ", "))"
                if let near = known.min(by: { editDistance($0, name) < editDistance($1, name) }), editDistance(near, name) <= 3 {
                    message += " (did you mean '\(near)'?)"
                }
                throw fail(keyNode, path, message)
            }
            guard out[name] == nil else { throw fail(keyNode, path, "the key appears twice") }
            out[name] = value
        }
        return out
    }

    func sequence(_ node: Node, key: String) throws(ConfigurationError) -> [Node] {
        if case .scalar = node, node.null != nil { return [] }
        guard case .sequence(let sequence) = node else { throw fail(node, key, "expected a list") }
        return Array(sequence)
    }

    func list(_ node: Node?, key: String) throws(ConfigurationError) -> [Node] {
        guard let node else { return [] }
        return try sequence(node, key: key)
    }

    func optionalString(_ node: Node?, key: String) throws(ConfigurationError) -> String? {
        guard let node else { return nil }
        return try string(node, key: key)
    }

    func strings(_ node: Node?, key: String) throws(ConfigurationError) -> [String] {
        guard let node else { return [] }
        var out: [String] = []
        for (index, item) in try sequence(node, key: key).enumerated() { out.append(try string(item, key: "\(key)[\(index)]")) }
        return out
    }

    func string(_ node: Node, key: String) throws(ConfigurationError) -> String {
        guard case .scalar(let scalar) = node, node.null == nil, !scalar.string.isEmpty else {
            throw fail(node, key, "expected a non-empty string")
        }
        return scalar.string
    }
}

extension Reader {
    /// The `apps` section: each app is checked by generating its files, so a bad team ID or
    /// fingerprint is reported at start with its key, not when a phone first asks for the file.
    func apps(_ node: Node?) throws(ConfigurationError) -> AppsConfiguration {
        guard let node else { return AppsConfiguration() }
        let fields = try mapping(node, key: "apps", known: ["ios", "android", "rules", "webcredentials", "appclips"])
        var apps = AppsConfiguration()
        for (index, item) in try list(fields["ios"], key: "apps.ios").enumerated() {
            let key = "apps.ios[\(index)]"
            let app = try mapping(item, key: key, known: ["teamId", "bundleId", "appStoreId"])
            guard let teamID = try optionalString(app["teamId"], key: key + ".teamId") else { throw fail(item, key, "teamId is required") }
            guard let bundleID = try optionalString(app["bundleId"], key: key + ".bundleId") else {
                throw fail(item, key, "bundleId is required")
            }
            let entry = AppsConfiguration.AppleApp(
                teamID: teamID, bundleID: bundleID, appStoreID: try optionalString(app["appStoreId"], key: key + ".appStoreId"))
            do throws(AssociationGeneratorError) {
                _ = try AssociationGenerator(configuration: AppsConfiguration(appleApps: [entry])).appleAppSiteAssociation()
            } catch {
                throw fail(item, key, error.description)
            }
            apps.appleApps.append(entry)
        }
        for (index, item) in try list(fields["android"], key: "apps.android").enumerated() {
            let key = "apps.android[\(index)]"
            let app = try mapping(item, key: key, known: ["packageName", "sha256CertFingerprints", "minimumVersion"])
            guard let packageName = try optionalString(app["packageName"], key: key + ".packageName") else {
                throw fail(item, key, "packageName is required")
            }
            let fingerprints = try strings(app["sha256CertFingerprints"], key: key + ".sha256CertFingerprints")
            var minimumVersion: Int?
            if let version = app["minimumVersion"] {
                guard let value = version.int, value >= 0 else {
                    throw fail(version, key + ".minimumVersion", "expected a non-negative whole number (versionCode)")
                }
                minimumVersion = value
            }
            let entry = AppsConfiguration.AndroidApp(
                packageName: packageName, sha256Fingerprints: fingerprints, minimumVersion: minimumVersion)
            do throws(AssociationGeneratorError) {
                _ = try AssociationGenerator(configuration: AppsConfiguration(androidApps: [entry])).assetLinks()
            } catch {
                throw fail(item, key, error.description)
            }
            apps.androidApps.append(entry)
        }
        for (index, item) in try list(fields["rules"], key: "apps.rules").enumerated() {
            let key = "apps.rules[\(index)]"
            let rule = try mapping(item, key: key, known: ["path", "query", "fragment", "exclude", "comment"])
            guard let path = try optionalString(rule["path"], key: key + ".path") else { throw fail(item, key, "path is required") }
            var query: [AssetLinks.DynamicComponent.QueryParameter] = []
            if let queryNode = rule["query"] {
                guard case .mapping(let items) = queryNode else {
                    throw fail(queryNode, key + ".query", "expected a mapping of parameter name to pattern")
                }
                for (name, pattern) in items {
                    guard let name = name.scalar?.string else { throw fail(name, key + ".query", "expected a parameter name") }
                    query.append(.init(name: name, pattern: try string(pattern, key: key + ".query." + name)))
                }
            }
            var exclude = false
            if let flag = rule["exclude"] {
                guard let value = flag.bool else { throw fail(flag, key + ".exclude", "expected true or false") }
                exclude = value
            }
            apps.extraRules.append(
                .init(
                    path: path, query: query, fragment: try optionalString(rule["fragment"], key: key + ".fragment"), exclude: exclude,
                    comment: try optionalString(rule["comment"], key: key + ".comment")))
        }
        apps.webCredentialsAppIDs = try strings(fields["webcredentials"], key: "apps.webcredentials")
        apps.appClipAppIDs = try strings(fields["appclips"], key: "apps.appclips")
        let generator = AssociationGenerator(configuration: apps)
        do throws(AssociationGeneratorError) {
            if !apps.appleApps.isEmpty { _ = try generator.appleAppSiteAssociation() }
            if !apps.androidApps.isEmpty { _ = try generator.assetLinks() }
        } catch {
            throw fail(node, "apps", error.description)
        }
        return apps
    }
}

/// Levenshtein distance, for "did you mean" suggestions.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.lowercased()), b = Array(b.lowercased())
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}
