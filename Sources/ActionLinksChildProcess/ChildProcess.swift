import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process started with `posix_spawn`, for the sendmail mail backend and the tests'
/// long-lived children (a server, nginx, a receiver script): Foundation's `Process.run()` in Swift
/// 6.3.1 reads `/proc/self/fd` with a `readdir` copy that overruns glibc's buffer and crashed the
/// whole process now and then (swift-corelibs-foundation #5472). Shaped like `Process` (configure,
/// ``run()``, ``terminate()``, ``waitUntilExit()``), so the call sites stay as they were. The child
/// gets no descriptor of this process but its standard input, output and error, default signal
/// handling and an empty signal mask. A thread of its own waits for the child and reaps it, so a
/// signal is never sent to a reaped (and perhaps reused) process ID.
public final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream {
        /// This process's own.
        case inherit
        /// `/dev/null`.
        case nullDevice
        /// The pipe's reading end for standard input, its writing end for output; the child's end is
        /// closed in this process once the child runs.
        case pipe(Pipe)
        /// An open file (left open here).
        case file(FileHandle)
    }

    /// How the child ended.
    public enum TerminationReason: Sendable, Equatable {
        /// It exited; ``terminationStatus`` is its exit status.
        case exit
        /// A signal ended it; ``terminationStatus`` is the signal's number.
        case uncaughtSignal
    }

    /// The child could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        /// What went wrong, in words.
        public let description: String
    }

    /// The program to run.
    public var executableURL: URL?
    /// Its arguments (without the program itself).
    public var arguments: [String] = []
    /// Its environment; `nil` passes on this process's.
    public var environment: [String: String]?
    /// Where it starts; `nil` is this process's current directory.
    public var currentDirectoryURL: URL?
    /// Its standard input.
    public var standardInput: Stream = .inherit
    /// Its standard output.
    public var standardOutput: Stream = .inherit
    /// Its standard error.
    public var standardError: Stream = .inherit
    /// Called once, on the reaping thread, after the child has ended.
    public var terminationHandler: (@Sendable (ChildProcess) -> Void)?

    /// Guards `pid` and `ended`, and wakes the callers of ``waitUntilExit()``.
    private let condition = NSCondition()
    /// The child's process ID (0 before ``run()``).
    private var pid: pid_t = 0
    /// How the child ended, once it has been reaped.
    private var ended: (reason: TerminationReason, status: Int32)?

    /// A child to configure and then ``run()``.
    public init() {}

    /// The child's process ID (0 before ``run()``).
    public var processIdentifier: pid_t { condition.withLock { pid } }

    /// Whether the child was started and has not been reaped yet.
    public var isRunning: Bool { condition.withLock { pid != 0 && ended == nil } }

    /// How the child ended (`.exit` while it runs).
    public var terminationReason: TerminationReason { condition.withLock { ended?.reason ?? .exit } }

    /// The child's exit status, or the number of the signal that ended it; -1 while it runs.
    public var terminationStatus: Int32 { condition.withLock { ended?.status ?? -1 } }

    /// Starts the child; throws if it cannot be started (no such program, say).
    public func run() throws {
        guard let executable = executableURL?.path else { throw SpawnError(description: "no executable") }
        guard let addCloseFrom = Self.addCloseFrom, let addChangeDirectory = Self.addChangeDirectory else {
            throw SpawnError(description: "posix_spawn_file_actions_addclosefrom_np needs glibc 2.34 or later")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (stream, target) in [(standardInput, STDIN_FILENO), (standardOutput, STDOUT_FILENO), (standardError, STDERR_FILENO)] {
            switch stream {
            case .inherit: break
            case .nullDevice:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0)
            case .pipe(let pipe):
                let end = target == STDIN_FILENO ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, target)
            case .file(let handle): posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
            }
        }
        // Every other descriptor closed in the child, whatever its close-on-exec flag: NIO's accepted
        // connections and other spawns' pipe ends among them.
        guard addCloseFrom(&actions, STDERR_FILENO + 1) == 0 else { throw SpawnError(description: "addclosefrom_np failed") }
        if let directory = currentDirectoryURL?.path {
            guard addChangeDirectory(&actions, directory) == 0 else { throw SpawnError(description: "addchdir_np failed") }
        }
        // Default handling for every signal (this process ignores SIGPIPE) and none blocked.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigfillset(&signals)
        posix_spawnattr_setsigdefault(&attributes, &signals)
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let environment = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw SpawnError(description: "cannot run \(executable): \(String(cString: strerror(spawned)))") }
        condition.withLock { pid = child }
        // The child's ends of the pipes, so that a reader sees the end of the output once it exits.
        for (stream, target) in [(standardInput, STDIN_FILENO), (standardOutput, STDOUT_FILENO), (standardError, STDERR_FILENO)] {
            if case .pipe(let pipe) = stream {
                try? (target == STDIN_FILENO ? pipe.fileHandleForReading : pipe.fileHandleForWriting).close()
            }
        }
        Thread.detachNewThread { [child] in self.reap(child) }
    }

    /// Sends SIGTERM.
    public func terminate() { kill(SIGTERM) }

    /// Sends `signal` to the child, unless it has been reaped.
    public func kill(_ signal: Int32) {
        condition.withLock {
            if pid != 0 && ended == nil { _ = Glibc.kill(pid, signal) }
        }
    }

    /// Waits (blocking the calling thread) until the child has ended and been reaped.
    public func waitUntilExit() {
        condition.lock()
        defer { condition.unlock() }
        while pid != 0 && ended == nil { condition.wait() }
    }

    /// Waits for `child` to end without reaping it, then reaps it under the lock: until then its
    /// process ID stays taken (a zombie at worst), so ``kill(_:)`` never signals another process.
    private func reap(_ child: pid_t) {
        var info = siginfo_t()
        while waitid(P_PID, id_t(child), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
        var status: Int32 = 0
        condition.withLock {
            var reaped: pid_t
            repeat { reaped = waitpid(child, &status, 0) } while reaped == -1 && errno == EINTR
            // The low 7 bits: 0 for an exit (its status in the next byte), else the signal's number.
            if reaped != child {
                ended = (.exit, -1)
            } else if status & 0x7f == 0 {
                ended = (.exit, (status >> 8) & 0xff)
            } else {
                ended = (.uncaughtSignal, status & 0x7f)
            }
            condition.broadcast()
        }
        terminationHandler?(self)
    }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), which Swift's Glibc module does not
    /// declare, found by name.
    private static let addCloseFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }

    /// `posix_spawn_file_actions_addchdir_np` (glibc 2.29), found the same way.
    private static let addChangeDirectory = dlsym(nil, "posix_spawn_file_actions_addchdir_np").map {
        unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32).self)
    }
}
