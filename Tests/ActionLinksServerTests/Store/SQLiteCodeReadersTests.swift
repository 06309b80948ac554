import ActionLinks
import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The landing page's lookup on its own SQLite connections (``SQLiteCodeReaders``) answers what the
/// store's `lookup` answers, and sees every commit that returned before it began.
@Suite("SQLite code readers", .timeLimit(.minutes(5)))
struct SQLiteCodeReadersTests {
    let now: Timestamp = Timestamp(milliseconds: 1_800_000_000_000)

    func database() throws -> SQLiteDatabase {
        try SQLiteDatabase(path: TestProject.temporaryDirectory("actionlinks-readers").appendingPathComponent("test.sqlite").path)
    }

    func record(_ hash: String, mode: ActionCodeLink.Mode = .resetPassword, email: String = "ann@example.com") -> ActionCodeRecord {
        ActionCodeRecord(
            hash: Data(hash.utf8), mode: mode, tenantID: "", accountID: "acct-1", email: email, continueURL: "https://app.example.com/done",
            languageCode: "ru", createdAt: now, expiresAt: now + .seconds(3600))
    }

    /// `lookupNow`'s answer, after checking that it is `lookup`'s.
    func same(_ codes: SQLiteCodeStore, _ hashes: [String], at time: Timestamp) async throws -> CodeLookup {
        let keys = hashes.map { Data($0.utf8) }
        let now = try codes.lookupNow(hashes: keys, now: time)
        let pooled = try await codes.lookup(hashes: keys, now: time)
        #expect(now == pooled, "\(hashes)")
        return now
    }

    @Test("every field, every state (live, expired, used, retired, unknown) and both key counts read as lookup reads them")
    func sameAnswers() async throws {
        let codes = try database().codes
        #expect(try await same(codes, ["nothing"], at: now) == .invalid)
        #expect(try await same(codes, [], at: now) == .invalid)

        // Every optional column set, then none of them.
        var full = record("full", mode: .verifyAndChangeEmail, email: "ünïcode@example.com")
        (full.tenantID, full.newEmail, full.appSettings, full.languageCode) = ("tenant-1", "new@example.com", #"{"ios":"b"}"#, "pt-BR")
        try await codes.issue(full)
        #expect(try await same(codes, ["full"], at: now) == .live(full))
        var bare = record("bare", mode: .signIn)
        (bare.accountID, bare.continueURL, bare.languageCode) = (nil, nil, nil)
        try await codes.issue(bare)
        #expect(try await same(codes, ["bare"], at: now) == .live(bare))

        // Expired at its expiry, live a millisecond before.
        #expect(try await same(codes, ["full"], at: full.expiresAt) == .expired(full))
        #expect(try await same(codes, ["full"], at: full.expiresAt - .milliseconds(1)) == .live(full))

        // Two accepted keys (a rotation): the statement for two hashes, either one matching.
        #expect(try await same(codes, ["under-new-key", "full"], at: now) == .live(full))
        #expect(try await same(codes, ["full", "under-new-key"], at: now) == .live(full))

        // Used: invalid from the very next read.
        _ = try await codes.consume(hashes: [Data("full".utf8)], modes: [.verifyAndChangeEmail], now: now, by: "test")
        #expect(try await same(codes, ["full"], at: now) == .invalid)
        #expect(try await same(codes, ["under-new-key", "full"], at: now) == .invalid)

        // Retired by a newer code of the same address and mode.
        try await codes.issue(record("old"))
        #expect(try await same(codes, ["old"], at: now) != .invalid)
        try await codes.issue(record("new"))
        #expect(try await same(codes, ["old"], at: now) == .invalid)
        #expect(try await same(codes, ["new"], at: now) == .live(record("new")))
    }

    @Test("many lookups at once, each right after a commit, see it: issued codes live, used ones invalid")
    func freshFromEveryConnection() async throws {
        let codes = try database().codes
        for round in 0..<20 {
            let code = record("round-\(round)", email: "r\(round)@example.com")
            try await codes.issue(code)
            let issued = await Self.atOnce(16) { try codes.lookupNow(hashes: [code.hash], now: self.now) }
            #expect(issued.allSatisfy { $0 == .live(code) }, "round \(round): \(issued)")
            _ = try await codes.consume(hashes: [code.hash], modes: [.resetPassword], now: now, by: "test")
            let used = await Self.atOnce(16) { try codes.lookupNow(hashes: [code.hash], now: self.now) }
            #expect(used.allSatisfy { $0 == .invalid }, "round \(round): \(used)")
        }
    }

    /// `body` `count` times at once, each on a thread of its own (as event loops call it); `nil`
    /// for each that threw (the error recorded).
    static func atOnce(_ count: Int, _ body: @escaping @Sendable () throws -> CodeLookup) async -> [CodeLookup?] {
        await withTaskGroup(of: CodeLookup?.self) { group in
            for _ in 0..<count {
                group.addTask {
                    await withCheckedContinuation { done in
                        Thread {
                            do {
                                done.resume(returning: try body())
                            } catch {
                                Issue.record(error)
                                done.resume(returning: nil)
                            }
                        }.start()
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }
}
