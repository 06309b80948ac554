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
