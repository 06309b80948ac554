import ActionLinksTestSupport
import Foundation
import GRDB
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// A power cut cannot be simulated here; what can be checked is the setting that makes a commit
/// reach the disk before the answer leaves: `synchronous = FULL` (2) in WAL mode on the writer
/// connection, through which every write goes (consuming codes, changing accounts).
@Suite("SQLite durability", .timeLimit(.minutes(5)))
struct SQLiteDurabilityTests {
    @Test("the writer connection commits with synchronous = FULL in WAL mode")
    func synchronousFull() async throws {
        let directory = TestProject.temporaryDirectory("actionlinks-durability")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try SQLiteDatabase(path: directory.appendingPathComponent("test.sqlite").path)
        let writer = try await database.pool.write { db in
            (try Int.fetchOne(db, sql: "PRAGMA synchronous"), try String.fetchOne(db, sql: "PRAGMA journal_mode"))
        }
        #expect(writer.0 == 2, "the writer runs synchronous = \(writer.0.map(String.init) ?? "nil"), not FULL (2)")
        #expect(writer.1 == "wal")
    }
}
