import ActionLinksConfiguration
import ActionLinksServer
import ArgumentParser
import Foundation
import Hummingbird
import Logging

extension ActionLinksCommand {
    /// `actionlinks serve`: runs the link domain.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the link domain: issue links, serve the association files and pages, complete every action.",
            discussion: """
                Reads the configuration file (every key can be overridden by an ACTIONLINKS_* environment variable, \
                e.g. ACTIONLINKS_SERVER_PORT=9000) and serves until SIGINT or SIGTERM, finishing requests in flight \
                and delivering queued mail before it exits.
                """
        )

        @Option(name: .long, help: "The configuration file.")
        var config: String = ActionLinksConfiguration.defaultFile

        @Option(name: .long, help: "The folder of pages, templates and strings.")
        var www: String = "www"

        @Option(name: .long, help: "The log level: trace, debug, info, notice, warning, error or critical.")
        var logLevel: String = "info"

        func validate() throws {
            if Logger.Level(rawValue: logLevel) == nil {
                throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical; got '\(logLevel)'")
            }
        }

        func run() async throws {
            ProcessSetup.prepare()
            let configuration = try ActionLinksConfiguration.load(file: config, environment: ProcessInfo.processInfo.environment)
            try configuration.service.checkServable(file: config)
            LoggingSystem.bootstrap(StreamLogHandler.standardError)
            var logger = Logger(label: "actionlinks")
            logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            for warning in configuration.warnings { logger.warning("\(warning)") }
            let app = try await LinkDomainServer.buildApplication(configuration: configuration, www: www, logger: logger)
            try await app.runService()
        }
    }
}
