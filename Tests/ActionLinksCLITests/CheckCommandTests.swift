import ActionLinksTestSupport
import Foundation
import Testing

/// `actionlinks check` against a real HTTP server on loopback (no test needs the internet).
@Suite("The check command", .timeLimit(.minutes(5)))
struct CheckCommandTests {
    static func generated(_ command: String) async throws -> Data {
        let run = try await Command.run([command, "generate", "--config", Repository.configFile])
        #expect(run.status == 0)
        return Data(run.stdout.utf8)
    }

    func check(_ server: LoopbackHTTPServer, cdn: Bool = true) async throws -> CommandResult {
        var arguments = ["check", "links.example.com", "--json", "--origin", server.origin]
        arguments += cdn ? ["--apple-cdn", server.origin + "/cdn/"] : ["--skip-apple-cdn"]
        return try await Command.run(arguments)
    }

    func file(_ run: CommandResult, _ key: String) -> [String: Any] { run.json?[key] as? [String: Any] ?? [:] }

    @Test("good files served directly pass, and the CDN copy matches")
    func goodFiles() async throws {
        let aasa = try await Self.generated("aasa")
        let assetLinks = try await Self.generated("assetlinks")
        let server = try LoopbackHTTPServer(routes: [
            "/.well-known/apple-app-site-association": .init(body: aasa),
            "/.well-known/assetlinks.json": .init(headers: ["Content-Type": "application/json; charset=utf-8"], body: assetLinks),
            // The CDN reformats the file; only the JSON value matters.
            "/cdn/links.example.com": .init(
                body: Data(String(decoding: aasa, as: UTF8.self).replacingOccurrences(of: "\n", with: " ").utf8)),
        ])
        defer { server.stop() }
        let run = try await check(server)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.json?["ok"] as? Bool == true)
        let apple = file(run, "appleAppSiteAssociation")
        #expect((apple["fetched"] as? [String: Any])?["status"] as? Int == 200)
        #expect((apple["cdn"] as? [String: Any])?["matchesOrigin"] as? Bool == true)
        #expect((apple["notes"] as? [String])?.first?.contains("plain HTTP") == true)
    }

    @Test("a redirect is reported, not followed")
    func redirect() async throws {
        let aasa = try await Self.generated("aasa")
        let server = try LoopbackHTTPServer(routes: [
            "/.well-known/apple-app-site-association": .init(status: 301, headers: ["Location": "/real-aasa"], body: Data()),
            "/real-aasa": .init(body: aasa),
            "/.well-known/assetlinks.json": .init(
                status: 302, headers: ["Location": "https://elsewhere.example.com/assetlinks.json"], body: Data()),
        ])
        defer { server.stop() }
        let run = try await check(server, cdn: false)
        #expect(run.status == 1)
        let apple = file(run, "appleAppSiteAssociation")
        #expect((apple["fetched"] as? [String: Any])?["status"] as? Int == 301)
        #expect((apple["fetched"] as? [String: Any])?["redirect"] as? String == "/real-aasa")
        #expect((apple["problems"] as? [String])?.first?.contains("never follow redirects") == true)
        #expect((file(run, "assetLinks")["problems"] as? [String])?.first?.contains("302") == true)
    }

    @Test("a wrong content type, a missing file and an oversized file are problems")
    func wrongTypeMissingOversized() async throws {
        let padding = String(repeating: "x", count: 140 * 1024)
        let oversized = Data(
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [{"/": "/x", "comment": "\#(padding)"}]}]}}"#
                .utf8)
        let server = try LoopbackHTTPServer(routes: [
            "/.well-known/apple-app-site-association": .init(body: oversized),
            "/.well-known/assetlinks.json": .init(headers: ["Content-Type": "text/html"], body: Data("[]".utf8)),
        ])
        defer { server.stop() }
        let run = try await check(server, cdn: false)
        #expect(run.status == 1)
        let apple = file(run, "appleAppSiteAssociation")
        let codes = (apple["diagnostics"] as? [[String: Any]])?.compactMap { $0["code"] as? String } ?? []
        #expect(codes.contains("file.too-large"), "\(apple)")
        let android = file(run, "assetLinks")
        #expect((android["problems"] as? [String])?.contains { $0.contains("Content-Type is 'text/html'") } == true)

        let missing = try LoopbackHTTPServer(routes: [:])
        defer { missing.stop() }
        let none = try await check(missing, cdn: false)
        #expect(none.status == 1)
        #expect((file(none, "assetLinks")["problems"] as? [String])?.first?.contains("answered 404") == true)
    }

    @Test("a CDN copy that differs from the origin is reported")
    func staleCDN() async throws {
        let aasa = try await Self.generated("aasa")
        let server = try LoopbackHTTPServer(routes: [
            "/.well-known/apple-app-site-association": .init(body: aasa),
            "/.well-known/assetlinks.json": .init(body: try await Self.generated("assetlinks")),
            "/cdn/links.example.com": .init(body: Data(#"{"applinks": {"details": []}}"#.utf8)),
        ])
        defer { server.stop() }
        let run = try await check(server)
        #expect(run.status == 1)
        let cdn = file(run, "appleAppSiteAssociation")["cdn"] as? [String: Any]
        #expect(cdn?["matchesOrigin"] as? Bool == false)
        #expect(run.stdout.contains("different file from the origin"))
    }

    @Test("a target that is neither a domain nor a URL is a usage error")
    func badTarget() async throws {
        let run = try await Command.run(["check", "not a domain"])
        #expect(run.status == 64)
    }
}
