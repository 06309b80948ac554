import ActionLinksTestSupport
import Foundation
import Synchronization
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksStores

/// A link's writes in one call (``LinkIssuingInOneWrite``, on both stores): each stage counted and
/// checked in order, what was counted left counted whatever follows, the code and its sign-in code
/// stored only when the rule allows, for the account looked up in the same write, and its mail
/// with them only when the link goes out.
@Suite("A link's one write", .timeLimit(.minutes(5)))
struct LinkIssueWriteTests {
    let now = Timestamp(milliseconds: 1_800_000_000_000)
    var hour: Timestamp { now.roundedDown(to: .seconds(3600)) }
    var day: Timestamp { now.roundedDown(to: .seconds(86400)) }

    /// The store, and an account `ann` (ann@example.com).
    func store(_ kind: String) async throws -> StoreUnderTest {
        let database = try await StoreFactory.make(kind)
        try await database.accounts.transaction(tenantID: "", now: now) { tx in
            try tx.prefetch([.id("ann")])
            try tx.insert(Account(localID: "ann", email: "ann@example.com", createdAt: self.now))
        }
        return database
    }

    func write(
        _ email: String, stages: [LinkIssueWrite.Stage], signInCode: Bool = false,
        decide: @escaping @Sendable (String?) -> Result<Bool, ActionError>
    ) -> LinkIssueWrite {
        let record = ActionCodeRecord(
            hash: Data((email + "-hash").utf8), mode: .signIn, tenantID: "", accountID: nil, email: email, newEmail: nil, continueURL: nil,
            languageCode: nil, appSettings: nil, createdAt: now, expiresAt: now + .seconds(3600))
        let code = SignInCodeRecord(
            tenantID: "", email: email, mac: Data("mac".utf8), sealedLink: Data("sealed".utf8), createdAt: now,
            expiresAt: now + .seconds(900))
        return LinkIssueWrite(stages: stages, record: record, looksUpAccount: true, decide: decide, signInCode: signInCode ? code : nil)
    }

    /// `write` with its link's mail.
    func mailed(_ write: LinkIssueWrite) -> LinkIssueWrite {
        var write = write
        write.mail = OutboxMail(
            id: "mail-" + write.record.email, sealed: Data("sealed mail".utf8), codeHash: write.record.hash, createdAt: now,
            expiresAt: write.record.expiresAt, dueAt: now)
        return write
    }

    func issue(_ database: StoreUnderTest, _ write: LinkIssueWrite) async throws -> LinkIssueWrite.Outcome {
        let store = try #require(database.codes as? any LinkIssuingInOneWrite)
        return try await withCheckedThrowingContinuation { done in store.issueLink(write) { done.resume(with: $0) } }
    }

    /// The counts of `keys` in `window`, read by counting once more (and taking that one off).
    func counts(_ database: StoreUnderTest, _ keys: [String], _ window: Timestamp) async throws -> [Int] {
        let counts = try await database.codes.countEvents(keys: keys, windowStart: window)
        try await database.codes.uncountEvents(keys: keys, windowStart: window)
        return counts.map { $0 - 1 }
    }

    func liveCodes(_ database: StoreUnderTest, _ email: String) async throws -> Int {
        try await database.codes.retireCodes(tenantID: "", email: email, now: now + .seconds(1))
    }

    @Test("a stage over its limit ends the write: the counts so far stay counted, no code, no sign-in code", arguments: StoreFactory.kinds)
    func overLimit(kind: String) async throws {
        let database = try await store(kind)
        let limits = LinkIssueWrite.Stage(
            limits: [EventLimit(key: "address:bo", maximum: 5), EventLimit(key: "ip:1", maximum: 5)], windowStart: hour)
        let quota = LinkIssueWrite.Stage(limits: [EventLimit(key: "quota:signIn", maximum: 1)], windowStart: day)
        let decided = Decisions()
        let first = try await issue(database, write("bo@example.com", stages: [limits, quota], signInCode: true, decide: decided.allow))
        guard case .stored(deliver: true) = first else { throw Unexpected(first) }
        let second = try await issue(database, write("bo@example.com", stages: [limits, quota], signInCode: true, decide: decided.allow))
        guard case .overLimit(stage: 1) = second else { throw Unexpected(second) }
        #expect(decided.count == 1, "the rule is not asked past a limit")
        #expect(try await counts(database, ["address:bo", "ip:1"], hour) == [2, 2])
        #expect(try await counts(database, ["quota:signIn"], day) == [2], "the refused send is counted, as a separate call counts it")
        #expect(try await liveCodes(database, "bo@example.com") == 1, "only the first code was stored")

        let limited = LinkIssueWrite.Stage(limits: [EventLimit(key: "address:cy", maximum: 0)], windowStart: hour)
        let third = try await issue(database, write("cy@example.com", stages: [limited, quota], decide: decided.allow))
        guard case .overLimit(stage: 0) = third else { throw Unexpected(third) }
        #expect(try await counts(database, ["quota:signIn"], day) == [2], "a stage after the one over its limit is not counted")
        #expect(try await liveCodes(database, "cy@example.com") == 0)
    }

    @Test(
        "the rule is given the account looked up in the write; a refusal stores nothing but leaves the counts",
        arguments: StoreFactory.kinds)
    func decides(kind: String) async throws {
        let database = try await store(kind)
        let stage = LinkIssueWrite.Stage(limits: [EventLimit(key: "address:x", maximum: 100)], windowStart: hour)
        let decided = Decisions()
        let known = try await issue(database, write("ann@example.com", stages: [stage], signInCode: true, decide: decided.allow))
        guard case .stored(deliver: true) = known else { throw Unexpected(known) }
        let unknown = try await issue(
            database, write("nobody@example.com", stages: [stage], signInCode: true, decide: { _ in .failure(.emailNotFound) }))
        guard case .refused(let refusal) = unknown else { throw Unexpected(unknown) }
        #expect(refusal.code == .emailNotFound)
        #expect(decided.accounts == ["ann"])
        #expect(try await counts(database, ["address:x"], hour) == [2])
        #expect(try await liveCodes(database, "nobody@example.com") == 0)
        let noCode = try await database.signInCodes.use(
            tenantID: "", email: "nobody@example.com", mac: Data("mac".utf8), now: now, givingBack: [])
        #expect(noCode == nil, "no sign-in code for a refused link")

        // The stored code is the account's, and its sign-in code is there beside it.
        let lookup = try await database.codes.lookup(hashes: [Data("ann@example.com-hash".utf8)], now: now)
        guard case .live(let record) = lookup else { throw Unexpected(lookup) }
        #expect(record.accountID == "ann")
        let sealed = try await database.signInCodes.use(
            tenantID: "", email: "ann@example.com", mac: Data("mac".utf8), now: now, givingBack: [])
        #expect(sealed == Data("sealed".utf8))
    }

    @Test(
        "the link's mail is stored in its write when the link goes out; not when the rule says no mail, refuses, or a stage is over its limit",
        arguments: StoreFactory.kinds)
    func mail(kind: String) async throws {
        let database = try await store(kind)
        let stage = LinkIssueWrite.Stage(limits: [EventLimit(key: "address:m", maximum: 3)], windowStart: hour)
        let sent = mailed(write("ann@example.com", stages: [stage], signInCode: true, decide: { _ in .success(true) }))
        guard case .stored(deliver: true) = try await issue(database, sent) else { throw Unexpected("ann's link was not stored") }
        let quiet = mailed(write("nobody@example.com", stages: [stage], decide: { _ in .success(false) }))
        guard case .stored(deliver: false) = try await issue(database, quiet) else { throw Unexpected("nobody's code was not stored") }
        guard case .live = try await database.codes.lookup(hashes: [quiet.record.hash], now: now) else {
            throw Unexpected("nobody's code is not live")
        }
        let refused = mailed(write("bo@example.com", stages: [stage], decide: { _ in .failure(.emailNotFound) }))
        guard case .refused = try await issue(database, refused) else { throw Unexpected("bo's link was not refused") }
        let limited = mailed(write("cy@example.com", stages: [stage], decide: { _ in .success(true) }))
        guard case .overLimit(stage: 0) = try await issue(database, limited) else { throw Unexpected("cy's link was not limited") }

        let claim = try await database.outbox.claim(now: now, limit: 10, leaseUntil: now + .seconds(60), owner: "test")
        #expect(claim.mails == sent.mail.map { [$0] }, "ann's mail only, with its code's hash")
        #expect(claim.dropped == 0, "its code is live")
    }

    @Test("PostgreSQL: codes and sign-in codes of one batch go in one statement; of two sign-in codes for an address the later stays")
    func postgresBatch() async throws {
        let database = try await PostgresTestServer.freshStore()
        func issue(_ email: String, _ tag: String, signInCode: Bool) -> CodeIssue {
            let record = ActionCodeRecord(
                hash: Data((email + tag).utf8), mode: .signIn, tenantID: "", accountID: nil, email: email, newEmail: nil, continueURL: nil,
                languageCode: nil, appSettings: nil, createdAt: now, expiresAt: now + .seconds(3600))
            let code = SignInCodeRecord(
                tenantID: "", email: email, mac: Data(("mac" + tag).utf8), sealedLink: Data(("sealed" + tag).utf8), createdAt: now,
                expiresAt: now + .seconds(900))
            return CodeIssue(record: record, signInCode: signInCode ? code : nil)
        }
        // In (tenant, address, mode) order, as issueBatch gives them; run as the one statement
        // itself, so a batch the database refused could not pass through issueBatch's fallback.
        let batch = [
            issue("al@example.com", "1", signInCode: true), issue("dee@example.com", "1", signInCode: true),
            issue("dee@example.com", "2", signInCode: true), issue("eve@example.com", "1", signInCode: false),
        ]
        try await database.withConnection { connection in
            for try await _ in try await connection.execute(IssueCodes(batch), logger: database.logger) {}
        }
        // dee's second code is the live one, the first retired; the sign-in code is the second's.
        guard case .invalid = try await database.codes.lookup(hashes: [Data("dee@example.com1".utf8)], now: now),
            case .live = try await database.codes.lookup(hashes: [Data("dee@example.com2".utf8)], now: now)
        else { throw Unexpected("dee's codes are not the first retired and the second live") }
        #expect(
            try await database.signInCodes.use(tenantID: "", email: "dee@example.com", mac: Data("mac1".utf8), now: now, givingBack: [])
                == nil)
        #expect(
            try await database.signInCodes.use(tenantID: "", email: "dee@example.com", mac: Data("mac2".utf8), now: now, givingBack: [])
                == Data("sealed2".utf8))
        #expect(
            try await database.signInCodes.use(tenantID: "", email: "al@example.com", mac: Data("mac1".utf8), now: now, givingBack: [])
                == Data("sealed1".utf8))
        #expect(
            try await database.signInCodes.use(tenantID: "", email: "eve@example.com", mac: Data("mac1".utf8), now: now, givingBack: [])
                == nil)
        guard case .live = try await database.codes.lookup(hashes: [Data("eve@example.com1".utf8)], now: now) else {
            throw Unexpected("eve's code is not live")
        }
        // One code alone with its sign-in code takes the same statement.
        for outcome in await PostgresCodeStore.issueBatch([issue("fay@example.com", "1", signInCode: true)], database: database) {
            try outcome.get()
        }
        #expect(
            try await database.signInCodes.use(tenantID: "", email: "fay@example.com", mac: Data("mac1".utf8), now: now, givingBack: [])
                == Data("sealed1".utf8))
    }

    @Test("PostgreSQL: a batch's mails go in its one statement; when it fails, each code is issued alone with its mail, or not at all")
    func postgresBatchMails() async throws {
        let database = try await PostgresTestServer.freshStore()
        func issue(_ email: String, mailID: String?) -> CodeIssue {
            let record = ActionCodeRecord(
                hash: Data((email + "-hash").utf8), mode: .signIn, tenantID: "", accountID: nil, email: email, newEmail: nil,
                continueURL: nil, languageCode: nil, appSettings: nil, createdAt: now, expiresAt: now + .seconds(3600))
            let mail = mailID.map {
                OutboxMail(
                    id: $0, sealed: Data("sealed \($0)".utf8), codeHash: record.hash, createdAt: now, expiresAt: record.expiresAt,
                    dueAt: now)
            }
            return CodeIssue(record: record, mail: mail)
        }
        func isLive(_ issue: CodeIssue) async throws -> Bool {
            if case .live = try await database.codes.lookup(hashes: [issue.record.hash], now: now) { return true }
            return false
        }
        // Run as the one statement itself, as postgresBatch does.
        let batch = [issue("al@example.com", mailID: "al"), issue("bo@example.com", mailID: nil), issue("cy@example.com", mailID: "cy")]
        try await database.withConnection { connection in
            for try await _ in try await connection.execute(IssueCodes(batch), logger: database.logger) {}
        }
        for issue in batch { #expect(try await isLive(issue)) }
        var claim = try await database.outbox.claim(now: now, limit: 10, leaseUntil: now + .seconds(60), owner: "a")
        #expect(claim.mails == batch.compactMap(\.mail), "al's and cy's mails, with their codes' hashes")

        // One code alone with its mail takes the statement too.
        let alone = issue("dee@example.com", mailID: "dee")
        for outcome in await PostgresCodeStore.issueBatch([alone], database: database) { try outcome.get() }

        // A mail ID already taken fails the batch's statement: each code is then issued on its own,
        // with its mail in its transaction, and the one whose mail cannot be stored is not stored
        // either.
        let failing = [
            issue("eve@example.com", mailID: "eve"), issue("fay@example.com", mailID: "al"), issue("gus@example.com", mailID: nil),
        ]
        let outcomes = await PostgresCodeStore.issueBatch(failing, database: database)
        #expect(outcomes.map { (try? $0.get()) != nil } == [true, false, true])
        var live: [Bool] = []
        for issue in failing { live.append(try await isLive(issue)) }
        #expect(live == [true, false, true], "fay's code was rolled back with its mail")
        claim = try await database.outbox.claim(now: now, limit: 10, leaseUntil: now + .seconds(60), owner: "b")
        #expect(claim.mails.map(\.id) == ["dee", "eve"])
        #expect(try await database.outbox.backlog().count == 4)
    }

    /// What the rule was asked, and allows.
    final class Decisions: Sendable {
        private let asked = Mutex<[String?]>([])
        var count: Int { asked.withLock { $0.count } }
        var accounts: [String?] { asked.withLock { $0 } }
        var allow: @Sendable (String?) -> Result<Bool, ActionError> {
            { accountID in
                self.asked.withLock { $0.append(accountID) }
                return .success(true)
            }
        }
    }

    struct Unexpected: Error, CustomStringConvertible {
        let description: String
        init(_ value: Any) { description = "unexpected: \(value)" }
    }
}
