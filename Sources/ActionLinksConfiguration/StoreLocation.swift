/// Where accounts and codes are kept (`store`).
public enum StoreLocation: Sendable, Hashable, CustomStringConvertible {
    /// An SQLite file (relative paths are relative to the working directory).
    case sqlite(path: String)
    /// A PostgreSQL server shared by several instances.
    case postgres(PostgresLocation)

    /// `sqlite:<path>`, or the PostgreSQL URL without its password.
    public var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:" + path
        case .postgres(let location): return location.description
        }
    }
}
