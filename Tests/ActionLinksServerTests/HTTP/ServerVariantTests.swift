import ActionLinks
import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// The REST API's other spellings and headers, TLS, and shutdown.
@Suite("Link domain: API variants, TLS and shutdown", .timeLimit(.minutes(5)))
struct ServerVariantTests {
    @Test("the googleapis prefix, x-goog-api-key, X-Firebase-Locale and androidMinimumVersionCode")
    func apiVariants() async throws {
        try await TestApp.router { app in
            try await app.createAccount(email: "tia@example.com")
            let body: [String: Any] = [
                "requestType": "VERIFY_EMAIL", "email": "tia@example.com", "returnOobLink": true, "canHandleCodeInApp": true,
                "androidPackageName": "com.example.app", "androidMinimumVersionCode": "7", "someFieldFromTheFuture": ["x": 1],
            ]
            let reply = try await app.post(
                "/identitytoolkit.googleapis.com/v1/projects/\(TestProject.id)/accounts:sendOobCode", body,
                headers: ["Authorization": "Bearer owner", "X-Firebase-Locale": "ru"])
            #expect(reply.status == 200, "\(reply.text)")
            let oobLink = try #require(reply.json["oobLink"] as? String)
            let link = try #require(ActionCodeLink.parse(oobLink))
            #expect(link.languageCode == "ru")
            let check = try await app.post(
                "/identitytoolkit.googleapis.com/v1/accounts:resetPassword", ["oobCode": link.oobCode],
                headers: ["x-goog-api-key": TestProject.apiKey])
            #expect(check.json["requestType"] as? String == "VERIFY_EMAIL", "\(check.text)")
            let preflight = try await app.request(
                "OPTIONS", "/v1/accounts:sendOobCode",
                headers: ["Access-Control-Request-Headers": "content-type,x-goog-api-key", "Origin": "https://app.example.com"])
            #expect(preflight.status == 204 && preflight.header("Access-Control-Allow-Origin") == "https://app.example.com")
            #expect(try await app.request("GET", "/v1/projects/other-project/accounts:lookup").status == 400)
        }
    }

    static let env = URL(fileURLWithPath: "/usr/bin/env")

    /// A self-signed certificate for 127.0.0.1 with a new key (`newKey`: openssl's `-newkey` and its
    /// options), as PEM files in `folder`.
    static func certificate(in folder: URL, newKey: [String]) async throws -> (certificate: String, key: String) {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let certificate = folder.appendingPathComponent("cert.pem").path, key = folder.appendingPathComponent("key.pem").path
        let openssl = try await Command.run(
            program: env,
            ["openssl", "req", "-x509", "-newkey"] + newKey + [
                "-nodes", "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=localhost", "-addext",
                "subjectAltName=IP:127.0.0.1",
            ])
        try #require(openssl.status == 0, "openssl could not make a test certificate")
        return (certificate, key)
    }

    @Test("TLS with configured certificate files")
    func tls() async throws {
        let folder = TestProject.temporaryDirectory("actionlinks-tls")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (certificate, key) = try await Self.certificate(in: folder, newKey: ["ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"])
        let env = Self.env
        await #expect(throws: Never.self) {
            try await TestApp.live(environment: [
                "ACTIONLINKS_SERVER_TLS_CERTIFICATE": certificate, "ACTIONLINKS_SERVER_TLS_PRIVATE_KEY": key,
            ]) { app in
                #expect(app.logs.text.contains("serving https://127.0.0.1:"))
                let curl = try await Command.run(
                    program: env,
                    ["curl", "-s", "--cacert", certificate, "https://127.0.0.1:\(app.port)/.well-known/apple-app-site-association"])
                #expect(curl.stdout.contains("ABCDE12345.com.example.app"), "the AASA over TLS, verified against the certificate")
            }
        }
        let broken = await #expect(throws: (any Error).self) {
            try await TestApp.router(environment: [
                "ACTIONLINKS_SERVER_TLS_CERTIFICATE": "/nonexistent.pem", "ACTIONLINKS_SERVER_TLS_PRIVATE_KEY": key,
            ]) { _ in }
        }
        #expect(broken.map { "\($0)" }?.contains("server.tls: cannot load /nonexistent.pem") == true)
    }

    @Test(
        "the TLS listener of the real binary speaks TLS 1.3, and TLS 1.2 with ECDHE and AES-GCM or ChaCha20-Poly1305 only: never TLS 1.0 or 1.1, RSA key exchange or CBC"
    )
    func tlsVersionsAndSuites() async throws {
        let folder = TestProject.temporaryDirectory("actionlinks-tls-suites")
        defer { try? FileManager.default.removeItem(at: folder) }
        // An RSA key, so that the RSA key exchange and the RSA suites are the server's to refuse.
        let (certificate, key) = try await Self.certificate(in: folder, newKey: ["rsa:2048"])
        let server = try await TestServer(environment: [
            "ACTIONLINKS_SERVER_TLS_CERTIFICATE": certificate, "ACTIONLINKS_SERVER_TLS_PRIVATE_KEY": key,
        ])
        let port = try #require(server.base.hasPrefix("https://") ? server.base.split(separator: ":").last : nil)
        /// The protocol and suite `openssl s_client` settles on with these options, or nil when the
        /// handshake fails. `@SECLEVEL=0` lets the client offer what OpenSSL 3 no longer offers by
        /// itself (TLS 1.0 and 1.1), so that refusing it is the server's doing.
        func handshake(_ options: [String]) async throws -> String? {
            let result = try await Command.run(
                program: Self.env, ["openssl", "s_client", "-brief", "-connect", "127.0.0.1:\(port)"] + options, stdin: "")
            guard result.status == 0 else { return nil }
            let lines = (result.stdout + result.stderr).split(whereSeparator: \.isNewline)
            let version = lines.first { $0.hasPrefix("Protocol version:") }?.split(separator: " ").last ?? "?"
            let suite = lines.first { $0.hasPrefix("Ciphersuite:") }?.split(separator: " ").last ?? "?"
            return "\(version) \(suite)"
        }
        for refused in [
            ["-tls1", "-cipher", "DEFAULT:@SECLEVEL=0"], ["-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0"],
            ["-tls1_2", "-cipher", "AES128-SHA:@SECLEVEL=0"], ["-tls1_2", "-cipher", "AES128-GCM-SHA256"],
            ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA"], ["-tls1_2", "-cipher", "ECDHE-RSA-AES256-SHA"],
        ] {
            let negotiated = try await handshake(refused)
            #expect(negotiated == nil, "\(refused.joined(separator: " ")) was accepted: \(negotiated ?? "")")
        }
        #expect(try await handshake(["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"]) == "TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256")
        #expect(try await handshake(["-tls1_2", "-cipher", "ECDHE-RSA-CHACHA20-POLY1305"]) == "TLSv1.2 ECDHE-RSA-CHACHA20-POLY1305")
        let tls13 = try await handshake(["-tls1_3"])
        #expect(tls13?.hasPrefix("TLSv1.3 TLS_") == true, "\(tls13 ?? "refused")")
    }
}
