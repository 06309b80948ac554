import ActionLinksDomain
import Synchronization

/// Commits the writes of concurrent callers together (group commit): while a batch is being written
/// and made durable, the writes that arrive meanwhile gather, and go as the next batch, in one
/// transaction and one flush to disk. A caller is answered when the batch holding its write has
/// committed (or failed), never before; a write that arrives when nothing is running starts a batch
/// of its own at once, so a quiet server waits for nothing.
final class GroupCommit<Item: Sendable, Output: Sendable>: Sendable {
    /// Writes a batch, in arrival order, and gives each item's outcome (one per item, in order).
    typealias Write = @Sendable ([Item]) async -> [Result<Output, any Error>]

    /// Told a write's outcome once its batch has committed (or failed), on the thread that wrote it.
    typealias Completion = @Sendable (Result<Output, any Error>) -> Void

    private struct State {
        var waiting: [(item: Item, caller: Completion)] = []
        /// Batches being written.
        var running = 0
    }

    let maximumBatch: Int
    /// Batches written at once: 1 for SQLite's single writer, more where the store takes them in parallel.
    let concurrency: Int
    private let write: Write
    private let state = Mutex(State())

    init(maximumBatch: Int, concurrency: Int = 1, write: @escaping Write) {
        self.maximumBatch = maximumBatch
        self.concurrency = concurrency
        self.write = write
    }

    /// Writes `item` with whatever else is waiting, and returns its outcome once it is committed.
    func submit(_ item: Item) async throws -> Output {
        try await withCheckedThrowingContinuation { caller in submit(item) { caller.resume(with: $0) } }
    }

    /// Writes `item` with whatever else is waiting, and tells `completion` its outcome once it is
    /// committed, on the thread that wrote it: for a caller that is not a task (a channel handler,
    /// answered on its event loop). The next batch starts when the completions have returned.
    func submit(_ item: Item, completion: @escaping Completion) {
        let start = state.withLock { state in
            state.waiting.append((item, completion))
            guard state.running < concurrency else { return false }
            state.running += 1
            return true
        }
        if start { Task { await self.drain() } }
    }

    /// Writes batches until nothing waits.
    private func drain() async {
        while true {
            let batch = state.withLock { state in
                let count = min(maximumBatch, state.waiting.count)
                if count == 0 { state.running -= 1 }
                defer { state.waiting.removeFirst(count) }
                return Array(state.waiting.prefix(count))
            }
            if batch.isEmpty { return }
            let outcomes = await write(batch.map(\.item))
            for (index, entry) in batch.enumerated() {
                entry.caller(index < outcomes.count ? outcomes[index] : .failure(GroupCommitError.noOutcome))
            }
        }
    }
}

/// A batch write gave fewer outcomes than it had items (a bug in the write, never expected).
struct GroupCommitError: Error, CustomStringConvertible {
    static let noOutcome = GroupCommitError()
    var description: String { "the batch write gave no outcome for this item" }
}
