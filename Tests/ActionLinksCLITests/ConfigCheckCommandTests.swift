import ActionLinksTestSupport
import Foundation
import Testing

/// `actionlinks config check --production`: what a production deployment lacks, named key by key.
@Suite("actionlinks config check", .timeLimit(.minutes(5)))
struct ConfigCheckCommandTests {
    /// A production server's variables, everything a deployment needs in place.
    static let ready = [
        "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": String(repeating: "t", count: 40),
        "ACTIONLINKS_LINK_DOMAINS": "links.example.com", "ACTIONLINKS_MAIL_BACKEND": "webhook",
        "ACTIONLINKS_MAIL_WEBHOOK_URL": "https://mail.example.com/send",
        "ACTIONLINKS_STORE": "postgres://links:pw-9f3k@db.internal/links?sslmode=verify-full",
        "ACTIONLINKS_KEYS_FILE": "/var/run/secrets/actionlinks/keys.json", "ACTIONLINKS_SERVER_TRUSTED_PROXIES": "169.254.0.0/16",
        "PATH": "/usr/bin:/bin",
    ]

    func check(_ environment: [String: String], production: Bool = true) async throws -> CommandResult {
        try await Command.run(["config", "check"] + (production ? ["--production"] : []), environment: environment)
    }

    @Test("a deployment with everything in place is ready; without --production a valid file is just valid")
    func ready() async throws {
        let ready = try await check(Self.ready.merging(["K_SERVICE": "links"]) { $1 })
        #expect(ready.status == 0 && ready.stdout.contains("ready for production"), "\(ready.stdout)\(ready.stderr)")
        let plain = try await check(["PATH": "/usr/bin:/bin"], production: false)
        #expect(plain.status == 0 && plain.stdout.contains("the configuration is valid"), "\(plain.stderr)")
    }

    @Test(
        "each planted mistake is named by its key, and the check exits 1",
        arguments: [
            (["ACTIONLINKS_MAIL_BACKEND": "log"], "mail.backend: log prints each mail"),
            (
                ["ACTIONLINKS_STORE": "sqlite:/var/lib/actionlinks/a.sqlite", "K_SERVICE": "links"],
                "store: SQLite at /var/lib/actionlinks/a.sqlite on Cloud Run"
            ),
            (
                ["ACTIONLINKS_STORE": "sqlite:/data/a.sqlite", "KUBERNETES_SERVICE_HOST": "10.0.0.1"],
                "store: SQLite at /data/a.sqlite on Kubernetes"
            ),
            (["ACTIONLINKS_KEYS_FILE": ""], "keys: instances on one PostgreSQL must share their keys"),
            (
                ["ACTIONLINKS_STORE": "postgres://links:pw-9f3k@db.internal/links?sslmode=require"],
                "store: PostgreSQL on db.internal with sslmode=require"
            ),
            (
                ["ACTIONLINKS_SERVER_TRUSTED_PROXIES": "", "K_SERVICE": "links"],
                "server.trustedProxies: on Cloud Run every request comes through"
            ),
            (
                ["ACTIONLINKS_SERVER_TRUSTED_PROXIES": "", "ACTIONLINKS_SERVER_HOST": "0.0.0.0"],
                "server.tls: the server speaks plain HTTP on 0.0.0.0"
            ),
        ])
    func findings(planted: [String: String], finding: String) async throws {
        var environment = Self.ready
        for (key, value) in planted {
            if value.isEmpty { environment[key] = nil } else { environment[key] = value }
        }
        let result = try await check(environment)
        #expect(result.status == 1 && result.stdout.contains(finding), "\(result.stdout)\(result.stderr)")
        #expect(!result.stdout.contains("pw-9f3k"), "never the password")
        let json = try await Command.run(["config", "check", "--production", "--json"], environment: environment)
        let findings = (json.json?["findings"] as? [[String: String]]) ?? []
        #expect(findings.count == 1, "only the planted mistake: \(json.stdout)")
    }

    @Test("a production server says the same at start, and its log backend withholds links and codes")
    func atStart() async throws {
        let server = try await TestServer(environment: [
            "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": String(repeating: "t", count: 40),
            "ACTIONLINKS_MAIL_LOG_CONTENTS": "",  // the default: withheld on a production server
        ])
        #expect(server.standardError.contains("mail.backend: log prints each mail"), "\(server.standardError)")
        let asked = try await server.api(
            "sendOobCode",
            ["requestType": "EMAIL_SIGNIN", "email": "ann@example.com", "continueUrl": "https://app.example.com/done"],
            admin: true, adminToken: String(repeating: "t", count: 40))
        #expect(asked.status == 200, "\(asked.text)")
        try await Eventually.wait(for: "the mail") { server.standardOutput.contains("--- mail to ann@example.com") }
        let mail = server.standardOutput
        #expect(mail.contains("<link withheld>") && mail.contains("<sign-in code withheld>"), "\(mail)")
        #expect(!mail.contains("oobCode=") && !mail.contains("https://links.test.example/__/auth"), "\(mail)")
    }
}
