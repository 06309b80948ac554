import ActionLinks
import ActionLinksConfiguration
import ActionLinksTestSupport
import Foundation
import Logging
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// What only the shared store has to get right: several connections (instances) at once, several
/// instances migrating at once, and a database that is not there.
@Suite("PostgreSQL store", .timeLimit(.minutes(5)))
struct PostgresStoreTests {
    let now: Timestamp = Timestamp(milliseconds: 1_800_000_000_000)

    func record(_ hash: String, email: String = "ann@example.com") -> ActionCodeRecord {
        ActionCodeRecord(
            hash: Data(hash.utf8), mode: .signIn, accountID: nil, email: email, createdAt: now, expiresAt: now + .milliseconds(3_600_000))
    }

    @Test("32 concurrent issues for one address leave exactly one live code, and every issue succeeds")
    func concurrentIssues() async throws {
        let store = try await PostgresTestServer.freshStore()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<32 { group.addTask { try await store.codes.issue(self.record("code-\(index)")) } }
            try await group.waitForAll()
        }
        var live = 0
        for index in 0..<32 {
            if case .live = try await store.codes.lookup(hashes: [Data("code-\(index)".utf8)], now: now) { live += 1 }
        }
        #expect(live == 1)
    }

    @Test("16 instances signing up one new address at once make one account: the others see it when their transaction runs again")
    func concurrentSignUps() async throws {
        let store = try await PostgresTestServer.freshStore()
        let results = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
            for index in 0..<16 {
                group.addTask {
                    try await store.accounts.transaction(tenantID: "", now: self.now) { tx in
                        if let existing = try tx.account(email: "new@example.com") { return (existing.localID, false) }
                        try tx.insert(Account(localID: "acct-\(index)", email: "new@example.com", createdAt: self.now))
                        return ("acct-\(index)", true)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 16)
        #expect(Set(results.map(\.0)).count == 1)
        #expect(results.filter(\.1).count == 1)
    }

    @Test("four instances starting together apply each migration once")
    func concurrentMigrations() async throws {
        let url = try await PostgresTestServer.freshDatabaseURL()
        let location = try PostgresLocation(url: url)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<4 {
                group.addTask {
                    let store = try PostgresStore(location: location, logger: Logger(label: "instance-\(index)"))
                    let runner = Task { await store.client.run() }
                    defer { runner.cancel() }
                    try await store.migrate()
                }
            }
            try await group.waitForAll()
        }
        #expect(
            try await PostgresTestServer.column("SELECT version FROM actionlinks_migrations", url: url).count
                == PostgresStore.migrations.count)
        #expect(try await PostgresTestServer.column("SELECT count(*)::text FROM codes", url: url) == ["0"])
    }

    @Test("with no server listening, a call fails as unavailable within connect_timeout instead of waiting")
    func noServer() async throws {
        let port = try LoopbackPort.free()
        let store = try PostgresStore(
            location: try PostgresLocation(url: "postgres://nobody:x@127.0.0.1:\(port)/none?connect_timeout=0.5"),
            logger: Logger(label: "down"))
        let runner = Task { await store.client.run() }
        defer { runner.cancel() }
        do {
            _ = try await store.codes.lookup(hashes: [Data("x".utf8)], now: now)
            Issue.record("expected the lookup to fail")
        } catch let error as PostgresStoreError {
            // Without the deadline the pool keeps the request queued for 60 s (its circuit breaker)
            // and fails with its own error; what ends it here is the 0.5 s deadline, which says so.
            // No wall-clock bound: a loaded machine delays the deadline's timer (86 s seen in a
            // fresh-clone run beside another), never its outcome.
            #expect(error.description.contains("unavailable: no PostgreSQL connection within 0.5 seconds"), "\(error)")
        }
    }

    @Test("TLS: verify-full with the server's certificate encrypts and checks it; an untrusted certificate is refused")
    func tls() async throws {
        let cluster = try await PrivatePostgresCluster(tls: true)
        defer { Task { await cluster.remove() } }
        let base = cluster.url.replacingOccurrences(of: "@127.0.0.1:", with: "@localhost:")

        let trusted = try PostgresStore(
            location: try PostgresLocation(url: base + "?sslmode=verify-full&sslrootcert=\(cluster.certificate)&connect_timeout=120"),
            logger: Logger(label: "tls"))
        let runner = Task { await trusted.client.run() }
        defer { runner.cancel() }
        try await trusted.migrate()
        try await trusted.codes.issue(record("over-tls"))
        guard case .live = try await trusted.codes.lookup(hashes: [Data("over-tls".utf8)], now: now) else {
            Issue.record("expected a live code"); return
        }
        let encrypted = try await trusted.withConnection { connection in
            try await connection.query("SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: Logger(label: "tls"))
                .decode(String.self).first { _ in true }
        }
        #expect(encrypted == "true")

        // The system's authorities do not know the self-signed certificate.
        let untrusted = try PostgresStore(
            location: try PostgresLocation(url: base + "?sslmode=verify-full&connect_timeout=1"), logger: Logger(label: "untrusted"))
        let other = Task { await untrusted.client.run() }
        defer { other.cancel() }
        await #expect(throws: PostgresStoreError.self) { try await untrusted.codes.lookup(hashes: [Data("over-tls".utf8)], now: now) }
    }
}
