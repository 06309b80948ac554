import Foundation

/// A server the tests need that is not running: `scripts/test.sh` starts it (PostgreSQL, the
/// identity providers) and names it in `variable`.
public struct MissingTestService: Error, CustomStringConvertible {
    /// The environment variable that names the server.
    public let variable: String
    /// How to start it by hand instead, after the way everything starts.
    public let remedy: String

    public var description: String { "\(variable) is not set: run the tests with `bash scripts/test.sh`" + remedy }

    /// The URL in `variable`, or this error with `remedy`.
    static func url(_ variable: String, remedy: @autoclosure () -> String) throws -> String {
        guard let url = ProcessInfo.processInfo.environment[variable], !url.isEmpty else {
            throw MissingTestService(variable: variable, remedy: remedy())
        }
        return url
    }

    /// The URL in `variable` of a server that `scripts/<script>` installs and starts in `folder`.
    static func url(_ variable: String, starting what: String, script: String, folder: String) throws -> String {
        try url(
            variable,
            remedy:
                ", or start \(what) with `bash scripts/\(script) install && export \(variable)=$(bash scripts/\(script) start \(folder))`")
    }
}
