import Foundation

/// Waiting for something to happen instead of for a fixed time: a test polls the condition and goes
/// on the moment it holds, so a loaded machine only makes it slower. `limit` is a hang guard, not a
/// performance bound: it is generous, and passing it fails with what was awaited.
public enum Eventually {
    /// Returns once `condition` holds; throws when it still does not after `limit`.
    public static func wait(
        for what: @autoclosure () -> String, upTo limit: Duration = .seconds(120), every interval: Duration = .milliseconds(20),
        until condition: () async throws -> Bool
    ) async throws {
        let start = ContinuousClock.now
        while try await !condition() {
            guard ContinuousClock.now - start < limit else { throw TestSupportError("still waiting after \(limit) for \(what())") }
            try await Task.sleep(for: interval)
        }
    }
}
