import ActionLinksConfiguration
import ActionLinksServer
import ArgumentParser
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

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
            let environment = ProcessInfo.processInfo.environment
            switch configuration.service.log.format {
            case .text: LoggingSystem.bootstrap(StreamLogHandler.standardError)
            case .json:
                LoggingSystem.bootstrap(
                    JSONLogHandler.factory(
                        traceProject: configuration.service.log.traceProject(
                            environment: environment, projectID: configuration.service.project.id)))
            }
            var logger = Logger(label: "actionlinks")
            logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            for warning in configuration.warnings { logger.warning("\(warning)") }
            let app = try await LinkDomainServer.buildApplication(configuration: configuration, www: www, logger: logger)
            // A stop finishes what is in flight within server.shutdownTimeout, then cancels the rest
            // and gives it a second more: the platform's kill (Cloud Run's comes 10 s after SIGTERM)
            // never lands on a server still writing.
            var group = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            group.maximumGracefulShutdownDuration = .seconds(configuration.service.server.shutdownTimeout)
            group.maximumCancellationDuration = .seconds(1)
            try await ServiceGroup(configuration: group).run()
        }
    }
}
