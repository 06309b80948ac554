import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// `sendOobCode`'s issuer (``CodeIssuer``) against what an attacker sends, over HTTP against the
/// real server: only configured tenants, send limits that count the mailbox whatever the tenant or
/// the request (red-team finding 5, security issue), and one answer for a known and an unknown
/// address (finding 9).
@Suite("sendOobCode: tenants, send limits and email-enumeration protection", .timeLimit(.minutes(5)))
struct CodeIssuerTests {
    @Test("only configured tenants exist; malformed IDs are refused; the per-address limit counts across tenants")
    func tenantsAndLimits() async throws {
        try await TestApp.router(
            environment: [
                "ACTIONLINKS_TENANTS": "t-one,t-two", "ACTIONLINKS_LIMITS_SENDS_PER_ADDRESS_PER_HOUR": "3",
                "ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true",
            ], clock: ManualClock.midHour()
        ) { app in
            for tenant in ["t-one", "t-two"] { _ = try await app.api("create", ["email": "rot@example.com"], admin: true, tenant: tenant) }
            let unknown = try await app.api(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "rot@example.com"], tenant: "t-three")
            #expect(unknown.status == 400 && unknown.errorCode == "TENANT_NOT_FOUND", "\(unknown.text)")
            let inBody = try await app.api(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "rot@example.com", "tenantId": "nope"])
            #expect(inBody.errorCode == "TENANT_NOT_FOUND", "\(inBody.text)")
            let nul = try await app.api(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "rot@example.com", "tenantId": "t-one\u{0}x"])
            #expect(nul.errorCode == "INVALID_TENANT_ID", "a NUL does not truncate the ID: \(nul.text)")
            let admin = try await app.api("create", ["email": "x@example.com"], admin: true, tenant: "made-up")
            #expect(admin.errorCode == "TENANT_NOT_FOUND", "nor for the admin")

            var answers: [Int] = []
            for tenant in ["t-one", "t-two", "t-one", "t-two", "t-one"] {
                answers.append(
                    try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "ROT@example.com"], tenant: tenant).status)
            }
            #expect(answers == [200, 200, 200, 429, 429], "one mailbox, one limit, whatever the tenant: \(answers)")
        }
    }

    @Test("a change-email request counts against the new address's limit too")
    func changeEmailCountsTheRecipient() async throws {
        // A clock that stands mid-hour: a run that crosses an hour cannot open a new window.
        let clock = ManualClock.midHour()
        try await TestApp.router(environment: ["ACTIONLINKS_LIMITS_SENDS_PER_ADDRESS_PER_HOUR": "2"], clock: clock) { app in
            try await app.createAccount(email: "victim@example.com")
            for _ in 0..<2 {
                #expect(try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "victim@example.com"]).status == 200)
            }
            let idToken = try await Self.signIn(app, "mallory@example.com")
            let change = try await app.api(
                "sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": idToken, "newEmail": "victim@example.com"])
            #expect(change.status == 429, "the recipient's mailbox is over its limit: \(change.text)")
        }
    }

    /// Signs `email` in with an email link (created on the way) and returns the ID token.
    static func signIn(_ server: some LinkDomainClient, _ email: String) async throws -> String {
        let (_, code) = try await server.link("EMAIL_SIGNIN", email: email, extra: ["continueUrl": "https://app.example.com/"])
        let reply = try await server.api("signInWithEmailLink", ["oobCode": code, "email": email])
        return try #require(reply.json["idToken"] as? String, "\(reply.text)")
    }

    @Test("with email-enumeration protection, sendOobCode answers a known and an unknown address in the same bytes (both normalised)")
    func enumeration() async throws {
        try await TestApp.router(environment: ["ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true"]) { app in
            try await app.createAccount(email: "here@example.com")
            let known = try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "  HERE@Example.com"])
            let unknown = try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "  GONE@Example.com"])
            #expect(known.status == 200 && unknown.status == 200)
            #expect(known.json["email"] as? String == "here@example.com")
            #expect(unknown.json["email"] as? String == "gone@example.com", "not the typed form: \(unknown.text)")
            #expect(known.text.replacingOccurrences(of: "here@", with: "") == unknown.text.replacingOccurrences(of: "gone@", with: ""))
            #expect(known.headers.keys.sorted() == unknown.headers.keys.sorted())
        }
    }
}
