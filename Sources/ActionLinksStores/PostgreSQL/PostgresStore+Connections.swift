import ActionLinksConfiguration
import ActionLinksDomain
import Foundation
import Logging
import NIOSSL
import PostgresNIO
import ServiceLifecycle
import Synchronization

extension PostgresStore {
    /// Runs `body` on a pooled connection, failing with ``PostgresStoreError/unavailable(_:)`` when no
    /// connection comes within `connect_timeout` (the pool keeps requests waiting while it cannot
    /// connect; a link domain should answer 503 at once instead).
    ///
    /// Once it has a connection, a `bounded` call that runs past ``callTimeout`` is answered
    /// `UNAVAILABLE` and its work cancelled; purges and migrations, which may rightly run long, pass
    /// `bounded: false`.
    @discardableResult
    func withConnection<T: Sendable>(bounded: Bool = true, _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws
        -> T
    {
        let race = LeaseRace<T>()
        let location = location
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    race.begin(continuation)
                    // Only the wait for a connection is bounded; a statement that has started runs to
                    // its end (or to statement_timeout) so that its outcome is known. A request still
                    // waiting at the deadline is cancelled and abandoned, not awaited: the pool may
                    // take a while to drop it. One watcher per store checks every deadline (a timer
                    // task per call cost a quarter of the throughput).
                    let ticket = waiting.add(deadline: .now + connectTimeout) {
                        if race.timeOut(
                            PostgresStoreError.unavailable("no PostgreSQL connection within \(self.connectTimeout) (is \(location) up?)"))
                        {
                            race.cancel()
                        }
                    }
                    let work = Task {
                        let result: Result<T, any Error>
                        do {
                            result = .success(
                                try await self.client.withConnection { connection in
                                    // A connection that comes after the caller was told "unavailable"
                                    // runs nothing: no code is consumed for a request that failed.
                                    guard race.leased() else { throw CancellationError() }
                                    self.waiting.remove(ticket)
                                    guard bounded else { return try await body(connection) }
                                    let running = self.waiting.add(deadline: .now + self.callTimeout) {
                                        if race.abandon(
                                            PostgresStoreError.unavailable(
                                                "a PostgreSQL call ran past \(self.callTimeout) (is \(location) up?)"))
                                        {
                                            race.cancel()
                                        }
                                    }
                                    defer { self.waiting.remove(running) }
                                    return try await body(connection)
                                })
                        } catch {
                            result = .failure(error)
                        }
                        self.waiting.remove(ticket)
                        race.finish(result)
                    }
                    race.onCancel { work.cancel() }
                }
            } onCancel: {
                race.cancel()
            }
        } catch let error as PSQLError {
            throw PostgresStoreError(error)
        } catch {
            // The store's own errors and a unit of work's refusals (an ActionError, say) pass as
            // they are; only the database's are described for the log.
            throw error
        }
    }

    /// Runs `body` in a transaction on one connection: committed when it returns, rolled back when it
    /// throws (the caller gets `body`'s own error). Serialization failures, deadlocks and (for
    /// upserts racing another instance) unique violations are retried a few times.
    func transaction<T: Sendable>(
        retryOn retried: Set<String> = PostgresStoreError.retriedStates, bounded: Bool = true,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    )
        async throws -> T
    {
        try await retrying(retried) {
            try await self.withConnection(bounded: bounded) { connection in
                do {
                    return try await connection.withTransaction(logger: self.logger) { connection in try await body(connection) }
                } catch let error as PostgresTransactionError {
                    // The caller gets the unit of work's own error, or the database's for BEGIN,
                    // COMMIT or ROLLBACK, as it would without the wrapper.
                    throw error.closureError ?? error.commitError ?? error.beginError ?? error.rollbackError ?? error
                }
            }
        }
    }

    /// Runs `body` again (up to five times in all) when it fails with one of the SQL states `retried`.
    func retrying<T: Sendable>(_ retried: Set<String>, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch let error as PostgresStoreError where attempt < 5 && error.sqlState.map(retried.contains) == true {
                attempt += 1
                try await Task.sleep(for: .milliseconds(Int64.random(in: 1...(5 * Int64(attempt)))))
            }
        }
    }
}
