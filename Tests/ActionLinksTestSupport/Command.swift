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
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        process.currentDirectoryURL = Repository.root
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read both pipes, on threads of their own, before waiting: a large output cannot block the
        // child, and a slow child never holds one of the few cooperative threads.
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let errors = Locked(Data())
                let errorsRead = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    errors.set(err.fileHandleForReading.readDataToEndOfFile())
                    errorsRead.signal()
                }
                let output = out.fileHandleForReading.readDataToEndOfFile()
                errorsRead.wait()
                process.waitUntilExit()
                continuation.resume(
                    returning: CommandResult(
                        status: process.terminationStatus, stdout: String(decoding: output, as: UTF8.self),
                        stderr: String(decoding: errors.value, as: UTF8.self)))
            }
        }
    }
}
