import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// On PostgreSQL an email-link sign-in without a signed-in user is one statement (the function
/// `actionlinks_email_link_sign_in`, migration v7); SQLite runs the unit of work it replaces. The
/// same story is told to both and every answer compared, refusals and their order included.
@Suite("Email-link sign-in: PostgreSQL's one statement answers as the unit of work does", .timeLimit(.minutes(5)))
struct EmailLinkOneStatementTests {
    /// Runs `body` on an app with `kind`'s store.
    static func app(
        _ kind: String, environment: [String: String] = [:], clock: any ServiceClock, _ body: @Sendable (TestApp) async throws -> [String]
    ) async throws -> [String] {
        var environment = environment
        if kind == "postgres" { environment["ACTIONLINKS_STORE"] = try await PostgresTestServer.freshDatabaseURL() }
        return try await TestApp.router(environment: environment, clock: clock, body)
    }

    /// What a sign-in answered, without values that differ from run to run (IDs become labels).
    static func describe(_ reply: HTTPReply, ids: inout [String: String]) -> String {
        guard reply.status == 200 else { return "\(reply.status) \(reply.errorMessage)" }
        func label(_ id: String?) -> String {
            guard let id else { return "nil" }
            if let known = ids[id] { return known }
            ids[id] = "user\(ids.count + 1)"
            return ids[id] ?? ""
        }
        let token = Spec.payload(reply.json["idToken"] as? String ?? "")
        let firebase = token["firebase"] as? [String: Any] ?? [:]
        let identities = (firebase["identities"] as? [String: Any] ?? [:]).map { "\($0.key)=\($0.value)" }.sorted()
        return "200 \(label(reply.json["localId"] as? String)) new=\(reply.json["isNewUser"] as? Bool ?? false) "
            + "email=\(reply.json["email"] as? String ?? "") token: user=\(label(token["user_id"] as? String)) "
            + "verified=\(token["email_verified"] as? Bool ?? false) provider=\(firebase["sign_in_provider"] as? String ?? "") "
            + "identities=\(identities) refresh=\(!(reply.json["refreshToken"] as? String ?? "").isEmpty)"
    }

    /// An account as the admin's lookup shows it, without times and IDs.
    static func account(_ app: TestApp, _ localId: String) async throws -> String {
        let user = try await app.accountInfo(localId: localId)
        let providers = (user["providerUserInfo"] as? [[String: Any]] ?? []).map { "\($0["providerId"] ?? "")" }.sorted()
        return "email=\(user["email"] ?? "") verified=\(user["emailVerified"] as? Bool ?? false) "
            + "link=\(user["emailLinkSignin"] as? Bool ?? false) password=\(user["passwordHash"] != nil) "
            + "disabled=\(user["disabled"] as? Bool ?? false) providers=\(providers)"
    }

    /// The story, told to one store: every answer, in order.
    static func story(_ kind: String) async throws -> [String] {
        let clock = ManualClock()
        return try await app(kind, clock: clock) { app in
            var lines: [String] = []
            var ids: [String: String] = [:]
            func signIn(_ email: String, _ code: String) async throws -> HTTPReply {
                try await app.api("signInWithEmailLink", ["email": email, "oobCode": code])
            }
            // A new address: made, signed in, the code consumed once.
            let (alice, _) = try await app.createEmailSignInOob("alice@example.com")
            let wrongAddress = try await signIn("bob@example.com", alice)
            #expect(wrongAddress.errorMessage == "INVALID_EMAIL : The email provided does not match the sign-in email address.")
            lines.append("wrong address: " + describe(wrongAddress, ids: &ids))
            lines.append("malformed code: " + describe(try await signIn("alice@example.com", "not-a-code"), ids: &ids))
            let first = try await signIn("Alice@Example.com", alice)
            #expect(first.status == 200 && first.json["isNewUser"] as? Bool == true, "\(first.text)")
            lines.append("new address: " + describe(first, ids: &ids))
            let again = try await signIn("alice@example.com", alice)
            #expect(again.isError("INVALID_OOB_CODE"), "\(again.text)")
            lines.append("the same code again: " + describe(again, ids: &ids))
            let aliceID = first.json["localId"] as? String ?? ""
            lines.append("alice: " + (try await account(app, aliceID)))
            lines.append("alice's methods: \(try await app.signInMethods("alice@example.com"))")

            // A code of another mode.
            let bob = try await app.registerUser(email: "bob@example.com")
            let reset = try await app.api(
                "sendOobCode", ["email": "bob@example.com", "requestType": "PASSWORD_RESET", "returnOobLink": true], admin: true)
            let wrongMode = try await signIn("bob@example.com", reset.json["oobCode"] as? String ?? "")
            #expect(wrongMode.isError("INVALID_OOB_CODE"), "\(wrongMode.text)")
            lines.append("a reset code: " + describe(wrongMode, ids: &ids))

            // A disabled owner: refused, the code stays live; enabled again, the same code signs in,
            // and since bob never proved the address his password and sessions go.
            let (bobCode, _) = try await app.createEmailSignInOob("bob@example.com")
            try await app.updateAccount(localId: bob.localId, ["disableUser": true])
            let disabled = try await signIn("bob@example.com", bobCode)
            #expect(disabled.isError("USER_DISABLED"), "\(disabled.text)")
            lines.append("disabled: " + describe(disabled, ids: &ids))
            try await app.updateAccount(localId: bob.localId, ["disableUser": false])
            clock.advance(seconds: 2)
            let bobIn = try await signIn("bob@example.com", bobCode)
            #expect(bobIn.status == 200 && bobIn.json["localId"] as? String == bob.localId, "\(bobIn.text)")
            lines.append("bob, enabled again: " + describe(bobIn, ids: &ids))
            lines.append("bob: " + (try await account(app, bob.localId)))
            lines.append("bob's old token: \(try await app.lookupError(idToken: bob.idToken) ?? "works")")
            lines.append(
                "bob's password: \(try await app.api("signInWithPassword", ["email": "bob@example.com", "password": Spec.password]).errorCode ?? "works")"
            )

            // A verified account with a provider keeps it, its password and its sessions.
            let carol = try await app.signInWithFakeClaims(
                "google.com", ["sub": "carol-at-google", "email": "carol@example.com", "email_verified": true])
            try await app.updateAccount(localId: carol.localId, ["password": "carol's password"])
            let carolIn = try await app.signInWithEmailLink("carol@example.com")
            #expect(carolIn.localId == carol.localId)
            let carolToken = Spec.payload(carolIn.idToken)["firebase"] as? [String: Any] ?? [:]
            #expect((carolToken["identities"] as? [String: Any])?["google.com"] as? [String] == ["carol-at-google"])
            let carolIdentities = (carolToken["identities"] as? [String: Any] ?? [:]).map { "\($0.key)=\($0.value)" }.sorted()
            lines.append("carol: " + (try await account(app, carol.localId)) + " token identities: \(carolIdentities)")

            // An unverified account with a provider loses it.
            let dave = try await app.signInWithFakeClaims(
                "oidc.corp", ["sub": "dave-at-corp", "email": "dave@example.com", "email_verified": false])
            lines.append("dave before: " + (try await account(app, dave.localId)))
            let (daveCode, _) = try await app.createEmailSignInOob("dave@example.com")
            clock.advance(seconds: 2)
            let daveIn = try await signIn("dave@example.com", daveCode)
            lines.append("dave: " + describe(daveIn, ids: &ids))
            if let daveID = daveIn.json["localId"] as? String { lines.append("dave after: " + (try await account(app, daveID))) }

            // A code of a tenant is no code at the project; in its tenant it signs in.
            let tenant = try await app.registerEnabledTenant()
            let (gina, _) = try await app.createEmailSignInOob("gina@example.com", tenant: tenant)
            let elsewhere = try await signIn("gina@example.com", gina)
            #expect(elsewhere.isError("INVALID_OOB_CODE"), "\(elsewhere.text)")
            lines.append("another tenant's code: " + describe(elsewhere, ids: &ids))
            let inTenant = try await app.api("signInWithEmailLink", ["email": "gina@example.com", "oobCode": gina], tenant: tenant)
            #expect(inTenant.status == 200, "\(inTenant.text)")
            lines.append("in its tenant: " + describe(inTenant, ids: &ids))
            let ginaTenant = (Spec.payload(inTenant.json["idToken"] as? String ?? "")["firebase"] as? [String: Any])?["tenant"] as? String
            #expect(ginaTenant == tenant)

            // An expired code.
            let (erin, _) = try await app.createEmailSignInOob("erin@example.com")
            clock.advance(seconds: 3601)
            let expired = try await signIn("erin@example.com", erin)
            #expect(expired.isError("EXPIRED_OOB_CODE"), "\(expired.text)")
            lines.append("expired: " + describe(expired, ids: &ids))
            lines.append("expired, wrong address: " + describe(try await signIn("nobody@example.com", erin), ids: &ids))
            return lines
        }
    }

    /// The story's cases at once, so that on PostgreSQL they go in batches
    /// (`actionlinks_email_link_sign_ins`): every answer, case by case.
    static func concurrentStory(_ kind: String) async throws -> [String] {
        let clock = ManualClock()
        return try await app(kind, clock: clock) { app in
            let (erin, _) = try await app.createEmailSignInOob("erin@example.com")
            clock.advance(seconds: 3601)
            var cases: [(String, String, String, String?)] = [("expired", "erin@example.com", erin, nil)]
            for index in 1...6 {
                let email = "new\(index)@example.com"
                cases.append(("new address \(index)", email, try await app.createEmailSignInOob(email).oobCode, nil))
            }
            let (same, _) = try await app.createEmailSignInOob("same@example.com")
            for _ in 1...3 { cases.append(("one code thrice", "same@example.com", same, nil)) }
            let (owner, _) = try await app.createEmailSignInOob("owner@example.com")
            cases.append(("wrong address", "stranger@example.com", owner, nil))
            cases.append(("malformed code", "new1@example.com", "not-a-code", nil))
            _ = try await app.registerUser(email: "bob@example.com")
            let reset = try await app.api(
                "sendOobCode", ["email": "bob@example.com", "requestType": "PASSWORD_RESET", "returnOobLink": true], admin: true)
            cases.append(("a reset code", "bob@example.com", reset.json["oobCode"] as? String ?? "", nil))
            let disabled = try await app.registerUser(email: "dis@example.com")
            let (disabledCode, _) = try await app.createEmailSignInOob("dis@example.com")
            try await app.updateAccount(localId: disabled.localId, ["disableUser": true])
            cases.append(("disabled", "dis@example.com", disabledCode, nil))
            let carol = try await app.signInWithFakeClaims(
                "google.com", ["sub": "carol-at-google", "email": "carol@example.com", "email_verified": true])
            try await app.updateAccount(localId: carol.localId, ["password": "carol's password"])
            cases.append(
                ("verified with a provider", "carol@example.com", try await app.createEmailSignInOob("carol@example.com").oobCode, nil))
            let dave = try await app.signInWithFakeClaims(
                "oidc.corp", ["sub": "dave-at-corp", "email": "dave@example.com", "email_verified": false])
            cases.append(
                ("unverified with a provider", "dave@example.com", try await app.createEmailSignInOob("dave@example.com").oobCode, nil))
            let tenant = try await app.registerEnabledTenant()
            let (gina, _) = try await app.createEmailSignInOob("gina@example.com", tenant: tenant)
            cases.append(("another tenant's code", "gina@example.com", gina, nil))
            let (hal, _) = try await app.createEmailSignInOob("hal@example.com", tenant: tenant)
            cases.append(("in its tenant", "hal@example.com", hal, tenant))
            clock.advance(seconds: 2)

            let replies = try await withThrowingTaskGroup(of: (Int, HTTPReply).self) { group in
                for (index, (_, email, code, tenant)) in cases.enumerated() {
                    group.addTask {
                        (index, try await app.api("signInWithEmailLink", ["email": email, "oobCode": code], tenant: tenant))
                    }
                }
                return try await group.reduce(into: [Int: HTTPReply]()) { $0[$1.0] = $1.1 }
            }
            var answers: [String: [String]] = [:]
            var ids: [String: String] = [:]
            for (index, (label, _, _, _)) in cases.enumerated() {
                guard let reply = replies[index] else { throw TestSupportError("no reply for \(label)") }
                answers[label, default: []].append(describe(reply, ids: &ids))
            }
            var lines = answers.keys.sorted().map { "\($0): \(answers[$0, default: []].sorted())" }
            lines.append("carol: " + (try await account(app, carol.localId)))
            lines.append("dave: " + (try await account(app, dave.localId)))
            lines.append("disabled: " + (try await account(app, disabled.localId)))
            return lines
        }
    }

    @Test("the story's cases at once, on PostgreSQL in batches: the same answers and accounts as on SQLite")
    func sameConcurrentStory() async throws {
        let sqlite = try await Self.concurrentStory("sqlite")
        let postgres = try await Self.concurrentStory("postgres")
        #expect(sqlite.count == postgres.count && sqlite.count > 12)
        for (lite, pg) in zip(sqlite, postgres) { #expect(lite == pg) }
        let thrice = postgres.first { $0.hasPrefix("one code thrice: ") } ?? ""
        #expect(thrice.components(separatedBy: "200 ").count == 2, "one of three signs in: \(thrice)")
    }

    @Test("the same answers and the same accounts on SQLite and PostgreSQL, refusal by refusal")
    func sameStory() async throws {
        let sqlite = try await Self.story("sqlite")
        let postgres = try await Self.story("postgres")
        #expect(sqlite.count == postgres.count && sqlite.count > 15)
        for (lite, pg) in zip(sqlite, postgres) { #expect(lite == pg) }
    }

    @Test("sign-up turned off: an unknown address is refused and its code stays live, on both stores", arguments: StoreFactory.kinds)
    func signUpOff(kind: String) async throws {
        let lines = try await Self.app(kind, environment: ["ACTIONLINKS_USERS_SELF_SERVICE_SIGN_UP": "false"], clock: ManualClock()) {
            app in
            let (code, _) = try await app.createEmailSignInOob("frank@example.com")
            let refused = try await app.api("signInWithEmailLink", ["email": "frank@example.com", "oobCode": code])
            #expect(refused.isError("ADMIN_ONLY_OPERATION"), "\(refused.text)")
            #expect(try await app.inspectOobs().contains { $0["oobCode"] as? String == code })
            _ = try await app.api("create", ["email": "frank@example.com"], admin: true)
            let signedIn = try await app.api("signInWithEmailLink", ["email": "frank@example.com", "oobCode": code])
            #expect(signedIn.status == 200 && signedIn.json["isNewUser"] as? Bool == false, "\(signedIn.text)")
            return []
        }
        #expect(lines.isEmpty)
    }
}
