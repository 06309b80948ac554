import ActionLinks
import ActionLinksConfiguration
import ActionLinksTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// On PostgreSQL, concurrent email-link sign-ins go in one statement and one commit (the function
/// `actionlinks_email_link_sign_ins`, migration v8). These tests hand the batch exactly the
/// sign-ins they choose, so that they land in one batch, and compare each element's outcome with
/// what the single statement (`actionlinks_email_link_sign_in`, v7) answers for it.
@Suite("Email-link sign-ins batched on PostgreSQL", .timeLimit(.minutes(5)))
struct EmailLinkBatchTests {
    static let now = Timestamp(milliseconds: 1_800_000_000_000)

    /// A migrated store on a new database, and the database's URL.
    static func store() async throws -> (PostgresStore, String) {
        let url = try await PostgresTestServer.freshDatabaseURL()
        return (try await store(url: url), url)
    }

    /// Another instance's store on the database at `url`.
    static func store(url: String) async throws -> PostgresStore {
        let location = try PostgresLocation(url: url + "&pool_size=4")
        let database = try PostgresStore(location: location, logger: Logger(label: "test-store"))
        Task.detached { await database.client.run() }
        try await database.migrate()
        return database
    }

    static func code(_ label: String, _ email: String, mode: ActionCodeLink.Mode = .signIn, tenant: String = "", expired: Bool = false)
        -> ActionCodeRecord
    {
        ActionCodeRecord(
            hash: Data(label.utf8), mode: mode, tenantID: tenant, accountID: nil, email: email, createdAt: now - .seconds(10),
            expiresAt: expired ? now - .milliseconds(1) : now + .seconds(3600))
    }

    /// The codes and accounts every sign-in below meets.
    static func setUp(_ store: PostgresStore) async throws {
        let codes = [
            code("new-1", "new1@example.com"), code("new-2", "new2@example.com"), code("same", "same@example.com"),
            code("owner", "owner@example.com"), code("reset", "reset@example.com", mode: .resetPassword),
            code("disabled", "disabled@example.com"), code("unverified", "unverified@example.com"),
            code("verified", "verified@example.com"), code("tenant", "tenant@example.com", tenant: "t1"),
            code("expired", "expired@example.com", expired: true), code("admin-only", "nobody@example.com"),
            code("retired", "twice@example.com"), code("current", "twice@example.com"), code("rotated", "rotated@example.com"),
        ]
        // One at a time: "current" retires "retired".
        for code in codes { try await store.codes.issue(code) }
        let google = FederatedIdentity(providerID: "google.com", rawID: "g-1", email: "verified@example.com")
        let corp = FederatedIdentity(providerID: "oidc.corp", rawID: "c-1", email: "unverified@example.com")
        let accounts = [
            Account(localID: "acct-reset", email: "reset@example.com", emailVerified: true, createdAt: now),
            Account(localID: "acct-disabled", email: "disabled@example.com", emailVerified: true, disabled: true, createdAt: now),
            Account(
                localID: "acct-unverified", email: "unverified@example.com", passwordHash: "hash", createdAt: now,
                federatedIdentities: [corp]),
            Account(
                localID: "acct-verified", email: "verified@example.com", emailVerified: true, passwordHash: "hash", createdAt: now,
                federatedIdentities: [google]),
        ]
        for account in accounts {
            try await store.accounts.transaction(tenantID: "", now: now) { tx in try tx.insert(account) }
        }
    }

    /// A sign-in of `email` with the code `label` (or the codes `labels`, a key rotation's hashes).
    static func signIn(
        _ index: Int, _ labels: [String], _ email: String, tenant: String = "", canCreate: Bool = true
    ) -> EmailLinkSignIn {
        let at = now + .milliseconds(Int64(index))
        return EmailLinkSignIn(
            hashes: labels.map { Data($0.utf8) }, tenantID: tenant, email: email, now: at, consumer: "consumer-\(index)",
            newID: "new-id-\(index)", canCreate: canCreate,
            session: Session(
                hash: Data("session-\(index)".utf8), tenantID: tenant, accountID: "new-id-\(index)", createdAt: at,
                signInProvider: "password", authTime: at.seconds, claims: index.isMultiple(of: 2) ? nil : "{\"n\":\(index)}"))
    }

    /// Every case the single statement distinguishes, and the same code more than once.
    static let story: [EmailLinkSignIn] = [
        signIn(0, ["new-1"], "new1@example.com"),
        signIn(1, ["same"], "same@example.com"),
        signIn(2, ["owner"], "another@example.com"),
        signIn(3, ["reset"], "reset@example.com"),
        signIn(4, ["disabled"], "disabled@example.com"),
        signIn(5, ["same"], "same@example.com"),
        signIn(6, ["unverified"], "unverified@example.com"),
        signIn(7, ["verified"], "verified@example.com"),
        signIn(8, ["tenant"], "tenant@example.com"),
        signIn(9, ["expired"], "expired@example.com"),
        signIn(10, ["no-such-code"], "new2@example.com"),
        signIn(11, ["admin-only"], "nobody@example.com", canCreate: false),
        signIn(12, ["retired"], "twice@example.com"),
        signIn(13, ["current"], "twice@example.com"),
        signIn(14, ["not-this-key", "rotated"], "rotated@example.com"),
        signIn(15, ["same"], "same@example.com"),
        signIn(16, ["new-2"], "new2@example.com"),
        signIn(17, ["tenant"], "tenant@example.com", tenant: "t1"),
        signIn(18, ["owner"], "owner@example.com"),
        signIn(19, ["new-1"], "new1@example.com"),
    ]

    static func describe(_ result: Result<EmailLinkSignInOutcome, any Error>) -> String {
        switch result {
        case .failure(let error): return "error \(error)"
        case .success(.signedIn(let record, let account, let isNew)):
            return "signed in: code=\(String(decoding: record.hash, as: UTF8.self)) consumed=\(record.consumedAt?.milliseconds ?? 0) "
                + "by=\(record.consumedBy ?? "-") account=\(account.localID) email=\(account.email ?? "-") "
                + "verified=\(account.emailVerified) link=\(account.emailLinkSignin) password=\(account.passwordHash != nil) "
                + "validSince=\(account.validSince) login=\(account.lastLoginAt?.milliseconds ?? 0) "
                + "identities=\(account.federatedIdentities.map(\.providerID)) new=\(isNew)"
        case .success(let refusal): return "\(refusal)"
        }
    }

    /// What the database holds, row by row, without anything that differs between two runs.
    static func contents(_ url: String) async throws -> [String] {
        var lines: [String] = []
        for sql in [
            "SELECT convert_from(hash, 'UTF8') || ' ' || coalesce(consumed_at::text, '-') || ' ' || coalesce(consumed_by, '-') "
                + "|| ' ' || (retired_at IS NOT NULL) FROM codes ORDER BY hash",
            "SELECT local_id || ' ' || coalesce(email, '-') || ' ' || email_verified || ' ' || email_link_signin || ' ' "
                + "|| (password_hash IS NOT NULL) || ' ' || valid_since || ' ' || coalesce(last_login_at::text, '-') || ' ' || disabled "
                + "FROM accounts ORDER BY local_id",
            "SELECT local_id || ' ' || provider_id FROM account_providers ORDER BY local_id, provider_id",
            "SELECT convert_from(hash, 'UTF8') || ' ' || tenant_id || ' ' || account_id || ' ' || created_at || ' ' || sign_in_provider "
                + "|| ' ' || auth_time || ' ' || coalesce(claims, '-') FROM refresh_tokens ORDER BY hash",
        ] {
            lines += try await PostgresTestServer.column(sql, url: url)
        }
        return lines
    }

    /// How many transactions wrote the sessions.
    static func sessionTransactions(_ url: String) async throws -> Int {
        Int(try await PostgresTestServer.column("SELECT count(DISTINCT xmin::text)::text FROM refresh_tokens", url: url).first ?? "") ?? -1
    }

    @Test("one batch answers every sign-in as the single statement does, and leaves the same rows, in one transaction")
    func sameAsOneByOne() async throws {
        let (batched, batchedURL) = try await Self.store()
        let (single, singleURL) = try await Self.store()
        try await Self.setUp(batched)
        try await Self.setUp(single)

        let together = await PostgresAccountStore.emailLinkSignInBatch(Self.story, database: batched).map(Self.describe)
        // One by one in the order the batch runs them: the two sign-ins with "owner" (one with
        // another address) answer according to which comes first, as concurrent requests do.
        var alone = [String](repeating: "", count: Self.story.count)
        for index in PostgresAccountStore.batchOrder(Self.story) {
            alone[index] = Self.describe(
                await PostgresAccountStore.result { try await PostgresAccountStore.emailLinkSignInOne(Self.story[index], database: single) }
            )
        }
        #expect(together.count == Self.story.count)
        for (index, (batch, one)) in zip(together, alone).enumerated() { #expect(batch == one, "sign-in \(index)") }
        // The same code three times in one batch: the first signs in, the others find it consumed.
        #expect(together[1].hasPrefix("signed in: code=same "))
        #expect(together[5] == "invalid" && together[15] == "invalid")
        #expect(together[19] == "invalid" && together[12] == "invalid" && together[13].hasPrefix("signed in: code=current "))
        #expect(together.filter { $0.hasPrefix("signed in") }.count == 9)
        #expect(Set(together.filter { !$0.hasPrefix("signed in") }).count == 6, "every refusal: \(together)")

        let (batchRows, singleRows) = (try await Self.contents(batchedURL), try await Self.contents(singleURL))
        #expect(batchRows.count > 20)
        #expect(batchRows == singleRows)
        #expect(try await Self.sessionTransactions(batchedURL) == 1)
        #expect(try await Self.sessionTransactions(singleURL) == 9)
    }

    @Test("two instances sending batches of the same codes at once: each code signs in exactly once, nothing fails (10 rounds)")
    func twoInstancesRace() async throws {
        let (first, url) = try await Self.store()
        let second = try await Self.store(url: url)
        for round in 0..<10 {
            let codes = (0..<48).map { Self.code("r\(round)-\($0)", "r\(round)-\($0)@example.com") }
            for code in codes { try await first.codes.issue(code) }
            func batch(_ instance: Int) -> [EmailLinkSignIn] {
                codes.indices.shuffled().map { index in
                    var statement = Self.signIn(index, ["r\(round)-\(index)"], "r\(round)-\(index)@example.com")
                    statement.newID = "i\(instance)-r\(round)-\(index)"
                    statement.session.hash = Data("i\(instance)-r\(round)-\(index)".utf8)
                    return statement
                }
            }
            let (a, b) = (batch(1), batch(2))
            async let one = PostgresAccountStore.emailLinkSignInBatch(a, database: first)
            async let two = PostgresAccountStore.emailLinkSignInBatch(b, database: second)
            var successes: [String: Int] = [:]
            let outcomes = (await one) + (await two)
            for (statement, outcome) in zip(a + b, outcomes) {
                switch outcome {
                case .success(.signedIn(let record, _, _)):
                    #expect(record.hash == statement.hashes[0])
                    successes[statement.email, default: 0] += 1
                case .success(.invalid): break
                default: Issue.record("round \(round): \(Self.describe(outcome))")
                }
            }
            #expect(successes.count == 48 && successes.values.allSatisfy { $0 == 1 }, "round \(round): \(successes)")
        }
        let accounts = try await PostgresTestServer.column("SELECT count(*)::text FROM accounts", url: url)
        #expect(accounts == ["480"])
    }

    @Test("an element that clashes on a unique index fails the batch, not the others: each then runs on its own")
    func clashFallsBack() async throws {
        let (store, url) = try await Self.store()
        for index in 0..<4 { try await store.codes.issue(Self.code("clash-\(index)", "clash\(index)@example.com")) }
        // Another instance creates the account for clash2@… and has not committed yet: the batch
        // waits for it on the unique index, and fails when it commits.
        let location = try PostgresLocation(url: url)
        let rival = try await PostgresConnection.connect(
            configuration: .init(
                host: location.host, port: location.port, username: location.username, password: location.password,
                database: location.database, tls: .disable), id: 7, logger: Logger(label: "rival"))
        try await rival.query("BEGIN", logger: Logger(label: "rival"))
        try await rival.query(
            """
            INSERT INTO accounts (local_id, tenant_id, email, email_verified, created_at)
            VALUES ('rival', '', 'clash2@example.com', true, \(Self.now.milliseconds))
            """, logger: Logger(label: "rival"))
        let statements = (0..<4).map { Self.signIn($0, ["clash-\($0)"], "clash\($0)@example.com") }
        async let outcomes = PostgresAccountStore.emailLinkSignInBatch(statements, database: store)
        do {
            try await Eventually.wait(for: "the batch to wait for the rival's insert") {
                try await PostgresTestServer.column(
                    // The batch's statement starts with its position column (pg_stat_activity keeps
                    // only the first 1 kB of a statement, less than the batch's column list).
                    "SELECT count(*)::text FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'SELECT r.o_position,%'",
                    url: url)
                    == ["1"]
            }
            try await rival.query("COMMIT", logger: Logger(label: "rival"))
        } catch {
            // The rival is closed whatever happened (postgres-nio stops the process for a connection
            // dropped open), and the failure is reported.
            try? await rival.close()
            throw error
        }
        try await rival.close()
        let described = await outcomes.map(Self.describe)
        #expect(described.count == 4)
        for (index, line) in described.enumerated() {
            let account = index == 2 ? "rival" : "new-id-\(index)"
            #expect(line.hasPrefix("signed in: code=clash-\(index) ") && line.contains("account=\(account) "), "\(line)")
            #expect(line.hasSuffix("new=\(index != 2)"), "\(line)")
        }
        // Each on its own statement after the batch was rolled back.
        #expect(try await Self.sessionTransactions(url) == 4)
    }

    @Test("64 concurrent sign-ins with one code through two instances' batches: exactly one signs in")
    func oneCodeManyCallers() async throws {
        let (first, url) = try await Self.store()
        let second = try await Self.store(url: url)
        try await first.codes.issue(Self.code("contested", "contested@example.com"))
        let signedIn = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let statement = Self.signIn(index, ["contested"], "contested@example.com")
                    let outcome = try await (index.isMultiple(of: 2) ? first : second).accounts.emailLinkSignIn(
                        hashes: statement.hashes, tenantID: "", email: statement.email, now: statement.now, consumer: statement.consumer,
                        newID: statement.newID, canCreate: true, session: statement.session)
                    if case .signedIn = outcome { return true }
                    if case .invalid = outcome { return false }
                    throw TestSupportError("unexpected outcome \(outcome)")
                }
            }
            return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(signedIn == 1)
        #expect(try await PostgresTestServer.column("SELECT count(*)::text FROM refresh_tokens", url: url) == ["1"])
    }
}
