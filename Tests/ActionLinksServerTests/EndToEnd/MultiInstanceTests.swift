import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Two `actionlinks serve` processes on one PostgreSQL database, as behind a load balancer: they
/// share the store and one key set (docs/ARCHITECTURE.md §5, issue 5; docs/DEPLOYING.md).
extension HeavyTests {
    @Suite("Several instances on one PostgreSQL", .serialized, .timeLimit(.minutes(20)))
    struct MultiInstanceTests {
        /// Two servers on a new database (or on `url`), sharing one data directory.
        static func pair(url: String? = nil, extra: [String: String] = [:]) async throws -> (
            TestServer, TestServer, shared: URL, url: String
        ) {
            let url = if let url { url } else { try await PostgresTestServer.freshDatabaseURL() }
            let shared = TestProject.temporaryDirectory("actionlinks-shared")
            var environment = ["ACTIONLINKS_STORE": url, "ACTIONLINKS_DATA_DIRECTORY": shared.path]
            for (key, value) in extra { environment[key] = value }
            async let first = TestServer(environment: environment)
            async let second = TestServer(environment: environment)
            return (try await first, try await second, shared, url)
        }

        static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

        @Test("64 simultaneous confirmations of one code, split over two instances: one succeeds, 63 are INVALID_OOB_CODE (20 rounds)")
        func race() async throws {
            let (a, b, shared, _) = try await Self.pair()
            defer { try? FileManager.default.removeItem(at: shared) }
            try await a.createAccount(email: "race@example.com")
            let path = "/v1/accounts:update?key=\(TestProject.apiKey)"
            for round in 1...20 {
                let (_, code) = try await (round.isMultiple(of: 2) ? a : b).link("VERIFY_EMAIL", email: "race@example.com")
                let body = #"{"oobCode":"\#(code)"}"#
                let requests = try (0..<64).map { try RawHTTP.prepare(base: ($0.isMultiple(of: 2) ? a : b).base, path: path, json: body) }
                let responses = await RawHTTP.race(requests)
                let successes = responses.filter { $0.status == 200 }
                let invalid = responses.filter { $0.status == 400 && $0.body.contains("INVALID_OOB_CODE") }
                #expect(
                    successes.count == 1 && invalid.count == 63,
                    "round \(round): \(successes.count) successes, \(invalid.count) INVALID_OOB_CODE, others: \(responses.filter { $0.status != 200 && !$0.body.contains("INVALID_OOB_CODE") }.map { "\($0.status) \($0.body)" }.prefix(3))"
                )
            }
        }

        @Test("the per-address send limit counts sends on both instances together")
        func sharedLimits() async throws {
            let (a, b, shared, _) = try await Self.pair(extra: ["ACTIONLINKS_LIMITS_SENDS_PER_ADDRESS_PER_HOUR": "3"])
            defer { try? FileManager.default.removeItem(at: shared) }
            try await a.createAccount(email: "limit@example.com")
            for server in [a, b, a] {
                #expect(try await server.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "limit@example.com"]).status == 200)
            }
            for server in [b, a] {
                #expect(
                    try await server.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "limit@example.com"]).errorCode
                        == "TOO_MANY_ATTEMPTS_TRY_LATER")
            }
        }

        @Test("the daily quota of sign-in mail counts sends on both instances together")
        func sharedQuota() async throws {
            let (a, b, shared, _) = try await Self.pair(extra: ["ACTIONLINKS_LIMITS_DAILY_QUOTAS_SIGN_IN": "3"])
            defer { try? FileManager.default.removeItem(at: shared) }
            func send(_ server: TestServer, _ index: Int) async throws -> HTTPReply {
                try await server.api(
                    "sendOobCode",
                    ["requestType": "EMAIL_SIGNIN", "email": "quota\(index)@example.com", "continueUrl": "https://app.example.com/"])
            }
            let day = StrictUpstreamTests.utcDay()
            for (index, server) in [a, b, a].enumerated() { #expect(try await send(server, index).status == 200) }
            let refused = [try await send(b, 3), try await send(a, 4)]
            // The quota is per UTC day: a run that crossed midnight has nothing left to check.
            guard StrictUpstreamTests.utcDay() == day else { return }
            for reply in refused {
                #expect(reply.errorMessage == "QUOTA_EXCEEDED : Exceeded daily quota for email sign-in.", "\(reply.text)")
            }
        }

        /// What the load generator saw for one code.
        struct Issued: Sendable {
            var code: String
            var consumedOK = 0
        }

        @Test("kill -9 of one instance under load: every acknowledged code is stored, none consumed twice, the survivor keeps serving")
        func crash() async throws {
            let (a, b, shared, url) = try await Self.pair()
            defer { try? FileManager.default.removeItem(at: shared) }
            let workers = 12
            for worker in 0..<workers { try await a.createAccount(email: "load\(worker)@example.com") }

            let issued = Locked<[Issued]>([])
            let survivorFailures = Locked<[String]>([])
            let survivorSuccessesAfterKill = Locked<Int>(0)
            let killed = Locked<Bool>(false)
            let stop = Locked<Bool>(false)

            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<workers {
                    group.addTask {
                        var turn = worker
                        while !stop.value {
                            turn += 1
                            // Issue on one instance, confirm on the other (or both on the survivor once the other is gone).
                            let afterKill = killed.value
                            let (issuer, confirmer) = afterKill ? (a, a) : turn.isMultiple(of: 2) ? (a, b) : (b, a)
                            var code: String?
                            do {
                                code = try await issuer.link("VERIFY_EMAIL", email: "load\(worker)@example.com").code
                                if issuer === a, afterKill { survivorSuccessesAfterKill.withLock { $0 += 1 } }
                            } catch {
                                if issuer === a { survivorFailures.withLock { $0.append("issue: \(error)") } }
                            }
                            guard let code else { continue }
                            let index = issued.withLock {
                                $0.append(Issued(code: code)); return $0.count - 1
                            }
                            do {
                                let reply = try await confirmer.api("update", ["oobCode": code])
                                if reply.status == 200 {
                                    issued.withLock { $0[index].consumedOK += 1 }
                                    if confirmer === a, afterKill { survivorSuccessesAfterKill.withLock { $0 += 1 } }
                                } else if confirmer === a {
                                    survivorFailures.withLock { $0.append("confirm: \(reply.status) \(reply.text)") }
                                }
                            } catch {
                                if confirmer === a { survivorFailures.withLock { $0.append("confirm: \(error)") } }
                            }
                        }
                    }
                }
                group.addTask {
                    // Phases by what was done, not by time: the kill once the load is under way on
                    // both instances, the end once the survivor has served a stretch alone.
                    try await Eventually.wait(for: "30 acknowledged codes before the kill") { issued.withLock { $0.count } >= 30 }
                    kill(b.process.processIdentifier, SIGKILL)
                    killed.set(true)
                    try await Eventually.wait(for: "20 survivor successes after the kill") { survivorSuccessesAfterKill.value >= 20 }
                    stop.set(true)
                }
                try await group.waitForAll()
            }
            #expect(!b.process.isRunning)

            let codes = issued.withLock { $0 }
            let keys = ServerKeys(keySet: try await SharedKeys.set.value)  // the key set every PostgreSQL server shares
            let rows = try await PostgresTestServer.column(
                "SELECT encode(hash, 'hex') || ' ' || (consumed_at IS NOT NULL)::text FROM codes", url: url)
            var stored: [String: Bool] = [:]
            for row in rows {
                let parts = row.split(separator: " ")
                stored[String(parts[0])] = parts[1] == "true"
            }
            var missing = 0, twice = 0, successNotRecorded = 0
            for entry in codes {
                guard let consumed = stored[Self.hex(keys.newCodeHash(entry.code))] else { missing += 1; continue }
                if entry.consumedOK > 1 { twice += 1 }
                if entry.consumedOK == 1, !consumed { successNotRecorded += 1 }
            }
            let failures = survivorFailures.withLock { $0 }
            #expect(missing == 0, "\(missing) acknowledged codes are not in the store")
            #expect(twice == 0, "\(twice) codes were confirmed twice")
            #expect(successNotRecorded == 0, "\(successNotRecorded) confirmed codes are not marked consumed")
            #expect(failures.isEmpty, "the survivor failed: \(failures.prefix(5))")
            print(
                "crash test: \(codes.count) codes acknowledged, \(codes.filter { $0.consumedOK == 1 }.count) confirmed, "
                    + "\(survivorSuccessesAfterKill.value) survivor successes after the kill")
        }

        /// Runs one request of the outage test; a request that fails says which one, in which phase,
        /// after how long.
        static func timed<T>(_ kind: String, phase: Int, _ body: () async throws -> T) async throws -> T {
            let start = ContinuousClock.now
            do {
                return try await body()
            } catch {
                throw TestSupportError("\(kind) request in phase \(phase) failed after \(ContinuousClock.now - start): \(error)")
            }
        }

        @Test("PostgreSQL stopped mid-load: 503 UNAVAILABLE while down, association files and pages throughout, full recovery after")
        func outage() async throws {
            let cluster = try await PrivatePostgresCluster()
            defer { Task { await cluster.remove() } }
            // While the cluster is down a call waits this long for a connection, then answers 503.
            // Long enough that a loaded machine's slow connect after recovery is not taken for an
            // outage (the recovered phase asks every answer to be 200).
            let url = cluster.url + "?connect_timeout=10"
            let server = try await TestServer(environment: ["ACTIONLINKS_STORE": url])
            try await server.createAccount(email: "before@example.com")
            let before = try await server.link("PASSWORD_RESET", email: "before@example.com")

            enum Phase: Int { case up = 0, down = 1, recovering = 2, recovered = 3 }
            let phase = Locked<Int>(Phase.up.rawValue)
            let stop = Locked<Bool>(false)
            struct Seen: Sendable { var phase: Int; var kind: String; var status: Int; var body: String }
            let seen = Locked<[Seen]>([])
            let acknowledged = Locked<[String]>([])
            let recoveredAt = Locked<ContinuousClock.Instant?>(nil)
            let restartedAt = Locked<ContinuousClock.Instant?>(nil)
            let downPage = Locked<Int>(0)

            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        var n = 0
                        while !stop.value {
                            n += 1
                            let current = phase.value
                            let aasa = try await Self.timed("aasa", phase: current) {
                                try await server.request("GET", "/.well-known/apple-app-site-association")
                            }
                            seen.withLock { $0.append(Seen(phase: current, kind: "aasa", status: aasa.status, body: "")) }
                            let page = try await Self.timed("page", phase: current) { try await server.request("GET", "/") }
                            seen.withLock { $0.append(Seen(phase: current, kind: "page", status: page.status, body: "")) }
                            let reply = try await Self.timed("api", phase: current) {
                                try await server.api(
                                    "sendOobCode",
                                    [
                                        "requestType": "EMAIL_SIGNIN", "email": "w\(worker)-\(n)@example.com", "returnOobLink": true,
                                        "continueUrl": "https://app.example.com/done",
                                    ], admin: true)
                            }
                            // A call that began while the server was down but ended after it came back may
                            // have succeeded; it counts as neither.
                            let ended = phase.value
                            seen.withLock {
                                $0.append(Seen(phase: ended == current ? current : -1, kind: "api", status: reply.status, body: reply.text))
                            }
                            if reply.status == 200, let code = reply.json["oobCode"] as? String {
                                acknowledged.withLock { $0.append(code) }
                                if current == Phase.recovering.rawValue { recoveredAt.withLock { $0 = $0 ?? .now } }
                            }
                            try await Task.sleep(for: .milliseconds(20))
                        }
                    }
                }
                group.addTask {
                    // Each phase lasts until enough was done in it, however long that takes.
                    try await Eventually.wait(for: "10 API successes before the outage") { acknowledged.withLock { $0.count } >= 10 }
                    try await cluster.stop()
                    phase.set(Phase.down.rawValue)
                    // The page of a link needs the store too: it says so, and the code is untouched.
                    let page = try await server.request("GET", try server.local(before.link))
                    downPage.set(page.status)
                    try await Eventually.wait(for: "3 API calls made and answered while down") {
                        seen.withLock { $0.filter { $0.phase == Phase.down.rawValue && $0.kind == "api" }.count } >= 3
                    }
                    // "Recovering" from the moment the server is asked to start: it may answer before
                    // pg_ctl returns.
                    phase.set(Phase.recovering.rawValue)
                    try await cluster.start()
                    restartedAt.set(ContinuousClock.now)
                    try await Eventually.wait(for: "a success after the restart") { recoveredAt.withLock { $0 } != nil }
                    phase.set(Phase.recovered.rawValue)
                    try await Eventually.wait(for: "8 requests answered after recovery") {
                        seen.withLock { $0.filter { $0.phase == Phase.recovered.rawValue }.count } >= 8
                    }
                    stop.set(true)
                }
                try await group.waitForAll()
            }

            let all = seen.withLock { $0 }
            let down = all.filter { $0.phase == Phase.down.rawValue }
            let recovered = all.filter { $0.phase == Phase.recovered.rawValue }
            #expect(all.filter { $0.kind != "api" }.allSatisfy { $0.status == 200 }, "association files or pages failed")
            let downAPI = down.filter { $0.kind == "api" }
            #expect(downPage.value == 503, "the landing page while the store was down answered \(downPage.value)")
            #expect(
                downAPI.allSatisfy { $0.status == 503 && $0.body.contains("UNAVAILABLE") },
                "while down: \(downAPI.filter { $0.status != 503 }.prefix(5).map { "\($0.status) \($0.body)" })")
            #expect(
                !recovered.isEmpty && recovered.allSatisfy { $0.status == 200 },
                "after recovery: \(recovered.filter { $0.status != 200 }.prefix(3).map(\.body))")

            // Nothing half-written: every acknowledged code is stored, and each address has one live code at most.
            let keys = ServerKeys(keySet: try await SharedKeys.set.value)
            let stored = Set(try await PostgresTestServer.column("SELECT encode(hash, 'hex') FROM codes", url: cluster.url))
            let codes = acknowledged.withLock { $0 }
            #expect(codes.allSatisfy { stored.contains(Self.hex(keys.newCodeHash($0))) })
            #expect(
                try await PostgresTestServer.column(
                    "SELECT count(*)::text FROM (SELECT 1 FROM codes WHERE consumed_at IS NULL AND retired_at IS NULL GROUP BY tenant_id, email, mode HAVING count(*) > 1) AS d",
                    url: cluster.url) == ["0"])
            // The code issued before the outage still works.
            let reset = try await server.api("resetPassword", ["oobCode": before.code, "newPassword": "a long new password 1"])
            #expect(reset.status == 200, "\(reset.text)")
            let recovery = recoveredAt.value.flatMap { end in restartedAt.value.map { end - $0 } }
            print(
                "outage test: the server logged \(server.standardError.utf8.count) bytes, \(server.standardError.split(separator: "\n").count) lines"
            )
            print(
                "outage test: \(downAPI.count) API calls while down (all 503), first success \(recovery.map { "\($0)" } ?? "never") after pg_ctl start returned, \(codes.count) codes acknowledged in all"
            )
        }

        @Test("an instance whose PostgreSQL is unreachable at start says so and exits")
        func unreachableAtStart() async throws {
            let port = try LoopbackPort.free()
            do {
                _ = try await TestServer(environment: [
                    "ACTIONLINKS_STORE": "postgres://links:secret@127.0.0.1:\(port)/links?connect_timeout=0.5"
                ])
                Issue.record("the server started without its store")
            } catch let error as TestSupportError {
                #expect(
                    error.message.contains("cannot prepare the PostgreSQL database postgres://links:***@127.0.0.1:\(port)/links"),
                    "\(error.message)")
                #expect(!error.message.contains("secret"))
            }
        }
    }
}
