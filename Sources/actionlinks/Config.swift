import ActionLinksConfiguration
import ActionLinksDomain
import ArgumentParser
import Foundation

extension ActionLinksCommand {
    /// `actionlinks config`: the configuration itself.
    struct Config: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the configuration a server would run with.", subcommands: [Check.self])

        /// `actionlinks config check [--production]`.
        struct Check: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Read the configuration as `serve` does; with --production, list what a production deployment lacks.",
                discussion: """
                    Reads the file and the ACTIONLINKS_* variables (and PORT) exactly as serve does, so a mistake \\
                    names its file and line or its variable. With --production, it also lists what works on a \\
                    developer's machine but fails people in production: the log mail backend, SQLite on Cloud Run \\
                    (K_SERVICE) or Kubernetes, keys that are not one shared secret on PostgreSQL, PostgreSQL to \\
                    another host without sslmode=verify-full, a platform's proxy without server.trustedProxies, plain \\
                    HTTP with nothing in front. Exits 1 when it finds any (the server logs the same at start).
                    """
            )

            @Option(name: .long, help: "The configuration file.")
            var config: String = ActionLinksConfiguration.defaultFile

            @Flag(name: .long, help: "List what a production deployment of this configuration lacks; exit 1 if anything.")
            var production = false

            @OptionGroup var output: OutputOptions

            /// What `--json` prints.
            struct Report: Encodable {
                var file: String
                var findings: [Finding]
                struct Finding: Encodable {
                    var key: String
                    var message: String
                }
            }

            func run() async throws {
                let environment = ProcessInfo.processInfo.environment
                let configuration = try ActionLinksConfiguration.load(file: config, environment: environment)
                let service = configuration.service
                try service.checkServable(file: config)
                for warning in configuration.warnings { printError("warning: \(warning)") }
                let findings =
                    production
                    ? service.productionFindings(
                        environment: environment, dataDirectoryHasKeys: (try? ServerKeys.existing(in: service.dataDirectory)) != nil)
                    : []
                if output.json {
                    try printJSON(Report(file: config, findings: findings.map { .init(key: $0.key, message: $0.message) }))
                } else if findings.isEmpty {
                    print(production ? "\(config): ready for production" : "\(config): the configuration is valid")
                } else {
                    for finding in findings { print("\(config): \(finding)") }
                    print("\(findings.count) finding\(findings.count == 1 ? "" : "s") for production")
                }
                if !findings.isEmpty { throw ExitCode(1) }
            }
        }
    }
}
