import Synchronization

/// What time it is, for the services: the system clock in production, a clock a test moves by hand
/// (``ManualClock``) when expiry is what it tests, so no test sleeps for a code to expire.
public protocol ServiceClock: Sendable {
    /// Milliseconds since 1970.
    var now: Timestamp { get }
}

/// The system clock.
public struct SystemServiceClock: ServiceClock {
    public init() {}
    public var now: Timestamp { .now }
}

/// A clock that stands still until it is moved.
public final class ManualClock: ServiceClock {
    private let time: Mutex<Timestamp>

    /// A clock that reads `start` until moved.
    public init(start: Timestamp = .now) { time = Mutex(start) }

    public var now: Timestamp { time.withLock { $0 } }

    /// Moves the clock forward by `seconds`.
    public func advance(seconds: Int64) { time.withLock { $0 += .seconds(seconds) } }
}
