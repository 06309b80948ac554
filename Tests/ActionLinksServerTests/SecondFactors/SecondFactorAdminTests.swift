import ActionLinksConfiguration
import ActionLinksTestSupport
import Foundation
import Logging
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// Second factors through the admin's APIs (docs: research `totp-mfa.md` §2.1, §5.2, §10 decisions
/// 8 and 9): `accounts:lookup`, `accounts:batchGet` (and the legacy `downloadAccount`) and
/// `accounts:query` show `mfaInfo` without secrets; `accounts:update`'s `mfa` keeps or removes
/// factors and never makes one; `accounts:batchCreate` refuses users with factors. The factors are
/// seeded through the store, as only a user's own enrolment makes them.
@Suite("Second factors: shown by lookup and the exports, kept or removed by the admin, refused on import", .timeLimit(.minutes(5)))
struct SecondFactorAdminTests {
    static let stores = StoreFactory.kinds

    /// Two factors: one named, one not.
    static let factors = [
        SecondFactor(
            enrollmentID: "factorA0000000000000000000001", displayName: "Phone app", enrolledAt: Timestamp(milliseconds: 1_700_000_000_456),
            sealedSecret: "c2VhbGVkLWE", lastUsedStep: 56_666_666),
        SecondFactor(
            enrollmentID: "factorB0000000000000000000002", displayName: nil, enrolledAt: Timestamp(milliseconds: 1_700_000_100_789),
            sealedSecret: "c2VhbGVkLWI"),
    ]

    /// Runs `body` on an app with `kind`'s store, and that store opened beside it (to seed factors).
    static func app(_ kind: String, _ body: @Sendable (TestApp, any AccountStore) async throws -> Void) async throws {
        var environment: [String: String] = [:]
        let url = kind == "postgres" ? try await PostgresTestServer.freshDatabaseURL() : nil
        if let url { environment["ACTIONLINKS_STORE"] = url }
        try await TestApp.router(environment: environment) { app in
            if let url {
                let location = try PostgresLocation(url: url + (url.contains("?") ? "&" : "?") + "pool_size=2")
                let database = try PostgresStore(location: location, logger: Logger(label: "test-mfa"))
                let pool = Task.detached { await database.client.run() }
                defer { pool.cancel() }
                try await body(app, database.accounts)
            } else {
                let database = try SQLiteDatabase(path: app.dataDirectory.appendingPathComponent("actionlinks.sqlite").path)
                try await body(app, database.accounts)
            }
        }
    }

    /// Gives the account `localID` (of the default tenant) these factors, through the store.
    static func seed(_ accounts: any AccountStore, _ localID: String, _ factors: [SecondFactor] = factors) async throws {
        try await accounts.transaction(tenantID: "", now: Timestamp(milliseconds: 1_800_000_000_000)) { tx in
            try tx.prefetch([.id(localID)])
            guard var account = try tx.account(id: localID) else { throw TestSupportError("no account \(localID)") }
            account.secondFactors = factors
            try tx.update(account)
        }
    }

    /// The enrolment IDs of a user's `mfaInfo`, in order (`nil` when it has none).
    static func enrollmentIDs(_ user: [String: Any]) -> [String]? {
        (user["mfaInfo"] as? [[String: Any]])?.map { $0["mfaEnrollmentId"] as? String ?? "?" }
    }

    /// Checks one user's `mfaInfo` against ``factors``: the element shape of §2.1, TOTP's one key.
    static func expectShown(_ user: [String: Any], _ context: String) {
        let info = user["mfaInfo"] as? [[String: Any]] ?? []
        #expect(info.count == 2, "\(context): \(user)")
        guard info.count == 2 else { return }
        #expect(Set(info[0].keys) == ["mfaEnrollmentId", "displayName", "enrolledAt", "totpInfo"], "\(context): \(info[0])")
        #expect(info[0]["mfaEnrollmentId"] as? String == "factorA0000000000000000000001")
        #expect(info[0]["displayName"] as? String == "Phone app")
        #expect(info[0]["enrolledAt"] as? String == "2023-11-14T22:13:20.456Z", "\(context)")
        #expect((info[0]["totpInfo"] as? [String: Any])?.isEmpty == true, "\(context): totpInfo is {}")
        #expect(Set(info[1].keys) == ["mfaEnrollmentId", "enrolledAt", "totpInfo"], "\(context): no displayName: \(info[1])")
        #expect(info[1]["enrolledAt"] as? String == "2023-11-14T22:15:00.789Z", "\(context)")
    }

    /// Whether a reply's raw text holds any part of a factor it must not show.
    static func leaksSecrets(_ reply: HTTPReply) -> Bool {
        ["c2VhbGVkLWE", "c2VhbGVkLWI", "sealedSecret", "lastUsedStep", "56666666", "phoneInfo"].contains { reply.text.contains($0) }
    }

    @Test("lookup (admin and the user's own), batchGet, downloadAccount and query show mfaInfo, never a secret", arguments: stores)
    func shown(store: String) async throws {
        try await Self.app(store) { app, accounts in
            let user = try await app.registerUser(email: "alice@example.com")
            let plain = try await app.registerUser(email: "bob@example.com")
            try await Self.seed(accounts, user.localId)

            let adminLookup = try await app.api("lookup", ["localId": [user.localId, plain.localId]], admin: true)
            let looked = adminLookup.json["users"] as? [[String: Any]] ?? []
            #expect(adminLookup.status == 200 && looked.count == 2, "\(adminLookup.text)")
            for found in looked {
                if found["localId"] as? String == user.localId {
                    Self.expectShown(found, "admin lookup")
                } else {
                    #expect(found["mfaInfo"] == nil, "no factors, no mfaInfo: \(found)")
                }
            }
            #expect(!Self.leaksSecrets(adminLookup), "\(adminLookup.text)")

            let ownLookup = try await app.api("lookup", ["idToken": user.idToken])
            Self.expectShown((ownLookup.json["users"] as? [[String: Any]])?.first ?? [:], "the user's own lookup")
            #expect(!Self.leaksSecrets(ownLookup))

            let listed = try await app.request(
                "GET", "/identitytoolkit.googleapis.com/v1/projects/\(TestProject.id)/accounts:batchGet?maxResults=10", headers: Spec.admin)
            let listedUsers = listed.json["users"] as? [[String: Any]] ?? []
            #expect(listed.status == 200 && listedUsers.count == 2, "\(listed.text)")
            Self.expectShown(listedUsers.first { $0["localId"] as? String == user.localId } ?? [:], "batchGet")
            #expect(listedUsers.first { $0["localId"] as? String == plain.localId }?["mfaInfo"] == nil)
            #expect(!Self.leaksSecrets(listed))

            let downloaded = try await app.post(
                "/www.googleapis.com/identitytoolkit/v3/relyingparty/downloadAccount", ["targetProjectId": TestProject.id],
                headers: Spec.admin)
            Self.expectShown(
                (downloaded.json["users"] as? [[String: Any]] ?? []).first { $0["localId"] as? String == user.localId } ?? [:],
                "downloadAccount")
            #expect(!Self.leaksSecrets(downloaded))

            let queried = try await app.api("query", ["returnUserInfo": true], admin: true)
            let queriedUsers = queried.json["userInfo"] as? [[String: Any]] ?? []
            Self.expectShown(queriedUsers.first { $0["localId"] as? String == user.localId } ?? [:], "query")
            #expect(!Self.leaksSecrets(queried), "\(queried.text)")
        }
    }

    @Test("an email-link sign-in (PostgreSQL's one statement) and a password sign-in keep the factors", arguments: stores)
    func signInsKeepThem(store: String) async throws {
        try await Self.app(store) { app, accounts in
            let user = try await app.registerUser(email: "alice@example.com")
            try await app.updateAccount(localId: user.localId, ["emailVerified": true])
            try await Self.seed(accounts, user.localId)
            _ = try await app.signInWithEmailLink("alice@example.com")
            _ = try await app.signInWithPassword("alice@example.com")
            #expect(Self.enrollmentIDs(try await app.accountInfo(localId: user.localId)) == Self.factors.map(\.enrollmentID))
            #expect(try await accounts.account(id: user.localId, tenantID: "")?.secondFactors == Self.factors)
        }
    }

    @Test("mfa {} and mfa {enrollments: []} remove every factor; an absent mfa changes none; no session is revoked", arguments: stores)
    func removeAll(store: String) async throws {
        try await Self.app(store) { app, accounts in
            let user = try await app.registerUser(email: "alice@example.com")
            try await Self.seed(accounts, user.localId)
            try await app.updateAccount(localId: user.localId, ["displayName": "Alice"])
            #expect(try await accounts.account(id: user.localId, tenantID: "")?.secondFactors == Self.factors)

            let cleared = try await app.updateAccount(localId: user.localId, ["mfa": [String: Any]()])
            #expect(cleared.json["idToken"] == nil, "\(cleared.text)")
            #expect(try await accounts.account(id: user.localId, tenantID: "")?.secondFactors == [])
            #expect(try await app.accountInfo(localId: user.localId)["mfaInfo"] == nil)
            #expect(try await app.lookupError(idToken: user.idToken) == nil, "removing factors revokes no session")

            try await Self.seed(accounts, user.localId)
            try await app.updateAccount(localId: user.localId, ["mfa": ["enrollments": [Any]()]])
            #expect(try await accounts.account(id: user.localId, tenantID: "")?.secondFactors == [])
            #expect(try await app.lookupError(idToken: user.idToken) == nil)
        }
    }

    @Test("mfa.enrollments keeps the factors it names, renames one, drops the others", arguments: stores)
    func keep(store: String) async throws {
        try await Self.app(store) { app, accounts in
            let user = try await app.registerUser(email: "alice@example.com")
            try await Self.seed(accounts, user.localId)
            // As firebase-admin would send a listed factor back (no totpInfo: it strips it).
            try await app.updateAccount(
                localId: user.localId,
                ["mfa": ["enrollments": [["mfaEnrollmentId": "factorB0000000000000000000002", "displayName": "Tablet"]]]])
            var expected = Self.factors[1]
            expected.displayName = "Tablet"
            #expect(try await accounts.account(id: user.localId, tenantID: "")?.secondFactors == [expected])

            // Both named again (the first no longer exists: refused, nothing changes).
            let gone = try await app.api(
                "update",
                [
                    "localId": user.localId,
                    "mfa": [
                        "enrollments": [
                            ["mfaEnrollmentId": "factorA0000000000000000000001", "totpInfo": [String: Any]()],
                            ["mfaEnrollmentId": "factorB0000000000000000000002", "totpInfo": [String: Any]()],
                        ]
                    ],
                ], admin: true)
            #expect(
                gone.errorMessage
                    == "INVALID_ARGUMENT : a TOTP factor is enrolled by its user; mfaEnrollmentId factorA0000000000000000000001 is not one of the account's factors",
                "\(gone.text)")
            #expect(try await accounts.account(id: user.localId, tenantID: "")?.secondFactors == [expected])

            // Named with its totpInfo and without a displayName: kept as it is.
            try await Self.seed(accounts, user.localId)
            try await app.updateAccount(
                localId: user.localId,
                [
                    "mfa": [
                        "enrollments": [
                            ["mfaEnrollmentId": "factorB0000000000000000000002", "totpInfo": [String: Any]()],
                            ["mfaEnrollmentId": "factorA0000000000000000000001", "enrolledAt": "2020-01-01T00:00:00Z"],
                        ]
                    ]
                ])
            #expect(try await accounts.account(id: user.localId, tenantID: "")?.secondFactors == Self.factors, "oldest first, unchanged")
        }
    }

    @Test("mfa.enrollments refuses phone factors, new factors and an ID twice; a client's mfa is refused", arguments: stores)
    func refused(store: String) async throws {
        try await Self.app(store) { app, accounts in
            let user = try await app.registerUser(email: "alice@example.com")
            try await Self.seed(accounts, user.localId)
            func update(_ enrollments: [[String: Any]]) async throws -> HTTPReply {
                try await app.api("update", ["localId": user.localId, "mfa": ["enrollments": enrollments]], admin: true)
            }
            let phone = try await update([
                ["mfaEnrollmentId": "factorA0000000000000000000001"], ["phoneInfo": "+15555550100", "displayName": "Cell"],
            ])
            #expect(phone.isError("INVALID_ARGUMENT") && phone.errorMessage.contains("phoneInfo"), "\(phone.text)")
            let new = try await update([["displayName": "New app", "totpInfo": [String: Any]()]])
            #expect(new.isError("INVALID_ARGUMENT") && new.errorMessage.contains("enrolled by its user"), "\(new.text)")
            let unknown = try await update([["mfaEnrollmentId": "nope", "totpInfo": [String: Any]()]])
            #expect(unknown.isError("INVALID_ARGUMENT") && unknown.errorMessage.contains("mfaEnrollmentId nope"), "\(unknown.text)")
            let twice = try await update([
                ["mfaEnrollmentId": "factorA0000000000000000000001"], ["mfaEnrollmentId": "factorA0000000000000000000001"],
            ])
            #expect(twice.isError("DUPLICATE_MFA_ENROLLMENT_ID"), "\(twice.text)")
            let client = try await app.api("update", ["idToken": user.idToken, "mfa": [String: Any]()])
            #expect(client.isError("INSUFFICIENT_PERMISSION"), "\(client.text)")
            #expect(try await accounts.account(id: user.localId, tenantID: "")?.secondFactors == Self.factors, "nothing changed")
        }
    }

    @Test("batchCreate refuses each user with mfaInfo (phone or TOTP) by index, and imports the others", arguments: stores)
    func importRefused(store: String) async throws {
        try await Self.app(store) { app, accounts in
            let users: [[String: Any]] = [
                ["localId": "phone-user", "email": "phone@example.com", "mfaInfo": [["phoneInfo": "+15555550100"]]],
                ["localId": "plain-user", "email": "plain@example.com"],
                [
                    "localId": "totp-user", "email": "totp@example.com",
                    "mfaInfo": [
                        [
                            "mfaEnrollmentId": "factorA0000000000000000000001", "displayName": "App",
                            "enrolledAt": "2023-11-14T22:13:20.456Z",
                            "totpInfo": [String: Any](),
                        ]
                    ],
                ],
                ["localId": "empty-user", "email": "empty@example.com", "mfaInfo": [Any]()],
            ]
            let reply = try await app.api("batchCreate", ["users": users], admin: true)
            #expect(reply.status == 200, "\(reply.text)")
            let errors = reply.json["error"] as? [[String: Any]] ?? []
            #expect(errors.map { $0["index"] as? Int } == [0, 2], "\(reply.text)")
            #expect((errors.first?["message"] as? String)?.contains("phone second factors are not supported") == true, "\(reply.text)")
            #expect((errors.last?["message"] as? String)?.contains("cannot be imported") == true, "\(reply.text)")
            #expect(try await accounts.account(id: "phone-user", tenantID: "") == nil)
            #expect(try await accounts.account(id: "totp-user", tenantID: "") == nil)
            #expect(try await accounts.account(id: "plain-user", tenantID: "")?.secondFactors == [])
            #expect(try await accounts.account(id: "empty-user", tenantID: "") != nil, "an empty mfaInfo is no factor")
        }
    }
}
