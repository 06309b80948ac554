import ActionLinksDomain
import Synchronization

/// A weak reference that is set once its object exists.
final class WeakReference<Object: AnyObject & Sendable>: Sendable {
    private struct Box: @unchecked Sendable { weak var object: Object? }
    private let box = Mutex(Box())

    var value: Object? {
        get { box.withLock { $0.object } }
        set { box.withLock { $0.object = newValue } }
    }
}

/// The deadlines of the calls waiting for a connection, watched by one task that wakes every
/// 100 ms and expires the overdue ones.
final class LeaseDeadlines: Sendable {
    struct Waiting {
        var next = 0
        var deadlines: [Int: (deadline: ContinuousClock.Instant, expire: @Sendable () -> Void)] = [:]
        var watcher: Task<Void, Never>?
    }
    let state = Mutex(Waiting())

    func add(deadline: ContinuousClock.Instant, expire: @escaping @Sendable () -> Void) -> Int {
        state.withLock { state in
            state.next += 1
            state.deadlines[state.next] = (deadline, expire)
            return state.next
        }
    }

    func remove(_ ticket: Int) { _ = state.withLock { $0.deadlines.removeValue(forKey: ticket) } }

    func startWatching() {
        let watcher = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                guard let self else { return }
                let now = ContinuousClock.now
                let overdue = self.state.withLock { state -> [@Sendable () -> Void] in
                    let expired = state.deadlines.filter { $0.value.deadline <= now }
                    for ticket in expired.keys { state.deadlines[ticket] = nil }
                    return expired.map(\.value.expire)
                }
                for expire in overdue { expire() }
            }
        }
        state.withLock { $0.watcher = watcher }
    }

    func stopWatching() { state.withLock { $0.watcher?.cancel() } }
}

/// One store call racing its connection deadline: the first of the result and the deadline (while
/// no connection was leased) resumes the caller, exactly once.
final class LeaseRace<T: Sendable>: Sendable {
    struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var leased = false
        var cancelWork: (@Sendable () -> Void)?
        var cancelled = false
    }
    let state = Mutex(State())

    func begin(_ continuation: CheckedContinuation<T, any Error>) { state.withLock { $0.continuation = continuation } }

    /// Records that a connection came; returns false (run nothing) when the caller has already been
    /// answered with the deadline's error or has gone.
    func leased() -> Bool {
        state.withLock { state in
            guard state.continuation != nil, !state.cancelled else { return false }
            state.leased = true
            return true
        }
    }

    func onCancel(_ cancel: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            state.cancelWork = cancel
            return state.cancelled
        }
        if now { cancel() }
    }

    func cancel() {
        let work = state.withLock { state -> (@Sendable () -> Void)? in
            state.cancelled = true
            return state.cancelWork
        }
        work?()
    }

    func finish(_ result: Result<T, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<T, any Error>? in
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: result)
    }

    /// Resumes the caller with `error` if no result came yet, connection or not; returns whether it
    /// did (the work's result, if it ever comes, is then dropped).
    func abandon(_ error: any Error) -> Bool {
        let continuation = state.withLock { state -> CheckedContinuation<T, any Error>? in
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(throwing: error)
        return continuation != nil
    }

    /// Resumes the caller with `error` if no connection was leased and no result came; returns
    /// whether it did.
    func timeOut(_ error: any Error) -> Bool {
        let continuation = state.withLock { state -> CheckedContinuation<T, any Error>? in
            guard !state.leased else { return nil }
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(throwing: error)
        return continuation != nil
    }
}
