import ActionLinks
import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// One request on its own connection, with one header's raw bytes (whatever they are), on a thread
/// of its own so a slow answer never holds a cooperative thread.
enum RawRequest {
    static func send(base: String, method: String, path: String, body: String?, header: (String, [UInt8])) async throws -> Int {
        let (host, port) = try RawHTTP.hostAndPort(base)
        var bytes = Array("\(method) \(path) HTTP/1.1\r\n".utf8)
        if header.0 != "Host" { bytes += Array("Host: \(host):\(port)\r\n".utf8) }
        if header.0 != "Content-Type", let body {
            bytes += Array(
                (body.hasPrefix("{") ? "Content-Type: application/json\r\n" : "Content-Type: application/x-www-form-urlencoded\r\n").utf8)
        }
        bytes +=
            Array("\(header.0): ".utf8) + header.1 + Array("\r\nConnection: close\r\nContent-Length: \(body?.utf8.count ?? 0)\r\n\r\n".utf8)
        bytes += Array((body ?? "").utf8)
        // 0 when the connection closed without an answer (or could not be opened).
        let answer = (try? await RawHTTP.exchangeOffThread(base: base, bytes)) ?? []
        return RawHTTP.status(of: String(decoding: answer.prefix { $0 != 0x0D }, as: UTF8.self))
    }
}

extension HeavyTests {
    /// Item 1 of the security issue: thousands of hostile requests, so it runs with the other heavy suites.
    @Suite("Security: no request header stops the server", .timeLimit(.minutes(20)))
    struct HostileHeaderTests {
        // MARK: 1. No header crashes the process

        /// Every header the server reads, with values a parser can trip on.
        static let hostileValues: [[UInt8]] = {
            var values: [[UInt8]] = [
                [], Array(";".utf8), Array("en,;".utf8), Array(";q=1".utf8), Array(",,".utf8), Array("=".utf8), Array("q=".utf8),
                Array("en;q=abc".utf8), Array("en;q=1e400".utf8), Array("-".utf8), Array("*".utf8), Array("Bearer".utf8),
                Array("Bearer ".utf8),
                Array("bearer owner".utf8), Array("Basic Og==".utf8), Array("null".utf8), Array("a=b; c; =d; ;;".utf8), Array("\"".utf8),
                Array("for=\"[::1".utf8), Array("for=;proto=;;,,".utf8), Array("1.2.3.4, , unknown, [::1]:80, 999.1.1.1".utf8),
                Array("http://".utf8), Array("https://[".utf8), Array("application/json; charset=\"".utf8), Array("multipart/;;".utf8),
                [0xFF, 0xFE, 0x80], [0xC3, 0x28, 0x3B, 0xA0, 0xA1], Array("ru-RU".utf8) + [0xE2, 0x28, 0xA1],
                Array(String(repeating: "en-", count: 1000).utf8), Array(String(repeating: ",", count: 4000).utf8),
                Array(String(repeating: "a;", count: 2000).utf8), Array(String(repeating: "x", count: 16000).utf8),
            ]
            values.append(Array(String(repeating: "q=0.5;", count: 1000).utf8))
            return values
        }()

        static let headerNames = [
            "Accept-Language", "Cookie", "Content-Type", "Authorization", "Origin", "Host", "X-Forwarded-For", "X-Forwarded-Proto",
            "X-Forwarded-Host", "Forwarded", "X-Firebase-Locale", "X-Goog-Api-Key", "Referer", "Sec-Fetch-Site", "User-Agent",
            "If-None-Match",
            "Access-Control-Request-Headers",
        ]

        @Test("no value of any header the server reads, on any route, stops the process (Accept-Language: ; used to)")
        func hostileHeaders() async throws {
            let server = try await TestServer(environment: ["ACTIONLINKS_SERVER_TRUSTED_PROXIES": "127.0.0.1"])
            try await server.createAccount(email: "hdr@example.com")
            let (mobile, _) = try await server.link(
                "VERIFY_EMAIL", email: "hdr@example.com", extra: ["canHandleCodeInApp": true, "androidPackageName": "com.example.app"])
            let (reset, _) = try await server.link("PASSWORD_RESET", email: "hdr@example.com")
            let body = #"{"requestType":"PASSWORD_RESET","email":"hdr@example.com"}"#
            let routes: [(method: String, path: String, body: String?)] = [
                ("GET", "/", nil), ("GET", "/index.html", nil), ("GET", "/assets/style.css", nil), ("GET", "/nothing-here", nil),
                ("GET", "/__/nothing", nil), ("GET", try server.local(reset), nil), ("HEAD", try server.local(reset), nil),
                ("GET", "/__/auth/action?mode=verifyEmail&oobCode=" + String(repeating: "A", count: 43), nil),
                ("POST", "/__/auth/action", "oobCode=x&mode=signIn&form=1.x&email=a%40b.c"), ("GET", try server.local(mobile), nil),
                ("POST", "/v1/accounts:sendOobCode?key=demo-api-key", body), ("POST", "/v1/accounts:sendOobCode", body),
                ("POST", "/v1/projects/demo-actionlinks/accounts:lookup", #"{"email":["hdr@example.com"]}"#),
                ("POST", "/identitytoolkit.googleapis.com/v1/accounts:resetPassword?key=demo-api-key", #"{"oobCode":"x"}"#),
                ("OPTIONS", "/v1/accounts:sendOobCode", nil), ("GET", "/emulator/v1/projects/demo-actionlinks/oobCodes", nil),
                ("GET", "/healthz", nil), ("GET", "/metrics", nil), ("GET", "/.well-known/apple-app-site-association", nil),
                ("GET", "/.well-known/assetlinks.json", nil), ("GET", "/.well-known/jwks.json", nil),
            ]
            var sent = 0
            var statuses: [Int: Int] = [:]
            for route in routes {
                for name in Self.headerNames {
                    for value in Self.hostileValues {
                        let status = try await RawRequest.send(
                            base: server.base, method: route.method, path: route.path, body: route.body, header: (name, value))
                        statuses[status, default: 0] += 1
                        sent += 1
                        if status == 0 {
                            // The server may refuse what the HTTP parser refuses by closing the connection;
                            // it must still be there.
                            let alive = try await server.request("GET", "/healthz")
                            #expect(
                                alive.status == 200, "the server died after \(route.method) \(route.path) with \(name): \(value.prefix(40))"
                            )
                            if alive.status != 200 { return }
                        }
                    }
                }
            }
            #expect(server.process.isRunning, "the process is still running after \(sent) hostile requests")
            #expect(try await server.request("GET", "/healthz").status == 200)
            #expect(statuses[500, default: 0] == 0, "no internal errors: \(statuses)")
            print("hostile headers: \(sent) requests, statuses \(statuses.sorted { $0.key < $1.key })")
        }
    }
}
