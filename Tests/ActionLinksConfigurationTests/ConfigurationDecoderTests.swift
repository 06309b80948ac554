import Foundation
import Testing
import Yams

@testable import ActionLinksConfiguration

/// The decoder under every section: where values come from, and what each problem names.
@Suite("The configuration decoder", .timeLimit(.minutes(5)))
struct ConfigurationDecoderTests: ConfigurationSuite {
    @Test("a bad value from the environment names the variable, the key and what was expected")
    func badVariable() throws {
        let bad = try #require(error("", environment: ["ACTIONLINKS_SERVER_PORT": "eighty"]))
        #expect(
            bad.description
                == "environment variable ACTIONLINKS_SERVER_PORT: server.port: expected a whole number from 0 to 65535; got 'eighty'")
    }

    @Test("a variable sets a key whose section the file does not have")
    func missingSection() throws {
        let settings = try parse("", environment: ["ACTIONLINKS_MAIL_FROM": "Links <links@example.com>"]).service
        #expect(settings.mail.from == "Links <links@example.com>")
    }

    @Test("every key of a section is read, so a variable for a key the chosen backend ignores is no error")
    func unusedBranch() throws {
        let settings = try parse("mail:\n  backend: log\n", environment: ["ACTIONLINKS_MAIL_WEBHOOK_URL": "https://relay.example.com"])
            .service
        #expect(settings.mail.backend == .log)
    }

    @Test("list items that are mappings take index-path variables")
    func indexPaths() throws {
        let yaml =
            "apps:\n  ios:\n    - {teamId: ABCDE12345, bundleId: com.example.app}\n    - {teamId: ABCDE12345, bundleId: com.example.two}\n"
        let apps = try parse(yaml, environment: ["ACTIONLINKS_APPS_IOS_1_BUNDLE_ID": "com.example.other"]).apps
        #expect(apps.appleApps.map(\.bundleID) == ["com.example.app", "com.example.other"])

        let bad = try #require(error(yaml, environment: ["ACTIONLINKS_APPS_IOS_0_TEAM_ID": "short"]))
        #expect(bad.file == "t.yaml" && bad.key == "apps.ios[0]" && bad.line == 3, "\(bad)")

        let beyond = try #require(error(yaml, environment: ["ACTIONLINKS_APPS_IOS_2_BUNDLE_ID": "com.x"]))
        #expect(beyond.file == "environment variable ACTIONLINKS_APPS_IOS_2_BUNDLE_ID", "\(beyond)")
        #expect(beyond.message.contains("(did you mean ACTIONLINKS_APPS_IOS_0_BUNDLE_ID?)"), "\(beyond)")
    }

    @Test("a list from the environment replaces the file's; its bad item names the variable and the index")
    func lists() throws {
        let yaml = "continueUrls:\n  allow: [app.example.com]\n"
        let policy = try parse(yaml, environment: ["ACTIONLINKS_CONTINUE_URLS_ALLOW": "a.example.com, *.example.org"]).continueURLs
        #expect(policy.entries.map(\.description) == ["a.example.com", "*.example.org"])
        let bad = try #require(error(yaml, environment: ["ACTIONLINKS_CONTINUE_URLS_ALLOW": "a.example.com,ftp://x"]))
        #expect(bad.file == "environment variable ACTIONLINKS_CONTINUE_URLS_ALLOW" && bad.key == "continueUrls.allow[1]", "\(bad)")
        let empty = try #require(error(yaml, environment: ["ACTIONLINKS_CONTINUE_URLS_ALLOW": "a.example.com,,b.example.com"]))
        #expect(empty.key == "continueUrls.allow[1]" && empty.message == "expected a non-empty string", "\(empty)")
        #expect(try parse("tenants: [a]\n", environment: ["ACTIONLINKS_TENANTS": ""]).service.tenants.isEmpty)
    }

    @Test(
        "shapes are reported where they are",
        arguments: [
            ("server: 8080\n", "server", 1, "expected a mapping of host, port, development"),
            ("linkDomains: links.example.com\n", "linkDomains", 1, "expected a list"),
            ("server:\n  port: [1]\n", "server.port", 2, "got a list or mapping"),
            ("apps:\n  ios:\n    - {teamId: ABCDE12345}\n", "apps.ios[0]", 3, "bundleId is required"),
            ("apps:\n  rules:\n    - {path: /x, query: [a]}\n", "apps.rules[0].query", 3, "expected a mapping"),
        ] as [(String, String, Int, String)])
    func shapes(yaml: String, key: String, line: Int, message: String) throws {
        let problem = try #require(error(yaml))
        #expect(problem.key == key && problem.line == line, "\(problem)")
        #expect(problem.message.contains(message), "\(problem)")
    }

    @Test("an empty or null section is an empty mapping")
    func nullSections() throws {
        let settings = try parse("server:\nlimits: ~\ntenants:\n").service
        #expect(settings.server.port == 8080 && settings.limits.sendsPerIPPerHour == 100 && settings.tenants.isEmpty)
    }
}

@Suite("Documented variables", .timeLimit(.minutes(5)))
struct DocumentedVariableTests {
    /// Every `ACTIONLINKS_` variable the documentation names (README.md and every docs/*.md), but for
    /// the scripts' own.
    static let variables: [String] = {
        let docs = ConfigurationText.repository.appendingPathComponent("docs")
        let pages = (try? FileManager.default.contentsOfDirectory(at: docs, includingPropertiesForKeys: nil)) ?? []
        let files = [ConfigurationText.repository.appendingPathComponent("README.md")] + pages.filter { $0.pathExtension == "md" }
        let text = files.compactMap { try? String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
        let names = text.matches(of: /ACTIONLINKS_[A-Z0-9_]*[A-Z0-9]/).map { String($0.output) }
        return Set(names).subtracting(ConfigurationEnvironment.otherVariables).subtracting(["ACTIONLINKS_BIN"]).sorted()
    }()

    @Test("the documentation names the variables it documents")
    func found() {
        #expect(Self.variables.contains("ACTIONLINKS_SERVER_PORT") && Self.variables.contains("ACTIONLINKS_PROVIDERS_0_CLIENT_SECRET"))
    }

    @Test("each variable the documentation names is used by a key", arguments: variables)
    func used(variable: String) {
        let yaml = """
            apps:
              ios:
                - {teamId: ABCDE12345, bundleId: com.example.app}
                - {teamId: ABCDE12345, bundleId: com.example.two}
            providers:
              - {id: yahoo.com, preset: yahoo, clientId: c, clientSecret: s}
            project:
              apiKeys:
                - {key: k0}
                - {key: k1, androidApps: [{packageName: com.example.app, sha1: "DA39A3EE5E6B4B0D3255BFEF95601890AFD80709"}]}

            """
        do {
            _ = try ConfigurationText.configuration(yaml, environment: [variable: "1"])
        } catch {
            #expect(!error.message.contains("not a configuration key's variable"), "\(error)")
        }
    }
}

@Suite("The decoder with synthesized Decodable types", .timeLimit(.minutes(5)))
struct SynthesizedDecodingTests {
    struct Sample: Decodable, Equatable {
        enum CodingKeys: String, CodingKey, CaseIterable {
            case count, ratio, flag, names, nested, optional
        }
        struct Nested: Decodable, Equatable {
            var small: UInt8
        }
        var count: Int
        var ratio: Double
        var flag: Bool
        var names: [String]
        var nested: Nested
        var optional: String?
    }

    func decode(_ yaml: String, environment: [String: String] = [:]) throws -> Sample {
        let node = try Yams.compose(yaml: yaml)
        return try Sample(
            from: ConfigurationDecoder(value: .file(node), codingPath: [], environment: ConfigurationEnvironment(environment)))
    }

    @Test("plain values, lists, nested mappings and optionals; variables first")
    func values() throws {
        let yaml = "count: 3\nratio: 0.5\nflag: true\nnames: [a, b]\nnested: {small: 7}\n"
        #expect(try decode(yaml) == Sample(count: 3, ratio: 0.5, flag: true, names: ["a", "b"], nested: .init(small: 7), optional: nil))
        let overridden = try decode(
            yaml, environment: ["ACTIONLINKS_COUNT": "4", "ACTIONLINKS_NESTED_SMALL": "8", "ACTIONLINKS_OPTIONAL": "x"])
        #expect(overridden.count == 4 && overridden.nested.small == 8 && overridden.optional == "x")
    }

    @Test(
        "plain messages for plain types",
        arguments: [
            ("count: x\nratio: 1\nflag: true\nnames: []\nnested: {small: 1}\n", "count", "expected a whole number; got 'x'"),
            ("count: 1\nratio: x\nflag: true\nnames: []\nnested: {small: 1}\n", "ratio", "expected a number; got 'x'"),
            ("count: 1\nratio: 1\nflag: x\nnames: []\nnested: {small: 1}\n", "flag", "expected true or false; got 'x'"),
            ("count: 1\nratio: 1\nflag: true\nnames: []\nnested: {small: 300}\n", "nested.small", "expected a whole number; got '300'"),
            ("count: 1\nratio: 1\nflag: true\nnames: []\n", "nested", "small is required"),
            ("ratio: 1\nflag: true\nnames: []\nnested: {small: 1}\n", nil, "count is required"),
            ("count: 1\nratio: 1\nflag: true\nnames: [[a]]\nnested: {small: 1}\n", "names[0]", "expected a non-empty string"),
        ] as [(String, String?, String)])
    func problems(yaml: String, key: String?, message: String) throws {
        do {
            _ = try decode(yaml)
            Issue.record("accepted \(yaml)")
        } catch let problem as DecodingProblem {
            #expect(ConfigurationDecoder.describe(problem.codingPath) == key && problem.message == message, "\(problem)")
        }
    }
}
