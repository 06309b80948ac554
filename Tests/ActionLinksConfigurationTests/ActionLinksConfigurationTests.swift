import ActionLinks
import Foundation
import Testing

@testable import ActionLinksConfiguration

@Suite("Reading config/actionlinks.yaml", .timeLimit(.minutes(5)))
struct ActionLinksConfigurationTests: ConfigurationSuite {
    static var file: String { "test.yaml" }

    @Test("the shipped default config loads and allows its own origin")
    func defaultConfig() throws {
        let config = try ActionLinksConfiguration.load(file: ConfigurationText.shippedFile)
        #expect(config.continueURLs.entries.map(\.description) == ["https://app.example.com/", "*.example.org"])
        #expect(config.continueURLs.defaultOrigin == "https://app.example.com")
        #expect(config.continueURLs.evaluate("/welcome").url == "https://app.example.com/welcome")
        #expect(config.continueURLs.evaluate("https://a.example.org/").isAllowed)
        #expect(!config.continueURLs.evaluate("https://example.org/").isAllowed)
        #expect(config.warnings.isEmpty, "\(config.warnings)")
    }

    @Test("an empty file is an empty allow-list")
    func empty() throws {
        let config = try parse("")
        #expect(config.continueURLs.entries.isEmpty)
        #expect(!config.continueURLs.evaluate("https://app.example.com/").isAllowed)
    }

    @Test("a misspelt key names the file, line, key and the nearest known key")
    func unknownKey() throws {
        let error = try #require(self.error("continueUrls:\n  alow:\n    - app.example.com\n"))
        #expect(error.key == "continueUrls.alow")
        #expect(error.line == 2)
        #expect(error.message.contains("did you mean 'allow'?"))
        #expect(error.description.hasPrefix("test.yaml:2:3: continueUrls.alow: unknown key"))

        let top = try #require(self.error("continueURLs:\n  allow: []\n"))
        #expect(top.key == "continueURLs")
        #expect(top.message.contains("did you mean 'continueUrls'?"))
    }

    @Test("a bad entry names its index and line, and says what was expected")
    func badEntry() throws {
        let error = try #require(self.error("continueUrls:\n  allow:\n    - app.example.com\n    - ftp://files.example.com/\n"))
        #expect(error.key == "continueUrls.allow[1]")
        #expect(error.line == 4)
        #expect(error.message.contains("expected a domain (example.com)"))
        #expect(error.message.contains("got 'ftp://files.example.com/'"))
    }

    @Test(
        "wrong shapes are reported",
        arguments: [
            ("continueUrls: [a]\n", "continueUrls"),
            ("continueUrls:\n  allow: app.example.com\n", "continueUrls.allow"),
            ("continueUrls:\n  allow:\n    - {a: b}\n", "continueUrls.allow[0]"),
            ("continueUrls:\n  allow:\n    - ~\n", "continueUrls.allow[0]"),
            ("continueUrls:\n  allow: []\n  defaultOrigin: [x]\n", "continueUrls.defaultOrigin"),
            ("continueUrls:\n  allow: [app.example.com]\n  defaultOrigin: https://other.example.com\n", "continueUrls.defaultOrigin"),
            ("- just\n- a list\n", nil),
        ] as [(String, String?)])
    func shapes(yaml: String, key: String?) throws {
        let error = try #require(self.error(yaml))
        #expect(error.key == key, "\(error)")
    }

    @Test("invalid YAML and a missing file are reported with the file name")
    func unreadable() throws {
        let syntax = try #require(error("continueUrls: [\n"))
        #expect(syntax.description.hasPrefix("test.yaml: not valid YAML"))
        do {
            _ = try ActionLinksConfiguration.load(file: "/nonexistent/actionlinks.yaml")
            Issue.record("a missing file loaded")
        } catch {
            #expect(error.description == "/nonexistent/actionlinks.yaml: cannot read the file: No such file or directory")
        }
    }

    @Test("edit distance")
    func distance() {
        #expect(editDistance("allow", "alow") == 1)
        #expect(editDistance("defaultOrigin", "defaultorigin") == 0)
        #expect(editDistance("", "abc") == 3)
    }
}

@Suite("The apps section", .timeLimit(.minutes(5)))
struct AppsConfigurationTests: ConfigurationSuite {
    static var file: String { "apps.yaml" }

    @Test("apps, rules, webcredentials and appclips are read")
    func reads() throws {
        let config = try parse(
            """
            apps:
              ios:
                - {teamId: ABCDE12345, bundleId: com.example.app, appStoreId: "123"}
              android:
                - packageName: com.example.app
                  sha256CertFingerprints: ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"]
                  minimumVersion: 42
                  sha1CertFingerprints: ["DA:39:A3:EE:5E:6B:4B:0D:32:55:BF:EF:95:60:18:90:AF:D8:07:09", "da39a3ee5e6b4b0d3255bfef95601890afd80709"]
              rules:
                - {path: /open/*, query: {ref: "?*"}}
                - {path: /open/admin/*, exclude: true}
              webcredentials: [ABCDE12345.com.example.app]
            """)
        #expect(config.apps.appleApps.first?.appID == "ABCDE12345.com.example.app")
        #expect(config.apps.androidApps.first?.minimumVersion == 42)
        #expect(config.apps.androidApps.first?.sha1Fingerprints.count == 2)
        #expect(config.apps.extraRules.map(\.path) == ["/open/*", "/open/admin/*"])
        #expect(config.apps.extraRules.last?.exclude == true)
        #expect(config.apps.extraRules.first?.query.first?.name == "ref")
        #expect(config.apps.webCredentialsAppIDs == ["ABCDE12345.com.example.app"])
    }

    @Test(
        "bad values name their key and line",
        arguments: [
            ("apps:\n  ios:\n    - {teamId: abc, bundleId: com.example.app}\n", "apps.ios[0]", 3),
            ("apps:\n  android:\n    - {packageName: com.example.app, sha256CertFingerprints: [\"zz\"]}\n", "apps.android[0]", 3),
            ("apps:\n  android:\n    - {packageName: com.example.app, sha256CertFingerprints: []}\n", "apps.android[0]", 3),
            (
                "apps:\n  android:\n    - {packageName: 1com, sha256CertFingerprints: [\"14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5\"]}\n",
                "apps.android[0]", 3
            ),
            ("apps:\n  ios:\n    - {bundleId: com.example.app}\n", "apps.ios[0]", 3),
            (
                "apps:\n  android:\n    - {packageName: com.example.app, sha256CertFingerprints: [\"14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5\"], sha1CertFingerprints: [\"DA:39:A3\"]}\n",
                "apps.android[0].sha1CertFingerprints", 3
            ),
            ("apps:\n  iOS: []\n", "apps.iOS", 2),
            ("apps:\n  rules:\n    - {path: /x, exclude: maybe}\n", "apps.rules[0].exclude", 3),
        ] as [(String, String, Int)])
    func badValues(yaml: String, key: String, line: Int) {
        do {
            _ = try parse(yaml)
            Issue.record("accepted: \(yaml)")
        } catch {
            #expect(error.key == key, "\(error)")
            #expect(error.line == line, "\(error)")
        }
    }
}

@Suite("Environment overrides", .timeLimit(.minutes(5)))
struct EnvironmentOverrideTests {
    @Test(
        "variable names: camel case and runs of capitals",
        arguments: [
            ("server.port", "ACTIONLINKS_SERVER_PORT"), ("project.apiKey", "ACTIONLINKS_PROJECT_API_KEY"),
            ("limits.sendsPerIPPerHour", "ACTIONLINKS_LIMITS_SENDS_PER_IP_PER_HOUR"),
            ("codes.lifetimes.signIn", "ACTIONLINKS_CODES_LIFETIMES_SIGN_IN"), ("mail.webhookUrl", "ACTIONLINKS_MAIL_WEBHOOK_URL"),
            ("providers[0].clientSecret", "ACTIONLINKS_PROVIDERS_0_CLIENT_SECRET"),
            ("apps.android[1].sha256CertFingerprints", "ACTIONLINKS_APPS_ANDROID_1_SHA256_CERT_FINGERPRINTS"),
        ])
    func names(key: String, variable: String) {
        #expect(ConfigurationEnvironment.variable(for: Self.path(key)) == variable)
    }

    /// `a.b[0].c` as coding keys.
    static func path(_ key: String) -> [any CodingKey] {
        var path: [any CodingKey] = []
        for part in key.split(separator: ".") {
            let pieces = part.split(separator: "[")
            path.append(NameKey(stringValue: String(pieces[0])))
            for index in pieces.dropFirst() { path.append(IndexKey(Int(index.dropLast())!)) }
        }
        return path
    }

    @Test("a variable overrides its key; an unknown ACTIONLINKS_ variable is an error with a suggestion")
    func overrides() throws {
        let settings = try ConfigurationText.configuration(
            "limits:\n  sendsPerIPPerHour: 5\n", environment: ["ACTIONLINKS_LIMITS_SENDS_PER_IP_PER_HOUR": "7"])
        #expect(settings.service.limits.sendsPerIPPerHour == 7)
        #expect(throws: ConfigurationError.self) {
            _ = try ConfigurationText.configuration("", environment: ["ACTIONLINKS_LIMITS_SENDS_PER_I_P_PER_HOUR": "7"])
        }
        do {
            _ = try ConfigurationText.configuration("", environment: ["ACTIONLINKS_SERVER_PROT": "1"])
        } catch {
            #expect(error.description.contains("did you mean ACTIONLINKS_SERVER_PORT?"))
        }
        for variable in ["ACTIONLINKS_VECTORS", "ACTIONLINKS_SHARED", "ACTIONLINKS_IMAGE"] {
            #expect(try ConfigurationText.configuration("", environment: [variable: "x"]).service.server.port == 8080)
        }
    }
}
