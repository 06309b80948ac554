import Foundation
import Testing

@testable import ActionLinksConfiguration

/// What a container platform tells the server (docs/DEPLOYING.md): `PORT`, the log format, the stop
/// deadline and where the shared keys are.
@Suite("The container contract in the configuration", .timeLimit(.minutes(5)))
struct ContainerSettingsTests {
    static let production =
        "linkDomains: [links.example.com]\nserver: {development: false, adminToken: \(String(repeating: "a", count: 40))"
    /// `production` with more `server` keys.
    static func production(_ more: String) -> String { production + (more.isEmpty ? "" : ", " + more) + "}" }

    @Test("PORT is the port and, unless server.host is given, every interface; the shipped file names no host")
    func port() throws {
        let server = try ConfigurationText.service(Self.production(""), environment: ["PORT": "9090"]).server
        #expect(server.port == 9090 && server.host == "0.0.0.0")
        let given = try ConfigurationText.service(Self.production("host: 10.1.2.3"), environment: ["PORT": "9090"])
        #expect(given.server.host == "10.1.2.3" && given.server.port == 9090)
        let variable = try ConfigurationText.service(
            Self.production(""), environment: ["PORT": "9090", "ACTIONLINKS_SERVER_HOST": "127.0.0.1"])
        #expect(variable.server.host == "127.0.0.1")
        // Without PORT nothing changes: loopback, the file's port.
        let plain = try ConfigurationText.service(Self.production("")).server
        #expect(plain.host == "127.0.0.1" && plain.port == 8080)
        let shipped = try ActionLinksConfiguration.load(file: ConfigurationText.shippedFile, environment: [:]).service.server
        #expect(!shipped.hostGiven && shipped.host == "127.0.0.1")
    }

    @Test(
        "PORT's mistakes name the variable: not a port, a different ACTIONLINKS_SERVER_PORT, a development server on every interface",
        arguments: [
            ("PORT=http", [:], "expected a port from 1 to 65535; got 'http'"),
            ("PORT=70000", [:], "expected a port from 1 to 65535"),
            ("PORT=9090", ["ACTIONLINKS_SERVER_PORT": "9091"], "PORT is 9090 but ACTIONLINKS_SERVER_PORT is 9091"),
            ("PORT=9090", ["ACTIONLINKS_SERVER_DEVELOPMENT": "true"], "must stay on loopback"),
        ])
    func portMistakes(port: String, extra: [String: String], message: String) throws {
        var environment = extra
        environment["PORT"] = String(port.dropFirst(5))
        let yaml = extra["ACTIONLINKS_SERVER_DEVELOPMENT"] == nil ? Self.production("") : "server: {development: false}\n"
        let error = try #require(ConfigurationText.problem(yaml, environment: environment))
        #expect(error.description.contains("environment variable PORT") && error.description.contains(message), "\(error)")
    }

    @Test("log.format, log.traceProject, server.shutdownTimeout and keys read as written; keys takes a file or the JSON, not both")
    func logAndKeys() throws {
        let service = try ConfigurationText.service(
            "log: {format: json, traceProject: my-gcp}\nserver: {shutdownTimeout: 5s}\nkeys: {file: /secrets/keys.json}")
        #expect(service.log.format == .json && service.log.traceProject == "my-gcp" && service.server.shutdownTimeout == 5)
        #expect(service.keys.file == "/secrets/keys.json" && service.keys.isShared)
        let defaults = try ConfigurationText.service("")
        #expect(defaults.log.format == .text && defaults.server.shutdownTimeout == 8 && !defaults.keys.isShared)
        #expect(
            try ConfigurationText.service("", environment: ["ACTIONLINKS_LOG_FORMAT": "json", "ACTIONLINKS_KEYS_JSON": "{}"]).keys.json
                == "{}")
        let both = try #require(ConfigurationText.problem("keys: {file: /a, json: '{}'}"))
        #expect(both.description.contains("either keys.file or keys.json"), "\(both)")
        let format = try #require(ConfigurationText.problem("log: {format: yaml}"))
        #expect(format.description.contains("expected text or json"), "\(format)")
    }
}
