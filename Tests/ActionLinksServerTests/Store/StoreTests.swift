import ActionLinks
import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// The behaviour every store must have (docs/ARCHITECTURE.md §5), written once against the protocols.
@Suite("Stores", .timeLimit(.minutes(5)))
struct StoreTests {
    let now: Timestamp = Timestamp(milliseconds: 1_800_000_000_000)

    func record(
        _ hash: String, mode: ActionCodeLink.Mode = .resetPassword, email: String = "ann@example.com", tenant: String = "",
        account: String? = "acct-1", lifetime: Duration = .seconds(3600)
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
        guard case .live(let found) = try await store.codes.lookup(hashes: [Data("h1".utf8)], now: now + .milliseconds(1)) else {
            Issue.record("expected a live code"); return
        }
        #expect(found.email == "ann@example.com" && found.languageCode == "ru" && found.continueURL == "https://app.example.com/done")
        let first = try await store.codes.consume(
            hashes: [Data("h1".utf8)], modes: [.resetPassword], now: now + .milliseconds(2), by: "test")
        guard case .consumed(let consumed) = first else { Issue.record("expected consumption, got \(first)"); return }
        #expect(consumed.consumedAt == now + .milliseconds(2) && consumed.consumedBy == "test")
        #expect(
            try await store.codes.consume(hashes: [Data("h1".utf8)], modes: [.resetPassword], now: now + .milliseconds(3), by: "test")
                == .invalid)
        #expect(try await store.codes.lookup(hashes: [Data("h1".utf8)], now: now + .milliseconds(3)) == .invalid)
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
        try await store.codes.issue(record("h1", lifetime: .seconds(1)))
        guard case .expired = try await store.codes.lookup(hashes: [Data("h1".utf8)], now: now + .milliseconds(1000)) else {
            Issue.record("expected expired"); return
        }
        #expect(
            try await store.codes.consume(hashes: [Data("h1".utf8)], modes: [.resetPassword], now: now + .seconds(1), by: "t") == .expired)
        #expect(
            try await store.codes.consume(hashes: [Data("h1".utf8)], modes: [.resetPassword], now: now + .milliseconds(999), by: "t")
                != .expired)
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
                        try await store.codes.consume(
                            hashes: [hash], modes: [.resetPassword], now: self.now + .milliseconds(1), by: "c\(index)")
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
        #expect(try await store.codes.countEvents(keys: ["a", "b"], windowStart: .epoch) == [1, 1])
        #expect(try await store.codes.countEvents(keys: ["a"], windowStart: .epoch) == [2])
        #expect(try await store.codes.countEvents(keys: ["a"], windowStart: Timestamp(milliseconds: 3_600_000)) == [1])
        // Taking one back (a reserved attempt that did not count) never goes below zero, and
        // touches only its window.
        try await store.codes.uncountEvents(keys: ["a", "b"], windowStart: .epoch)
        try await store.codes.uncountEvents(keys: ["b", "never-counted"], windowStart: .epoch)
        #expect(try await store.codes.countEvents(keys: ["a", "b", "never-counted"], windowStart: .epoch) == [2, 1, 1])
        #expect(try await store.codes.countEvents(keys: ["a"], windowStart: Timestamp(milliseconds: 3_600_000)) == [2])
    }

    @Test("concurrent counts are distinct: counting first, a limit cannot be passed together", arguments: StoreFactory.kinds)
    func concurrentCounts(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<40 {
                group.addTask { try await store.codes.countEvents(keys: ["limit:x", "limit:ip"], windowStart: .epoch)[0] }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(counts.sorted() == Array(1...40))
    }

    @Test("purge removes old used and expired codes, keeps live ones", arguments: StoreFactory.kinds)
    func purge(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.codes.issue(record("expired", email: "x@example.com", lifetime: .milliseconds(10)))
        try await store.codes.issue(record("live", email: "y@example.com", lifetime: .seconds(10_000)))
        #expect(try await store.codes.purge(before: now + .milliseconds(100), countsBefore: now, longCountsBefore: now) == 1)
        guard case .live = try await store.codes.lookup(hashes: [Data("live".utf8)], now: now + .milliseconds(100)) else {
            Issue.record("live was purged"); return
        }
    }

    // MARK: Accounts

    /// An account with a password and a linked provider.
    func account(_ id: String, email: String? = nil, tenant: String = "", phone: String? = nil, identity: String? = nil) -> Account {
        Account(
            localID: id, tenantID: tenant, email: email, passwordHash: "$scrypt$x", phoneNumber: phone, createdAt: now,
            customAttributes: #"{"role":"admin"}"#,
            federatedIdentities: identity.map { [FederatedIdentity(providerID: "yahoo.com", rawID: $0, email: email)] } ?? [])
    }

    @Test(
        "accounts: every field round-trips; found by ID, address, phone and provider identity, each within its tenant",
        arguments: StoreFactory.kinds)
    func accounts(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        var ann = account("u1", email: "ann@example.com", phone: "+15555550100", identity: "yahoo-1")
        ann.displayName = "Ann"
        ann.photoURL = "https://example.com/ann.png"
        ann.lastLoginAt = now + .milliseconds(1)
        ann.lastRefreshAt = now + .milliseconds(2)
        ann.validSince = 1_800_000
        ann.initialEmail = "old@example.com"
        ann.emailLinkSignin = true
        ann.customAuth = true
        try await store.accounts.transaction(tenantID: "", now: now) { [ann] tx in try tx.insert(ann) }
        #expect(try await store.accounts.account(id: "u1", tenantID: "") == ann)
        #expect(try await store.accounts.account(email: "ann@example.com", tenantID: "") == ann)
        #expect(try await store.accounts.account(email: "ann@example.com", tenantID: "t1") == nil)
        let found = try await store.accounts.transaction(tenantID: "", now: now) { tx in
            [
                try tx.account(phoneNumber: "+15555550100"), try tx.account(providerID: "yahoo.com", rawID: "yahoo-1"),
                try tx.accounts(providerEmail: "ann@example.com").first,
            ]
        }
        #expect(found.allSatisfy { $0?.localID == "u1" })
        // The same address, phone and identity in another tenant are another account's.
        try await store.accounts.transaction(tenantID: "t1", now: now) { tx in
            try tx.insert(self.account("u1", email: "ann@example.com", tenant: "t1", phone: "+15555550100", identity: "yahoo-1"))
        }
        #expect(try await store.accounts.countAccounts(tenantID: "") == 1)
        #expect(try await store.accounts.countAccounts(tenantID: "t1") == 1)
    }

    @Test("a clash on an ID, an address, a phone number or a provider identity is refused", arguments: StoreFactory.kinds)
    func clashes(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.accounts.transaction(tenantID: "", now: now) { tx in
            try tx.insert(self.account("u1", email: "ann@example.com", phone: "+15555550100", identity: "yahoo-1"))
        }
        let clashing: [(Account, AccountStoreError)] = [
            (account("u1", email: "other@example.com"), .localIDExists), (account("u2", email: "ann@example.com"), .emailExists),
            (account("u3", phone: "+15555550100"), .phoneNumberExists), (account("u4", identity: "yahoo-1"), .federatedIdentityExists),
        ]
        for (candidate, expected) in clashing {
            await #expect(throws: expected) {
                try await store.accounts.transaction(tenantID: "", now: self.now) { tx in try tx.insert(candidate) }
            }
        }
        #expect(try await store.accounts.countAccounts(tenantID: "") == 1)
    }

    @Test("a unit of work sees its own writes; one that throws changes nothing, a consumed code included", arguments: StoreFactory.kinds)
    func transactions(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.codes.issue(record("h1", account: "u1"))
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await store.accounts.transaction(tenantID: "", now: self.now) { tx in
                guard case .live(let code) = try tx.code(hashes: [Data("h1".utf8)]) else { return }
                try tx.consume(code, by: "test")
                try tx.insert(self.account("u1", email: "ann@example.com"))
                #expect(try tx.account(email: "ann@example.com")?.localID == "u1")
                throw Refused()
            }
        }
        #expect(try await store.accounts.account(id: "u1", tenantID: "") == nil)
        guard case .live = try await store.codes.lookup(hashes: [Data("h1".utf8)], now: now) else {
            Issue.record("the code should be live"); return
        }
        // The same work without the refusal keeps everything.
        let consumed = try await store.accounts.transaction(tenantID: "", now: now) { tx -> Bool in
            guard case .live(let code) = try tx.code(hashes: [Data("h1".utf8)]) else { return false }
            try tx.consume(code, by: "test")
            try tx.insert(self.account("u1", email: "ann@example.com"))
            return try tx.code(hashes: [Data("h1".utf8)]) == .invalid
        }
        #expect(consumed)
        #expect(try await store.codes.lookup(hashes: [Data("h1".utf8)], now: now) == .invalid)
        #expect(try await store.accounts.account(id: "u1", tenantID: "") != nil)
    }

    @Test(
        "update replaces the fields and identities; delete removes the account, its identities and its sessions",
        arguments: StoreFactory.kinds)
    func updateAndDelete(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        let session = Session(
            hash: Data("s".utf8), tenantID: "", accountID: "u1", createdAt: now, signInProvider: "password", authTime: now.seconds)
        try await store.accounts.transaction(tenantID: "", now: now) { tx in
            try tx.insert(self.account("u1", email: "ann@example.com", identity: "yahoo-1"))
            try tx.addSession(session)
        }
        #expect(try await store.accounts.session(hash: Data("s".utf8))?.session == session)
        // A refresh's read gives the account as `account(id:)` does, identities included.
        #expect(try await store.accounts.session(hash: Data("s".utf8))?.account == store.accounts.account(id: "u1", tenantID: ""))
        var changed = try #require(try await store.accounts.account(id: "u1", tenantID: ""))
        changed.email = "new@example.com"
        changed.federatedIdentities = [
            FederatedIdentity(providerID: "oidc.corp", rawID: "corp-1"),
            FederatedIdentity(
                providerID: "yahoo.com", rawID: "yahoo-2", email: "ann@yahoo.com", displayName: "Ann", photoURL: "https://p.example/a",
                screenName: "ann"),
        ]
        try await store.accounts.transaction(tenantID: "", now: now) { [changed] tx in try tx.update(changed) }
        #expect(try await store.accounts.account(id: "u1", tenantID: "") == changed)
        #expect(try await store.accounts.session(hash: Data("s".utf8))?.account == changed)
        #expect(try await store.accounts.session(hash: Data("s".utf8))?.session == session)
        let gone = try await store.accounts.transaction(tenantID: "", now: now) { tx in
            try tx.account(providerID: "yahoo.com", rawID: "yahoo-1")
        }
        #expect(gone == nil)
        try await store.accounts.transaction(tenantID: "", now: now) { tx in try tx.delete(id: "u1") }
        #expect(try await store.accounts.account(id: "u1", tenantID: "") == nil)
        #expect(try await store.accounts.session(hash: Data("s".utf8)) == nil)
        // Its sessions are remembered as a deleted account's (refresh: USER_NOT_FOUND), others not.
        #expect(try await store.accounts.endedSession(hash: Data("s".utf8)) == .ofDeletedAccount)
        #expect(try await store.accounts.endedSession(hash: Data("other".utf8)) == nil)
        // The identity is free again.
        try await store.accounts.transaction(tenantID: "", now: now) { tx in
            try tx.insert(self.account("u2", identity: "corp-1"))
        }
    }

    @Test("pages of accounts by ID, counts, and deleting a tenant's accounts", arguments: StoreFactory.kinds)
    func paging(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.accounts.transaction(tenantID: "", now: now) { tx in
            try tx.prefetch((0..<25).map { .id(String(format: "u%02d", $0)) })
            for index in 0..<25 { try tx.insert(self.account(String(format: "u%02d", index), email: "u\(index)@example.com")) }
            try tx.addSession(
                Session(
                    hash: Data("u00".utf8), tenantID: "", accountID: "u00", createdAt: self.now, signInProvider: "password", authTime: 0))
        }
        let first = try await store.accounts.accounts(tenantID: "", after: nil, limit: 10)
        #expect(first.map(\.localID) == (0..<10).map { String(format: "u%02d", $0) })
        let last = try await store.accounts.accounts(tenantID: "", after: "u19", limit: 10)
        #expect(last.map(\.localID) == (20..<25).map { String(format: "u%02d", $0) })
        #expect(try await store.accounts.countAccounts(tenantID: "") == 25)
        try await store.accounts.transaction(tenantID: "", now: now) { tx in try tx.delete(id: "u00") }
        #expect(try await store.accounts.endedSession(hash: Data("u00".utf8)) == .ofDeletedAccount)
        #expect(try await store.accounts.countAccounts(tenantID: "") == 24)
        try await store.accounts.deleteAllAccounts(tenantID: "")
        #expect(try await store.accounts.countAccounts(tenantID: "") == 0)
        #expect(try await store.accounts.endedSession(hash: Data("u00".utf8)) == nil, "the emulator's reset forgets all")
    }

    @Test("tenants made through the API: saved, read, listed by ID, deleted", arguments: StoreFactory.kinds)
    func tenants(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        let tenant = TenantRecord(tenantID: "team-a1b2c", displayName: "Team", allowPasswordSignup: true, createdAt: now)
        try await store.tenants.save(tenant)
        try await store.tenants.save(TenantRecord(tenantID: "other", createdAt: now))
        #expect(try await store.tenants.tenant(id: "team-a1b2c") == tenant)
        #expect(try await store.tenants.tenants(after: nil, limit: 10).map(\.tenantID) == ["other", "team-a1b2c"])
        #expect(try await store.tenants.tenants(after: "other", limit: 10).map(\.tenantID) == ["team-a1b2c"])
        #expect(try await store.tenants.deleteTenant(id: "other"))
        #expect(try await store.tenants.tenant(id: "other") == nil)
    }
}
