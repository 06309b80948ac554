import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// `/metrics` against what an attacker asks of it (red-team finding 7, security issue).
@Suite("/metrics: a credential, and no counter that tells an account", .timeLimit(.minutes(5)))
struct ServerMetricsTests {
    @Test("/metrics needs a credential even from loopback, and no counter tells whether an address has an account")
    func metrics() async throws {
        let token = String(repeating: "m", count: 40)
        try await TestApp.live(environment: [
            "ACTIONLINKS_SERVER_METRICS_TOKEN": token, "ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true",
        ]) { app in
            #expect(
                try await app.request("GET", "/metrics").status == 401, "loopback is no credential (a proxy on this machine is loopback)")
            #expect(try await app.request("GET", "/metrics", headers: ["Authorization": "Bearer nope"]).status == 401)
            #expect(try await app.request("GET", "/metrics", headers: ["Authorization": "Bearer owner"]).status == 200)
            func codes() async throws -> [String] {
                let text = try await app.request("GET", "/metrics", headers: ["Authorization": "bearer " + token]).text
                return text.split(separator: "\n").filter { $0.hasPrefix("actionlinks_codes_") }.map(String.init)
            }
            try await app.createAccount(email: "known@example.com")
            let before = try await codes()
            _ = try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "unknown@example.com"])
            let afterUnknown = try await codes()
            _ = try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "known@example.com"])
            let afterKnown = try await codes()
            #expect(before != afterUnknown, "an unknown address moves the counters")
            #expect(Self.delta(before, afterUnknown) == Self.delta(afterUnknown, afterKnown), "exactly as a known one does")
        }
    }

    /// The series that changed from `a` to `b`, with their increase.
    static func delta(_ a: [String], _ b: [String]) -> [String: Double] {
        func values(_ lines: [String]) -> [String: Double] {
            Dictionary(
                lines.compactMap { line in
                    let parts = line.split(separator: " ")
                    return parts.count == 2 ? (String(parts[0]), Double(parts[1]) ?? 0) : nil
                }, uniquingKeysWith: { $1 })
        }
        let (old, new) = (values(a), values(b))
        var changed: [String: Double] = [:]
        for (series, value) in new where old[series] != value { changed[series] = value - (old[series] ?? 0) }
        return changed
    }
}
