import Foundation

@testable import ActionLinksConfiguration

/// A configuration read from YAML text (as the file `t.yaml` unless named) with `environment`: the
/// one reading every configuration suite uses, for a section's values and its refusals.
enum ConfigurationText {
    /// The repository's root, found from this file's path.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// The shipped configuration, `config/actionlinks.yaml`.
    static let shippedFile = repository.appendingPathComponent("config/actionlinks.yaml").path

    /// The configuration `yaml` gives, read as the file `file`.
    static func configuration(_ yaml: String, file: String = "t.yaml", environment: [String: String] = [:]) throws(ConfigurationError)
        -> ActionLinksConfiguration
    {
        try ActionLinksConfiguration.parse(yaml: yaml, file: file, environment: environment)
    }

    /// The service settings `yaml` gives.
    static func service(_ yaml: String, environment: [String: String] = [:]) throws(ConfigurationError) -> ServiceSettings {
        try configuration(yaml, environment: environment).service
    }

    /// Why `yaml` (read as the file `file`) is refused, or nil when it is taken.
    static func problem(_ yaml: String, file: String = "t.yaml", environment: [String: String] = [:]) -> ConfigurationError? {
        do {
            _ = try configuration(yaml, file: file, environment: environment)
            return nil
        } catch {
            return error
        }
    }
}

/// A suite of whole configurations: ``parse(_:environment:)`` reads `prefix` then the YAML (as the
/// file ``file``), ``error(_:environment:)`` says why it is refused.
protocol ConfigurationSuite {
    /// What every YAML of the suite starts with; empty unless given.
    static var prefix: String { get }
    /// The name the YAML is read as, which a refusal's description starts with; `t.yaml` unless given.
    static var file: String { get }
}

extension ConfigurationSuite {
    static var prefix: String { "" }
    static var file: String { "t.yaml" }

    /// The configuration of ``prefix`` then `yaml`.
    func parse(_ yaml: String, environment: [String: String] = [:]) throws(ConfigurationError) -> ActionLinksConfiguration {
        try ConfigurationText.configuration(Self.prefix + yaml, file: Self.file, environment: environment)
    }

    /// Why ``prefix`` then `yaml` is refused, or nil when it is taken.
    func error(_ yaml: String, environment: [String: String] = [:]) -> ConfigurationError? {
        ConfigurationText.problem(Self.prefix + yaml, file: Self.file, environment: environment)
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
