import ActionLinksTestSupport
import Foundation
import Testing

/// What `serve` leaves in a data directory it starts on: folders 0700, files 0600.
@Suite("Data directory permissions", .timeLimit(.minutes(5)))
struct DataDirectoryTests {
    /// Every file and folder under `root` (and `root`) with its permission bits.
    static func modes(under root: URL) throws -> [String: Int] {
        var modes: [String: Int] = [:]
        func add(_ path: String) throws {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            modes[path] = (attributes[.posixPermissions] as? Int ?? -1) & 0o777
        }
        try add(root.path)
        for relative in try FileManager.default.subpathsOfDirectory(atPath: root.path) {
            try add(root.appendingPathComponent(relative).path)
        }
        return modes
    }

    @Test(
        "an empty data directory gets 0700 folders and 0600 files (database, -wal, -shm, keys); a key opened to others stops the next start"
    )
    func permissions() async throws {
        let data = TestProject.temporaryDirectory("actionlinks-permissions")
        defer { try? FileManager.default.removeItem(at: data) }
        try await TestApp.router(dataDirectory: data) { app in
            try await app.createAccount(email: "perm@example.com", password: "a-long-password")
            let modes = try Self.modes(under: app.dataDirectory)
            let names = Set(modes.keys.map { ($0 as NSString).lastPathComponent })
            for expected in [
                "actionlinks.sqlite", "actionlinks.sqlite-wal", "actionlinks.sqlite-shm", "1.key", "forms.key", "keys", "codes",
                "id-tokens",
            ] {
                #expect(names.contains(expected), "no \(expected) in \(modes.keys.sorted())")
            }
            // The ID-token signing key, named by when it was made.
            #expect(modes.keys.contains { $0.contains("/keys/id-tokens/") && $0.hasSuffix(".pem") }, "\(modes.keys.sorted())")
            for (path, mode) in modes.sorted(by: { $0.key < $1.key }) {
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
                #expect(mode == (isDirectory.boolValue ? 0o700 : 0o600), "\(path) has mode \(String(mode, radix: 8))")
            }
        }

        let formKey = data.appendingPathComponent("keys/forms.key").path
        #expect(chmod(formKey, 0o644) == 0)
        let refused = await #expect(throws: (any Error).self, "the server started with a key file readable by others") {
            try await TestApp.router(dataDirectory: data) { _ in }
        }
        let message = refused.map { "\($0)" } ?? ""
        #expect(message.contains("\(formKey): the file is open to other users (mode 644)"), "\(message)")
        #expect(message.contains("run `chmod 600 \(formKey)`"), "\(message)")
        #expect(chmod(formKey, 0o600) == 0)
        try await TestApp.router(dataDirectory: data) { restarted in
            let account = try await restarted.lookup(email: "perm@example.com")
            #expect(account != nil)
        }
    }
}
