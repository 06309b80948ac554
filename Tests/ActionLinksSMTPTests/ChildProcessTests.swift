import ActionLinksChildProcess
import ActionLinksSMTPTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The tests' `posix_spawn` child (``ChildProcess``), which stands in for Foundation's `Process`.
@Suite(.timeLimit(.minutes(1)))
struct ChildProcessTests {
    /// Runs `/bin/sh -c script` with its output and error on pipes; returns both, read to their end,
    /// after the child has ended.
    static func shell(_ script: String, started: (ChildProcess) throws -> Void = { _ in }) throws -> (ChildProcess, String, String) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.currentDirectoryURL = URL(fileURLWithPath: "/proc")
        let output = Pipe(), errors = Pipe()
        process.standardOutput = .pipe(output)
        process.standardError = .pipe(errors)
        process.standardInput = .nullDevice
        try process.run()
        try started(process)
        let error = Thread.detachedRead(errors)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process, text, error.wait())
    }

    @Test("a child's output, error output and exit status")
    func outputAndStatus() throws {
        let (process, output, errors) = try Self.shell("echo out; echo err >&2; pwd; exit 3")
        #expect(output == "out\n/proc\n")
        #expect(errors == "err\n")
        #expect(!process.isRunning)
        #expect(process.terminationReason == .exit && process.terminationStatus == 3)
    }

    @Test("a child stopped by SIGTERM says so")
    func terminated() throws {
        let (process, _, _) = try Self.shell("echo started; exec sleep 60") { process in
            #expect(process.isRunning && process.processIdentifier > 0)
            process.terminate()
        }
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGTERM)
        // Signals after the end go nowhere (the process ID may belong to another process by now).
        process.kill(SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationStatus == SIGTERM)
    }

    @Test("the child inherits no descriptor but its standard input, output and error")
    func noInheritedDescriptors() throws {
        // One descriptor of this process's open without close-on-exec, as NIO's accepted sockets are.
        let open = Glibc.open("/dev/null", O_RDONLY)
        try #require(open > 2)
        defer { close(open) }
        let (process, output, _) = try Self.shell("exec ls /proc/self/fd")
        #expect(process.terminationStatus == 0)
        // 0-2, and the descriptor ls reads the directory with (the lowest free one, 3).
        #expect(output.split(separator: "\n") == ["0", "1", "2", "3"])
    }

    @Test("a program that does not exist is an error, not a child")
    func missingProgram() {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/nonexistent/program")
        #expect(throws: ChildProcess.SpawnError.self) { try process.run() }
        #expect(!process.isRunning)
    }
}

extension Thread {
    /// Reads `pipe` to its end on a thread of its own; `wait()` on the answer returns the text.
    fileprivate static func detachedRead(_ pipe: Pipe) -> PendingText {
        let pending = PendingText()
        detachNewThread { pending.finish(String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)) }
        return pending
    }
}

/// Text that another thread is still reading.
private final class PendingText: @unchecked Sendable {
    /// Guards `text`.
    private let condition = NSCondition()
    /// The text, once read.
    private var text: String?

    /// Sets the text and wakes ``wait()``.
    func finish(_ value: String) {
        condition.withLock {
            text = value; condition.broadcast()
        }
    }

    /// Blocks until the text has been read, and returns it.
    func wait() -> String {
        condition.withLock {
            while text == nil { condition.wait() }
            return text ?? ""
        }
    }
}
