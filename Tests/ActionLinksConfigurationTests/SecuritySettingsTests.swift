import Foundation
import ActionLinksHeaders
import Testing

@testable import ActionLinksConfiguration

/// The settings the security issue added: each refuses what would open a hole, naming the key.
@Suite("Security settings", .timeLimit(.minutes(5)))
struct SecuritySettingsTests: ServiceSettingsSuite {
    @Test("emulatorListing is refused on a production server, in the file or from the environment")
    func listingNeedsDevelopment() throws {
        let production = "server:\n  development: false\n  adminToken: \(String(repeating: "a", count: 32))\nemulatorListing: true\n"
        let refused = try #require(error(production))
        #expect(refused.key == "emulatorListing" && refused.line == 4)
        #expect(refused.message.contains("only allowed with server.development: true"))
        let fromEnvironment = try #require(
            error("server:\n  development: false\n", environment: ["ACTIONLINKS_EMULATOR_LISTING": "true"]))
        #expect(fromEnvironment.key == "emulatorListing" && fromEnvironment.description.contains("ACTIONLINKS_EMULATOR_LISTING"))
        #expect(try parse("server:\n  development: true\nemulatorListing: true\n").emulatorListing)
    }

    @Test("users.recentSignInSeconds, passwordHashConcurrency and passwordHashQueue: defaults, file, environment, ranges")
    func accountLimits() throws {
        let defaults = try parse("").users
        #expect(defaults.recentSignInSeconds == 300 && defaults.passwordHashQueue == 64)
        #expect(defaults.passwordHashConcurrency == ProcessInfo.processInfo.activeProcessorCount)
        let set = try parse("users:\n  recentSignInSeconds: 60\n  passwordHashConcurrency: 3\n  passwordHashQueue: 0\n").users
        #expect(set.recentSignInSeconds == 60 && set.passwordHashConcurrency == 3 && set.passwordHashQueue == 0)
        #expect(try parse("", environment: ["ACTIONLINKS_USERS_RECENT_SIGN_IN_SECONDS": "120"]).users.recentSignInSeconds == 120)
        let zero = try #require(error("users:\n  recentSignInSeconds: 0\n"))
        #expect(zero.key == "users.recentSignInSeconds" && zero.message.contains("from 1 to 86400"), "\(zero)")
        let many = try #require(error("users:\n  passwordHashConcurrency: 1000\n"))
        #expect(many.key == "users.passwordHashConcurrency" && many.line == 2, "\(many)")
        // A tenant keeps the project's.
        #expect(
            try parse("users:\n  recentSignInSeconds: 90\ntenants:\n  - id: t1\n").accountSettings(forTenant: "t1")?.users
                .recentSignInSeconds == 90)
    }

    @Test("users.passwordHashLogRounds and passwordHashParallelism: OWASP's default, ranges, the ceiling, a production server's warning")
    func passwordHashCost() throws {
        let defaults = try parse("").users
        #expect(defaults.passwordHashLogRounds == 14 && defaults.passwordHashParallelism == 5)
        let set = try parse("users:\n  passwordHashLogRounds: 15\n  passwordHashParallelism: 2\n").users
        #expect(set.passwordHashLogRounds == 15 && set.passwordHashParallelism == 2)
        let environment = ["ACTIONLINKS_USERS_PASSWORD_HASH_LOG_ROUNDS": "8", "ACTIONLINKS_USERS_PASSWORD_HASH_PARALLELISM": "1"]
        let cheap = try parse("", environment: environment).users
        #expect(cheap.passwordHashLogRounds == 8 && cheap.passwordHashParallelism == 1)
        let large = try #require(error("users:\n  passwordHashLogRounds: 16\n"))
        #expect(large.key == "users.passwordHashLogRounds" && large.line == 2 && large.message.contains("from 4 to 15"), "\(large)")
        let slow = try #require(error("users:\n  passwordHashLogRounds: 15\n  passwordHashParallelism: 16\n"))
        #expect(slow.key == "users.passwordHashParallelism" && slow.line == 3 && slow.message.contains("at most 2^21"), "\(slow)")
        // Below Firebase's own cost: a warning on a production server (with the key), none in development.
        let production = "server:\n  development: false\nusers:\n  passwordHashLogRounds: 10\n"
        let warned = try ConfigurationText.configuration(production).warnings
        #expect(warned.count == 1 && warned[0].contains("users.passwordHashLogRounds") && warned[0].contains("Firebase's own"), "\(warned)")
        let development = try ConfigurationText.configuration("server:\n  development: true\nusers:\n  passwordHashLogRounds: 10\n")
        #expect(development.warnings.isEmpty)
    }

    @Test("tenants are listed IDs of letters, digits and hyphens")
    func tenants() throws {
        #expect(try parse("tenants: [corp-1, School2]\n").tenants == ["corp-1", "School2"])
        #expect(try parse("", environment: ["ACTIONLINKS_TENANTS": "a,b-c"]).tenants == ["a", "b-c"])
        let bad = try #require(error("tenants:\n  - ok\n  - \"bad id\"\n"))
        #expect(bad.key == "tenants[1]" && bad.line == 3 && bad.message.contains("letters, digits and hyphens"))
        #expect(!ServiceSettings.isWellFormedTenantID("t\u{0}x") && !ServiceSettings.isWellFormedTenantID(""))
        #expect(!ServiceSettings.isWellFormedTenantID(String(repeating: "a", count: 65)))
    }

    @Test("trusted proxies are addresses or CIDR blocks")
    func trustedProxies() throws {
        let settings = try parse("server:\n  trustedProxies: [10.0.0.0/8, \"::1\", 192.0.2.7]\n")
        #expect(settings.server.trustedProxies.count == 3)
        #expect(settings.server.trustedProxies[0].contains(try #require(IPAddress("10.200.3.4"))))
        let bad = try #require(error("server:\n  trustedProxies:\n    - 10.0.0.0/33\n"))
        #expect(bad.key == "server.trustedProxies[0]" && bad.message.contains("CIDR"))
        let fromEnvironment = try parse("", environment: ["ACTIONLINKS_SERVER_TRUSTED_PROXIES": "127.0.0.1, fd00::/8"])
        #expect(fromEnvironment.server.trustedProxies.count == 2)
    }

    @Test("a metrics token is long and printable")
    func metricsToken() throws {
        #expect(try parse("server:\n  metricsToken: \(String(repeating: "m", count: 32))\n").server.metricsToken?.count == 32)
        let short = try #require(error("server:\n  metricsToken: short\n"))
        #expect(short.key == "server.metricsToken" && short.message.contains("at least 32"))
    }

    @Test("server.tokenAudiences: https URLs with a path (http only for loopback), from the file or the environment")
    func tokenAudiences() throws {
        #expect(try parse("").server.tokenAudiences.isEmpty)
        let set = try parse("server:\n  tokenAudiences: [https://auth.example.com/token, http://127.0.0.1:9000/token]\n")
        #expect(set.server.tokenAudiences == ["https://auth.example.com/token", "http://127.0.0.1:9000/token"])
        let fromEnvironment = try parse("", environment: ["ACTIONLINKS_SERVER_TOKEN_AUDIENCES": "https://a.example/token"])
        #expect(fromEnvironment.server.tokenAudiences == ["https://a.example/token"])
        for bad in ["http://auth.example.com/token", "https://auth.example.com", "token", "https://auth.example.com/token?x=1"] {
            let refused = try #require(error("server:\n  tokenAudiences: [\"\(bad)\"]\n"), "\(bad)")
            #expect(refused.key == "server.tokenAudiences[0]" && refused.message.contains("token endpoint"), "\(refused)")
        }
    }
}
