import Foundation

/// Threads of their own for the live apps and the tests that talk to them, as the binary had a
/// process of its own. Otherwise a live server shares the test process's cooperative threads (as
/// many as there are cores) with every other suite's work, password hashes and app builds
/// included, and a request on its socket was seen to wait more than 5 s for a thread.
final class LiveExecutor: TaskExecutor, @unchecked Sendable {
    /// The one pool every live app runs on; its threads live as long as the test process.
    static let shared = LiveExecutor(threads: 4)

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init(threads: Int) {
        for index in 0..<threads {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "live-app-\(index)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        Thread.current.threadDictionary["live-executor"] = true
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
