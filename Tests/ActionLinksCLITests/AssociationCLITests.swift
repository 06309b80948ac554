import ActionLinksTestSupport
import Foundation
import Testing

@Suite("The aasa and assetlinks commands", .timeLimit(.minutes(5)))
final class AssociationCLITests {
    static let fingerprint = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"

    /// This test's files, removed when it ends.
    let folder = TestProject.temporaryDirectory("actionlinks-association-cli")

    deinit { try? FileManager.default.removeItem(at: folder) }

    func temporaryFile(_ text: String) throws -> String {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("\(UUID().uuidString).json")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test("the files generated from the default config validate cleanly and cover the auth paths")
    func generateValidateMatch() async throws {
        let aasa = try await Command.run(["aasa", "generate", "--config", Repository.configFile])
        #expect(aasa.status == 0, "\(aasa.stderr)")
        let aasaFile = try temporaryFile(aasa.stdout)
        let validation = try await Command.run(["aasa", "validate", "--json", aasaFile])
        #expect(validation.status == 0)
        #expect(validation.json?["valid"] as? Bool == true)
        #expect((validation.json?["diagnostics"] as? [Any])?.isEmpty == true)

        let match = try await Command.run([
            "aasa", "match", "--json", "--file", aasaFile, "--app", "ABCDE12345.com.example.app",
            "https://links.example.com/__/auth/links?link=x", "https://links.example.com/__/auth/action?mode=signIn&oobCode=x",
            "https://links.example.com/pricing", "not a url",
        ])
        #expect(match.status == 0, "\(match.stderr)")
        #expect(
            match.results.map { $0["decision"] as? String } == ["match", "no_match", "no_match", nil], "web action links stay on the web")
        #expect(match.results.first?["rule"] as? String == "applinks.details[0].components[0]")
        #expect(match.results.allSatisfy { $0["explanation"] is String && $0.keys.contains("rule") })

        let assetLinks = try await Command.run(["assetlinks", "generate", "--config", Repository.configFile])
        let assetLinksFile = try temporaryFile(assetLinks.stdout)
        #expect(try await Command.run(["assetlinks", "validate", assetLinksFile]).status == 0)
        let handled = try await Command.run([
            "assetlinks", "match", "--json", "--file", assetLinksFile, "--package", "com.example.app", "--fingerprint", Self.fingerprint,
            "https://links.example.com/__/auth/links?link=x",
        ])
        #expect(handled.results.first?["decision"] as? String == "handled")
        let stranger = try await Command.run([
            "assetlinks", "match", "--json", "--file", assetLinksFile, "--package", "com.evil.app", "--fingerprint", Self.fingerprint,
            "https://links.example.com/__/auth/links?link=x",
        ])
        #expect(stranger.results.first?["decision"] as? String == "not_authorized")
    }

    @Test("validation errors exit 1 with stable codes; a trailing comma is reported with its position")
    func validationErrors() async throws {
        let trailing = try temporaryFile(
            #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "web", "site": "https://a.example.com"},}]"#
        )
        let run = try await Command.run(["assetlinks", "validate", "--json", trailing])
        #expect(run.status == 1)
        let codes = (run.json?["diagnostics"] as? [[String: Any]])?.compactMap { $0["code"] as? String } ?? []
        #expect(codes.contains("json.syntax"), "\(run.stdout)")

        let mixed = try temporaryFile(
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "paths": ["*"], "components": [{"/": "*"}]}]}}"#)
        let warned = try await Command.run(["aasa", "validate", mixed])
        #expect(warned.status == 0, "a warning alone does not fail validation")
        #expect(warned.stdout.contains("warning[aasa.paths-with-components]"))

        let badAppID = try temporaryFile(#"{"applinks": {"details": [{"appIDs": ["com.example.app"], "components": [{"/": "/x"}]}]}}"#)
        let failed = try await Command.run(["aasa", "validate", badAppID])
        #expect(failed.status == 1)
        #expect(failed.stdout.contains("error[aasa.invalid-app-id]"))
    }

    @Test("inspect says which layers open the apps")
    func inspectWithAssociationFiles() async throws {
        let aasaFile = try temporaryFile(try await Command.run(["aasa", "generate", "--config", Repository.configFile]).stdout)
        let assetLinksFile = try temporaryFile(
            try await Command.run(["assetlinks", "generate", "--config", Repository.configFile]).stdout)
        let mobile =
            "https://links.example.com/__/auth/links?link=https%3A%2F%2Flinks.example.com%2F__%2Fauth%2Faction%3FapiKey%3DK%26mode%3DsignIn%26oobCode%3DC"
        let run = try await Command.run([
            "inspect", "--json", "--aasa", aasaFile, "--app", "ABCDE12345.com.example.app", "--assetlinks", assetLinksFile, "--package",
            "com.example.app", mobile,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let result = try #require(run.results.first)
        // The mobile link opens the app; the web action link inside it would not on its own.
        #expect((result["appleAppSiteAssociation"] as? [[String: Any]])?.map { $0["decision"] as? String } == ["match", "no_match"])
        #expect((result["assetLinks"] as? [[String: Any]])?.map { $0["decision"] as? String } == ["handled", "excluded"])
        let usage = try await Command.run(["inspect", "--aasa", aasaFile, mobile])
        #expect(usage.status == 64)
        #expect(usage.stderr.contains("--aasa and --app go together"))
    }
}
