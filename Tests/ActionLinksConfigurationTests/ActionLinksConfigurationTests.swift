import Foundation
import Testing

@testable import ActionLinksConfiguration

@Suite("Reading config/actionlinks.yaml")
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

    @Test("wrong shapes are reported", arguments: [
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
