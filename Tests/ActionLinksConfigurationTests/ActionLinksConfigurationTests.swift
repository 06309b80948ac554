import ActionLinks
import Foundation
import Testing

@testable import ActionLinksConfiguration

@Suite("Reading config/actionlinks.yaml", .timeLimit(.minutes(5)))
struct ActionLinksConfigurationTests {
    func parseError(_ yaml: String) -> ConfigurationError? {
        do {
            _ = try ActionLinksConfiguration.parse(yaml: yaml, file: "test.yaml")
            return nil
        } catch {
            return error
        }
    }

    @Test("the shipped default config loads and allows its own origin")
    func defaultConfig() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/actionlinks.yaml").path
        let config = try ActionLinksConfiguration.load(file: file)
        #expect(config.continueURLs.entries.map(\.description) == ["https://app.example.com/", "*.example.org"])
        #expect(config.continueURLs.defaultOrigin == "https://app.example.com")
        #expect(config.continueURLs.evaluate("/welcome").url == "https://app.example.com/welcome")
        #expect(config.continueURLs.evaluate("https://a.example.org/").isAllowed)
        #expect(!config.continueURLs.evaluate("https://example.org/").isAllowed)
        #expect(config.warnings.isEmpty, "\(config.warnings)")
    }

    @Test("an empty file is an empty allow-list")
    func empty() throws {
        let config = try ActionLinksConfiguration.parse(yaml: "", file: "test.yaml")
        #expect(config.continueURLs.entries.isEmpty)
        #expect(!config.continueURLs.evaluate("https://app.example.com/").isAllowed)
    }

    @Test("a misspelt key names the file, line, key and the nearest known key")
    func unknownKey() throws {
        let error = try #require(parseError("continueUrls:\n  alow:\n    - app.example.com\n"))
        #expect(error.key == "continueUrls.alow")
        #expect(error.line == 2)
        #expect(error.message.contains("did you mean 'allow'?"))
        #expect(error.description.hasPrefix("test.yaml:2:3: continueUrls.alow: unknown key"))

        let top = try #require(parseError("continueURLs:\n  allow: []\n"))
        #expect(top.key == "continueURLs")
        #expect(top.message.contains("did you mean 'continueUrls'?"))
    }

    @Test("a bad entry names its index and line, and says what was expected")
    func badEntry() throws {
        let error = try #require(parseError("continueUrls:\n  allow:\n    - app.example.com\n    - ftp://files.example.com/\n"))
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
        let error = try #require(parseError(yaml))
        #expect(error.key == key, "\(error)")
    }

    @Test("invalid YAML and a missing file are reported with the file name")
    func unreadable() throws {
        let syntax = try #require(parseError("continueUrls: [\n"))
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
struct AppsConfigurationTests {
    func parse(_ yaml: String) throws(ConfigurationError) -> ActionLinksConfiguration {
        try ActionLinksConfiguration.parse(yaml: yaml, file: "apps.yaml")
    }

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
        let settings = try ActionLinksConfiguration.parse(
            yaml: "limits:\n  sendsPerIPPerHour: 5\n", file: "t.yaml", environment: ["ACTIONLINKS_LIMITS_SENDS_PER_IP_PER_HOUR": "7"])
        #expect(settings.service.limits.sendsPerIPPerHour == 7)
        #expect(throws: ConfigurationError.self) {
            _ = try ActionLinksConfiguration.parse(
                yaml: "", file: "t.yaml", environment: ["ACTIONLINKS_LIMITS_SENDS_PER_I_P_PER_HOUR": "7"])
        }
        do {
            _ = try ActionLinksConfiguration.parse(yaml: "", file: "t.yaml", environment: ["ACTIONLINKS_SERVER_PROT": "1"])
        } catch {
            #expect(error.description.contains("did you mean ACTIONLINKS_SERVER_PORT?"))
        }
        for variable in ["ACTIONLINKS_VECTORS", "ACTIONLINKS_SHARED"] {
            #expect(try ActionLinksConfiguration.parse(yaml: "", file: "t.yaml", environment: [variable: "x"]).service.server.port == 8080)
        }
    }
}

@Suite("Server timeouts and connection cap", .timeLimit(.minutes(5)))
struct ServerLimitsConfigurationTests {
    @Test("defaults: idle 60 s, header 10 s, body 30 s, 1024 connections")
    func defaults() throws {
        let server = try ActionLinksConfiguration.parse(yaml: "", file: "t.yaml").service.server
        #expect([server.idleTimeout, server.headerTimeout, server.bodyTimeout, server.maximumConnections] == [60, 10, 30, 1024] as [Int])
    }

    @Test("values from the file and from the environment")
    func values() throws {
        let server = try ActionLinksConfiguration.parse(
            yaml: "server:\n  idleTimeout: 2m\n  headerTimeout: 5s\n  bodyTimeout: 45\n  maximumConnections: 200\n", file: "t.yaml",
            environment: ["ACTIONLINKS_SERVER_HEADER_TIMEOUT": "3s", "ACTIONLINKS_SERVER_MAXIMUM_CONNECTIONS": "300"]
        ).service.server
        #expect([server.idleTimeout, server.headerTimeout, server.bodyTimeout, server.maximumConnections] == [120, 3, 45, 300] as [Int])
    }

    @Test(
        "bad values name the file, the key and what was expected",
        arguments: [
            ("server:\n  headerTimeout: 0s\n", "server.headerTimeout", "expected a timeout from 1s to 10m such as 10s or 1m; got '0s'"),
            ("server:\n  headerTimeout: soon\n", "server.headerTimeout", "expected a timeout from 1s to 10m such as 10s or 1m; got 'soon'"),
            ("server:\n  idleTimeout: 2h\n", "server.idleTimeout", "expected a timeout from 1s to 1h such as 60s or 5m; got '2h'"),
            ("server:\n  bodyTimeout: -5\n", "server.bodyTimeout", "expected a timeout from 1s to 1h such as 30s or 5m; got '-5'"),
            ("server:\n  maximumConnections: 0\n", "server.maximumConnections", "expected a whole number from 1 to 1000000; got '0'"),
        ])
    func badValues(yaml: String, key: String, message: String) {
        do {
            _ = try ActionLinksConfiguration.parse(yaml: yaml, file: "t.yaml")
            Issue.record("accepted: \(yaml)")
        } catch {
            #expect(error.file == "t.yaml" && error.line == 2 && error.key == key, "\(error)")
            #expect(error.message == message, "\(error)")
        }
    }

    @Test("a bad value from the environment names the variable")
    func badVariable() {
        do {
            _ = try ActionLinksConfiguration.parse(yaml: "", file: "t.yaml", environment: ["ACTIONLINKS_SERVER_BODY_TIMEOUT": "forever"])
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("environment variable ACTIONLINKS_SERVER_BODY_TIMEOUT"), "\(error)")
            #expect(error.description.contains("server.bodyTimeout: expected a timeout from 1s to 1h"), "\(error)")
        }
    }
}

@Suite("apps.claimActionLinks", .timeLimit(.minutes(5)))
struct ClaimActionLinksTests {
    let apps = "apps:\n  ios:\n    - {teamId: ABCDE12345, bundleId: com.example.app}\n"

    @Test("off by default; on from the file or the environment")
    func values() throws {
        #expect(try ActionLinksConfiguration.parse(yaml: apps, file: "t.yaml").apps.claimActionLinks == false)
        let on = try ActionLinksConfiguration.parse(yaml: apps + "  claimActionLinks: true\n", file: "t.yaml").apps
        #expect(on.claimActionLinks && on.claimedAuthPaths == ["/__/auth/links*", "/__/auth/action*"])
        let fromEnvironment = try ActionLinksConfiguration.parse(
            yaml: apps, file: "t.yaml", environment: ["ACTIONLINKS_APPS_CLAIM_ACTION_LINKS": "true"])
        #expect(fromEnvironment.apps.claimActionLinks)
    }

    @Test("a bad value names its key and line")
    func bad() {
        do {
            _ = try ActionLinksConfiguration.parse(yaml: apps + "  claimActionLinks: sometimes\n", file: "t.yaml")
            Issue.record("accepted")
        } catch {
            #expect(error.description == "t.yaml:4:21: apps.claimActionLinks: expected true or false; got 'sometimes'")
        }
    }
}

@Suite("iOS apps' Firebase app ID and client ID", .timeLimit(.minutes(5)))
struct AppleAppIdentifierTests {
    func parse(_ entry: String, environment: [String: String] = [:]) throws(ConfigurationError) -> AppsConfiguration.AppleApp? {
        try ActionLinksConfiguration.parse(
            yaml: "apps:\n  ios:\n    - {teamId: ABCDE12345, bundleId: com.example.app\(entry)}\n", file: "t.yaml", environment: environment
        ).apps.appleApps.first
    }

    @Test("both optional; each implies its callback URL scheme")
    func schemes() throws {
        let plain = try #require(try parse(""))
        #expect(plain.googleAppID == nil && plain.clientID == nil && plain.googleAppIDURLScheme == nil && plain.clientIDURLScheme == nil)
        let app = try #require(
            try parse(", googleAppId: \"1:1234567890:ios:0123456789abcdef\", clientId: 1234567890-abc.apps.googleusercontent.com"))
        #expect(app.googleAppID == "1:1234567890:ios:0123456789abcdef")
        #expect(app.googleAppIDURLScheme == "app-1-1234567890-ios-0123456789abcdef")
        #expect(app.clientID == "1234567890-abc.apps.googleusercontent.com")
        #expect(app.clientIDURLScheme == "com.googleusercontent.apps.1234567890-abc")
        let fromEnvironment = try #require(
            try parse(
                "",
                environment: [
                    "ACTIONLINKS_APPS_IOS_0_GOOGLE_APP_ID": "1:42:ios:abc",
                    "ACTIONLINKS_APPS_IOS_0_CLIENT_ID": "42-x1.apps.googleusercontent.com",
                ]))
        #expect(
            fromEnvironment.googleAppIDURLScheme == "app-1-42-ios-abc"
                && fromEnvironment.clientIDURLScheme == "com.googleusercontent.apps.42-x1")
    }

    @Test(
        "bad values name their key",
        arguments: [
            (", googleAppId: \"1:1234567890:android:0123456789abcdef\"", "apps.ios[0].googleAppId"),
            (", googleAppId: \"2:1234567890:ios:0123456789abcdef\"", "apps.ios[0].googleAppId"),
            (", googleAppId: \"1:12ab:ios:0123456789abcdef\"", "apps.ios[0].googleAppId"),
            (", googleAppId: \"1:1234567890:ios:XYZ\"", "apps.ios[0].googleAppId"),
            (", googleAppId: \"1:1234567890:ios:\"", "apps.ios[0].googleAppId"),
            (", clientId: abc.apps.googleusercontent.com", "apps.ios[0].clientId"),
            (", clientId: 1234567890-abc.example.com", "apps.ios[0].clientId"),
            (", clientId: 1234567890-.apps.googleusercontent.com", "apps.ios[0].clientId"),
            (", clientID: 1234567890-abc.apps.googleusercontent.com", "apps.ios[0].clientID"),
        ])
    func bad(entry: String, key: String) {
        do {
            _ = try parse(entry)
            Issue.record("accepted \(entry)")
        } catch {
            #expect(error.key == key && error.line == 3, "\(error)")
            #expect(
                error.message.contains("expected") && error.message.contains("got '") || error.message.contains("did you mean 'clientId'?"),
                "\(error)")
        }
    }
}

@Suite("codes.signInCode and the exchange limits", .timeLimit(.minutes(5)))
struct SignInCodeSettingsTests {
    func parse(_ yaml: String, environment: [String: String] = [:]) throws(ConfigurationError) -> ServiceSettings {
        try ActionLinksConfiguration.parse(yaml: yaml, file: "t.yaml", environment: environment).service
    }

    @Test(
        "defaults: six digits, 15 minutes, five wrong tries; 20 exchanges an hour per address, 100 per IP; the shipped file says the same")
    func defaults() throws {
        let settings = try parse("")
        #expect(settings.codes.signInCode == SignInCodeSettings())
        #expect(
            [settings.codes.signInCode.digits, settings.codes.signInCode.lifetime, settings.codes.signInCode.attempts] == [6, 900, 5]
                as [Int])
        #expect(settings.codes.signInCode.isEnabled)
        #expect(
            [settings.limits.signInCodeExchangesPerAddressPerHour, settings.limits.signInCodeExchangesPerIPPerHour] == [20, 100] as [Int])
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/actionlinks.yaml").path
        let shipped = try ActionLinksConfiguration.load(file: file).service
        #expect(shipped.codes.signInCode == settings.codes.signInCode && shipped.limits == settings.limits)
    }

    @Test("values from the file and from the environment; 0 digits turns codes off")
    func values() throws {
        let file = try parse(
            "codes:\n  signInCode:\n    digits: 8\n    lifetime: 30m\n    attempts: 3\nlimits:\n  signInCodeExchangesPerAddressPerHour: 7\n"
        )
        #expect([file.codes.signInCode.digits, file.codes.signInCode.lifetime, file.codes.signInCode.attempts] == [8, 1800, 3] as [Int])
        #expect(file.limits.signInCodeExchangesPerAddressPerHour == 7)
        let environment = try parse(
            "codes:\n  signInCode:\n    digits: 8\n",
            environment: [
                "ACTIONLINKS_CODES_SIGN_IN_CODE_DIGITS": "10", "ACTIONLINKS_CODES_SIGN_IN_CODE_LIFETIME": "5m",
                "ACTIONLINKS_CODES_SIGN_IN_CODE_ATTEMPTS": "2", "ACTIONLINKS_LIMITS_SIGN_IN_CODE_EXCHANGES_PER_IP_PER_HOUR": "9",
            ])
        #expect(
            [environment.codes.signInCode.digits, environment.codes.signInCode.lifetime, environment.codes.signInCode.attempts] == [
                10, 300, 2,
            ] as [Int])
        #expect(environment.limits.signInCodeExchangesPerIPPerHour == 9)
        let off = try parse("codes:\n  signInCode:\n    digits: 0\n")
        #expect(off.codes.signInCode.digits == 0 && !off.codes.signInCode.isEnabled)
    }

    @Test(
        "variable names",
        arguments: [
            ("codes.signInCode.digits", "ACTIONLINKS_CODES_SIGN_IN_CODE_DIGITS"),
            ("codes.signInCode.lifetime", "ACTIONLINKS_CODES_SIGN_IN_CODE_LIFETIME"),
            ("limits.signInCodeExchangesPerIPPerHour", "ACTIONLINKS_LIMITS_SIGN_IN_CODE_EXCHANGES_PER_IP_PER_HOUR"),
        ])
    func names(key: String, variable: String) {
        #expect(ConfigurationEnvironment.variable(for: EnvironmentOverrideTests.path(key)) == variable)
    }

    @Test("a code never outlives its link: the default is shortened to a shorter link's lifetime, a longer lifetime given is refused")
    func linkLifetime() throws {
        let short = try parse("codes:\n  lifetimes:\n    signIn: 10m\n")
        #expect(short.codes.signInCode.lifetime == 600)
        let fits = try parse("codes:\n  lifetimes:\n    signIn: 10m\n  signInCode:\n    lifetime: 10m\n")
        #expect(fits.codes.signInCode.lifetime == 600)
        do {
            _ = try parse("codes:\n  lifetimes:\n    signIn: 10m\n  signInCode:\n    lifetime: 15m\n")
            Issue.record("a code that outlives its link was accepted")
        } catch {
            #expect(error.key == "codes.signInCode.lifetime" && error.line == 5, "\(error)")
            #expect(
                error.message
                    == "expected at most the sign-in link's own lifetime (codes.lifetimes.signIn: 10m): a code must not outlive its link; got '15m'",
                "\(error)")
        }
        do {
            _ = try parse("", environment: ["ACTIONLINKS_CODES_SIGN_IN_CODE_LIFETIME": "2h"])
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("ACTIONLINKS_CODES_SIGN_IN_CODE_LIFETIME"), "\(error)")
            #expect(error.description.contains("codes.lifetimes.signIn: 1h"), "\(error)")
        }
    }

    @Test(
        "bad values name the key, the line and what was expected",
        arguments: [
            (
                "codes:\n  signInCode:\n    digits: 5\n", "codes.signInCode.digits",
                "expected 0 (no sign-in codes) or a whole number from 6 to 10; got '5'"
            ),
            (
                "codes:\n  signInCode:\n    digits: 11\n", "codes.signInCode.digits",
                "expected 0 (no sign-in codes) or a whole number from 6 to 10; got '11'"
            ),
            (
                "codes:\n  signInCode:\n    digits: six\n", "codes.signInCode.digits",
                "expected 0 (no sign-in codes) or a whole number from 6 to 10; got 'six'"
            ),
            (
                "codes:\n  signInCode:\n    lifetime: 30s\n", "codes.signInCode.lifetime",
                "expected a lifetime from 1m to 1d such as 10m or 15m; got '30s'"
            ),
            ("codes:\n  signInCode:\n    attempts: 0\n", "codes.signInCode.attempts", "expected a whole number from 1 to 20; got '0'"),
            ("codes:\n  signInCode:\n    tries: 3\n", "codes.signInCode.tries", "unknown key; expected one of digits, lifetime, attempts"),
        ])
    func badValues(yaml: String, key: String, message: String) {
        do {
            _ = try parse(yaml)
            Issue.record("accepted: \(yaml)")
        } catch {
            #expect(error.key == key && error.line == 3, "\(error)")
            #expect(error.message.hasPrefix(message), "\(error)")
        }
    }
}
