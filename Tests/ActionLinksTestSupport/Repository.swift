import Foundation

/// Where the repository and the built products are, so tests run the shipped configuration and pages.
public enum Repository {
    /// The repository's root, found from this file's path.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// The shipped configuration, `config/actionlinks.yaml`.
    public static let configFile = root.appendingPathComponent("config/actionlinks.yaml").path
    /// The shipped pages, templates and strings, `www/`.
    public static let www = root.appendingPathComponent("www").path
    /// The link vectors, `Tests/Vectors/links.jsonl` (the repository's copy of `../shared/vectors`).
    public static let vectors = root.appendingPathComponent("Tests/Vectors/links.jsonl")
    /// The Firebase JS SDK's browser builds the browser tests load, `Tests/Clients/firebase-js-sdk-11.0.2`
    /// (the repository's copy of `../shared/clients/firebase-js-sdk-11.0.2`).
    public static let firebaseJSSDK = root.appendingPathComponent("Tests/Clients/firebase-js-sdk-11.0.2")
    /// The Firebase JS SDK's modular browser builds (the ones with TOTP second factors),
    /// `Tests/Clients/firebase-js-sdk-11.9.0-modular` (the repository's copy of `../shared/clients/firebase-js-sdk-11.9.0-modular`).
    public static let firebaseJSSDKModular = root.appendingPathComponent("Tests/Clients/firebase-js-sdk-11.9.0-modular")

    /// A product built next to the tests (`actionlinks`, `ActionLinksLinkageProbe`).
    public static func executable(_ name: String) throws -> URL {
        // Swift Testing may run from the .xctest bundle itself on some platforms; walk up to the products.
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw TestSupportError("\(name) was not built next to the tests: run `swift build --build-tests`")
    }
}

/// The project every test server runs: the shipped configuration's, on a test link domain.
public enum TestProject {
    /// `project.id` in the shipped configuration.
    public static let id = "demo-actionlinks"
    /// `project.apiKey` in the shipped configuration.
    public static let apiKey = "demo-api-key"
    /// The admin credential of a development server.
    public static let adminToken = "owner"
    /// The link domain the test servers build links on.
    public static let linkOrigin = "https://links.test.example"

    /// The overrides every test server starts with: any free port, its own data directory and
    /// SQLite file, the test link domain, and the emulator listing.
    public static func overrides(dataDirectory: URL) -> [String: String] {
        [
            "ACTIONLINKS_SERVER_PORT": "0", "ACTIONLINKS_DATA_DIRECTORY": dataDirectory.path,
            "ACTIONLINKS_STORE": "sqlite:" + dataDirectory.appendingPathComponent("actionlinks.sqlite").path,
            "ACTIONLINKS_LINK_DOMAINS": "links.test.example",
            // scrypt at N = 2^8, p = 1 instead of 2^14 and 5 (docs/CONFIGURATION.md:
            // users.passwordHashLogRounds): the default's 0.7 s of CPU per hash, over the suite's
            // thousands of password calls, was most of the CPU of a whole run and pushed unrelated
            // tests past their time limits.
            // The hasher's own tests, and a test that sets these, run the cost they ask for.
            "ACTIONLINKS_USERS_PASSWORD_HASH_LOG_ROUNDS": "8", "ACTIONLINKS_USERS_PASSWORD_HASH_PARALLELISM": "1",
        ]
    }

    /// A new, not yet existing folder in this test process's scratch folder (``scratch``).
    public static func temporaryDirectory(_ prefix: String) -> URL {
        scratch.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    }

    /// `<tmp>/actionlinks-tests-<pid>`: every throw-away file of this test process, removed when the
    /// process exits (tests that end early, or servers that outlive their test, left thousands of
    /// folders behind when each test removed its own).
    public static let scratch: URL = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("actionlinks-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: TestProject.scratch) }
        return folder
    }()
}

/// A test harness failure: a server that did not start, a peer that could not be reached.
public struct TestSupportError: Error, CustomStringConvertible {
    /// What went wrong, with what the server printed when there is something.
    public let message: String
    public var description: String { message }
    public init(_ message: String) { self.message = message }
}
