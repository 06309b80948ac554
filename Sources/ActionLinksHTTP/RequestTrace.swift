import HTTPTypes

/// The trace a request belongs to, as the platform in front says it (W3C `traceparent`, else
/// Google's `X-Cloud-Trace-Context`), put in the request logger's metadata so that Cloud Logging
/// groups a request's lines under its trace (``JSONLogHandler`` writes it as
/// `logging.googleapis.com/trace`). Only well-formed IDs are taken: a client's header is text in a
/// log line, never more.
public enum RequestTrace {
    /// The logger metadata key of the trace ID (32 lower-case hex digits).
    public static let traceKey = "trace"
    /// The logger metadata key of the span ID (16 lower-case hex digits).
    public static let spanKey = "spanId"

    /// The trace and span IDs `headers` carry, if any.
    static func ids(_ headers: HTTPFields) -> (trace: String, span: String?)? {
        if let parent = headers[.traceparent], let ids = traceparent(parent) { return ids }
        if let context = headers[.xCloudTraceContext] { return cloudTraceContext(context) }
        return nil
    }

    /// `00-<trace: 32 hex>-<span: 16 hex>-<flags>` (W3C Trace Context); an all-zero ID is invalid.
    static func traceparent(_ value: String) -> (trace: String, span: String?)? {
        let parts = value.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].count == 2, isHex(parts[1], count: 32), isHex(parts[2], count: 16),
            parts[1].contains(where: { $0 != "0" }), parts[2].contains(where: { $0 != "0" })
        else { return nil }
        return (parts[1].lowercased(), parts[2].lowercased())
    }

    /// `<trace: 32 hex>[/<span: decimal>][;o=<0|1>]` (Google's header); the span is given as hex.
    static func cloudTraceContext(_ value: String) -> (trace: String, span: String?)? {
        let head = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let parts = head.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard isHex(parts[0], count: 32), parts[0].contains(where: { $0 != "0" }) else { return nil }
        var span: String?
        if parts.count == 2, let number = UInt64(parts[1]), number != 0 {
            let hex = String(number, radix: 16)
            span = String(repeating: "0", count: 16 - hex.count) + hex
        }
        return (parts[0].lowercased(), span)
    }

    private static func isHex(_ text: Substring, count: Int) -> Bool {
        text.utf8.count == count && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0 | 0x20) }
    }
}

extension HTTPField.Name {
    static let xCloudTraceContext = Self("X-Cloud-Trace-Context")!
}
