import ActionLinksConfiguration
import ActionLinksHTTP
import Foundation
import Logging
import Synchronization

/// Writes each message as one JSON object on a line of standard error, with the fields Google
/// Cloud Logging reads (`log.format: json`): `severity` (DEBUG … CRITICAL), `message`, `time`
/// (RFC 3339 with milliseconds), `logging.googleapis.com/trace` and `…/spanId` from a request's
/// trace (``RequestTrace``, put in the logger's metadata by the request log), `logger`, and every
/// other metadata value as a string field. Kubernetes log stacks (Fluent Bit, Vector, Loki's
/// promtail) read the same object. Messages never hold a code, link, token or key: they are the
/// text logs' own messages.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    /// The label of the logger (`actionlinks`).
    let label: String
    /// `projects/<id>/traces/`, or nil when no project is known.
    let tracePrefix: String?
    let output: Output

    /// Where lines go: one `write` per line under a lock, so concurrent lines never interleave.
    final class Output: Sendable {
        let descriptor: Int32
        let lock = Mutex(())

        init(descriptor: Int32) { self.descriptor = descriptor }

        func write(_ line: [UInt8]) {
            lock.withLock { _ in
                var written = 0
                while written < line.count {
                    let count = line[written...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
                    if count <= 0 { return }
                    written += count
                }
            }
        }
    }

    /// A handler for `label` writing to standard error, naming traces in `traceProject`.
    public init(label: String, traceProject: String?, descriptor: Int32 = STDERR_FILENO) {
        self.init(label: label, traceProject: traceProject, output: Output(descriptor: descriptor))
    }

    init(label: String, traceProject: String?, output: Output) {
        self.label = label
        tracePrefix = traceProject.map { "projects/\($0)/traces/" }
        self.output = output
    }

    /// The factory `LoggingSystem.bootstrap` takes: every logger writes to one shared output.
    public static func factory(traceProject: String?) -> @Sendable (String) -> JSONLogHandler {
        let output = Output(descriptor: STDERR_FILENO)
        return { label in JSONLogHandler(label: label, traceProject: traceProject, output: output) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Cloud Logging's `LogSeverity` for a swift-log level (it has no TRACE: DEBUG).
    static func severity(_ level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: "DEBUG"
        case .info: "INFO"
        case .notice: "NOTICE"
        case .warning: "WARNING"
        case .error: "ERROR"
        case .critical: "CRITICAL"
        }
    }

    public func log(event: LogEvent) {
        var fields: [String: String] = [:]
        for (key, value) in metadata { fields[key] = "\(value)" }
        if let extra = event.metadata { for (key, value) in extra { fields[key] = "\(value)" } }
        if let trace = fields.removeValue(forKey: RequestTrace.traceKey) {
            fields["logging.googleapis.com/trace"] = (tracePrefix ?? "") + trace
        }
        if let span = fields.removeValue(forKey: RequestTrace.spanKey) { fields["logging.googleapis.com/spanId"] = span }
        fields["severity"] = Self.severity(event.level)
        fields["message"] = "\(event.message)"
        fields["time"] = Date().formatted(Self.time)
        fields["logger"] = label
        guard var line = try? Self.encoder.encode(fields) else { return }
        line.append(UInt8(ascii: "\n"))
        output.write(Array(line))
    }

    /// RFC 3339 in UTC with milliseconds, as Cloud Logging reads `time`.
    static let time = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(identifier: "UTC")!)

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

extension LogSettings {
    /// The project `logging.googleapis.com/trace` names: `log.traceProject`, else
    /// `GOOGLE_CLOUD_PROJECT`, else the Firebase project's ID (also its Google Cloud project's).
    public func traceProject(environment: [String: String], projectID: String) -> String {
        traceProject ?? environment["GOOGLE_CLOUD_PROJECT"].flatMap { $0.isEmpty ? nil : $0 } ?? projectID
    }
}
