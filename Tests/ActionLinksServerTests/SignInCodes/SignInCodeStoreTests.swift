import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The behaviour every sign-in code store must have (``SignInCodeStore``), written once and run on
/// SQLite and PostgreSQL, as ``StoreTests`` does for the other stores.
@Suite("Sign-in code stores", .timeLimit(.minutes(5)))
struct SignInCodeStoreTests {
    let now = Timestamp(milliseconds: 1_800_000_000_000)
    let window = Timestamp(milliseconds: 1_799_998_800_000)

    func record(_ mac: String, email: String = "ann@example.com", tenant: String = "", lifetime: Duration = .seconds(900))
        -> SignInCodeRecord
    {
        SignInCodeRecord(
            tenantID: tenant, email: email, mac: Data(mac.utf8), sealedLink: Data("sealed \(mac)".utf8), createdAt: now,
            expiresAt: now + lifetime)
    }

    /// One try with generous limits, as the service makes it.
    func tryCode(_ store: StoreUnderTest, email: String = "ann@example.com", tenant: String = "", at time: Timestamp? = nil, tries: Int = 5)
        async throws -> SignInCodeTry
    {
        try await store.signInCodes.tryCode(
            tenantID: tenant, email: email, now: time ?? now, maximumTries: tries,
            stages: [EventLimitStage(limits: [EventLimit(key: "test:address:" + email, maximum: 1000)], windowStart: window)])
    }

    /// A try that found the code of `record(mac)` (or, for `nil`, none).
    static func counted(_ mac: String?) -> SignInCodeTry {
        .counted(mac: mac.map { Data($0.utf8) }, sealedLink: mac.map { Data("sealed \($0)".utf8) })
    }

    @Test(
        "each try is counted before the check: past the most tries no try finds the code; a right code is used once",
        arguments: StoreFactory.kinds)
    func triesAndUse(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.signInCodes.issue(record("mac-1"))
        for _ in 0..<3 { #expect(try await tryCode(store) == Self.counted("mac-1")) }
        // A use with another MAC (a wrong code that got past a broken check) uses nothing.
        #expect(
            try await store.signInCodes.use(tenantID: "", email: "ann@example.com", mac: Data("mac-2".utf8), now: now, givingBack: [])
                == nil)
        #expect(
            try await store.signInCodes.use(tenantID: "", email: "ann@example.com", mac: Data("mac-1".utf8), now: now, givingBack: [])
                == Data("sealed mac-1".utf8))
        #expect(
            try await store.signInCodes.use(tenantID: "", email: "ann@example.com", mac: Data("mac-1".utf8), now: now, givingBack: [])
                == nil)
        #expect(try await tryCode(store) == Self.counted(nil), "a used code is not tried")

        try await store.signInCodes.issue(record("mac-3", email: "bob@example.com"))
        for _ in 0..<5 { #expect(try await tryCode(store, email: "bob@example.com") == Self.counted("mac-3")) }
        #expect(try await tryCode(store, email: "bob@example.com") == Self.counted(nil), "the sixth try finds no code")
        // The row is still there (and unused): a use, which only follows a try that found it, finds it.
        #expect(try await tryCode(store, email: "bob@example.com", tries: 6) == Self.counted("mac-3"))
    }

    @Test("a new code replaces the address's code: its tries start again and the old MAC uses nothing", arguments: StoreFactory.kinds)
    func replacement(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.signInCodes.issue(record("old"))
        for _ in 0..<5 { _ = try await tryCode(store) }
        #expect(try await tryCode(store) == Self.counted(nil))
        try await store.signInCodes.issue(record("new"))
        #expect(try await tryCode(store) == Self.counted("new"))
        #expect(
            try await store.signInCodes.use(tenantID: "", email: "ann@example.com", mac: Data("old".utf8), now: now, givingBack: []) == nil)
        #expect(
            try await store.signInCodes.use(tenantID: "", email: "ann@example.com", mac: Data("new".utf8), now: now, givingBack: [])
                == Data("sealed new".utf8))
        // A code issued again after a use is live again.
        try await store.signInCodes.issue(record("again"))
        #expect(try await tryCode(store) == Self.counted("again"))
    }

    @Test("an expired code is neither tried nor used; tenants and addresses are apart", arguments: StoreFactory.kinds)
    func expiryAndScope(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.signInCodes.issue(record("short", lifetime: .seconds(60)))
        try await store.signInCodes.issue(record("tenant", tenant: "t1"))
        #expect(try await tryCode(store, at: now + .milliseconds(59_999)) == Self.counted("short"))
        #expect(try await tryCode(store, at: now + .seconds(60)) == Self.counted(nil))
        #expect(
            try await store.signInCodes.use(
                tenantID: "", email: "ann@example.com", mac: Data("short".utf8), now: now + .seconds(60), givingBack: []) == nil
        )
        #expect(try await tryCode(store, tenant: "t1") == Self.counted("tenant"))
        #expect(try await tryCode(store, tenant: "t2") == Self.counted(nil))
        #expect(try await tryCode(store, email: "nobody@example.com") == Self.counted(nil))
        #expect(
            try await store.signInCodes.use(tenantID: "t2", email: "ann@example.com", mac: Data("tenant".utf8), now: now, givingBack: [])
                == nil)
    }

    @Test(
        "the limits are counted with each try, stage by stage, in the code store's counts; past one, the try is not counted and the later stages count nothing",
        arguments: StoreFactory.kinds)
    func limits(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.signInCodes.issue(record("mac"))
        let stages = [
            EventLimitStage(limits: [EventLimit(key: "ip:1", maximum: 2)], windowStart: window),
            EventLimitStage(limits: [EventLimit(key: "address:ann", maximum: 10)], windowStart: window),
        ]
        func tried() async throws -> SignInCodeTry {
            try await store.signInCodes.tryCode(tenantID: "", email: "ann@example.com", now: now, maximumTries: 3, stages: stages)
        }
        for _ in 0..<2 { #expect(try await tried() == Self.counted("mac")) }
        for _ in 0..<3 { #expect(try await tried() == .limited(stage: 0)) }
        // The limited tries were not counted against the code: one of its three is left.
        #expect(try await tryCode(store, tries: 3) == Self.counted("mac"))
        #expect(try await tryCode(store, tries: 3) == Self.counted(nil))
        // The counts are the code store's: five under the IP (the sixth count here), and only the two
        // tries the IP let through under the address (a request refused for its IP spends nothing of
        // the address's budget).
        #expect(try await store.codes.countEvents(keys: ["ip:1", "address:ann"], windowStart: window) == [6, 3])
        // A later stage over its limit is told by its index.
        let tight = [stages[0], EventLimitStage(limits: [EventLimit(key: "address:bob", maximum: 0)], windowStart: window)]
        #expect(
            try await store.signInCodes.tryCode(tenantID: "", email: "bob@example.com", now: now, maximumTries: 3, stages: tight)
                == .limited(stage: 0))
        let other = [EventLimitStage(limits: [EventLimit(key: "ip:2", maximum: 5)], windowStart: window), tight[1]]
        #expect(
            try await store.signInCodes.tryCode(tenantID: "", email: "bob@example.com", now: now, maximumTries: 3, stages: other)
                == .limited(stage: 1))
    }

    @Test(
        "a right code's use takes back the counts it is given (never below zero); a use that finds nothing takes back nothing",
        arguments: StoreFactory.kinds)
    func givingBack(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.signInCodes.issue(record("mac"))
        let failures = [EventLimitStage(limits: [EventLimit(key: "failures:ann", maximum: 10)], windowStart: window)]
        for _ in 0..<2 {
            _ = try await store.signInCodes.tryCode(tenantID: "", email: "ann@example.com", now: now, maximumTries: 5, stages: failures)
        }
        #expect(
            try await store.signInCodes.use(tenantID: "", email: "ann@example.com", mac: Data("other".utf8), now: now, givingBack: failures)
                == nil)
        #expect(
            try await store.signInCodes.use(tenantID: "", email: "ann@example.com", mac: Data("mac".utf8), now: now, givingBack: failures)
                == Data("sealed mac".utf8))
        #expect(
            try await store.signInCodes.use(tenantID: "", email: "ann@example.com", mac: Data("mac".utf8), now: now, givingBack: failures)
                == nil)
        // Two counted, one taken back (the right code), then this count: 2.
        #expect(try await store.codes.countEvents(keys: ["failures:ann"], windowStart: window) == [2])
    }

    @Test("16 concurrent uses of one code: exactly one gets the link", arguments: StoreFactory.kinds)
    func concurrentUses(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        for round in 0..<3 {
            let email = "race\(round)@example.com"
            try await store.signInCodes.issue(record("mac-\(round)", email: email))
            let links = try await withThrowingTaskGroup(of: Data?.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        try await store.signInCodes.use(
                            tenantID: "", email: email, mac: Data("mac-\(round)".utf8), now: self.now, givingBack: [])
                    }
                }
                return try await group.reduce(into: [Data?]()) { $0.append($1) }
            }
            #expect(links.compactMap { $0 } == [Data("sealed mac-\(round)".utf8)])
        }
    }

    @Test("16 concurrent tries of a code allowed five: exactly five find it", arguments: StoreFactory.kinds)
    func concurrentTries(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.signInCodes.issue(record("mac"))
        let found = try await withThrowingTaskGroup(of: SignInCodeTry.self) { group in
            for _ in 0..<16 { group.addTask { try await self.tryCode(store) } }
            return try await group.reduce(into: [SignInCodeTry]()) { $0.append($1) }
        }
        #expect(found.filter { $0 == Self.counted("mac") }.count == 5)
        #expect(found.filter { $0 == Self.counted(nil) }.count == 11)
    }

    @Test("purge removes expired and used codes and keeps live ones", arguments: StoreFactory.kinds)
    func purge(kind: String) async throws {
        let store = try await StoreFactory.make(kind)
        try await store.signInCodes.issue(record("expired", email: "x@example.com", lifetime: .seconds(1)))
        try await store.signInCodes.issue(record("used", email: "y@example.com"))
        try await store.signInCodes.issue(record("live", email: "z@example.com"))
        _ = try await store.signInCodes.use(tenantID: "", email: "y@example.com", mac: Data("used".utf8), now: now, givingBack: [])
        #expect(try await store.signInCodes.purge(before: now + .seconds(2)) == 2)
        #expect(try await tryCode(store, email: "z@example.com") == Self.counted("live"))
        #expect(try await store.signInCodes.purge(before: now + .seconds(2)) == 0)
    }
}
