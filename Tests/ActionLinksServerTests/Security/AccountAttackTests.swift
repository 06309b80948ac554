import ActionLinksTestSupport
import Crypto
import CryptoExtras
import Foundation
import GRDB
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// Accounts under attack, as a review with a stolen refresh token, a burst of guesses and a hostile
/// import tried them: recent sign-in for sensitive changes, a failed-sign-in limit that holds under
/// concurrency (on both stores), bounded password hashes, and a deleted user's refresh token.
@Suite("Accounts under attack", .timeLimit(.minutes(5)))
struct AccountAttackTests {
    static let adminToken = String(repeating: "a", count: 40)
    static let production = ["ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": adminToken]
    static let productionAdmin = ["Authorization": "Bearer \(adminToken)"]

    /// A new ID token for `refreshToken` (its `auth_time` stays the sign-in's).
    static func refreshed(_ app: TestApp, _ refreshToken: String) async throws -> String {
        let reply = try await app.post(
            "/v1/token?key=\(TestProject.apiKey)", ["grant_type": "refresh_token", "refresh_token": refreshToken])
        return try #require(reply.json["id_token"] as? String, "\(reply.text)")
    }

    // MARK: 1. Recent sign-in

    @Test("production: a refreshed token (old auth_time) cannot change the password or address, or delete; a fresh sign-in can")
    func recentSignIn() async throws {
        let clock = ManualClock()
        let environment = Self.production.merging(["ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "false"]) { $1 }
        try await TestApp.router(environment: environment, clock: clock) { app in
            let user = try await app.registerUser(email: "owner@example.com")
            clock.advance(seconds: 301)
            let stolen = try await Self.refreshed(app, user.refreshToken)

            let password = try await app.api("update", ["idToken": stolen, "password": "the thief's password"])
            #expect(password.status == 400 && password.errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN", "\(password.text)")
            let address = try await app.api("update", ["idToken": stolen, "email": "thief@example.com"])
            #expect(address.errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN", "\(address.text)")
            let verifyBefore = try await app.api(
                "sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": stolen, "newEmail": "thief@example.com"])
            #expect(verifyBefore.errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN", "\(verifyBefore.text)")
            let linkPassword = try await app.api("signUp", ["idToken": stolen, "email": "owner@example.com", "password": "another one"])
            #expect(linkPassword.errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN", "\(linkPassword.text)")
            let delete = try await app.api("delete", ["idToken": stolen])
            #expect(delete.errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN", "\(delete.text)")
            #expect(app.mailbox.messages.isEmpty, "no verifyBeforeUpdateEmail mail went out")
            // Nothing changed: the owner still signs in with the old password at the old address.
            // What is not sensitive still works with the old sign-in.
            let profile = try await app.api("update", ["idToken": stolen, "displayName": "Still Me"])
            #expect(profile.status == 200, "\(profile.text)")

            // The admin is never asked for a recent sign-in, even naming the user by an old ID token.
            let byAdminWithToken = try await app.api(
                "sendOobCode",
                ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": stolen, "newEmail": "owner2@example.com", "returnOobLink": true],
                admin: true, headers: Self.productionAdmin)
            #expect(byAdminWithToken.status == 200, "\(byAdminWithToken.text)")
            // The app reauthenticates (a fresh auth_time) and the change goes through.
            let again = try await app.signInWithPassword("owner@example.com")
            let changed = try await app.api("update", ["idToken": again.idToken, "password": "a new password"])
            #expect(changed.status == 200, "\(changed.text)")
            // The admin is never asked for a recent sign-in.
            let byAdmin = try await app.api(
                "update", ["localId": user.localId, "password": "the admin's choice"], admin: true, headers: Self.productionAdmin)
            #expect(byAdmin.status == 200, "\(byAdmin.text)")
            let fresh = try await app.signInWithPassword("owner@example.com", "the admin's choice")
            clock.advance(seconds: 300)
            let atTheLimit = try await app.api("delete", ["idToken": fresh.idToken])
            #expect(atTheLimit.status == 200, "five minutes exactly is still recent: \(atTheLimit.text)")
        }
    }

    @Test("users.recentSignInSeconds sets the window; an anonymous account and a development server are not asked")
    func recentSignInWindowAndExemptions() async throws {
        let clock = ManualClock()
        try await TestApp.router(
            environment: Self.production.merging(["ACTIONLINKS_USERS_RECENT_SIGN_IN_SECONDS": "60"]) { $1 }, clock: clock
        ) {
            app in
            let user = try await app.registerUser(email: "window@example.com")
            let anonymous = try await app.registerAnonUser()
            clock.advance(seconds: 61)
            let old = try await Self.refreshed(app, user.refreshToken)
            #expect(
                try await app.api("update", ["idToken": old, "password": "too late now"]).errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            // An anonymous user has no other way in to reauthenticate with: it may still make its
            // account a real one, as the SDKs' linkWithCredential(EmailAuthProvider) does (signUp
            // with the ID token).
            let anonymousToken = try await Self.refreshed(app, anonymous.refreshToken)
            let upgraded = try await app.api(
                "signUp", ["idToken": anonymousToken, "email": "upgraded@example.com", "password": "a first password"])
            #expect(upgraded.status == 200, "\(upgraded.text)")
            // Once it is, its changes need a recent sign-in like anyone's.
            clock.advance(seconds: 61)
            let later = try await Self.refreshed(app, try #require(upgraded.json["refreshToken"] as? String))
            #expect(try await app.api("delete", ["idToken": later]).errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
        }
        try await TestApp.router(clock: clock) { app in
            let user = try await app.registerUser(email: "dev@example.com")
            clock.advance(seconds: 3000)
            let old = try await Self.refreshed(app, user.refreshToken)
            let changed = try await app.api("update", ["idToken": old, "password": "emulator allows"])
            #expect(changed.status == 200, "a development server answers as Firebase's emulator: \(changed.text)")
            #expect(try await app.api("delete", ["idToken": changed.json["idToken"] as? String ?? old]).status == 200)
        }
    }

    // MARK: 2. The failed-sign-in limit under concurrency

    /// Sends `count` wrong sign-ins at once (`guess(i)`: the address and password of the i-th) and
    /// expects at most `limit` of them checked (`INVALID_LOGIN_CREDENTIALS`), the others refused
    /// (`TOO_MANY_ATTEMPTS_TRY_LATER`); returns how many were checked.
    static func checkedOfConcurrentGuesses(
        _ app: TestApp, count: Int, limit: Int, _ guess: @escaping @Sendable (Int) -> (String, String)
    ) async throws -> Int {
        let codes = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<count {
                group.addTask {
                    let (email, password) = guess(index)
                    return try await app.api("signInWithPassword", ["email": email, "password": password]).errorCode ?? "OK"
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        let checked = codes.filter { $0 == "INVALID_LOGIN_CREDENTIALS" }.count
        #expect(checked >= 1 && checked <= limit, "\(codes)")
        #expect(checked + codes.filter { $0 == "TOO_MANY_ATTEMPTS_TRY_LATER" }.count == count, "\(codes)")
        return checked
    }

    @Test(
        "24 concurrent wrong guesses never get more than the limit's hashes; the right password behind them is refused",
        arguments: StoreFactory.kinds)
    func concurrentGuesses(kind: String) async throws {
        var environment = Self.production
        if kind == "postgres" { environment["ACTIONLINKS_STORE"] = try await PostgresTestServer.freshDatabaseURL() }
        // The limits' window is the clock's hour: a clock that stands mid-hour, so a run that
        // crosses an hour cannot open a new window before the right password is tried.
        let clock = ManualClock.midHour()
        try await TestApp.live(environment: environment, clock: clock) { app in
            _ = try await app.registerUser(email: "target@example.com", password: "the right password")
            let wrong = try await Self.checkedOfConcurrentGuesses(app, count: 24, limit: 10) { ("target@example.com", "guess \($0)") }
            // One after another, the limit fills to exactly ten checked guesses and no more.
            var checked = wrong
            for index in 0..<11 {
                let code = try await app.api("signInWithPassword", ["email": "target@example.com", "password": "late guess \(index)"])
                    .errorCode
                if code == "TOO_MANY_ATTEMPTS_TRY_LATER" { break }
                #expect(code == "INVALID_LOGIN_CREDENTIALS")
                checked += 1
            }
            #expect(checked == 10)
            let right = try await app.api("signInWithPassword", ["email": "target@example.com", "password": "the right password"])
            #expect(
                right.errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER",
                "the right password after ten wrong ones waits out the hour: \(right.text)")
        }
    }

    @Test("the per-client limit holds under concurrency too, across addresses", arguments: StoreFactory.kinds)
    func concurrentGuessesFromOneClient(kind: String) async throws {
        var environment = Self.production.merging(["ACTIONLINKS_LIMITS_SIGN_IN_FAILURES_PER_IP_PER_HOUR": "5"]) { $1 }
        if kind == "postgres" { environment["ACTIONLINKS_STORE"] = try await PostgresTestServer.freshDatabaseURL() }
        // The limit's window is the clock's hour: a clock that stands mid-hour, so a run that
        // crosses the hour on a loaded machine (a CI run did, at 06:00) does not open a new window.
        try await TestApp.live(environment: environment, clock: ManualClock.midHour()) { app in
            _ = try await Self.checkedOfConcurrentGuesses(app, count: 16, limit: 5) { ("nobody\($0)@example.com", "guess") }
        }
    }

    @Test("a successful sign-in takes its reservation back: the owner's own sign-ins never fill the limit")
    func successDoesNotCount() async throws {
        try await TestApp.router(
            environment: Self.production.merging(["ACTIONLINKS_LIMITS_SIGN_IN_FAILURES_PER_ACCOUNT_PER_HOUR": "2"]) { $1 },
            clock: ManualClock.midHour()
        ) {
            app in
            _ = try await app.registerUser(email: "regular@example.com")
            for _ in 0..<4 { _ = try await app.signInWithPassword("regular@example.com") }
            #expect(
                try await app.api("signInWithPassword", ["email": "regular@example.com", "password": "wrong one"]).errorCode
                    == "INVALID_LOGIN_CREDENTIALS")
            _ = try await app.signInWithPassword("regular@example.com")
        }
    }

    // MARK: 3. Bounded password hashes

    @Test("the ceiling: 128·N·r ≤ 32 MiB and N·r·p ≤ 2^21, this server's defaults and Firebase's within it")
    func ceiling() {
        #expect(PasswordHasher.Ceiling.refusal(logRounds: 14, blockSize: 8, parallelism: 5) == nil, "the default")
        #expect(PasswordHasher.Ceiling.refusal(logRounds: 14, blockSize: 8, parallelism: 1) == nil, "Firebase's largest")
        #expect(PasswordHasher.Ceiling.refusal(logRounds: 15, blockSize: 8, parallelism: 2) == nil, "32 MiB, 2^20")
        #expect(PasswordHasher.Ceiling.refusal(logRounds: 20, blockSize: 32, parallelism: 16)?.contains("memory") == true)
        #expect(PasswordHasher.Ceiling.refusal(logRounds: 17, blockSize: 32, parallelism: 2)?.contains("512 MiB") == true)
        #expect(PasswordHasher.Ceiling.refusal(logRounds: 14, blockSize: 8, parallelism: 17)?.contains("N·r·p") == true)
        #expect(PasswordHasher.Ceiling.refusal(logRounds: 62, blockSize: 1 << 40, parallelism: 1) != nil, "no overflow trap")
        #expect(PasswordHasher.refusal(stored: "$scrypt$ln=14,r=8,p=5,p=1$AAAA$AAAA") != nil, "a repeated parameter")
        #expect(PasswordHasher.refusal(stored: "$scrypt$ln=14,r=8$AAAA$AAAA") != nil)
    }

    /// A real scrypt hash of `password` in this server's format, with any parameters.
    static func phc(_ password: String, ln: Int, r: Int, p: Int) throws -> String {
        let salt = [UInt8](repeating: 7, count: 16)
        let key = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8), salt: salt, outputByteCount: 32, rounds: 1 << ln, blockSize: r, parallelism: p)
        return "$scrypt$ln=\(ln),r=\(r),p=\(p)$\(Base64URL.encode(salt))$\(key.withUnsafeBytes { Base64URL.encode(Array($0)) })"
    }

    @Test("an import refuses hashes above the ceiling, naming the user and the reason; the others are imported")
    func importRefusesCostlyHashes() async throws {
        try await TestApp.router { app in
            let fine = try Self.phc("within bounds", ln: 10, r: 8, p: 1)
            let users: [[String: Any]] = [
                ["localId": "fine", "email": "fine@example.com", "passwordHash": fine],
                ["localId": "huge", "email": "huge@example.com", "passwordHash": "$scrypt$ln=20,r=32,p=16$AAAAAAAAAAAAAAAAAAAAAA$AAAA"],
                ["localId": "slow", "email": "slow@example.com", "passwordHash": "$scrypt$ln=17,r=32,p=2$AAAAAAAAAAAAAAAAAAAAAA$AAAA"],
            ]
            let reply = try await app.api("batchCreate", ["users": users], admin: true)
            let errors = reply.json["error"] as? [[String: Any]] ?? []
            #expect(errors.map { $0["index"] as? Int } == [1, 2], "\(reply.text)")
            #expect(errors.allSatisfy { ($0["message"] as? String)?.contains("memory") == true }, "\(reply.text)")
            #expect(try await app.lookup(email: "huge@example.com") == nil)
            _ = try await app.signInWithPassword("fine@example.com", "within bounds")
        }
    }

    @Test("a stored hash above the ceiling (from before it) is never run: the sign-in is refused and the operator told")
    func costlyStoredHashIsNotRun() async throws {
        try await TestApp.router(environment: Self.production) { app in
            let created = try await app.api(
                "create", ["email": "legacy@example.com", "password": "placeholder password"], admin: true, headers: Self.productionAdmin)
            #expect(created.status == 200, "\(created.text)")
            // 128 MiB of memory per hash: what an import accepted before the ceiling.
            let costly = try Self.phc("the real password", ln: 16, r: 16, p: 1)
            let database = try DatabaseQueue(path: app.dataDirectory.appendingPathComponent("actionlinks.sqlite").path)
            try await database.write { db in
                try db.execute(sql: "UPDATE accounts SET password_hash = ? WHERE email = ?", arguments: [costly, "legacy@example.com"])
            }
            let reply = try await app.api("signInWithPassword", ["email": "legacy@example.com", "password": "the real password"])
            #expect(reply.errorCode == "INVALID_LOGIN_CREDENTIALS", "\(reply.text)")
            #expect(app.logs.text.contains("a stored password hash is not run"))
        }
    }

    @Test("a full hash queue fails at once with Busy, answered 503 UNAVAILABLE with Retry-After")
    func busyHasher() async throws {
        let hasher = PasswordHasher(logRounds: 4, parallelism: 1, concurrency: 1, queueLimit: 0)
        try await hasher.acquire()
        await #expect(throws: PasswordHasher.Busy.self) { try await hasher.hash("waits for no one") }
        await hasher.release()
        #expect(try await hasher.verify("now there is room", against: try await hasher.hash("now there is room")))

        await #expect(throws: ActionError.self) {
            try await SignInService.hashing { () async throws -> String in throw PasswordHasher.Busy() }
        }
        do {
            _ = try await SignInService.hashing { () async throws -> String in throw PasswordHasher.Busy() }
        } catch {
            #expect(error.code == .unavailable && error.status == .serviceUnavailable)
        }
        // Any UNAVAILABLE answer says when to come back.
        #expect(ActionError(.unavailable, "busy").headers[.retryAfter] == "1")
        #expect(ActionError(.invalidPassword).headers[.retryAfter] == nil)
    }

    // MARK: 4. A deleted user's refresh token

    @Test(
        "a deleted user's refresh token answers USER_NOT_FOUND in production, INVALID_REFRESH_TOKEN in development",
        arguments: StoreFactory.kinds)
    func deletedUsersRefreshToken(kind: String) async throws {
        for development in [false, true] {
            var environment = development ? [:] : Self.production
            if kind == "postgres" { environment["ACTIONLINKS_STORE"] = try await PostgresTestServer.freshDatabaseURL() }
            let admin = development ? [:] : Self.productionAdmin
            try await TestApp.router(environment: environment) { app in
                let user = try await app.registerUser(email: "gone@example.com")
                let deleted = try await app.api("delete", ["localId": user.localId], admin: true, headers: admin)
                #expect(deleted.status == 200, "\(deleted.text)")
                let refresh = try await app.post(
                    "/v1/token?key=\(TestProject.apiKey)", ["grant_type": "refresh_token", "refresh_token": user.refreshToken])
                #expect(refresh.status == 400)
                #expect(refresh.errorCode == (development ? "INVALID_REFRESH_TOKEN" : "USER_NOT_FOUND"), "\(kind): \(refresh.text)")
                // An account made again with the same ID does not bring the old session back.
                let again = try await app.api(
                    "create", ["localId": user.localId, "email": "gone@example.com"], admin: true, headers: admin)
                #expect(again.status == 200, "\(again.text)")
                let stillGone = try await app.post(
                    "/v1/token?key=\(TestProject.apiKey)", ["grant_type": "refresh_token", "refresh_token": user.refreshToken])
                #expect(stillGone.errorCode == (development ? "INVALID_REFRESH_TOKEN" : "USER_NOT_FOUND"), "\(stillGone.text)")
                let unknown = try await app.post(
                    "/v1/token?key=\(TestProject.apiKey)", ["grant_type": "refresh_token", "refresh_token": "never-issued"])
                #expect(unknown.errorCode == "INVALID_REFRESH_TOKEN", "\(unknown.text)")
            }
        }
    }
}
