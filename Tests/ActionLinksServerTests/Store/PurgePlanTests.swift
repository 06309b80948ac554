import ActionLinksTestSupport
import Foundation
import GRDB
import Logging
import PostgresNIO
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The hourly purges delete by an OR of times (`expires_at < ? OR consumed_at < ? OR ...`). With an
/// index for every condition the database reads only the rows that go; with one condition
/// unindexed it reads the whole table, every hour, however few rows go, and the purge's cost grows
/// with the table (schema v10 added the missing indexes). Each purge statement is asked for its plan
/// here, exactly as the stores run it.
@Suite("Purges: every condition of every purge has an index, on both stores", .timeLimit(.minutes(5)))
struct PurgePlanTests {
    @Test("SQLite plans each purge through its indexes, never a scan of the table")
    func sqlite() throws {
        let path = TestProject.temporaryDirectory("actionlinks-purge-plan").appendingPathComponent("plan.sqlite").path
        let database = try SQLiteDatabase(path: path)
        let statements = SQLiteCodeStore.purgeStatements + [SQLiteSignInCodeStore.purgeStatement] + SQLiteAccountStore.purgeStatements
        try database.pool.write { db in
            for sql in statements {
                let arguments = StatementArguments(Array(repeating: 0, count: sql.filter { $0 == "?" }.count))
                let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
                #expect(plan.contains { $0.hasPrefix("SEARCH") }, "\(sql): \(plan)")
                #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(sql) reads the whole table: \(plan)")
            }
        }
    }

    @Test("PostgreSQL can plan each purge through its indexes (with sequential scans turned off, none is left)")
    func postgres() async throws {
        let database = try await PostgresTestServer.freshStore()
        let cutoff = Timestamp.now
        let statements =
            PostgresCodeStore.purgeStatements(before: cutoff, countsBefore: cutoff, longCountsBefore: cutoff) + [
                PostgresSignInCodeStore.purgeStatement(before: cutoff)
            ] + PostgresAccountStore.purgeStatements(before: cutoff)
        let logger = Logger(label: "purge-plan")
        let plans = try await database.withConnection { connection in
            // On tables this small a sequential scan is the cheapest plan; turned off, the planner
            // still falls back to one when no index serves a condition.
            try await connection.query("SET enable_seqscan = off", logger: logger)
            var plans: [(sql: String, plan: [String])] = []
            for statement in statements {
                var plan: [String] = []
                let explain = PostgresQuery(unsafeSQL: "EXPLAIN " + statement.sql, binds: statement.binds)
                for try await line in try await connection.query(explain, logger: logger).decode(String.self) { plan.append(line) }
                plans.append((statement.sql, plan))
            }
            return plans
        }
        #expect(plans.count == statements.count)
        for (sql, plan) in plans {
            #expect(plan.contains { $0.contains("Index") }, "\(sql): \(plan)")
            #expect(!plan.contains { $0.contains("Seq Scan") }, "\(sql) reads the whole table: \(plan)")
        }
    }
}
