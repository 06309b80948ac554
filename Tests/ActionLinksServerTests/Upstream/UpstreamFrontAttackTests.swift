import ActionLinksTestSupport
import Foundation
import Testing

/// Issue 32's findings on the front's `sendOobCode`, with two real binaries: an upstream in
/// production mode (as Google answers: its own recent sign-in rule, enumeration protection, only
/// granted access tokens as admin) and a front that asks it for codes as the service account.
@Suite("Upstream mode: the front's sendOobCode under attack", .timeLimit(.minutes(5)))
struct UpstreamFrontAttackTests {
    static let upstreamAdmin = String(repeating: "u", count: 40)

    /// An upstream in production mode, with `environment` on top.
    static func productionUpstream(_ environment: [String: String] = [:]) async throws -> TestServer {
        try await TestServer(
            environment: ["ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": upstreamAdmin].merging(environment) {
                $1
            })
    }

    /// A new account on `upstream`, signed up as a client does: its ID and refresh tokens.
    static func signUp(_ upstream: TestServer, _ email: String) async throws -> (idToken: String, refreshToken: String) {
        let reply = try await upstream.api("signUp", ["email": email, "password": "a-good-password-1", "returnSecureToken": true])
        guard let idToken = reply.json["idToken"] as? String, let refreshToken = reply.json["refreshToken"] as? String else {
            throw TestSupportError("signUp failed: \(reply.text)")
        }
        return (idToken, refreshToken)
    }

    @Test(
        "an email change with a stale sign-in is refused as upstream refuses it (CREDENTIAL_TOO_OLD_LOGIN_AGAIN), a refreshed token included; nothing is mailed"
    )
    func staleSignInMovesNoAddress() async throws {
        let upstream = try await Self.productionUpstream(["ACTIONLINKS_USERS_RECENT_SIGN_IN_SECONDS": "1"])
        let front = try await UpstreamModeTests.front(
            for: upstream, serviceAccount: try await UpstreamModeTests.serviceAccount(of: upstream),
            environment: ["ACTIONLINKS_USERS_RECENT_SIGN_IN_SECONDS": "1"])
        let owner = try await Self.signUp(upstream, "owner-stale@example.com")
        // The sign-in is now more than a second old; a refresh keeps its auth_time.
        try await Task.sleep(for: .milliseconds(2200))
        let refreshed = try await upstream.request(
            "POST", "/v1/token?key=\(TestProject.apiKey)",
            body: Data("grant_type=refresh_token&refresh_token=\(owner.refreshToken)".utf8),
            headers: ["Content-Type": "application/x-www-form-urlencoded"])
        let refreshedToken = try #require(refreshed.json["id_token"] as? String, "\(refreshed.text)")
        let change: [String: Any] = ["requestType": "VERIFY_AND_CHANGE_EMAIL", "newEmail": "thief@example.net"]

        for token in [owner.idToken, refreshedToken] {
            var fields = change
            fields["idToken"] = token
            let direct = try await upstream.api("sendOobCode", fields)
            #expect(direct.status == 400 && direct.errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN", "upstream itself: \(direct.text)")
            let through = try await front.api("sendOobCode", fields)
            #expect(through.status == 400 && through.errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN", "the front: \(through.text)")
        }
        // A moment for a mail that should not be sent to show up in the log.
        try await Task.sleep(for: .milliseconds(300))
        #expect(UpstreamModeTests.mailCount(front, to: "thief@example.net") == 0, "\(front.standardOutput)")
        #expect(try await upstream.lookup(email: "thief@example.net", admin: Self.upstreamAdmin) == nil)
    }

    @Test(
        "with enumeration protection, a change to an address another account has answers as a mailed change does, and mails nothing"
    )
    func takenNewAddressIsNotTold() async throws {
        let upstream = try await Self.productionUpstream()
        let front = try await UpstreamModeTests.front(
            for: upstream, serviceAccount: try await UpstreamModeTests.serviceAccount(of: upstream))
        let owner = try await Self.signUp(upstream, "owner-taken@example.com")
        _ = try await Self.signUp(upstream, "someone-else@example.com")

        let taken = try await front.api(
            "sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": owner.idToken, "newEmail": "someone-else@example.com"])
        let free = try await front.api(
            "sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": owner.idToken, "newEmail": "owner-new@example.com"])
        #expect(free.status == 200 && free.json["email"] as? String == "owner-taken@example.com", "\(free.text)")
        #expect(taken.status == 200 && taken.body == free.body, "the same answer, byte for byte: \(taken.text) / \(free.text)")
        _ = try await UpstreamModeTests.mailedLink(front, to: "owner-new@example.com")
        #expect(UpstreamModeTests.mailCount(front, to: "someone-else@example.com") == 0, "\(front.standardOutput)")

        // The admin (and a front without protection) is told, as Firebase tells them.
        let admin = try await front.post(
            "/v1/projects/\(TestProject.id)/accounts:sendOobCode",
            [
                "requestType": "VERIFY_AND_CHANGE_EMAIL", "email": "owner-taken@example.com", "newEmail": "someone-else@example.com",
                "returnOobLink": true,
            ], headers: ["Authorization": "Bearer " + UpstreamModeTests.frontAdmin])
        #expect(admin.status == 400 && admin.errorCode == "EMAIL_EXISTS", "\(admin.text)")
    }

    @Test("the front's sendOobCode takes only JSON: a form or text/plain body, which any page can send without a preflight, gets 415")
    func onlyJSON() async throws {
        let upstream = try await Self.productionUpstream()
        let front = try await UpstreamModeTests.front(
            for: upstream, serviceAccount: try await UpstreamModeTests.serviceAccount(of: upstream))
        let json = #"{"requestType":"PASSWORD_RESET","email":"ann@example.com"}"#
        for (type, body) in [
            ("text/plain;charset=UTF-8", json), ("application/x-www-form-urlencoded", "requestType=PASSWORD_RESET&email=ann%40example.com"),
            ("multipart/form-data; boundary=x", json),
        ] {
            let reply = try await front.request(
                "POST", "/v1/accounts:sendOobCode?key=\(TestProject.apiKey)", body: Data(body.utf8), headers: ["Content-Type": type])
            #expect(reply.status == 415 && reply.errorCode == "INVALID_CONTENT_TYPE", "\(type): \(reply.status) \(reply.text)")
        }
        let none = try await front.request("POST", "/v1/accounts:sendOobCode?key=\(TestProject.apiKey)", body: Data(json.utf8))
        #expect(none.status == 415, "no Content-Type: \(none.text)")
        let proper = try await front.request(
            "POST", "/v1/accounts:sendOobCode?key=\(TestProject.apiKey)", body: Data(json.utf8),
            headers: ["Content-Type": "application/json; charset=utf-8"])
        #expect(proper.status == 200, "\(proper.text)")
    }
}

extension LinkDomainClient {
    /// The account with `email` as a production server's admin (`Bearer <admin>`) looks it up.
    func lookup(email: String, admin: String) async throws -> [String: Any]? {
        let reply = try await api("lookup", ["email": [email]], admin: true, headers: ["Authorization": "Bearer " + admin])
        return (reply.json["users"] as? [[String: Any]])?.first
    }
}
