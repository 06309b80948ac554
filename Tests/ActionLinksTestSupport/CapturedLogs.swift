import InMemoryLogging
import Logging

/// What a ``TestApp`` logged, kept in memory (at `info` and above, as `serve` logs by default).
public struct CapturedLogs: Sendable {
    let handler = InMemoryLogHandler()

    /// A logger that writes here.
    func logger(level: Logger.Level) -> Logger {
        let handler = self.handler
        var logger = Logger(label: "actionlinks", factory: { _ in handler })
        logger.logLevel = level
        return logger
    }

    /// Every entry so far.
    public var entries: [InMemoryLogHandler.Entry] { handler.entries }

    /// The entries as lines of text, `level message key=value ...`, metadata sorted by key: what a
    /// test would have read in the server's standard error.
    public var text: String {
        entries.map { entry in
            let metadata = entry.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return ([entry.level.rawValue, "\(entry.message)"] + metadata).joined(separator: " ")
        }.joined(separator: "\n")
    }
}
