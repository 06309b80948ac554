import ActionLinks
import Foundation
import Testing

@testable import ActionLinksConfiguration

@Suite("Server timeouts and connection cap", .timeLimit(.minutes(5)))
struct ServerLimitsConfigurationTests {
    @Test("defaults: idle 60 s, header 10 s, body 30 s, 1024 connections")
    func defaults() throws {
        let server = try ConfigurationText.service("").server
        #expect([server.idleTimeout, server.headerTimeout, server.bodyTimeout, server.maximumConnections] == [60, 10, 30, 1024] as [Int])
    }

    @Test("values from the file and from the environment")
    func values() throws {
        let server = try ConfigurationText.service(
            "server:\n  idleTimeout: 2m\n  headerTimeout: 5s\n  bodyTimeout: 45\n  maximumConnections: 200\n",
            environment: ["ACTIONLINKS_SERVER_HEADER_TIMEOUT": "3s", "ACTIONLINKS_SERVER_MAXIMUM_CONNECTIONS": "300"]
        ).server
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
            _ = try ConfigurationText.configuration(yaml)
            Issue.record("accepted: \(yaml)")
        } catch {
            #expect(error.file == "t.yaml" && error.line == 2 && error.key == key, "\(error)")
            #expect(error.message == message, "\(error)")
        }
    }

    @Test("a bad value from the environment names the variable")
    func badVariable() {
        do {
            _ = try ConfigurationText.configuration("", environment: ["ACTIONLINKS_SERVER_BODY_TIMEOUT": "forever"])
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
        #expect(try ConfigurationText.configuration(apps).apps.claimActionLinks == false)
        let on = try ConfigurationText.configuration(apps + "  claimActionLinks: true\n").apps
        #expect(on.claimActionLinks && on.claimedAuthPaths == ["/__/auth/links*", "/__/auth/action*"])
        let fromEnvironment = try ConfigurationText.configuration(apps, environment: ["ACTIONLINKS_APPS_CLAIM_ACTION_LINKS": "true"])
        #expect(fromEnvironment.apps.claimActionLinks)
    }

    @Test("a bad value names its key and line")
    func bad() {
        do {
            _ = try ConfigurationText.configuration(apps + "  claimActionLinks: sometimes\n")
            Issue.record("accepted")
        } catch {
            #expect(error.description == "t.yaml:4:21: apps.claimActionLinks: expected true or false; got 'sometimes'")
        }
    }
}

@Suite("iOS apps' Firebase app ID and client ID", .timeLimit(.minutes(5)))
struct AppleAppIdentifierTests {
    func parse(_ entry: String, environment: [String: String] = [:]) throws(ConfigurationError) -> AppsConfiguration.AppleApp? {
        try ConfigurationText.configuration(
            "apps:\n  ios:\n    - {teamId: ABCDE12345, bundleId: com.example.app\(entry)}\n", environment: environment
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
