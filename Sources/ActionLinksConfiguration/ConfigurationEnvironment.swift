import Configuration

/// The environment variables that override configuration keys, as the decoder asks for them.
///
/// The name of a key's variable is `ACTIONLINKS_` followed by its path in upper snake case, a `_`
/// between the parts and before a list index: `server.port` → `ACTIONLINKS_SERVER_PORT`,
/// `limits.sendsPerIPPerHour` → `ACTIONLINKS_LIMITS_SENDS_PER_IP_PER_HOUR` (a run of capitals is one
/// word), `providers[0].clientSecret` → `ACTIONLINKS_PROVIDERS_0_CLIENT_SECRET`. A list of scalars
/// takes comma-separated values. swift-configuration's `EnvironmentVariablesProvider` holds the
/// values and splits the lists; its own key encoding splits `IPPer` as one word, so the names are
/// made here.
final class ConfigurationEnvironment {
    /// `ACTIONLINKS_` variables that are not configuration keys (read by the CLI, the tests and
    /// scripts/test.sh; .ci/run exports ACTIONLINKS_IMAGE to every test, servers included).
    static let otherVariables: Set<String> = [
        "ACTIONLINKS_ADMIN_TOKEN", "ACTIONLINKS_VECTORS", "ACTIONLINKS_SHARED", "ACTIONLINKS_TEST_TIMEOUT", "ACTIONLINKS_IMAGE",
    ]

    private let provider: EnvironmentVariablesProvider
    private let names: [String]
    /// Every variable a decoded key looked for: the real names, for "did you mean".
    private(set) var asked: Set<String> = []
    /// The key paths whose value came from a variable, and which variable.
    private(set) var sources: [String: String] = [:]

    init(_ environment: [String: String]) {
        provider = EnvironmentVariablesProvider(environmentVariables: environment)
        names = environment.keys.filter { $0.hasPrefix("ACTIONLINKS_") }.sorted()
    }

    /// The variable that overrides the key at `path` (`server.port`, `providers[0].clientId`).
    static func variable(for path: [any CodingKey]) -> String {
        var name = "ACTIONLINKS"
        for key in path {
            name += "_"
            if let index = key.intValue {
                name += String(index)
                continue
            }
            let characters = Array(key.stringValue)
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

    /// Whether the variable for `path` is set (without using it).
    func isSet(_ path: [any CodingKey]) -> Bool {
        let name = Self.variable(for: path)
        asked.insert(name)
        return (try? provider.environmentValue(forName: name)) != nil
    }

    /// The value of the variable for the scalar key at `path`, if it is set.
    func value(for path: [any CodingKey]) -> String? {
        let name = Self.variable(for: path)
        asked.insert(name)
        guard let value = try? provider.environmentValue(forName: name) else { return nil }
        sources[ConfigurationDecoder.describe(path) ?? ""] = name
        return value
    }

    /// The comma-separated items of the variable for the list key at `path`, if it is set; an
    /// empty value is an empty list.
    func list(for path: [any CodingKey]) -> [String]? {
        let name = Self.variable(for: path)
        asked.insert(name)
        guard let text = try? provider.environmentValue(forName: name) else { return nil }
        sources[ConfigurationDecoder.describe(path) ?? ""] = name
        guard !text.isEmpty, case .stringArray(let items)? = try? provider.value(forKey: [name], type: .stringArray).value?.content
        else { return [] }
        return items
    }

    /// The variable that supplied the value at `path` (`continueUrls.allow[1]` came from the
    /// variable for `continueUrls.allow`), if one did.
    func source(of path: String) -> String? {
        if let name = sources[path] { return name }
        return sources.first { path.hasPrefix($0.key + "[") }?.value
    }

    /// The first `ACTIONLINKS_` variable that no decoded key used, with the nearest real name.
    func unusedVariable() -> (name: String, suggestion: String?)? {
        let used = Set(sources.values)
        guard let name = names.first(where: { !used.contains($0) && !Self.otherVariables.contains($0) }) else { return nil }
        return (name, nearest(to: name, in: asked.sorted(), within: 4))
    }
}
