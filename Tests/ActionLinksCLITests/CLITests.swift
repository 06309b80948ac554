import ActionLinksTestSupport
import Foundation
import Testing

/// Runs the built `actionlinks` binary the way a person would, and checks what it prints and exits with.
@Suite("The actionlinks command line", .timeLimit(.minutes(5)))
struct CLITests {
    static func vectors() throws -> [[String: Any]] {
        let file = ProcessInfo.processInfo.environment["ACTIONLINKS_VECTORS"].map(URL.init(fileURLWithPath:)) ?? Repository.vectors
        return try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }

    @Test("inspect --json reports every vector as the vectors expect")
    func inspectJSON() async throws {
        let vectors = try Self.vectors()
        let run = try await Command.run(["inspect", "--json"] + vectors.map { $0["input"] as! String })
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.results.count == vectors.count)
        for (vector, result) in zip(vectors, run.results) {
            #expect(result["input"] as? String == vector["input"] as? String)
            #expect((result["chain"] as? [String])?.first == vector["input"] as? String)
            #expect(result["warnings"] is [String])
            #expect(result["continueUrlAllowed"] == nil, "no --config, so no continueUrlAllowed")
            let expected = vector["expect"] as? [String: Any]
            if let expected {
                let action = try #require(result["action"] as? [String: Any], "\(vector["about"]!)")
                for key in ["mode", "oobCode", "apiKey", "continueUrl", "lang", "tenantId"] {
                    #expect(action.keys.contains(key), "action.\(key) must be present, null when absent")
                    #expect(action[key] as? String == expected[key] as? String, "\(vector["about"]!): \(key)")
                }
            } else {
                #expect(result["action"] is NSNull, "\(vector["about"]!)")
                #expect((result["error"] as? [String: Any])?["message"] is String)
            }
        }
    }

    @Test("inspect --config adds continueUrlAllowed; - reads links from standard input")
    func inspectWithConfig() async throws {
        let links = [
            "https://l.example.com/__/auth/action?mode=signIn&oobCode=C&apiKey=K&continueUrl=https%3A%2F%2Fapp.example.com%2Fdone",
            "https://l.example.com/__/auth/action?mode=signIn&oobCode=C&apiKey=K&continueUrl=https%3A%2F%2Fevil.com%2F",
            "https://l.example.com/__/auth/action?mode=signIn&oobCode=C&apiKey=K",
        ]
        let run = try await Command.run(
            ["inspect", "--json", "--config", Repository.configFile, "-"], stdin: links.joined(separator: "\r\n") + "\n\n")
        #expect(run.status == 0, "\(run.stderr)")
        let allowed = run.results.map { $0["continueUrlAllowed"] }
        #expect(allowed.count == 3)
        #expect(allowed[0] as? Bool == true)
        #expect(allowed[1] as? Bool == false)
        #expect(allowed[2] is NSNull)
    }

    @Test("inspect explains a mobile link layer by layer for people")
    func inspectHuman() async throws {
        let mobile =
            "https://links.example.com/__/auth/links?link=https%3A%2F%2Flinks.example.com%2F__%2Fauth%2Faction%3FapiKey%3DK%26mode%3DrecoverEmail%26oobCode%3DR1"
        let run = try await Command.run(["inspect", mobile, "hello world"])
        #expect(run.status == 0)
        #expect(run.stdout.contains("layer 1  mobile link wrapper (/__/auth/links); the next layer is its 'link' parameter"))
        #expect(run.stdout.contains("layer 2  action link"))
        #expect(run.stdout.contains("recoverEmail: handled by email recovery"))
        #expect(run.stdout.contains("not an action link: not a URL: a space at offset 5"))
    }

    @Test("policy --json prints one result per URL and exits 1 when any is rejected")
    func policy() async throws {
        let good = try await Command.run(["policy", "--config", Repository.configFile, "--json", "/done", "https://x.example.org/a"])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.results.map { $0["url"] as? String } == ["https://app.example.com/done", "https://x.example.org/a"])
        let first = try #require(good.results.first)
        #expect(Set(first.keys).isSuperset(of: ["input", "allowed", "url", "reason"]))
        #expect(first["reason"] is NSNull)

        let bad = try await Command.run(["policy", "--config", Repository.configFile, "--json", "/done", "javascript:alert(1)"])
        #expect(bad.status == 1)
        #expect(bad.results.map { $0["allowed"] as? Bool } == [true, false])
        #expect((bad.results.last?["reason"] as? String)?.contains("never allowed") == true)
        #expect(bad.results.last?["url"] is NSNull)

        let human = try await Command.run(["policy", "--config", Repository.configFile, "https://evil.com/"])
        #expect(human.status == 1)
        #expect(human.stdout.hasPrefix("rejected  https://evil.com/"))
    }

    @Test(
        "usage errors exit 64 and say what to do",
        arguments: [
            ["inspect"], ["policy", "https://app.example.com/"], ["policy", "--config", "config/actionlinks.yaml"],
            ["inspect", "--bogus", "x"], ["frobnicate"],
        ])
    func usageErrors(arguments: [String]) async throws {
        let run = try await Command.run(arguments)
        #expect(run.status == 64, "\(arguments): \(run.stderr)")
        #expect(run.stderr.contains("Error:"))
        #expect(run.stdout.isEmpty)
    }

    @Test("a bad config exits 1 naming the file, line and key")
    func badConfig() async throws {
        let file = TestProject.temporaryDirectory("actionlinks").appendingPathExtension("yaml")
        try "continueUrls:\n  allow:\n    - https://app.example.com/\n    - \"http://evil.example.com/\"\n".write(
            to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        for arguments in [["policy", "--config", file.path, "/x"], ["inspect", "--config", file.path, "x"]] {
            let run = try await Command.run(arguments)
            #expect(run.status == 1)
            #expect(run.stderr.contains("Error: \(file.path):4:7: continueUrls.allow[1]: expected a domain"), "\(run.stderr)")
            #expect(run.stdout.isEmpty)
        }
        let missing = try await Command.run(["policy", "--config", "/nonexistent.yaml", "/x"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("/nonexistent.yaml: cannot read the file: No such file or directory"))
    }

    @Test("the library links without Foundation, so it can live inside an app")
    func libraryLinkage() async throws {
        let probe = try Repository.executable("ActionLinksLinkageProbe")
        let libraries = try await Command.run(program: URL(fileURLWithPath: "/usr/bin/ldd"), [probe.path]).stdout
        #expect(libraries.contains("libswiftCore"), "ldd did not list the Swift runtime: \(libraries)")
        #expect(!libraries.contains("Foundation"), "the library pulls in Foundation:\n\(libraries)")
        let run = try await Command.run([], executable: "ActionLinksLinkageProbe")
        #expect(run.stdout == "true\n")
    }
}
