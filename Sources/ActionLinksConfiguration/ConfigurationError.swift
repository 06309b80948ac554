import Yams

/// A configuration problem: which file (or environment variable), where in it, which key, and what
/// was expected.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    /// The configuration file, or `environment variable NAME` when the value came from one.
    public let file: String
    /// The line, when known.
    public let line: Int?
    /// The column, when known.
    public let column: Int?
    /// The dotted key, such as `continueUrls.allow[1]`, when the problem is about one.
    public let key: String?
    /// What is wrong and what was expected.
    public let message: String

    init(file: String, mark: Mark?, key: String?, message: String) {
        self.file = file
        self.line = mark?.line
        self.column = mark?.column
        self.key = key
        self.message = message
    }

    /// `file:line:column: key: message`.
    public var description: String {
        var text = file
        if let line { text += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        text += ": "
        if let key { text += key + ": " }
        return text + message
    }
}
