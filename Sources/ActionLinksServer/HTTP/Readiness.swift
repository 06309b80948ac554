import Logging
import Synchronization

/// `GET /readyz`: whether this instance can do its work now, for a load balancer or Kubernetes'
/// readiness probe (`/healthz` stays liveness: the process answers).
///
/// Ready is: the store answers a read (one tenant row, through the same pool as every request)
/// within ``wait``, and, fronting a project, upstream answered a call within
/// `upstream.readinessInterval`: any call of the front's that succeeded counts, and when none is
/// that recent, `/readyz` asks upstream itself (``UpstreamClient/probe(now:)``: the password
/// policy, and the service account's token when it is near its end). Each check runs once at a
/// time however many probes arrive; a check that takes longer than ``wait`` is reported as not
/// answering and goes on in the background, so the next probe gets its result.
final class Readiness: Sendable {
    /// How long `/readyz` waits for a check before saying it did not answer.
    static let wait = Duration.seconds(2)

    let tenants: any TenantStore
    let upstream: UpstreamClient?
    let clock: any ServiceClock
    let logger: Logger
    private let storeCheck = SingleCheck()
    private let upstreamCheck = SingleCheck()

    init(tenants: any TenantStore, upstream: UpstreamClient?, clock: any ServiceClock, logger: Logger) {
        self.tenants = tenants
        self.upstream = upstream
        self.clock = clock
        self.logger = logger
    }

    /// What `/readyz` says: whether every part is ready, and one line per part.
    struct Report: Sendable {
        var ready: Bool
        var lines: [String]
    }

    func report() async -> Report {
        async let store = storeLine()
        async let upstream = upstreamLine()
        let lines = await [store] + (upstream.map { [$0] } ?? [])
        return Report(ready: lines.allSatisfy { $0.hasSuffix(": ok") }, lines: lines)
    }

    private func storeLine() async -> String {
        let tenants = tenants
        let logger = logger
        let problem = await storeCheck.result(within: Self.wait) {
            do {
                _ = try await tenants.tenants(after: nil, limit: 1)
                return nil
            } catch {
                logger.warning("readiness: the store did not answer a read", metadata: ["error": "\(String(reflecting: error))"])
                return "a read failed"
            }
        }
        return "store: " + (problem ?? "ok")
    }

    private func upstreamLine() async -> String? {
        guard let upstream else { return nil }
        let interval = Duration.seconds(upstream.settings.readinessInterval)
        if let last = upstream.lastAnswer, ContinuousClock.now - last < interval { return "upstream: ok" }
        let clock = clock
        let problem = await upstreamCheck.result(within: Self.wait) { () async -> String? in
            do throws(ActionError) {
                try await upstream.probe(now: clock.now.seconds)
                return nil
            } catch {
                if error == UpstreamClient.Failure.unreachable.actionError { return "cannot be reached" }
                if error == UpstreamClient.Failure.noAnswer.actionError { return "did not answer" }
                // A code this server does not know is INTERNAL_ERROR naming it in its detail.
                return error.code == .internalError ? error.detail ?? "refused the probe" : "refused the probe (\(error.code.rawValue))"
            }
        }
        return "upstream: " + (problem ?? "ok")
    }
}

/// One check at a time: a caller joins the check under way, or starts one, and waits for it at
/// most a while (the check goes on after that, for the next caller, and its result is told then).
private final class SingleCheck: Sendable {
    private let running = Mutex<Task<String?, Never>?>(nil)
    /// The problem the last check that finished found (nil: none, or none finished yet).
    private let lastProblem = Mutex<String?>(nil)

    /// The check's problem (nil: none), or "no answer within ..." when it takes longer than `limit`
    /// (with what the last finished check found, if anything).
    func result(within limit: Duration, _ check: @escaping @Sendable () async -> String?) async -> String? {
        let task = running.withLock { running in
            if let task = running { return task }
            // Started under the lock, so its own clearing (which takes the lock) comes after this store.
            let task = Task {
                let problem = await check()
                self.lastProblem.withLock { $0 = problem }
                self.running.withLock { $0 = nil }
                return problem
            }
            running = task
            return task
        }
        if let finished = await Self.first(task, orAfter: limit) { return finished }
        let last = lastProblem.withLock { $0 }
        return "no answer within \(limit.components.seconds) s" + (last.map { " (the last check: \($0))" } ?? "")
    }

    /// `task`'s value wrapped, or nil when `limit` passes first; `task` is left running either way.
    private static func first(_ task: Task<String?, Never>, orAfter limit: Duration) async -> String?? {
        await withCheckedContinuation { (continuation: CheckedContinuation<String??, Never>) in
            let pending = Pending(continuation)
            let timer = Task {
                try? await Task.sleep(for: limit)
                pending.resume(returning: nil)
            }
            Task {
                let value = await task.value
                timer.cancel()
                pending.resume(returning: .some(value))
            }
        }
    }

    /// A continuation resumed by whichever comes first.
    private final class Pending: Sendable {
        private let continuation: Mutex<CheckedContinuation<String??, Never>?>
        init(_ continuation: CheckedContinuation<String??, Never>) { self.continuation = Mutex(continuation) }
        func resume(returning value: String??) { continuation.withLock { $0.take() }?.resume(returning: value) }
    }
}
