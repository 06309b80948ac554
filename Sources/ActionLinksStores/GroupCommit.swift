import ActionLinksDomain
import Foundation
import Synchronization

/// Commits the writes of concurrent callers together (group commit): while a batch is being written
/// and made durable, the writes that arrive meanwhile gather, and go as the next batch, in one
/// transaction and one flush to disk. A caller is answered when the batch holding its write has
/// committed (or failed), never before; a write that arrives when nothing is running starts a batch
/// of its own at once, so a quiet server waits for nothing.
///
/// Batches are written by tasks (``init(maximumBatch:concurrency:write:)``: a store whose client is
/// asynchronous, several batches at once) or by one thread of their own
/// (``init(maximumBatch:threadName:write:)``: a store with one synchronous writer, such as SQLite's).
final class GroupCommit<Item: Sendable, Output: Sendable>: Sendable {
    /// Writes a batch, in arrival order, and gives each item's outcome (one per item, in order).
    typealias Write = @Sendable ([Item]) async -> [Result<Output, any Error>]

    /// ``Write`` for a writer that blocks its thread until the batch has committed.
    typealias WriteNow = @Sendable ([Item]) -> [Result<Output, any Error>]

    /// Told a write's outcome once its batch has committed (or failed), on the thread that wrote it.
    typealias Completion = @Sendable (Result<Output, any Error>) -> Void

    private struct State {
        var waiting: [(item: Item, caller: Completion)] = []
        /// Batches being written (tasks), or 1 while the writing thread runs.
        var running = 0
    }

    private enum Writer: Sendable {
        case tasks(Write, concurrency: Int)
        case thread(WriteNow, name: String)
    }

    let maximumBatch: Int
    private let writer: Writer
    private let state = Mutex(State())
    /// Wakes the writing thread when a write arrives while it waits.
    private let arrived = NSCondition()

    /// How long the writing thread waits for another write before it ends (a later write starts it
    /// again), so that an idle store, or one a test opened and dropped, holds no thread.
    static var threadLinger: TimeInterval { 1 }

    /// Batches written by tasks, `concurrency` at once: 1 for a single writer, more where the store
    /// takes them in parallel.
    init(maximumBatch: Int, concurrency: Int = 1, write: @escaping Write) {
        self.maximumBatch = maximumBatch
        writer = .tasks(write, concurrency: concurrency)
    }

    /// Batches written one at a time by a thread of their own, which `write` may block. A writer
    /// that is itself synchronous then costs no hop between threads per batch (a task would enter
    /// the writer's queue and come back), and the batch is answered from the thread that wrote it.
    init(maximumBatch: Int, threadName: String, write: @escaping WriteNow) {
        self.maximumBatch = maximumBatch
        writer = .thread(write, name: threadName)
    }

    /// Batches being written (tasks), or 1 while the writing thread runs.
    var running: Int { state.withLock { $0.running } }

    /// Writes `item` with whatever else is waiting, and returns its outcome once it is committed.
    func submit(_ item: Item) async throws -> Output {
        try await withCheckedThrowingContinuation { caller in submit(item) { caller.resume(with: $0) } }
    }

    /// Writes `item` with whatever else is waiting, and tells `completion` its outcome once it is
    /// committed, on the thread that wrote it: for a caller that is not a task (a channel handler,
    /// answered on its event loop). The next batch starts when the completions have returned.
    func submit(_ item: Item, completion: @escaping Completion) {
        switch writer {
        case .tasks(let write, let concurrency):
            let start = state.withLock { state in
                state.waiting.append((item, completion))
                guard state.running < concurrency else { return false }
                state.running += 1
                return true
            }
            if start { Task { await self.drain(write) } }
        case .thread(let write, let name):
            arrived.lock()
            let start = state.withLock { state in
                state.waiting.append((item, completion))
                guard state.running == 0 else { return false }
                state.running = 1
                return true
            }
            arrived.signal()
            arrived.unlock()
            if start {
                Thread {
                    // Named from inside: the name profiles and `top -H` show (set before `start`, it is not).
                    Thread.current.name = name
                    self.drainOnThread(write)
                }.start()
            }
        }
    }

    /// Takes the next batch, or marks one writer fewer running when nothing waits.
    private func nextBatch(endingIfEmpty: Bool) -> [(item: Item, caller: Completion)] {
        state.withLock { state in
            let count = min(maximumBatch, state.waiting.count)
            if count == 0, endingIfEmpty { state.running -= 1 }
            defer { state.waiting.removeFirst(count) }
            return Array(state.waiting.prefix(count))
        }
    }

    /// Tells each caller of `batch` its outcome.
    private static func answer(_ batch: [(item: Item, caller: Completion)], _ outcomes: [Result<Output, any Error>]) {
        for (index, entry) in batch.enumerated() {
            entry.caller(index < outcomes.count ? outcomes[index] : .failure(GroupCommitError.noOutcome))
        }
    }

    /// Writes batches until nothing waits.
    private func drain(_ write: Write) async {
        while true {
            let batch = nextBatch(endingIfEmpty: true)
            if batch.isEmpty { return }
            Self.answer(batch, await write(batch.map(\.item)))
        }
    }

    /// The writing thread: writes batches, and waits up to ``threadLinger`` for more before it ends.
    private func drainOnThread(_ write: WriteNow) {
        while true {
            var batch = nextBatch(endingIfEmpty: false)
            if batch.isEmpty {
                arrived.lock()
                let deadline = Date(timeIntervalSinceNow: Self.threadLinger)
                while true {
                    batch = nextBatch(endingIfEmpty: false)
                    if !batch.isEmpty || !arrived.wait(until: deadline) { break }
                }
                if batch.isEmpty { batch = nextBatch(endingIfEmpty: true) }
                arrived.unlock()
                if batch.isEmpty { return }
            }
            Self.answer(batch, write(batch.map(\.item)))
        }
    }
}

/// A batch write gave fewer outcomes than it had items (a bug in the write, never expected).
struct GroupCommitError: Error, CustomStringConvertible {
    static let noOutcome = GroupCommitError()
    var description: String { "the batch write gave no outcome for this item" }
}
