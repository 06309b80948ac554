import ActionLinksConfiguration
import ActionLinksTestSupport
import Crypto
import Foundation
import Logging
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// ``SignInCodes`` over the real stores: the code derived and never stored, the exchange's single
/// winner, and the same work for every refusal.
@Suite("Sign-in code service", .timeLimit(.minutes(5)))
struct SignInCodeServiceTests {
    static let link = "https://links.test.example/__/auth/action?mode=signIn&oobCode=AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHHIIIIJJJJKKK&apiKey=k"

    static func service(
        _ store: any SignInCodeStore, settings: SignInCodeSettings = SignInCodeSettings(), key: SymmetricKey = SymmetricKey(size: .bits256),
        clock: any ServiceClock = ManualClock(), limits given: LimitSettings? = nil
    ) throws -> SignInCodes {
        // The shipped defaults' limits (20 exchanges an hour per address, 100 per IP, 10 wrong codes
        // a day and 60 in 30 days per address).
        let limits = try given ?? ActionLinksConfiguration.parse(yaml: "", file: "t.yaml").service.limits
        return SignInCodes(
            settings: settings, limits: limits, keys: SignInCodeKeys(formKey: key), store: store,
            gateway: StoreGateway(logger: Logger(label: "test")), clock: clock)
    }

    /// A code that is not `code`: each digit moved on by one.
    static func wrong(_ code: String) -> String {
        String(code.map { Character(String((Int(String($0))! + 1) % 10)) })
    }

    @Test(
        "16 concurrent exchanges of the right code: exactly one gets the link, the others INVALID_SIGN_IN_CODE",
        arguments: StoreFactory.kinds, [5, 20])
    func concurrentExchanges(kind: String, attempts: Int) async throws {
        let store = try await StoreFactory.make(kind)
        var settings = SignInCodeSettings()
        settings.attempts = attempts
        let clock = ManualClock()
        // The 15 losers count as wrong codes: room for all of them, so that only the race decides.
        var limits = try ActionLinksConfiguration.parse(yaml: "", file: "t.yaml").service.limits
        limits.signInCodeFailuresPerAddressPerDay = 1000
        limits.signInCodeFailuresPerAddressPer30Days = 1000
        let codes = try Self.service(store.signInCodes, settings: settings, clock: clock, limits: limits)
        for round in 0..<3 {
            let email = "race\(round)@example.com"
            let code = try #require(
                try await codes.issue(
                    tenantID: "", email: email, link: Self.link + "&r=\(round)", oobCode: "oob-\(round)", linkHash: nil,
                    linkExpiry: clock.now + .seconds(3600)))
            let outcomes = await withTaskGroup(of: Result<SignInCodes.Exchange, ActionError>.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        do throws(ActionError) {
                            return .success(
                                try await codes.exchange(
                                    email: email, code: SignInCodes.grouped(code), tenantID: "", clientAddress: "10.0.\(round).\(index)"))
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                return await group.reduce(into: [Result<SignInCodes.Exchange, ActionError>]()) { $0.append($1) }
            }
            let winners = outcomes.compactMap { try? $0.get() }
            #expect(
                winners == [SignInCodes.Exchange(emailLink: Self.link + "&r=\(round)", email: email)], "\(kind) \(attempts): \(outcomes)")
            for case .failure(let error) in outcomes { #expect(error == ActionError.invalidSignInCode) }
        }
    }

    /// The store calls a service makes, forwarded to a real store.
    final class RecordingStore: SignInCodeStore {
        let store: any SignInCodeStore
        let calls = Locked<[String]>([])

        init(_ store: any SignInCodeStore) { self.store = store }

        func issue(_ record: SignInCodeRecord) async throws {
            calls.withLock { $0.append("issue") }
            try await store.issue(record)
        }

        func tryCode(tenantID: String, email: String, now: Timestamp, maximumTries: Int, stages: [EventLimitStage]) async throws
            -> SignInCodeTry
        {
            let keys = stages.flatMap(\.limits).map { $0.key.split(separator: ":").dropLast().joined(separator: ":") }
            calls.withLock { $0.append("tryCode(tries: \(maximumTries), limits: \(keys))") }
            return try await store.tryCode(tenantID: tenantID, email: email, now: now, maximumTries: maximumTries, stages: stages)
        }

        func use(tenantID: String, email: String, mac: Data, now: Timestamp, givingBack: [EventLimitStage]) async throws -> Data? {
            calls.withLock { $0.append("use") }
            return try await store.use(tenantID: tenantID, email: email, mac: mac, now: now, givingBack: givingBack)
        }

        func purge(before cutoff: Timestamp) async throws -> Int { try await store.purge(before: cutoff) }
    }

    @Test(
        "an address with no code, a code of another tenant, a used or dead code are refused as a wrong one: the same error after the same store call",
        arguments: StoreFactory.kinds)
    func sameRefusal(kind: String) async throws {
        let store = RecordingStore(try await StoreFactory.make(kind).signInCodes)
        let clock = ManualClock()
        let codes = try Self.service(store, clock: clock)
        let code = try #require(
            try await codes.issue(
                tenantID: "", email: "ann@example.com", link: Self.link, oobCode: "oob", linkHash: nil,
                linkExpiry: clock.now + .seconds(3600)))
        func refusal(_ email: String, _ typed: String, tenant: String = "") async -> (ActionError?, [String]) {
            store.calls.set([])
            do throws(ActionError) {
                _ = try await codes.exchange(email: email, code: typed, tenantID: tenant, clientAddress: "192.0.2.1")
                return (nil, store.calls.value)
            } catch {
                return (error, store.calls.value)
            }
        }
        let expected = (
            ActionError.invalidSignInCode,
            [
                "tryCode(tries: 5, limits: [\"sign-in-code:ip\", \"sign-in-code:address\", \"sign-in-code:failures:day\", \"long:sign-in-code:failures:30d\"])"
            ]
        )
        let wrong = await refusal("ann@example.com", Self.wrong(code))
        let unknown = await refusal("nobody@example.com", Self.wrong(code))
        let unknownRight = await refusal("nobody@example.com", code)
        let otherTenant = await refusal("ann@example.com", code, tenant: "t1")
        for (name, outcome) in [
            ("wrong", wrong), ("unknown", unknown), ("unknown, the right digits", unknownRight), ("other tenant", otherTenant),
        ] {
            #expect(outcome.0 == expected.0 && outcome.1 == expected.1, "\(name): \(outcome)")
        }
        // The right code: one try, then the use.
        let right = await refusal("ann@example.com", code)
        #expect(right.0 == nil && right.1 == [expected.1[0], "use"], "\(right)")
        // Used: refused as the others, after the same one call.
        let used = await refusal("ann@example.com", code)
        #expect(used.0 == expected.0 && used.1 == expected.1, "used: \(used)")
        // The error's body is one and the same for all of them.
        #expect(wrong.0?.body == unknown.0?.body && unknown.0?.body == used.0?.body && wrong.0?.status == .badRequest)
    }

    @Test("the code is a function of the oobCode under the server key: the same digits each time, leading zeros kept, evenly spread")
    func derivation() throws {
        let key = SymmetricKey(size: .bits256)
        let keys = SignInCodeKeys(formKey: key)
        #expect(keys.code(oobCode: "abc", digits: 6) == SignInCodeKeys(formKey: key).code(oobCode: "abc", digits: 6))
        #expect(
            keys.code(oobCode: "abc", digits: 6) != SignInCodeKeys(formKey: SymmetricKey(size: .bits256)).code(oobCode: "abc", digits: 6))
        var firstDigits = [Int](repeating: 0, count: 10)
        var leadingZero = false
        for index in 0..<20_000 {
            let code = keys.code(oobCode: "oob-\(index)", digits: 6)
            #expect(code.count == 6 && code.allSatisfy(\.isNumber))
            firstDigits[Int(String(code.first!))!] += 1
            if code.first == "0" { leadingZero = true }
        }
        #expect(leadingZero)
        // 2,000 expected in each; a spread this wide is beyond nine standard deviations.
        #expect(firstDigits.allSatisfy { (1_600...2_400).contains($0) }, "\(firstDigits)")
        for digits in 6...10 { #expect(keys.code(oobCode: "x", digits: digits).count == digits) }
    }

    @Test("codes are shown in groups and read back however they are typed")
    func shapes() {
        #expect(
            ["123456", "1234567", "12345678", "123456789", "1234567890"].map(SignInCodes.grouped) == [
                "123 456", "123 4567", "1234 5678", "123 456 789", "123 456 7890",
            ])
        for typed in ["123456", "123 456", "123-456", " 123 456 ", "１２３４５６", "١٢٣٤٥٦", "\u{2066}123 456\u{2069}", "12\u{00A0}34–56"] {
            #expect(SignInCodes.normalized(typed, digits: 6) == "123456", "\(typed)")
        }
        for typed in ["12345", "1234567", "12a456", "", "123.456", String(repeating: " ", count: 100) + "123456"] {
            #expect(SignInCodes.normalized(typed, digits: 6) == nil, "\(typed)")
        }
    }

    @Test("the sealed link opens only with its own code, tenant and address")
    func sealing() throws {
        let keys = SignInCodeKeys(formKey: SymmetricKey(size: .bits256))
        let key = keys.sealingKey(tenantID: "t", email: "ann@example.com", code: "123456")
        let sealed = try keys.seal(Self.link, with: key, tenantID: "t", email: "ann@example.com")
        #expect(keys.open(sealed, with: key, tenantID: "t", email: "ann@example.com") == Self.link)
        #expect(sealed.range(of: Data("oobCode".utf8)) == nil && sealed.range(of: Data("123456".utf8)) == nil)
        let otherCode = keys.sealingKey(tenantID: "t", email: "ann@example.com", code: "123457")
        #expect(keys.open(sealed, with: otherCode, tenantID: "t", email: "ann@example.com") == nil)
        #expect(keys.open(sealed, with: key, tenantID: "", email: "ann@example.com") == nil)
        #expect(keys.open(sealed, with: key, tenantID: "t", email: "bob@example.com") == nil)
        #expect(keys.mac(tenantID: "t", email: "a", code: "1") != keys.mac(tenantID: "ta", email: "", code: "1"))
    }
}
