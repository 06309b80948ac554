import ActionLinksTestSupport
import Foundation
import GRDB
import Logging
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksServer
@testable import ActionLinksStores

/// A month of a project's traffic at a compressed clock, through the REST API as apps and a backend
/// call it, with the hourly purge run as the server runs it: sign-ins on a few devices per user,
/// refreshes, revocations, deletions, new users, links issued, used and left to expire. Every
/// simulated day the tables are counted against a model of what is live, so that storage is bounded
/// by the live data (and by the tombstones an answer still needs), and on the first and the last
/// day the admin's reads, issuing and refresh are timed and printed (not checked: a loaded machine
/// only makes them slower). `REPLAY_ACCOUNTS` and `REPLAY_DAYS` size it (400 users and 35 days here);
/// `REPLAY_STORE` picks one store.
@Suite("A month of traffic: storage bounded by the live data", .timeLimit(.minutes(60)))
struct StorageReplayTests {
    static let accounts = Int(ProcessInfo.processInfo.environment["REPLAY_ACCOUNTS"] ?? "") ?? 400
    /// The stores to replay on (`REPLAY_STORE=sqlite` or `postgres` for one alone: timing one store
    /// while the other replays beside it times the other too).
    static let kinds = StoreFactory.kinds.filter { ProcessInfo.processInfo.environment["REPLAY_STORE"].map($0.elementsEqual) ?? true }
    /// Past the tombstones' 30 days, so that the purge of them is replayed too.
    static let days = Int(ProcessInfo.processInfo.environment["REPLAY_DAYS"] ?? "") ?? 35

    /// What the replay knows should be stored.
    struct Model {
        /// Each user's devices' refresh tokens (a new sign-in on a device replaces its token in
        /// the app, not in the server: the old session stays live, as Firebase's do).
        var devices: [String: [String]] = [:]
        /// Sessions the server must still refresh: every session of a live user since its last revocation.
        var live: [String: [(token: String, createdSecond: Int64)]] = [:]
        /// When each revoked or deleted session ended (seconds), for the tombstones.
        var revokedAt: [Int64] = []
        var deletedAt: [Int64] = []
        /// Each user's revoked sessions (deleting the user makes their tombstones a deleted account's).
        var revokedOf: [String: Int] = [:]
        var nextUser = 0

        mutating func newUserID() -> String {
            defer { nextUser += 1 }
            return String(format: "replay-%07d", nextUser)
        }
    }

    /// A day's row counts.
    struct Counts: CustomStringConvertible {
        var accounts = 0
        var sessions = 0
        var revoked = 0
        var deleted = 0
        var codes = 0
        var signInCodes = 0
        var eventCounts = 0
        var bytes: Int64 = 0

        var description: String {
            "accounts \(accounts), refresh_tokens \(sessions), revoked_sessions \(revoked), deleted_sessions \(deleted), "
                + "codes \(codes), sign_in_codes \(signInCodes), event_counts \(eventCounts), \(bytes / 1024) KiB"
        }
    }

    /// The store the app runs on, opened beside it: for the purge and for counting rows.
    struct Beside {
        let codes: any CodeStore
        let signInCodes: any SignInCodeStore
        let accounts: any AccountStore
        let count: @Sendable (String) async throws -> Int
        let bytes: @Sendable () async throws -> Int64
    }

    static func beside(app: TestApp, url: String?) async throws -> Beside {
        if let url {
            let database = try await PostgresTestServer.store(url: url)
            return Beside(
                codes: database.codes, signInCodes: database.signInCodes, accounts: database.accounts,
                count: { table in
                    Int(try await PostgresTestServer.column("SELECT count(*)::text FROM \(table)", url: url).first ?? "") ?? -1
                },
                bytes: {
                    Int64(try await PostgresTestServer.column("SELECT pg_database_size(current_database())::text", url: url).first ?? "")
                        ?? -1
                })
        }
        let path = app.dataDirectory.appendingPathComponent("actionlinks.sqlite").path
        let database = try SQLiteDatabase(path: path)
        return Beside(
            codes: database.codes, signInCodes: database.signInCodes, accounts: database.accounts,
            count: { table in try await database.pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM \(table)") ?? -1 } },
            bytes: {
                let files = [path, path + "-wal"]
                return files.reduce(Int64(0)) { total, file in
                    total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int64) ?? 0)
                }
            })
    }

    static func counts(_ beside: Beside) async throws -> Counts {
        Counts(
            accounts: try await beside.count("accounts"), sessions: try await beside.count("refresh_tokens"),
            revoked: try await beside.count("revoked_sessions"), deleted: try await beside.count("deleted_sessions"),
            codes: try await beside.count("codes"), signInCodes: try await beside.count("sign_in_codes"),
            eventCounts: try await beside.count("event_counts"), bytes: try await beside.bytes())
    }

    /// Signs `user` in on a device (a custom token, as an app's backend mints it): a new session.
    static func signIn(_ app: TestApp, _ user: String) async throws -> String {
        let reply = try await app.api("signInWithCustomToken", ["token": Spec.customToken(["uid": user]), "returnSecureToken": true])
        guard let token = reply.json["refreshToken"] as? String else { throw TestSupportError("sign-in: \(reply.text)") }
        return token
    }

    /// A new user (made by the admin, with a verified address), signed in on one device.
    static func newUser(_ app: TestApp, _ model: inout Model, clock: ManualClock) async throws {
        let user = model.newUserID()
        let created = try await app.api("create", ["localId": user, "email": "\(user)@example.com", "emailVerified": true], admin: true)
        guard created.status == 200 else { throw TestSupportError("create: \(created.text)") }
        let token = try await signIn(app, user)
        model.devices[user] = [token]
        model.live[user] = [(token, clock.now.seconds)]
    }

    static func refresh(_ app: TestApp, _ token: String) async throws -> HTTPReply {
        try await app.post("/v1/token?key=\(TestProject.apiKey)", ["grant_type": "refresh_token", "refresh_token": token])
    }

    /// Times `work` run `times` times (microseconds each, the median of three passes).
    static func time(_ times: Int, _ work: () async throws -> Void) async throws -> Double {
        var passes: [Double] = []
        for _ in 0..<3 {
            let start = ContinuousClock.now
            for _ in 0..<times { try await work() }
            let elapsed = ContinuousClock.now - start
            passes.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
        }
        return passes.sorted()[1] / Double(times)
    }

    /// The admin's reads, issuing and refresh, each in microseconds a call.
    static func costs(_ app: TestApp, model: Model) async throws -> [(String, Double)] {
        let users = model.live.keys.sorted()
        let someone = users[users.count / 2]
        let token = try #require(model.live[someone]?.last?.token)
        return [
            ("lookup", try await time(50) { _ = try await app.api("lookup", ["localId": [someone]], admin: true) }),
            (
                "batchGet",
                try await time(20) {
                    _ = try await app.request(
                        "GET", "/v1/projects/\(TestProject.id)/accounts:batchGet?maxResults=100&nextPageToken=\(someone)",
                        headers: ["Authorization": "Bearer \(TestProject.adminToken)"])
                }
            ),
            ("query", try await time(20) { _ = try await app.api("query", ["limit": 100, "offset": users.count / 2], admin: true) }),
            ("count", try await time(20) { _ = try await app.api("query", ["returnUserInfo": false], admin: true) }),
            ("issue", try await time(50) { _ = try await app.link("PASSWORD_RESET", email: "\(someone)@example.com") }),
            ("refresh", try await time(50) { _ = try await Self.refresh(app, token) }),
        ]
    }

    @Test("a month of traffic leaves tables bounded by the live data and the tombstones' 30 days", arguments: Self.kinds)
    func month(kind: String) async throws {
        let clock = ManualClock.midHour()
        var environment: [String: String] = [:]
        let url = kind == "postgres" ? try await PostgresTestServer.freshDatabaseURL() : nil
        if let url { environment["ACTIONLINKS_STORE"] = url }
        try await TestApp.router(environment: environment, clock: clock) { app in
            let beside = try await Self.beside(app: app, url: url)
            var logger = Logger(label: "replay")
            logger.logLevel = .warning
            let purge = StoragePurge(
                codes: beside.codes, signInCodes: beside.signInCodes, accounts: beside.accounts, clock: clock,
                logger: logger)
            var model = Model()
            // The project as the month starts: `accounts` users with an address, each signed in on one device.
            for _ in 0..<Self.accounts { try await Self.newUser(app, &model, clock: clock) }
            var firstDay: [(String, Double)] = []
            var rows: [String] = []
            for day in 0..<Self.days {
                let dayStart = clock.now
                // A tenth of the users open the app on one of up to three devices: a new session
                // when the device has none or signed out (every third sign-in), else refreshes.
                let users = model.live.keys.sorted()
                for (index, user) in users.enumerated() where (index + day) % 10 == 0 {
                    clock.advance(seconds: 1)
                    var devices = model.devices[user] ?? []
                    let device = (index / 10 + day) % 3
                    if device >= devices.count || (index + day) % 3 == 0 {
                        let token = try await Self.signIn(app, user)
                        if device < devices.count { devices[device] = token } else { devices.append(token) }
                        model.live[user, default: []].append((token, clock.now.seconds))
                    }
                    // A device whose session was revoked signs in again.
                    let index = min(device, devices.count - 1)
                    if !(model.live[user] ?? []).contains(where: { $0.token == devices[index] }) {
                        devices[index] = try await Self.signIn(app, user)
                        model.live[user, default: []].append((devices[index], clock.now.seconds))
                    }
                    model.devices[user] = devices
                    for _ in 0..<2 {
                        let reply = try await Self.refresh(app, devices[index])
                        #expect(reply.status == 200, "day \(day): \(user)'s refresh: \(reply.text)")
                    }
                }
                // One user in 200 is revoked (a password change elsewhere, the admin's revocation).
                for (index, user) in users.enumerated() where (index + 7 * day) % 200 == 0 {
                    clock.advance(seconds: 1)
                    try await app.updateAccount(localId: user, ["validSince": String(clock.now.seconds)])
                    let ended = model.live[user]?.filter { $0.createdSecond < clock.now.seconds } ?? []
                    model.revokedAt += ended.map { _ in clock.now.seconds }
                    model.revokedOf[user, default: 0] += ended.count
                    model.live[user] = model.live[user]?.filter { $0.createdSecond >= clock.now.seconds }
                }
                // One user in 1,000 deletes their account; as many new users sign up.
                for (index, user) in users.enumerated() where (index + 13 * day) % 1_000 == 0 {
                    clock.advance(seconds: 1)
                    _ = try await app.api("delete", ["localId": user], admin: true)
                    let ended = (model.live[user] ?? []).count + (model.revokedOf[user] ?? 0)
                    model.deletedAt += Array(repeating: clock.now.seconds, count: ended)
                    model.live[user] = nil
                    model.devices[user] = nil
                    try await Self.newUser(app, &model, clock: clock)
                }
                // Links: one user in 50 is sent a sign-in link, and half of them use it.
                for (index, user) in users.enumerated() where (index + day) % 50 == 0 && model.live[user] != nil {
                    clock.advance(seconds: 1)
                    let (_, code) = try await app.link("EMAIL_SIGNIN", email: "\(user)@example.com")
                    if index % 2 == 0 {
                        let reply = try await app.api("signInWithEmailLink", ["email": "\(user)@example.com", "oobCode": code])
                        if let token = reply.json["refreshToken"] as? String {
                            model.live[user, default: []].append((token, clock.now.seconds))
                        }
                    }
                }
                // The rest of the day passes; the purge runs as the server runs it each hour.
                clock.advance(seconds: 86_400 - (clock.now - dayStart).components.seconds)
                try await purge.purgeOnce()
                if day == 0 { firstDay = try await Self.costs(app, model: model) }

                let counts = try await Self.counts(beside)
                let cutoff = clock.now.seconds - sessionTombstoneLifetime.components.seconds
                let live = model.live.values.reduce(0) { $0 + $1.count }
                let revoked = model.revokedAt.filter { $0 >= cutoff }.count
                let deleted = model.deletedAt.filter { $0 >= cutoff }.count
                #expect(counts.accounts == model.live.count, "day \(day): \(counts)")
                #expect(counts.sessions == live, "day \(day): only sessions that can refresh are stored: \(counts), \(live) live")
                #expect(counts.revoked <= revoked, "day \(day): revoked tombstones of 30 days at most: \(counts), \(revoked)")
                #expect(counts.deleted <= deleted, "day \(day): deleted sessions' tombstones of 30 days at most: \(counts), \(deleted)")
                rows.append("day \(day + 1): \(counts); live sessions \(live)")
            }
            let lastDay = try await Self.costs(app, model: model)
            var table = ["| call | day 1 (µs) | day \(Self.days) (µs) | ratio |", "|---|---|---|---|"]
            for ((name, first), (_, last)) in zip(firstDay, lastDay) {
                table.append(String(format: "| %@ | %.0f | %.0f | %.2f |", name, first, last, last / first))
            }
            print(
                "replay (\(kind), \(Self.accounts) accounts, \(Self.days) days):\n" + rows.joined(separator: "\n") + "\n"
                    + table.joined(separator: "\n"))
        }
    }
}
