import Foundation
import Testing

/// The repository's root, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// One case of the link vectors (`Tests/Vectors/links.jsonl`), read as it is.
struct LinkVector: Sendable, CustomTestStringConvertible {
    struct Expectation: Decodable, Equatable, Sendable {
        let mode: String
        let oobCode: String
        let apiKey: String?
        let continueUrl: String?
        let lang: String?
        let tenantId: String?
    }

    let about: String
    let input: String
    let expect: Expectation?

    var testDescription: String { about }

    /// The vectors file: `ACTIONLINKS_VECTORS` if set, else the repository's own copy,
    /// `Tests/Vectors/links.jsonl` (kept byte-identical to `../shared/vectors` by `SharedCopyTests`).
    static let file: URL = {
        if let path = ProcessInfo.processInfo.environment["ACTIONLINKS_VECTORS"] { return URL(fileURLWithPath: path) }
        return repositoryRoot.appendingPathComponent("Tests/Vectors/links.jsonl")
    }()

    static func load() throws -> [LinkVector] {
        struct Line: Decodable {
            let about: String
            let input: String
            let expect: Expectation?
        }
        let text = try String(contentsOf: file, encoding: .utf8)
        return try text.split(separator: "\n").filter { !$0.allSatisfy(\.isWhitespace) }.map { line in
            let decoded = try JSONDecoder().decode(Line.self, from: Data(line.utf8))
            return LinkVector(about: decoded.about, input: decoded.input, expect: decoded.expect)
        }
    }
}

/// A small, seeded generator so that property tests are reproducible (print the seed on failure).
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
