import Synchronization

/// A value shared by the tasks of a test, behind a lock.
public final class Locked<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    public init(_ value: Value) { storage = Mutex(value) }
    /// The value now.
    public var value: Value { storage.withLock { $0 } }
    /// Replaces the value.
    public func set(_ value: Value) { storage.withLock { $0 = value } }
    /// Reads or changes the value under the lock.
    @discardableResult
    public func withLock<T: Sendable>(_ body: (inout sending Value) -> sending T) -> T { storage.withLock(body) }
}
