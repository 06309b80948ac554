/// How the server writes its log (`log`), to standard error.
public struct LogSettings: Sendable, Hashable {
    /// One line per message: plain text, or a JSON object.
    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// `2026-12-07T15:38:22+0000 info actionlinks: message key=value`, for a terminal.
        case text
        /// One JSON object a line with Google Cloud Logging's fields (`severity`, `message`, `time`,
        /// `logging.googleapis.com/trace`), which Cloud Logging and Kubernetes log stacks read.
        case json
    }

    /// `log.format` (default `text`; the container image sets `json`).
    public var format = Format.text
    /// `log.traceProject`: the Google Cloud project a request's trace belongs to, for
    /// `logging.googleapis.com/trace` (`projects/<id>/traces/<trace>`); default `GOOGLE_CLOUD_PROJECT`,
    /// else `project.id` (a Firebase project's ID is its Google Cloud project's).
    public var traceProject: String?

    /// The defaults.
    public init() {}
}

extension LogSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case format, traceProject
    }

    /// Reads `log`.
    public init(from decoder: any Decoder) throws {
        let log = try decoder.container(keyedBy: CodingKeys.self)
        format = try log.choice(.format, as: Format.self) ?? format
        traceProject = try log.string(.traceProject)
    }
}
