import Logging
import Synchronization

/// `GET /readyz`: whether this instance can do its work now, for a load balancer or Kubernetes'
/// readiness probe (`/healthz` stays liveness: the process answers).
///
/// Ready is every gating ``Check`` the composition root gives passing (the outbox's is said, never
/// gating: ``mail(_:clock:)``): the store answers a read within
/// ``wait`` (``store(_:logger:)``), and, fronting a project, upstream answered a call within
/// `upstream.readinessInterval` (``upstream(_:clock:)``: any call of the front's that succeeded
/// counts, and when none is that recent, `/readyz` asks upstream itself: the password policy, and
/// the service account's token when it is near its end). Each check runs once at a time however
/// many probes arrive; a check that takes longer than ``wait`` is reported as not answering and goes
/// on in the background, so the next probe gets its result.
package final class Readiness: Sendable {
    /// How long `/readyz` waits for a check before saying it did not answer.
    static let wait = Duration.seconds(2)

    /// One part `/readyz` checks: its name, whether it is known to be ready without asking, and
    /// how to ask (a problem, or nil when ready).
    struct Check: Sendable {
        var name: String
        var isFresh: @Sendable () -> Bool = { false }
        /// Whether a problem makes the instance unready (else `/readyz` only says it).
        var gates = true
        var probe: @Sendable () async -> String?
    }

    private let checks: [(check: Check, runner: SingleCheck)]

    /// `/readyz` over `checks`, in the order its lines name them.
    init(checks: [Check]) {
        self.checks = checks.map { ($0, SingleCheck()) }
    }

    /// The store: one tenant row read through the same pool as every request.
    static func store(_ tenants: any TenantStore, logger: Logger) -> Check {
        Check(name: "store") {
            do {
                _ = try await tenants.tenants(after: nil, limit: 1)
                return nil
            } catch {
                logger.warning("readiness: the store did not answer a read", metadata: ["error": "\(String(reflecting: error))"])
                return "a read failed"
            }
        }
    }

    /// The outbox: a problem when its oldest waiting mail is older than `mail.backlogAlarm`, as the
    /// deliverer last read it. Said, never gating: every instance shares the outbox, so a mail
    /// server that is down would take them all out of the load balancer together, and pages and
    /// links have nothing to do with it.
    static func mail(_ deliverer: MailDeliverer, clock: any ServiceClock) -> Check {
        Check(name: "mail", gates: false) {
            let (count, oldest) = deliverer.backlog.withLock { $0 }
            guard let oldest else { return nil }
            let age = (clock.now - oldest).components.seconds
            guard age > deliverer.settings.backlogAlarm else { return nil }
            return "\(count) waiting, the oldest for \(age) s (mail.backlogAlarm is \(deliverer.settings.backlogAlarm) s)"
        }
    }

    /// The fronted project: fresh while any call to it succeeded within
    /// `upstream.readinessInterval`, else asked (``UpstreamClient/probe(now:)``).
    static func upstream(_ upstream: UpstreamClient, clock: any ServiceClock) -> Check {
        let interval = Duration.seconds(upstream.settings.readinessInterval)
        return Check(name: "upstream", isFresh: { upstream.lastAnswer.map { ContinuousClock.now - $0 < interval } ?? false }) {
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
    }

    /// What `/readyz` says: whether every part is ready, and one line per part.
    package struct Report: Sendable {
        package var ready: Bool
        package var lines: [String]
    }

    package func report() async -> Report {
        let results = await withTaskGroup(of: (Int, String, Bool).self) { group in
            for (index, (check, runner)) in checks.enumerated() {
                group.addTask {
                    if check.isFresh() { return (index, check.name + ": ok", true) }
                    let problem = await runner.result(within: Self.wait, check.probe)
                    return (index, check.name + ": " + (problem ?? "ok"), problem == nil || !check.gates)
                }
            }
            var results: [(Int, String, Bool)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }
        }
        return Report(ready: results.allSatisfy(\.2), lines: results.map(\.1))
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
