import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksConfiguration
@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The sign-in code exchange against an attacker (docs/SECURITY.md, "Sign-in codes and client
/// addresses"): guesses over days, a client that picks its own bucket or spends another's budget, a
/// code that outlives its link, and a page that makes its visitors' browsers guess.
@Suite("Sign-in codes under attack", .timeLimit(.minutes(5)))
struct SignInCodeAttackTests {
    typealias Codes = SignInCodeTests

    /// The admin's sign-in link for `email`: its `oobCode` and its sign-in code.
    static func adminLink(_ app: TestApp, _ email: String) async throws -> (oobCode: String, code: String) {
        let reply = try await app.api(
            "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": email, "returnOobLink": true], admin: true)
        let oobCode = try #require(reply.json["oobCode"] as? String, "\(reply.text)")
        return (oobCode, try #require(reply.json["signInCode"] as? String, "\(reply.text)"))
    }

    /// The environment of a store of `kind` (a fresh PostgreSQL database, or the default SQLite file).
    static func store(_ kind: String) async throws -> [String: String] {
        kind == "postgres" ? ["ACTIONLINKS_STORE": try await PostgresTestServer.freshDatabaseURL()] : [:]
    }

    /// The counts of `actionlinks_sign_in_code_exchanges_total` by outcome.
    static func exchangeCounts(_ app: TestApp) async throws -> [String: Int] {
        let text = try await app.request("GET", "/metrics", headers: ["Authorization": "Bearer owner"]).text
        var counts: [String: Int] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("actionlinks_sign_in_code_exchanges_total{") {
            guard let outcome = line.split(separator: "\"").dropFirst().first, let value = line.split(separator: " ").last else { continue }
            counts[String(outcome)] = Int(Double(value) ?? -1)
        }
        return counts
    }

    @Test(
        "wrong codes for one address are bounded per UTC day (10) and per 30 days (60), however many mails bring new codes; a right code is not counted; each refusal says when to come back and shows in /metrics",
        arguments: StoreFactory.kinds)
    func guessesOverDays(kind: String) async throws {
        let day = 86_400
        // An hour into a 30-day window, so that every day below is in it.
        let clock = ManualClock(start: Timestamp.now.roundedDown(to: .seconds(30 * day)) + .seconds(3600))
        try await TestApp.router(environment: try await Self.store(kind), clock: clock) { app in
            let email = "victim@example.com"
            var wrong = 0
            /// Guesses wrong until refused; returns how many were taken as guesses and the refusal.
            func guessUntilRefused() async throws -> (guesses: Int, refusal: HTTPReply) {
                var guesses = 0
                while true {
                    // A new mail every four guesses, as an attacker would ask for: fresh tries each time.
                    let (_, code) = try await Self.adminLink(app, email)
                    for step in 1...4 {
                        let reply = try await Codes.exchange(app, email: email, code: Codes.shifted(code, by: step))
                        if reply.status == 429 { return (guesses, reply) }
                        #expect(reply.errorCode == "INVALID_SIGN_IN_CODE", "\(reply.text)")
                        guesses += 1
                    }
                }
            }
            for dayIndex in 0..<6 {
                let (guesses, refusal) = try await guessUntilRefused()
                wrong += guesses
                #expect(guesses == 10, "day \(dayIndex): \(guesses) wrong codes taken")
                #expect(refusal.errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER", "\(refusal.text)")
                let secondsLeft = day - Int(clock.now.milliseconds / 1000 % Int64(day))
                #expect(refusal.header("Retry-After") == String(secondsLeft), "the end of the UTC day: \(refusal.headers)")
                // The right code of a new mail is refused too until the day is over (its link still works).
                let (_, code) = try await Self.adminLink(app, email)
                #expect(try await Codes.exchange(app, email: email, code: code).status == 429)
                clock.advance(seconds: Int64(day))
                // A right code the next day works, and is not counted against the address.
                if dayIndex == 0 {
                    let (_, right) = try await Self.adminLink(app, email)
                    #expect(try await Codes.exchange(app, email: email, code: right).status == 200)
                }
            }
            // 60 wrong codes in this 30-day window: the next day's first guess is refused, until the window is over.
            let (guesses, refusal) = try await guessUntilRefused()
            #expect(wrong == 60 && guesses == 0, "\(wrong) + \(guesses)")
            let window = 30 * day
            let secondsLeft = window - Int(clock.now.milliseconds / 1000 % Int64(window))
            #expect(refusal.header("Retry-After") == String(secondsLeft), "the end of the 30 days: \(refusal.headers)")
            // Another address is not touched.
            let (_, other) = try await Self.adminLink(app, "bystander@example.com")
            #expect(try await Codes.exchange(app, email: "bystander@example.com", code: other).status == 200)
            let counts = try await Self.exchangeCounts(app)
            #expect(counts["wrong"] == 60 && counts["exchanged"] == 2 && (counts["limited"] ?? 0) >= 13, "\(counts)")
        }
    }

    @Test("the shipped limits keep the chance of taking a 6-digit code under 0.1% a year, as docs/SIGN-IN-CODES.md's arithmetic says")
    func yearlyChance() throws {
        let settings = try ActionLinksConfiguration.load(file: Repository.configFile)
        let limits = settings.service.limits
        let digits = settings.service.codes.signInCode.digits
        // At most 14 windows of 30 days touch a year of 365 days; no more than 365 days of the daily limit.
        let guesses = min(14 * limits.signInCodeFailuresPerAddressPer30Days, 365 * limits.signInCodeFailuresPerAddressPerDay)
        let chance = 1 - pow(1 - pow(10, -Double(digits)), Double(guesses))
        #expect(digits == 6 && guesses == 840 && chance < 0.001, "\(guesses) guesses a year: \(chance)")
        let document = try String(contentsOf: Repository.root.appendingPathComponent("docs/SIGN-IN-CODES.md"), encoding: .utf8)
        #expect(document.contains("840") && document.contains("0.084 %"), "docs/SIGN-IN-CODES.md states the arithmetic")
    }

    @Test(
        "a client over its own per-IP limit spends nothing of an address's budget: exchanges and sends to the victim go on from elsewhere",
        arguments: StoreFactory.kinds)
    func refusedForIPSpendsNothing(kind: String) async throws {
        var environment = try await Self.store(kind)
        environment["ACTIONLINKS_SERVER_TRUSTED_PROXIES"] = "127.0.0.0/8,::1"
        environment["ACTIONLINKS_LIMITS_SIGN_IN_CODE_EXCHANGES_PER_IP_PER_HOUR"] = "3"
        environment["ACTIONLINKS_LIMITS_SENDS_PER_IP_PER_HOUR"] = "3"
        try await TestApp.live(environment: environment, clock: ManualClock.midHour()) { app in
            let attacker = ["X-Forwarded-For": "203.0.113.66"]
            let (_, code) = try await Self.adminLink(app, "victim@example.com")
            var statuses: [Int] = []
            for step in 1...40 {
                statuses.append(
                    try await Codes.exchange(app, email: "victim@example.com", code: Codes.shifted(code, by: step), headers: attacker)
                        .status)
            }
            #expect(statuses.filter { $0 == 429 }.count == 37, "\(statuses)")
            // The address counted only what the IP let through: the victim's own exchange goes through.
            let exchanged = try await Codes.exchange(
                app, email: "victim@example.com", code: code, headers: ["X-Forwarded-For": "198.51.100.7"])
            #expect(exchanged.status == 200, "\(exchanged.text)")
            // The same for sends: 40 from the attacker, then the victim's own request (10 an address an hour).
            for _ in 0..<40 {
                _ = try await app.api("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "victim@example.com"], headers: attacker)
            }
            let own = try await app.api(
                "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "victim@example.com"], headers: ["X-Forwarded-For": "198.51.100.7"])
            #expect(own.status == 200, "\(own.text)")
        }
    }

    @Test(
        "a sign-in code dies with its link: once the link signs in, once a password reset retires it, once the account is deleted (the link dies too)",
        arguments: StoreFactory.kinds)
    func diesWithItsLink(kind: String) async throws {
        try await TestApp.router(environment: try await Self.store(kind)) { app in
            // Used: the link signed in.
            let used = try await Self.adminLink(app, "used@example.com")
            #expect(try await app.api("signInWithEmailLink", ["email": "used@example.com", "oobCode": used.oobCode]).status == 200)
            #expect(try await Codes.exchange(app, email: "used@example.com", code: used.code).errorCode == "INVALID_SIGN_IN_CODE")

            // Retired by a password reset.
            try await app.createAccount(email: "reset@example.com", password: "first-password-1", verified: true)
            let retired = try await Self.adminLink(app, "reset@example.com")
            let (_, reset) = try await app.link("PASSWORD_RESET", email: "reset@example.com")
            let done = try await app.api("resetPassword", ["oobCode": reset, "newPassword": "second-password-2"])
            #expect(done.status == 200, "\(done.text)")
            #expect(try await Codes.exchange(app, email: "reset@example.com", code: retired.code).errorCode == "INVALID_SIGN_IN_CODE")

            // The account deleted: its link no longer signs in (it would make a new account), nor does its code.
            let id = try await app.createAccount(email: "gone@example.com", verified: true)
            let gone = try await Self.adminLink(app, "gone@example.com")
            #expect(try await app.api("delete", ["localId": id], admin: true).status == 200)
            #expect(try await Codes.exchange(app, email: "gone@example.com", code: gone.code).errorCode == "INVALID_SIGN_IN_CODE")
            let late = try await app.api("signInWithEmailLink", ["email": "gone@example.com", "oobCode": gone.oobCode])
            #expect(late.errorCode == "INVALID_OOB_CODE", "\(late.text)")
            #expect(try await app.lookup(email: "gone@example.com") == nil)

            // A live link's code still works, once.
            let live = try await Self.adminLink(app, "live@example.com")
            #expect(try await Codes.exchange(app, email: "live@example.com", code: live.code).status == 200)
        }
    }

    @Test(
        "the exchange takes JSON only: a form, text or untyped body (what any page can post without a preflight) is 415 and counts nothing")
    func jsonOnly() async throws {
        try await TestApp.router { app in
            let (_, code) = try await Self.adminLink(app, "ann@example.com")
            let path = "/v1/signInCodes:exchange?key=\(TestProject.apiKey)"
            let form = Data("email=ann%40example.com&code=\(code)".utf8)
            for type in ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x", nil] {
                let reply = try await app.request(
                    "POST", path, body: form, headers: type.map { ["Content-Type": $0] } ?? [:])
                #expect(reply.status == 415 && reply.errorCode == "INVALID_CONTENT_TYPE", "\(type ?? "no type"): \(reply.text)")
                let untypedJSON = try await app.request("POST", path, body: Data(#"{"email":"ann@example.com","code":"\#(code)"}"#.utf8))
                #expect(untypedJSON.status == 415, "JSON without its type: \(untypedJSON.text)")
            }
            // Nothing was counted or used: the code still works.
            #expect(try await Codes.exchange(app, email: "ann@example.com", code: code).status == 200)
            #expect(try await Self.exchangeCounts(app) == ["exchanged": 1, "wrong": 0, "limited": 0])
        }
    }
}
