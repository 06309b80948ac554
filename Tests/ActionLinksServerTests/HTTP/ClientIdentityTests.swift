import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// Who the client is (``ClientIdentity``): forwarded headers count only from a configured proxy
/// (red-team finding 8, security issue).
@Suite("Client identity: forwarded headers only from trusted proxies", .timeLimit(.minutes(5)))
struct ClientIdentityTests {
    @Test("X-Forwarded-For and -Proto count only from a configured proxy; Host never decides a cookie")
    func trustedProxies() async throws {
        try await TestApp.live(
            environment: [
                "ACTIONLINKS_LIMITS_SENDS_PER_IP_PER_HOUR": "2", "ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true",
            ], clock: ManualClock.midHour()
        ) { direct in
            var answers: [Int] = []
            for index in 0..<3 {
                answers.append(
                    try await direct.api(
                        "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "p\(index)@example.com"],
                        headers: ["X-Forwarded-For": "203.0.113.\(index)", "Forwarded": "for=198.51.100.\(index)"]
                    ).status)
            }
            #expect(answers == [200, 200, 429], "a client cannot pick its own address: \(answers)")
            #expect(
                try await RememberedDeviceTests.deviceCookie(direct, headers: ["X-Forwarded-Proto": "https"])?.contains("Secure") == false)
        }
        try await TestApp.live(
            environment: [
                "ACTIONLINKS_LIMITS_SENDS_PER_IP_PER_HOUR": "2", "ACTIONLINKS_SERVER_TRUSTED_PROXIES": "127.0.0.0/8,::1",
                "ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true",
            ], clock: ManualClock.midHour()
        ) { proxied in
            var answers: [Int] = []
            for index in 0..<3 {
                answers.append(
                    try await proxied.api(
                        "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "q\(index)@example.com"],
                        headers: ["X-Forwarded-For": "203.0.113.\(index), 127.0.0.1"]
                    ).status)
            }
            #expect(answers == [200, 200, 200], "behind our proxy, each client is itself: \(answers)")
            for index in 0..<3 {
                answers.append(
                    try await proxied.api(
                        "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "r\(index)@example.com"],
                        headers: ["Forwarded": "for=198.51.100.7;proto=https"]
                    ).status)
            }
            #expect(answers.suffix(3) == [200, 200, 429], "and one client is one client: \(answers)")
            #expect(
                try await RememberedDeviceTests.deviceCookie(proxied, headers: ["X-Forwarded-Proto": "https"])?.contains("; Secure") == true
            )
            #expect(
                try await RememberedDeviceTests.deviceCookie(proxied, headers: [:])?.contains("Secure") == false,
                "plain HTTP on a development server")
            #expect(
                try await RememberedDeviceTests.deviceCookie(proxied, headers: ["Host": "links.example.com"])?.contains("Secure") == false)
        }
    }
}
