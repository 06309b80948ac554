import ActionLinks
import ActionLinksServer
import ActionLinksTestSupport
import Foundation
import Testing

/// A store under test: both protocols on one database.
struct StoreUnderTest: Sendable {
    let name: String
    let codes: any CodeStore
    let accounts: any AccountStore
}

/// Makes a fresh, empty store for each test: an SQLite file, or a new database on the test
/// PostgreSQL server (see ``PostgresTestServer``).
enum StoreFactory {
    static let kinds = ["sqlite", "postgres"]

    static func make(_ kind: String) async throws -> StoreUnderTest {
        switch kind {
        case "sqlite":
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("actionlinks-store-\(UUID().uuidString)/test.sqlite")
                .path
            let database = try SQLiteDatabase(path: path)
            return StoreUnderTest(name: kind, codes: database.codes, accounts: database.accounts)
        case "postgres":
            let database = try await PostgresTestServer.freshStore()
            return StoreUnderTest(name: kind, codes: database.codes, accounts: database.accounts)
        default:
            throw CocoaError(.featureUnsupported)
        }
    }
}

/// The behaviour every store must have (DESIGN §5), written once against the protocols.
@Suite("Stores")
struct StoreTests {
    let now: Timestamp = 1_800_000_000_000

    func record(
        _ hash: String, mode: ActionCodeLink.Mode = .resetPassword, email: String = "ann@example.com", tenant: String = "",
        account: String? = "acct-1", lifetime: Timestamp = 3_600_000
    ) -> ActionCodeRecord {
        ActionCodeRecord(
            hash: Data(hash.utf8), mode: mode, tenantID: tenant, accountID: account, email: email,
            continueURL: "https://app.example.com/done",
            languageCode: "ru", createdAt: now, expiresAt: now + lifetime)
    }

    @Test("an issued code is live, is consumed once, and is invalid afterwards", arguments: StoreFactory.kinds)
    func consumeOnce(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.codes.issue(record("h1"))
        guard case .live(let found) = try await store.codes.lookup(hashes: [Data("h1".utf8)], now: now + 1) else {
            Issue.record("expected a live code"); return
        }
        #expect(found.email == "ann@example.com" && found.languageCode == "ru" && found.continueURL == "https://app.example.com/done")
        let first = try await store.codes.consume(hashes: [Data("h1".utf8)], modes: [.resetPassword], now: now + 2, by: "test")
        guard case .consumed(let consumed) = first else { Issue.record("expected consumption, got \(first)"); return }
        #expect(consumed.consumedAt == now + 2 && consumed.consumedBy == "test")
        #expect(try await store.codes.consume(hashes: [Data("h1".utf8)], modes: [.resetPassword], now: now + 3, by: "test") == .invalid)
        #expect(try await store.codes.lookup(hashes: [Data("h1".utf8)], now: now + 3) == .invalid)
    }

    @Test("lookup never consumes", arguments: StoreFactory.kinds)
    func lookupDoesNotConsume(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.codes.issue(record("h1"))
        for _ in 0..<3 { _ = try await store.codes.lookup(hashes: [Data("h1".utf8)], now: now) }
        if case .consumed = try await store.codes.consume(hashes: [Data("h1".utf8)], modes: [.resetPassword], now: now, by: "t") {
        } else {
            Issue.record("the code should still be consumable")
        }
    }

    @Test("an expired code reads as expired and cannot be consumed", arguments: StoreFactory.kinds)
    func expiry(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.codes.issue(record("h1", lifetime: 1000))
        guard case .expired = try await store.codes.lookup(hashes: [Data("h1".utf8)], now: now + 1000) else {
            Issue.record("expected expired"); return
        }
        #expect(try await store.codes.consume(hashes: [Data("h1".utf8)], modes: [.resetPassword], now: now + 1000, by: "t") == .expired)
        #expect(try await store.codes.consume(hashes: [Data("h1".utf8)], modes: [.resetPassword], now: now + 999, by: "t") != .expired)
    }

    @Test("a code of another mode is not consumed and stays live", arguments: StoreFactory.kinds)
    func modeMismatch(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.codes.issue(record("h1", mode: .verifyEmail))
        #expect(try await store.codes.consume(hashes: [Data("h1".utf8)], modes: [.resetPassword], now: now, by: "t") == .invalid)
        guard case .live = try await store.codes.lookup(hashes: [Data("h1".utf8)], now: now) else { Issue.record("expected live"); return }
    }

    @Test("a new code retires the live code of the same address and mode only", arguments: StoreFactory.kinds)
    func oneLiveCode(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.codes.issue(record("old"))
        try await store.codes.issue(record("verify", mode: .verifyEmail))
        try await store.codes.issue(record("other-tenant", tenant: "t1"))
        try await store.codes.issue(record("new"))
        #expect(try await store.codes.lookup(hashes: [Data("old".utf8)], now: now) == .invalid)
        for live in ["new", "verify", "other-tenant"] {
            guard case .live = try await store.codes.lookup(hashes: [Data(live.utf8)], now: now) else {
                Issue.record("\(live) should be live"); continue
            }
        }
    }

    @Test("any accepted key's hash finds the code (key rotation)", arguments: StoreFactory.kinds)
    func rotation(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.codes.issue(record("under-old-key"))
        guard case .live = try await store.codes.lookup(hashes: [Data("under-new-key".utf8), Data("under-old-key".utf8)], now: now) else {
            Issue.record("expected live"); return
        }
    }

    @Test("64 concurrent consumers: exactly one wins", arguments: StoreFactory.kinds)
    func race(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        for round in 0..<5 {
            let hash = Data("race-\(round)".utf8)
            try await store.codes.issue(record("race-\(round)", email: "r\(round)@example.com"))
            let outcomes = try await withThrowingTaskGroup(of: CodeConsumption.self) { group in
                for index in 0..<64 {
                    group.addTask {
                        try await store.codes.consume(hashes: [hash], modes: [.resetPassword], now: self.now + 1, by: "c\(index)")
                    }
                }
                return try await group.reduce(into: [CodeConsumption]()) { $0.append($1) }
            }
            #expect(outcomes.filter { if case .consumed = $0 { return true } else { return false } }.count == 1)
            #expect(outcomes.filter { $0 == .invalid }.count == 63)
        }
    }

    @Test("retiring codes of an address voids all its outstanding codes", arguments: StoreFactory.kinds)
    func retire(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.codes.issue(record("a"))
        try await store.codes.issue(record("b", mode: .verifyEmail))
        try await store.codes.issue(record("c", email: "bob@example.com"))
        #expect(try await store.codes.retireCodes(tenantID: "", email: "ann@example.com", now: now) == 2)
        #expect(try await store.codes.lookup(hashes: [Data("a".utf8)], now: now) == .invalid)
        #expect(try await store.codes.lookup(hashes: [Data("b".utf8)], now: now) == .invalid)
        guard case .live = try await store.codes.lookup(hashes: [Data("c".utf8)], now: now) else {
            Issue.record("c should be live"); return
        }
    }

    @Test("event counters count per key and window", arguments: StoreFactory.kinds)
    func counters(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        #expect(try await store.codes.countEvents(keys: ["a", "b"], windowStart: 0) == [1, 1])
        #expect(try await store.codes.countEvents(keys: ["a"], windowStart: 0) == [2])
        #expect(try await store.codes.countEvents(keys: ["a"], windowStart: 3_600_000) == [1])
    }

    @Test("purge removes old used and expired codes, keeps live ones", arguments: StoreFactory.kinds)
    func purge(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.codes.issue(record("expired", email: "x@example.com", lifetime: 10))
        try await store.codes.issue(record("live", email: "y@example.com", lifetime: 10_000_000))
        #expect(try await store.codes.purge(before: now + 100) == 1)
        guard case .live = try await store.codes.lookup(hashes: [Data("live".utf8)], now: now + 100) else {
            Issue.record("live was purged"); return
        }
    }

    // MARK: Accounts

    @Test("accounts: create, find by ID and address, refuse a taken address", arguments: StoreFactory.kinds)
    func accounts(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.accounts.create(Account(localID: "u1", email: "ann@example.com", createdAt: now))
        #expect(try await store.accounts.account(id: "u1", tenantID: "")?.email == "ann@example.com")
        #expect(try await store.accounts.account(email: "ann@example.com", tenantID: "")?.localID == "u1")
        #expect(try await store.accounts.account(email: "ann@example.com", tenantID: "t1") == nil)
        await #expect(throws: AccountStoreError.emailExists) {
            try await store.accounts.create(Account(localID: "u2", email: "ann@example.com", createdAt: self.now))
        }
        try await store.accounts.create(Account(localID: "u2", tenantID: "t1", email: "ann@example.com", createdAt: now))
    }

    @Test("email-link sign-in creates a verified account, or not when sign-up is off", arguments: StoreFactory.kinds)
    func signInCreates(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        #expect(
            try await store.accounts.signInWithEmailLink(
                email: "new@example.com", tenantID: "", newAccountID: "n1", createIfMissing: false, now: now) == nil)
        let result = try #require(
            try await store.accounts.signInWithEmailLink(
                email: "new@example.com", tenantID: "", newAccountID: "n1", createIfMissing: true, now: now))
        #expect(result.isNewUser && result.account.emailVerified && result.account.localID == "n1")
        let again = try #require(
            try await store.accounts.signInWithEmailLink(
                email: "new@example.com", tenantID: "", newAccountID: "n2", createIfMissing: true, now: now))
        #expect(!again.isNewUser && again.account.localID == "n1")
    }

    @Test("email-link sign-in removes an unverified password and revokes sessions", arguments: StoreFactory.kinds)
    func signInRemovesImpostorPassword(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.accounts.create(
            Account(localID: "u1", email: "ann@example.com", emailVerified: false, passwordHash: "$scrypt$x", createdAt: now))
        try await store.accounts.addRefreshToken(hash: Data("impostor".utf8), accountID: "u1", tenantID: "", now: now)
        #expect(try await store.accounts.accountForRefreshToken(hash: Data("impostor".utf8))?.localID == "u1")
        let result = try #require(
            try await store.accounts.signInWithEmailLink(
                email: "ann@example.com", tenantID: "", newAccountID: "x", createIfMissing: true, now: now + 5000))
        #expect(result.removedUnverifiedPassword)
        #expect(result.account.passwordHash == nil && result.account.emailVerified && result.account.validSince == (now + 5000) / 1000)
        #expect(try await store.accounts.accountForRefreshToken(hash: Data("impostor".utf8)) == nil)
        let stored = try #require(try await store.accounts.account(id: "u1", tenantID: ""))
        #expect(stored.passwordHash == nil && stored.emailVerified)
    }

    @Test("a verified password survives email-link sign-in", arguments: StoreFactory.kinds)
    func signInKeepsVerifiedPassword(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.accounts.create(
            Account(localID: "u1", email: "ann@example.com", emailVerified: true, passwordHash: "$scrypt$x", createdAt: now))
        let result = try #require(
            try await store.accounts.signInWithEmailLink(
                email: "ann@example.com", tenantID: "", newAccountID: "x", createIfMissing: true, now: now))
        #expect(!result.removedUnverifiedPassword && result.account.passwordHash == "$scrypt$x")
    }

    @Test("a password reset sets the hash, verifies, revokes sessions and retires codes", arguments: StoreFactory.kinds)
    func resetPassword(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.accounts.create(Account(localID: "acct-1", email: "ann@example.com", createdAt: now))
        try await store.accounts.addRefreshToken(hash: Data("session".utf8), accountID: "acct-1", tenantID: "", now: now)
        try await store.codes.issue(record("other", mode: .verifyEmail))
        let account = try await store.accounts.resetPassword(
            accountID: "acct-1", tenantID: "", passwordHash: "$scrypt$new", now: now + 1000)
        #expect(account.passwordHash == "$scrypt$new" && account.emailVerified && account.passwordUpdatedAt == now + 1000)
        #expect(try await store.accounts.accountForRefreshToken(hash: Data("session".utf8)) == nil)
        #expect(try await store.codes.lookup(hashes: [Data("other".utf8)], now: now) == .invalid)
        await #expect(throws: AccountStoreError.accountNotFound) {
            _ = try await store.accounts.resetPassword(accountID: "nobody", tenantID: "", passwordHash: "h", now: self.now)
        }
    }

    @Test("verifying needs the address the code was issued for", arguments: StoreFactory.kinds)
    func verify(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.accounts.create(Account(localID: "u1", email: "ann@example.com", createdAt: now))
        await #expect(throws: AccountStoreError.emailChanged) {
            _ = try await store.accounts.verifyEmail(accountID: "u1", tenantID: "", email: "old@example.com", now: self.now)
        }
        #expect(try await store.accounts.verifyEmail(accountID: "u1", tenantID: "", email: "ann@example.com", now: now).emailVerified)
    }

    @Test("an email change moves the address, refuses a taken one, and retires both addresses' codes", arguments: StoreFactory.kinds)
    func changeEmail(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.accounts.create(Account(localID: "u1", email: "ann@example.com", createdAt: now))
        try await store.accounts.create(Account(localID: "u2", email: "taken@example.com", createdAt: now))
        await #expect(throws: AccountStoreError.emailExists) {
            _ = try await store.accounts.changeEmail(
                accountID: "u1", tenantID: "", from: "ann@example.com", to: "taken@example.com", now: self.now)
        }
        try await store.codes.issue(record("old-address-code", email: "ann@example.com", account: "u1"))
        let changed = try await store.accounts.changeEmail(
            accountID: "u1", tenantID: "", from: "ann@example.com", to: "new@example.com", now: now)
        #expect(changed.email == "new@example.com" && changed.emailVerified)
        #expect(try await store.accounts.account(email: "ann@example.com", tenantID: "") == nil)
        #expect(try await store.codes.lookup(hashes: [Data("old-address-code".utf8)], now: now) == .invalid)
        await #expect(throws: AccountStoreError.emailChanged) {
            _ = try await store.accounts.changeEmail(
                accountID: "u1", tenantID: "", from: "ann@example.com", to: "x@example.com", now: self.now)
        }
    }

    @Test("completing consumes and applies in one transaction: a failed effect leaves the code live", arguments: StoreFactory.kinds)
    func completeIsAtomic(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.accounts.create(Account(localID: "u1", email: "ann@example.com", createdAt: now))
        try await store.accounts.create(Account(localID: "u2", email: "taken@example.com", createdAt: now))
        var change = record("change", mode: .verifyAndChangeEmail, account: "u1")
        change.newEmail = "taken@example.com"
        try await store.codes.issue(change)
        let hashes = [Data("change".utf8)]
        let effect = CodeEffect.changeEmail(recoveryHash: Data("recover".utf8), recoveryExpiresAt: now + 7_200_000)
        await #expect(throws: AccountStoreError.emailExists) {
            _ = try await store.accounts.complete(
                hashes: hashes, modes: [.verifyAndChangeEmail], effect: effect, now: self.now + 1, by: "test")
        }
        guard case .live = try await store.codes.lookup(hashes: hashes, now: now + 2) else {
            Issue.record("the code must still be live after its effect failed"); return
        }
        #expect(try await store.accounts.account(id: "u1", tenantID: "")?.email == "ann@example.com")
        #expect(try await store.codes.lookup(hashes: [Data("recover".utf8)], now: now + 2) == .invalid, "no recovery code either")

        var free = record("change-2", mode: .verifyAndChangeEmail, account: "u1")
        free.newEmail = "new@example.com"
        try await store.codes.issue(free)
        let outcome = try await store.accounts.complete(
            hashes: [Data("change-2".utf8)], modes: [.verifyAndChangeEmail], effect: effect, now: now + 3, by: "test")
        guard case .completed(let done) = outcome else { Issue.record("expected completion, got \(outcome)"); return }
        #expect(done.account.email == "new@example.com" && done.record.consumedAt == now + 3)
        guard case .live(let recovery) = try await store.codes.lookup(hashes: [Data("recover".utf8)], now: now + 4) else {
            Issue.record("the recovery code is stored with the change"); return
        }
        #expect(recovery.mode == .recoverEmail && recovery.email == "ann@example.com" && recovery.newEmail == "new@example.com")
        #expect(try await store.codes.lookup(hashes: hashes, now: now + 4) == .invalid, "the change retired the other change code")
        #expect(
            try await store.accounts.complete(
                hashes: [Data("change-2".utf8)], modes: [.verifyAndChangeEmail], effect: effect, now: now + 5, by: "t")
                == .invalid)
    }

    @Test("a completed sign-in creates the account and its session with the consumption, or nothing", arguments: StoreFactory.kinds)
    func completeSignIn(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.codes.issue(record("sign-in", mode: .signIn, email: "new@example.com", account: nil))
        let hashes = [Data("sign-in".utf8)]
        let refused = CodeEffect.signIn(newAccountID: "n1", createIfMissing: false, refreshTokenHash: Data("r0".utf8))
        await #expect(throws: AccountStoreError.signUpNotAllowed) {
            _ = try await store.accounts.complete(hashes: hashes, modes: [.signIn], effect: refused, now: self.now + 1, by: "test")
        }
        guard case .live = try await store.codes.lookup(hashes: hashes, now: now + 2) else { Issue.record("still live"); return }
        let effect = CodeEffect.signIn(newAccountID: "n1", createIfMissing: true, refreshTokenHash: Data("r1".utf8))
        let outcome = try await store.accounts.complete(hashes: hashes, modes: [.signIn], effect: effect, now: now + 3, by: "test")
        guard case .completed(let done) = outcome else { Issue.record("expected completion, got \(outcome)"); return }
        #expect(done.isNewUser && done.account.localID == "n1" && done.account.emailVerified)
        #expect(try await store.accounts.accountForRefreshToken(hash: Data("r1".utf8))?.localID == "n1")
        #expect(try await store.accounts.complete(hashes: hashes, modes: [.signIn], effect: effect, now: now + 4, by: "t") == .invalid)
        try await store.codes.issue(record("late", mode: .signIn, email: "new@example.com", account: nil, lifetime: 10))
        #expect(
            try await store.accounts.complete(hashes: [Data("late".utf8)], modes: [.signIn], effect: effect, now: now + 11, by: "t")
                == .expired)
    }
}
