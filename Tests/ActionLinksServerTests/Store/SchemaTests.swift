import ActionLinksConfiguration
import ActionLinksTestSupport
import Foundation
import GRDB
import Logging
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The two dialects' schemas (`ActionLinksStores/SQLite/SQLiteSchema.swift`, `ActionLinksStores/PostgreSQL/PostgresSchema.swift`) describe the
/// same tables: a column added to one and forgotten in the other fails here, not in production.
@Suite("Schema: SQLite and PostgreSQL have the same tables, columns, keys and indexes", .timeLimit(.minutes(5)))
struct SchemaTests {
    /// One column as both dialects can state it.
    struct Column: Hashable, CustomStringConvertible {
        var table: String
        var name: String
        /// `integer` (SQLite INTEGER; PostgreSQL bigint, integer or boolean), `text`, `blob` (bytea).
        var kind: String
        var nullable: Bool
        /// The default, spelled as SQLite spells it (`0`, `1`, `'password'`), or "".
        var defaultValue: String
        /// The column's place in its table's primary key (1-based), or 0.
        var keyPosition: Int

        var description: String {
            "\(table).\(name) \(kind)\(nullable ? "" : " NOT NULL")\(defaultValue.isEmpty ? "" : " DEFAULT \(defaultValue)")"
                + (keyPosition > 0 ? " (key \(keyPosition))" : "")
        }
    }

    /// The indexes one dialect has for reasons of its own; every other index is in both.
    /// - SQLite's one writer keeps one live code per (tenant, address, mode), and `codes_outstanding`
    ///   finds it.
    /// - PostgreSQL enforces that rule across instances with the unique `codes_one_live` on the same
    ///   columns.
    static let ownIndexes = (sqlite: Set(["codes_outstanding"]), postgres: Set(["codes_one_live"]))

    /// Tables only one dialect has: SQLite keeps each tenant's number of accounts (v11); PostgreSQL
    /// counts them (a kept count is a row every sign-up's transaction would wait on there).
    static let ownTables = (sqlite: Set(["account_counts"]), postgres: Set<String>())

    /// Each dialect's migration bookkeeping, which the other does not have.
    static let bookkeeping: Set<String> = ["grdb_migrations", "actionlinks_migrations"]

    static func sqliteSchema() throws -> (columns: [Column], indexes: Set<String>) {
        let path = TestProject.temporaryDirectory("actionlinks-schema").appendingPathComponent("schema.sqlite").path
        let database = try SQLiteDatabase(path: path)
        return try database.pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT m.name AS tbl, p.name, p.type, p."notnull", p.dflt_value, p.pk
                    FROM sqlite_master m JOIN pragma_table_info(m.name) p
                    WHERE m.type = 'table' ORDER BY m.name, p.cid
                    """)
            let columns = rows.compactMap { row -> Column? in
                let table: String = row["tbl"]
                guard !bookkeeping.contains(table) else { return nil }
                let key: Int = row["pk"]
                let notNull: Bool = row["notnull"]
                let type: String = row["type"]
                return Column(
                    table: table, name: row["name"], kind: type.lowercased(), nullable: !notNull && key == 0,
                    defaultValue: row["dflt_value"] ?? "", keyPosition: key)
            }
            let indexes = try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex_%'")
            return (columns, Set(indexes))
        }
    }

    static func postgresSchema() async throws -> (columns: [Column], indexes: Set<String>) {
        let url = try await PostgresTestServer.freshDatabaseURL()
        let database = try PostgresStore(
            location: try PostgresLocation(url: url + (url.contains("?") ? "&" : "?") + "pool_size=1"), logger: Logger(label: "test-schema")
        )
        let pool = Task.detached { await database.client.run() }
        defer { pool.cancel() }
        try await database.migrate()
        let rows = try await PostgresTestServer.column(
            """
            SELECT c.table_name || '|' || c.column_name || '|' || c.data_type || '|' || c.is_nullable || '|'
                || coalesce(c.column_default, '') || '|' || coalesce(k.ordinal_position::text, '0')
            FROM information_schema.columns c
            LEFT JOIN information_schema.table_constraints t
                ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.constraint_type = 'PRIMARY KEY'
            LEFT JOIN information_schema.key_column_usage k
                ON k.constraint_name = t.constraint_name AND k.table_schema = c.table_schema
                AND k.table_name = c.table_name AND k.column_name = c.column_name
            WHERE c.table_schema = current_schema()
            ORDER BY c.table_name, c.ordinal_position
            """, url: url)
        let columns = rows.compactMap { row -> Column? in
            let field = row.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard field.count == 6, !bookkeeping.contains(field[0]) else { return nil }
            let kind =
                switch field[2] {
                case "bigint", "integer", "boolean": "integer"
                case "bytea": "blob"
                default: field[2]
                }
            // `'password'::text` is SQLite's `'password'`; booleans are stored as 0 and 1 there.
            var value = field[4].replacing(/::[a-z ]+$/, with: "")
            if value == "false" { value = "0" }
            if value == "true" { value = "1" }
            return Column(
                table: field[0], name: field[1], kind: kind, nullable: field[3] == "YES", defaultValue: value,
                keyPosition: Int(field[5]) ?? 0)
        }
        let indexes = try await PostgresTestServer.column(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname NOT LIKE '%_pkey'", url: url)
        return (columns, Set(indexes))
    }

    @Test("every column of every table, in order, with its type, nullability, default and key position; every index by name but two")
    func sameSchema() async throws {
        let (allSQLite, allPostgres) = (try Self.sqliteSchema(), try await Self.postgresSchema())
        #expect(Set(allSQLite.columns.map(\.table)).isSuperset(of: Self.ownTables.sqlite))
        #expect(Set(allPostgres.columns.map(\.table)).isSuperset(of: Self.ownTables.postgres))
        let sqlite = (columns: allSQLite.columns.filter { !Self.ownTables.sqlite.contains($0.table) }, indexes: allSQLite.indexes)
        let postgres = (
            columns: allPostgres.columns.filter { !Self.ownTables.postgres.contains($0.table) }, indexes: allPostgres.indexes
        )
        #expect(Set(sqlite.columns.map(\.table)) == Set(postgres.columns.map(\.table)), "the same tables")
        #expect(!sqlite.columns.isEmpty && sqlite.columns.count == postgres.columns.count)
        for (lite, pg) in zip(sqlite.columns, postgres.columns) {
            #expect(lite == pg, "SQLite has \(lite), PostgreSQL \(pg)")
        }
        let shared = (
            sqlite: sqlite.indexes.subtracting(Self.ownIndexes.sqlite), postgres: postgres.indexes.subtracting(Self.ownIndexes.postgres)
        )
        #expect(
            shared.sqlite == shared.postgres,
            "only in SQLite: \(shared.sqlite.subtracting(shared.postgres)); only in PostgreSQL: \(shared.postgres.subtracting(shared.sqlite))"
        )
        #expect(sqlite.indexes.isSuperset(of: Self.ownIndexes.sqlite) && postgres.indexes.isSuperset(of: Self.ownIndexes.postgres))
    }
}
