@testable import ActionLinksConfiguration

/// A configuration read from YAML text (as the file `t.yaml`) with `environment`, for suites that
/// check a section's values and its refusals.
enum ConfigurationText {
    /// The service settings `yaml` gives.
    static func service(_ yaml: String, environment: [String: String] = [:]) throws(ConfigurationError) -> ServiceSettings {
        try ActionLinksConfiguration.parse(yaml: yaml, file: "t.yaml", environment: environment).service
    }

    /// Why `yaml` is refused, or nil when it is taken.
    static func problem(_ yaml: String, environment: [String: String] = [:]) -> ConfigurationError? {
        do {
            _ = try service(yaml, environment: environment)
            return nil
        } catch {
            return error
        }
    }
}

/// A suite of one section's settings: ``parse(_:environment:)`` reads `prefix` then the YAML (as
/// the file `t.yaml`) into the service settings, ``error(_:environment:)`` says why it is refused.
protocol ServiceSettingsSuite {
    /// What every YAML of the suite starts with (a section its keys need); empty unless given.
    static var prefix: String { get }
}

extension ServiceSettingsSuite {
    static var prefix: String { "" }

    /// The service settings of ``prefix`` then `yaml`.
    func parse(_ yaml: String, environment: [String: String] = [:]) throws(ConfigurationError) -> ServiceSettings {
        try ConfigurationText.service(Self.prefix + yaml, environment: environment)
    }

    /// Why ``prefix`` then `yaml` is refused, or nil when it is taken.
    func error(_ yaml: String, environment: [String: String] = [:]) -> ConfigurationError? {
        ConfigurationText.problem(Self.prefix + yaml, environment: environment)
    }
}
