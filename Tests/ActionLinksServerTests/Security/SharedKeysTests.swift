import ActionLinksConfiguration
import ActionLinksTestSupport
import Crypto
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksServer

/// The keys instances share (docs/DEPLOYING.md, "Keys every instance shares"): one key set made by
/// `actionlinks keys init`, read from a platform's secret mount, and no keys invented on a shared store.
@Suite("Shared keys and mounted secrets", .timeLimit(.minutes(5)))
struct SharedKeysTests {
    static func bytes(_ key: SymmetricKey) -> Data { key.withUnsafeBytes { Data($0) } }

    @Test("a key set reads back what it wrote; a rotation signs with the new key and keeps the old one while its tokens live")
    func roundTrip() throws {
        let now = Timestamp(milliseconds: 1_800_000_000_000)
        let set = try KeySet.make(now: now)
        let read = try KeySet(json: try set.json(), source: "test")
        #expect(read.codeKeys.map(Self.bytes) == set.codeKeys.map(Self.bytes) && Self.bytes(read.formKey) == Self.bytes(set.formKey))
        #expect(read.idTokenKeys == set.idTokenKeys && read.idTokenKeys[0].createdAt == now.seconds)
        let rotated = try set.rotated(now: now + .seconds(86_400))
        #expect(rotated.idTokenKeys.count == 2 && rotated.idTokenKeys[1] == set.idTokenKeys[0])
        #expect(rotated.idTokenKeys[0].createdAt == now.seconds + 86_400 && Self.bytes(rotated.formKey) == Self.bytes(set.formKey))
        // Fifteen days after it was replaced, the old key signed nothing that still lives: it goes.
        let again = try rotated.rotated(now: now + .seconds(17 * 86_400))
        #expect(again.idTokenKeys.map(\.createdAt) == [now.seconds + 17 * 86_400, now.seconds + 86_400])
    }

    @Test(
        "a key set that cannot be used says where and what",
        arguments: [
            (#"{"codeKeys":[]}"#, "expected \"format\": \"actionlinks-keys/1\""),
            (#"{"format":"actionlinks-keys/1","codeKeys":[],"formKey":"x"}"#, "codeKeys: expected at least one key"),
            (#"{"format":"actionlinks-keys/1","codeKeys":["c2hvcnQ="],"formKey":"x"}"#, "codeKeys[0]: expected at least 32 bytes"),
            ("not json", "expected the JSON that `actionlinks keys init` prints"),
        ])
    func bad(json: String, message: String) {
        #expect {
            try KeySet(json: Data(json.utf8), source: "/secrets/keys.json")
        } throws: { error in
            "\(error)".hasPrefix("/secrets/keys.json: ") && "\(error)".contains(message)
        }
    }

    @Test("a bad ID-token key is named by its place")
    func badPEM() throws {
        var text = String(decoding: try KeySet.make(now: .now).json(), as: UTF8.self)
        let start = try #require(text.range(of: "-----BEGIN"))
        text.replaceSubrange(start.lowerBound..<text.index(start.lowerBound, offsetBy: 20), with: "not a key at all....")
        #expect {
            try KeySet(json: Data(text.utf8), source: "k")
        } throws: { error in
            "\(error)".contains("idTokenKeys[0].pem: expected a PEM RSA private key of 2048 bits or more")
        }
    }

    /// Settings with `store` and a new, empty data directory.
    static func settings(store: String, keys: String? = nil) throws -> ServiceSettings {
        var environment = ["ACTIONLINKS_STORE": store, "ACTIONLINKS_DATA_DIRECTORY": TestProject.temporaryDirectory("keys-dir").path]
        if let keys { environment["ACTIONLINKS_KEYS_JSON"] = keys }
        return try ActionLinksConfiguration.load(file: Repository.configFile, environment: environment).service
    }

    @Test(
        "on a shared store a server never invents keys: without a key set or the data directory's keys it stops, saying how to make and mount them"
    )
    func sharedStoreNeedsKeys() async throws {
        let postgres = "postgres://a:b@127.0.0.1:1/db"
        let missing = try Self.settings(store: postgres)
        #expect {
            try LinkDomainServer.keys(missing)
        } throws: { error in
            let text = "\(error)"
            return text.contains("actionlinks keys init --output keys.json") && text.contains("gcloud secrets create")
                && text.contains("kubectl create secret generic") && text.contains("ACTIONLINKS_KEYS_FILE")
        }
        #expect(!FileManager.default.fileExists(atPath: missing.dataDirectory + "/keys"), "nothing was made")
        // A key set works on a shared store, and its keys are the set's.
        let set = try KeySet.make(now: .now)
        let (keys, origin) = try LinkDomainServer.keys(
            try Self.settings(store: postgres, keys: String(decoding: try set.json(), as: UTF8.self)))
        let inline = String(decoding: try set.json(), as: UTF8.self)
        #expect(Self.bytes(keys.formKey) == Self.bytes(set.formKey) && origin == .keySet(.inline(inline)))
        // The keys a data directory has already are read, never added to.
        let sqlite = try Self.settings(store: "sqlite:/tmp/unused.sqlite")
        let made = try LinkDomainServer.keys(sqlite).0
        try await SigningKeys(directory: sqlite.dataDirectory + "/keys/id-tokens").refresh(now: .now)
        var shared = sqlite
        shared.store = missing.store
        let (existing, existingOrigin) = try LinkDomainServer.keys(shared)
        #expect(existing.sameKeys(as: made) && existingOrigin == .directory(sqlite.dataDirectory + "/keys/id-tokens", makes: false))
    }

    @Test(
        "`actionlinks keys init` prints a set the server reads, writes one to a new 0600 file only, and packs a data directory's keys so nothing in flight breaks"
    )
    func initCommand() async throws {
        let printed = try await Command.run(["keys", "init"])
        #expect(printed.status == 0, "\(printed.stderr)")
        let set = try KeySet(json: Data(printed.stdout.utf8), source: "stdout")
        #expect(set.idTokenKeys.count == 1 && set.codeKeys.count == 1)
        let folder = TestProject.temporaryDirectory("keys-init")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("keys.json").path
        #expect(try await Command.run(["keys", "init", "--output", file]).status == 0)
        #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600)
        let again = try await Command.run(["keys", "init", "--output", file])
        #expect(again.status != 0 && again.stderr.contains("exists"), "\(again.stderr)")
        // A data directory's keys, packed.
        let data = folder.appendingPathComponent("data").path
        let keys = try ServerKeys(directory: data)
        try await SigningKeys(directory: data + "/keys/id-tokens").refresh(now: .now)
        let packed = try await Command.run(["keys", "init", "--from-data-directory", data])
        let read = try KeySet(json: Data(packed.stdout.utf8), source: "stdout")
        let files = try SigningKeys.files(in: data + "/keys/id-tokens")
        #expect(ServerKeys(keySet: read).sameKeys(as: keys) && read.idTokenKeys == files)
        // A rotation of the file prints the next version.
        let rotated = try await Command.run(["keys", "rotate", "--key-set", file])
        let next = try KeySet(json: Data(rotated.stdout.utf8), source: "stdout")
        let before = try KeySetSource.file(file).read().idTokenKeys[0]
        #expect(next.idTokenKeys.count == 2 && next.idTokenKeys[1] == before, "\(rotated.stderr)")
    }

    @Test(
        "a secret on a writable disk must be the server's alone; one others may write is refused even on a read-only mount; a platform's read-only mount readable by all (0644 through ..data links) is taken"
    )
    func secretModes() async throws {
        let folder = TestProject.temporaryDirectory("secret-modes")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = try KeySet.make(now: .now).json()
        for (mode, accepted) in [(0o600, true), (0o400, true), (0o640, false), (0o644, false), (0o620, false)] {
            let file = folder.appendingPathComponent("keys-\(String(mode, radix: 8)).json").path
            FileManager.default.createFile(atPath: file, contents: json, attributes: [.posixPermissions: mode])
            let outcome = Result { try KeySetSource.file(file).read() }
            let read = (try? outcome.get()) != nil
            #expect(read == accepted, "mode \(String(mode, radix: 8)): \(outcome)")
            if case .failure(let error) = outcome { #expect("\(error)".contains("chmod"), "\(error)") }
        }
        let mounted = try await MountedSecret(name: "keys.json", contents: json)
        defer { Task { await mounted.remove() } }
        #expect(PrivateFiles.isReadOnlyMount(mounted.path))
        #expect(try KeySetSource.file(mounted.path).read().idTokenKeys.count == 1, "0644 on a read-only mount")
        let writable = try await MountedSecret(name: "keys.json", contents: json)
        defer { Task { await writable.remove() } }
        try writable.update(json)
        // The kubelet never makes a secret others can write; a mode that lets them is refused anyway.
        let target = try FileManager.default.destinationOfSymbolicLink(atPath: writable.source.appendingPathComponent("..data").path)
        chmod(writable.source.appendingPathComponent(target).appendingPathComponent("keys.json").path, 0o666)
        #expect(throws: (any Error).self) { try KeySetSource.file(writable.path).read() }
    }
}
