import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksHeaders
import HTTPTypes
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksHTTP

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
            // A Forwarded header the proxy did not write (it writes X-Forwarded-For) is the client's own.
            for index in 0..<3 {
                answers.append(
                    try await proxied.api(
                        "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "r\(index)@example.com"],
                        headers: ["Forwarded": "for=198.51.100.\(index);proto=https", "X-Forwarded-For": "203.0.113.9"]
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

    /// The client `resolve` finds for a request from `peer` with `headers`, behind `trustedProxies`.
    static func client(
        _ headers: [(String, String)], peer: String = "127.0.0.1", trustedProxies: [String] = ["127.0.0.1", "10.0.0.0/8"],
        proxyHeaders: ServerSettings.ProxyHeaders = .xforwarded
    ) throws -> String? {
        var settings = try ActionLinksConfiguration.parse(yaml: "", file: "t.yaml").service.server
        settings.trustedProxies = trustedProxies.compactMap { IPNetwork($0) }
        settings.proxyHeaders = proxyHeaders
        var fields = HTTPFields()
        for (name, value) in headers { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return ClientIdentity.resolve(peer: peer, headers: fields, settings: settings).address
    }

    @Test(
        "behind nginx (X-Forwarded-For: $proxy_add_x_forwarded_for), the client is the first untrusted hop from the right: a Forwarded or X-Forwarded-For the client wrote itself gains nothing"
    )
    func proxyHeaders() throws {
        // The red team's request: its own Forwarded, which nginx passes on untouched, beside the
        // X-Forwarded-For nginx appends the real address to.
        #expect(try Self.client([("Forwarded", "for=192.0.2.1"), ("X-Forwarded-For", "203.0.113.5")]) == "203.0.113.5")
        #expect(try Self.client([("X-Forwarded-For", "192.0.2.1, 192.0.2.2, 203.0.113.5")]) == "203.0.113.5")
        // Two proxies of ours (an ingress behind a load balancer): walked past both.
        #expect(try Self.client([("X-Forwarded-For", "192.0.2.1, 203.0.113.5, 10.1.2.3")]) == "203.0.113.5")
        // Everything trusted: the leftmost address.
        #expect(try Self.client([("X-Forwarded-For", "10.0.0.9, 10.1.2.3")]) == "10.0.0.9")
        // No header: the proxy itself.
        #expect(try Self.client([]) == "127.0.0.1")
        // A peer that is not a proxy of ours: its headers are never read.
        #expect(try Self.client([("X-Forwarded-For", "192.0.2.1")], peer: "198.51.100.4") == "198.51.100.4")
        // proxyHeaders: forwarded reads Forwarded only, and X-Forwarded-For is then the client's.
        #expect(
            try Self.client([("X-Forwarded-For", "192.0.2.1"), ("Forwarded", "for=203.0.113.5")], proxyHeaders: .forwarded) == "203.0.113.5"
        )
        #expect(
            try Self.client([("Forwarded", "for=192.0.2.1, for=\"[2001:db8::7]:443\"")], proxyHeaders: .forwarded) == "2001:db8::7")
        // A hop that is not an address ends the walk: what is left of it is no one's word.
        #expect(try Self.client([("Forwarded", "for=192.0.2.1, for=_hidden")], proxyHeaders: .forwarded) == "_hidden")
    }

    @Test("per-IP limits count an IPv6 client by its /64 (limits.ipv6PrefixLength), an IPv4 one (mapped too) by itself")
    func buckets() throws {
        var limits = try ActionLinksConfiguration.parse(yaml: "", file: "t.yaml").service.limits
        #expect(limits.ipv6PrefixLength == 64)
        #expect(limits.clientBucket("2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(limits.clientBucket("2001:db8:1:2:ffff:ffff:ffff:fffe") == "2001:db8:1:2::/64")
        #expect(limits.clientBucket("2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(limits.clientBucket("192.0.2.1") == "192.0.2.1" && limits.clientBucket("::ffff:192.0.2.1") == "192.0.2.1")
        #expect(limits.clientBucket("unknown") == "unknown")
        limits = try ActionLinksConfiguration.parse(yaml: "limits: {ipv6PrefixLength: 56}", file: "t.yaml").service.limits
        #expect(limits.clientBucket("2001:db8:1:2ff::1") == "2001:db8:1:200::/56")
        #expect(throws: ConfigurationError.self) {
            try ActionLinksConfiguration.parse(yaml: "limits: {ipv6PrefixLength: 16}", file: "t.yaml")
        }
        #expect(throws: ConfigurationError.self) {
            try ActionLinksConfiguration.parse(yaml: "server: {proxyHeaders: x-real-ip}", file: "t.yaml")
        }
    }

    @Test("one IPv6 host cannot take fresh per-IP buckets by changing the low 64 bits of its address")
    func ipv6Host() async throws {
        try await TestApp.live(
            environment: [
                "ACTIONLINKS_LIMITS_SIGN_IN_CODE_EXCHANGES_PER_IP_PER_HOUR": "5", "ACTIONLINKS_SERVER_TRUSTED_PROXIES": "127.0.0.0/8,::1",
            ], clock: ManualClock.midHour()
        ) { app in
            var statuses: [Int] = []
            for index in 1...8 {
                let reply = try await SignInCodeTests.exchange(
                    app, email: "t\(index)@example.com", code: "123456", headers: ["X-Forwarded-For": "2001:db8:5:6::\(index)"])
                statuses.append(reply.status)
            }
            #expect(statuses == [400, 400, 400, 400, 400, 429, 429, 429], "\(statuses)")
            let neighbour = try await SignInCodeTests.exchange(
                app, email: "t9@example.com", code: "123456", headers: ["X-Forwarded-For": "2001:db8:5:7::1"])
            #expect(neighbour.status == 400, "another /64 is another client: \(neighbour.text)")
        }
    }
}
