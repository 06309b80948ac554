import ActionLinksDomain
import PostgresNIO

/// A failed call to PostgreSQL, described without the statement's values (which hold addresses and
/// code hashes) so that it can be logged.
public struct PostgresStoreError: Error, CustomStringConvertible, Sendable {
    /// What happened, for the log.
    public let description: String
    /// The server's SQLSTATE, when the server answered with an error.
    public let sqlState: String?
    /// The constraint the server named, if any.
    public let constraint: String?

    /// SQL states worth running a transaction again for: serialization failure, deadlock, and a
    /// unique violation from a concurrent insert.
    static let retriedStates: Set<String> = ["40001", "40P01", "23505"]

    static func unavailable(_ message: String) -> PostgresStoreError {
        PostgresStoreError(description: "PostgreSQL unavailable: " + message, sqlState: nil, constraint: nil)
    }

    static func configuration(_ message: String) -> PostgresStoreError {
        PostgresStoreError(description: message, sqlState: nil, constraint: nil)
    }

    init(description: String, sqlState: String?, constraint: String?) {
        self.description = description
        self.sqlState = sqlState
        self.constraint = constraint
    }

    init(_ error: any Error) {
        if let error = error as? PSQLError {
            let state = error.serverInfo?[.sqlState]
            var text = "PostgreSQL error \(error.code)"
            if let state { text += " [\(state)]" }
            if let message = error.serverInfo?[.message] { text += ": " + message }
            if let underlying = error.underlying { text += " (\(underlying))" }
            self.init(description: text, sqlState: state, constraint: error.serverInfo?[.constraintName])
        } else if let error = error as? PostgresStoreError {
            self = error
        } else {
            self.init(description: "PostgreSQL: \(error)", sqlState: nil, constraint: nil)
        }
    }
}
