import Foundation
import Synchronization
import Testing

@testable import ActionLinksStores

/// ``GroupCommit`` written by a thread of its own (SQLite's): writes that arrive while a batch is
/// written go together as the next one, in arrival order, each caller told its own outcome from the
/// writing thread; the thread ends when nothing has come for a while, and a later write starts
/// another.
///
/// The tests never block a task's thread: the writing thread is the one held (at a ``Gate``), and
/// outcomes arrive through an `AsyncStream`.
@Suite("Group commit on a thread of its own", .timeLimit(.minutes(2)))
struct GroupCommitTests {
    /// Holds the writing thread inside its first batch, so that later writes gather behind it.
    final class Gate: Sendable {
        let opened = DispatchSemaphore(value: 0)
        let (entered, enteredNow) = AsyncStream<Void>.makeStream()
    }

    /// A group commit whose write records each batch and the thread it ran on, and whose first
    /// batch (the item 0 alone) waits at `gate`; item 7 is refused.
    final class Recorded: Sendable {
        /// What the write saw: each batch, and the threads it ran on.
        final class Log: Sendable {
            let batches = Mutex<[[Int]]>([])
            let threads = Mutex<Set<ObjectIdentifier>>([])
        }

        let gate = Gate()
        let log = Log()
        let (told, tell) = AsyncStream<(Int, Result<String, any Error>)>.makeStream()
        let commit: GroupCommit<Int, String>

        init(maximumBatch: Int) {
            let (gate, log) = (gate, log)
            commit = GroupCommit(maximumBatch: maximumBatch, threadName: "test writer") { items in
                log.batches.withLock { $0.append(items) }
                log.threads.withLock { _ = $0.insert(ObjectIdentifier(Thread.current)) }
                if items == [0] {
                    gate.enteredNow.yield()
                    gate.opened.wait()
                }
                return items.map { $0 == 7 ? .failure(Refused()) : .success("item \($0)") }
            }
        }

        func submit(_ item: Int) {
            commit.submit(item) { [tell] outcome in tell.yield((item, outcome)) }
        }

        /// Submits 0, waits until the writer holds it, submits `later`, lets the writer go, and
        /// returns every outcome.
        func run(later: ClosedRange<Int>) async -> [Int: Result<String, any Error>] {
            submit(0)
            for await _ in gate.entered { break }
            for item in later { submit(item) }
            gate.opened.signal()
            var outcomes: [Int: Result<String, any Error>] = [:]
            for await (item, outcome) in told {
                outcomes[item] = outcome
                if outcomes.count == later.count + 1 { break }
            }
            return outcomes
        }
    }

    @Test("writes that arrive during a batch go as the next one, in order, each told its own outcome")
    func gathers() async throws {
        let recorded = Recorded(maximumBatch: 256)
        let outcomes = await recorded.run(later: 1...9)
        #expect(recorded.log.batches.withLock { $0 } == [[0], Array(1...9)])
        // One thread wrote both batches (it waits for more after a batch).
        #expect(recorded.log.threads.withLock { $0.count } == 1)
        for item in 0...9 where item != 7 {
            #expect(try outcomes[item]?.get() == "item \(item)")
        }
        #expect(throws: Refused.self) { try outcomes[7]?.get() }
    }

    @Test("a batch is at most the maximum; the rest go next")
    func maximum() async throws {
        let recorded = Recorded(maximumBatch: 4)
        _ = await recorded.run(later: 1...10)
        #expect(recorded.log.batches.withLock { $0 } == [[0], [1, 2, 3, 4], [5, 6, 7, 8], [9, 10]])
    }

    @Test("a write that gives too few outcomes fails the items left without one")
    func tooFewOutcomes() async throws {
        let commit = GroupCommit<Int, Int>(maximumBatch: 256, threadName: "test writer") { _ in [] }
        await #expect(throws: GroupCommitError.self) { try await commit.submit(1) }
    }

    @Test("the thread ends once nothing comes, and a later write starts another")
    func endsWhenIdle() async throws {
        let commit = GroupCommit<Int, Int>(maximumBatch: 256, threadName: "test writer") { items in items.map { .success($0 * 2) } }
        #expect(try await commit.submit(1) == 2)
        // Waits for the thread to end: it lingers for GroupCommit.threadLinger, however long the
        // machine takes to get there.
        while commit.running != 0 { try await Task.sleep(for: .milliseconds(50)) }
        #expect(try await commit.submit(2) == 4)
    }

    struct Refused: Error {}
}
