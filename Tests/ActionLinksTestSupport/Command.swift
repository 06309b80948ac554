import ActionLinksSMTPTestSupport
import Foundation

/// What a finished program printed and how it exited.
public struct CommandResult: Sendable {
    /// The exit status.
    public let status: Int32
    /// Standard output.
    public let stdout: String
    /// Standard error.
    public let stderr: String

    /// Standard output as a JSON object, if it is one.
    public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any] }
    /// The `results` list of a `--json` answer.
    public var results: [[String: Any]] { json?["results"] as? [[String: Any]] ?? [] }
}

/// Runs a built product the way a person would, from the repository's root.
public enum Command {
    /// Runs `executable` (built next to the tests) with `arguments` and `stdin`, waits for it and
    /// returns what it printed. `environment` replaces the test process's environment when given.
    public static func run(
        _ arguments: [String], stdin: String? = nil, executable: String = "actionlinks", environment: [String: String]? = nil
    ) async throws -> CommandResult {
        try await run(program: try Repository.executable(executable), arguments, stdin: stdin, environment: environment)
    }

    /// Runs the program at `program` (`/usr/bin/env` to find one on the `PATH`) the same way.
    public static func run(
        program: URL, _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil
    ) async throws -> CommandResult {
        let (status, stdout, stderr) = try await runToEnd(
            program: program, arguments, stdin: stdin, environment: environment, directory: Repository.root)
        return CommandResult(status: status, stdout: stdout, stderr: stderr)
    }
}
