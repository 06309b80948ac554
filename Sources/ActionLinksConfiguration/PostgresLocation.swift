import ActionLinks
import Foundation

/// A PostgreSQL server that several `actionlinks serve` instances share (`store: postgres://...`).
///
/// The URL is libpq's: `postgres://user:password@host:port/database?sslmode=verify-full`. Percent
/// escapes in the user name and password are decoded. A server reached through a Unix socket (Cloud
/// SQL's on Cloud Run) names no host and gives the socket's folder as `host`, as libpq takes it:
/// `postgres://user:password@/database?host=/cloudsql/PROJECT:REGION:INSTANCE`, the folder holding
/// `.s.PGSQL.<port>`. Query parameters:
///
/// | parameter | values | default |
/// |---|---|---|
/// | `host` | the folder of the server's Unix socket (an absolute path); only with no host before the path | none |
/// | `sslmode` | `disable`, `prefer`, `require`, `verify-ca`, `verify-full` (libpq's meanings) | `prefer` |
/// | `sslrootcert` | a PEM file of the certificate authorities to trust | the system's |
/// | `connect_timeout` | seconds to wait for a connection before a request answers 503 | 3 |
/// | `statement_timeout` | seconds one statement may run on the server | 10 |
/// | `pool_size` | connections per instance | 16 |
/// | `application_name` | the name `pg_stat_activity` shows | `actionlinks` |
public struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    /// How the connection is encrypted and what is checked (libpq's `sslmode`).
    public enum TLSMode: String, Sendable, Hashable, CaseIterable {
        /// Plain TCP.
        case disable
        /// TLS when the server offers it, without checking the certificate; plain otherwise.
        case prefer
        /// TLS always, without checking the certificate.
        case require
        /// TLS always; the certificate must chain to a trusted authority (the host name is not checked).
        case verifyCA = "verify-ca"
        /// TLS always; the certificate must chain to a trusted authority and name the host.
        case verifyFull = "verify-full"
    }

    /// The URL as configured (with the password).
    public var url: String
    /// The server's host name or address (empty for a Unix socket).
    public var host: String
    /// The folder of the server's Unix socket (`host=/cloudsql/…`); the socket is
    /// `<folder>/.s.PGSQL.<port>`.
    public var socketDirectory: String?
    /// The socket's path, when the server is reached through one.
    public var socketPath: String? { socketDirectory.map { ($0.hasSuffix("/") ? $0 : $0 + "/") + ".s.PGSQL.\(port)" } }
    /// The server's port.
    public var port: Int
    /// The role to log in as.
    public var username: String
    /// The role's password, if any.
    public var password: String?
    /// The database (the user name when the URL names none, as libpq does).
    public var database: String
    /// `sslmode`.
    public var tlsMode: TLSMode = .prefer
    /// `sslrootcert`: certificate authorities to trust instead of the system's.
    public var rootCertificatePath: String?
    /// `connect_timeout`, in seconds.
    public var connectTimeout: Double = 3
    /// `statement_timeout`, in seconds.
    public var statementTimeout: Double = 10
    /// `pool_size`.
    public var poolSize = 16
    /// `application_name`.
    public var applicationName = "actionlinks"

    /// The parameters the URL may carry.
    public static let parameters = [
        "host", "sslmode", "sslrootcert", "connect_timeout", "statement_timeout", "pool_size", "application_name",
    ]

    /// Reads a `postgres://` or `postgresql://` URL; the error says what is wrong (never the password).
    public init(url: String) throws(PostgresLocationError) {
        self.url = url
        guard let components = URLComponents(string: url), let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme)
        else {
            throw PostgresLocationError(
                "expected postgres://user:password@host:port/database (percent-encode special characters in the password)")
        }
        let host = components.host ?? ""
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw PostgresLocationError("the port must be 1-65535") }
        guard let user = components.user, !user.isEmpty else {
            throw PostgresLocationError("the URL names no user; expected postgres://user:password@host:port/database")
        }
        username = user
        password = components.password
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.contains("/") else { throw PostgresLocationError("the path must be one database name, got '\(path)'") }
        database = path.isEmpty ? user : (path.removingPercentEncoding ?? path)

        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                guard let mode = TLSMode(rawValue: value) else {
                    throw PostgresLocationError(
                        "sslmode must be one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", ")); got '\(value)'")
                }
                tlsMode = mode
            case "sslrootcert":
                guard !value.isEmpty else { throw PostgresLocationError("sslrootcert must be the path of a PEM file") }
                rootCertificatePath = value
            case "connect_timeout":
                connectTimeout = try Self.seconds(value, name: item.name, range: 0.1...300)
            case "statement_timeout":
                statementTimeout = try Self.seconds(value, name: item.name, range: 0.1...3600)
            case "pool_size":
                guard let size = Int(value), (1...1000).contains(size) else {
                    throw PostgresLocationError("pool_size must be a whole number of connections from 1 to 1000; got '\(value)'")
                }
                poolSize = size
            case "application_name":
                applicationName = value
            case "host":
                guard value.hasPrefix("/"), !value.contains("\0") else {
                    throw PostgresLocationError(
                        "host must be the absolute path of the folder holding the server's socket (host=/cloudsql/PROJECT:REGION:INSTANCE); got '\(value)'"
                    )
                }
                socketDirectory = value
            default:
                throw PostgresLocationError(
                    "unknown parameter '\(item.name)' in the PostgreSQL URL; known: \(Self.parameters.joined(separator: ", "))")
            }
        }
        switch (self.host.isEmpty, socketDirectory) {
        case (true, nil):
            throw PostgresLocationError(
                "the URL names no host; expected postgres://user:password@host:port/database, or a Unix socket's folder: postgres://user:password@/database?host=/cloudsql/PROJECT:REGION:INSTANCE"
            )
        case (false, .some):
            throw PostgresLocationError("the URL names a host and a socket folder (host=); name one of them")
        default:
            break
        }
        if let path = socketPath, path.utf8.count > 107 {
            throw PostgresLocationError("the socket's path \(path) is longer than a Unix socket's 107 bytes")
        }
        if rootCertificatePath != nil, tlsMode != .verifyCA, tlsMode != .verifyFull {
            throw PostgresLocationError("sslrootcert is only used with sslmode=verify-ca or verify-full; got sslmode=\(tlsMode.rawValue)")
        }
    }

    static func seconds(_ text: String, name: String, range: ClosedRange<Double>) throws(PostgresLocationError) -> Double {
        guard let value = Double(text), range.contains(value) else {
            throw PostgresLocationError(
                "\(name) must be a number of seconds from \(range.lowerBound) to \(range.upperBound); got '\(text)'")
        }
        return value
    }

    /// Whether the server is on this machine (an unencrypted connection never leaves it): a loopback
    /// host, or a Unix socket (Cloud SQL's proxy encrypts what leaves the machine itself).
    public var isLoopback: Bool { socketDirectory != nil || Loopback.isLoopback(host) }

    /// `postgres://user:***@host:port/database` (`…@/database?host=<folder>` for a socket): the URL
    /// without its password, for logs.
    public var description: String {
        let user = "postgres://\(username)\(password == nil ? "" : ":***")@"
        if let socketDirectory { return user + "/\(database)?host=\(socketDirectory)" }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return user + "\(shownHost):\(port)/\(database)"
    }
}

/// What is wrong with a PostgreSQL URL (never containing the password).
public struct PostgresLocationError: Error, Hashable, CustomStringConvertible {
    /// What is wrong and what was expected.
    public let description: String
    init(_ description: String) { self.description = description }
}
