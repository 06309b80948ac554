import ActionLinksDomain
import Foundation
import NIOCore
import PostgresNIO

/// A PostgreSQL row read by column name, never by position: a statement may select its columns
/// in any order, and a joined row names each table's columns with a prefix (``prefixed(_:)``).
/// A column the row does not have is a ``StoreInconsistency`` (postgres-nio's own lookup by name
/// would stop the process).
struct PostgresNamedRow {
    private let cells: PostgresRandomAccessRow
    private let prefix: String

    init(_ row: PostgresRow) {
        cells = row.makeRandomAccess()
        prefix = ""
    }

    private init(cells: PostgresRandomAccessRow, prefix: String) {
        self.cells = cells
        self.prefix = prefix
    }

    /// The same row, its columns named `prefix` + name (a joined table's, as ``PostgresColumns/select(_:from:as:)`` names them).
    func prefixed(_ prefix: String) -> PostgresNamedRow { PostgresNamedRow(cells: cells, prefix: prefix) }

    /// The value of the column `name` (with this row's prefix) as `T`.
    func callAsFunction<T: PostgresDecodable>(_ name: String, as type: T.Type = T.self) throws -> T {
        let column = prefix + name
        guard cells.contains(column) else { throw StoreInconsistency(description: "a row without the column \(column)") }
        return try cells[column].decode(T.self)
    }
}

/// The columns of each table as the statements read them, and one decoder per table
/// (``Account/init(_:)-PostgresNamedRow``, ``CodeRow``, ``Session/init(_:hash:tenantID:accountID:)``,
/// ``FederatedIdentity/init(_:)``).
enum PostgresColumns {
    static let accounts = [
        "local_id", "tenant_id", "email", "email_verified", "password_hash", "password_updated_at", "display_name", "photo_url",
        "phone_number", "disabled", "created_at", "last_login_at", "last_refresh_at", "valid_since", "custom_attributes", "initial_email",
        "email_link_signin", "custom_auth", "screen_name", "mfa",
    ]
    static let codes = [
        "hash", "mode", "tenant_id", "account_id", "email", "new_email", "continue_url", "language_code", "app_settings", "created_at",
        "expires_at", "consumed_at", "consumed_by", "retired_at",
    ]
    /// A refresh token's session (its hash, tenant and account are the row's key).
    static let refreshTokens = ["created_at", "sign_in_provider", "auth_time", "claims"]
    /// A federated identity (its tenant and account are the row's key).
    static let accountProviders = ["provider_id", "raw_id", "email", "display_name", "photo_url", "screen_name"]

    /// `columns` read from `source` (a table alias with its dot, `(r.o_code).` for a composite, or
    /// nothing), each named `prefix` + its name (said outright whenever there is a source, so the
    /// name never depends on how PostgreSQL names a composite's field).
    static func select(_ columns: [String], from source: String = "", as prefix: String = "") -> String {
        columns.map { source.isEmpty && prefix.isEmpty ? $0 : source + $0 + " AS " + prefix + $0 }.joined(separator: ", ")
    }
}

extension Account {
    /// An `accounts` row.
    init(_ row: PostgresNamedRow) throws {
        self.init(
            localID: try row("local_id"), tenantID: try row("tenant_id"), email: try row("email"), emailVerified: try row("email_verified"),
            passwordHash: try row("password_hash"), passwordUpdatedAt: try row("password_updated_at"),
            displayName: try row("display_name"), photoURL: try row("photo_url"), phoneNumber: try row("phone_number"),
            disabled: try row("disabled"), createdAt: try row("created_at"), lastLoginAt: try row("last_login_at"),
            lastRefreshAt: try row("last_refresh_at"), validSince: try row("valid_since"), customAttributes: try row("custom_attributes"),
            initialEmail: try row("initial_email"), emailLinkSignin: try row("email_link_signin"), customAuth: try row("custom_auth"),
            screenName: try row("screen_name"), secondFactors: try SecondFactor.stored(row("mfa")))
    }
}

extension Session {
    /// A `refresh_tokens` row's session for the token whose hash is `hash`.
    init(_ row: PostgresNamedRow, hash: Data, tenantID: String, accountID: String) throws {
        self.init(
            hash: hash, tenantID: tenantID, accountID: accountID, createdAt: try row("created_at"),
            signInProvider: try row("sign_in_provider"), authTime: try row("auth_time"), claims: try row("claims"))
    }
}

extension FederatedIdentity {
    /// An `account_providers` row; `nil` for the empty side of an outer join (no `provider_id`).
    init?(_ row: PostgresNamedRow) throws {
        guard let providerID = try row("provider_id", as: String?.self) else { return nil }
        self.init(
            providerID: providerID, rawID: try row("raw_id"), email: try row("email"), displayName: try row("display_name"),
            photoURL: try row("photo_url"), screenName: try row("screen_name"))
    }
}
