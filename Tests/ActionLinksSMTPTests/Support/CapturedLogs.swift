import ActionLinksSMTPTestSupport
import Logging
import Synchronization

/// Everything logged through ``logger``, at every level, as text: messages with their metadata.
final class CapturedLogs: Sendable {
    private let entries = Mutex<[String]>([])

    var logger: Logger {
        var logger = Logger(label: "test") { _ in Handler(logs: self) }
        logger.logLevel = .trace
        return logger
    }

    var text: [String] { entries.withLock { $0 } }

    private struct Handler: LogHandler {
        let logs: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            logs.entries.withLock { $0.append("\(event.level) \(event.message) \(all)") }
        }
    }
}
