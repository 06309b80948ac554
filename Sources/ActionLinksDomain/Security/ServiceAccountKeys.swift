import Foundation
import Synchronization

/// The public keys of this server's service accounts (`keys/service-accounts/`), shared by what
/// checks their signatures: custom tokens, the token endpoint's JWT-bearer assertions and the
/// access tokens it granted.
///
/// The folder is the truth while the server runs, both ways:
/// - A key made while the server runs (`actionlinks service-account`) works at once: a key ID not
///   seen yet has the folder read again when the folder changed since the last read (a new file
///   changes its modification time), and otherwise at most once a second (a key file still being
///   written when it was read). A token naming a made-up key ID costs one `stat`, not a read of
///   every file.
/// - A key removed (`rm`, or `actionlinks keys revoke`) stops working within two seconds: every
///   lookup of a known key `stat`s the folder and reads it again when it changed (removing a file
///   changes it) or when the last read is over two seconds old (a file system whose modification
///   times are too coarse to show a change made in the same second as the read).
/// - A key revoked (`revoked/<key id>` exists) is never taken again, even if its file comes back
///   (a backup restored, a deployment tool that copies the folder).
public final class ServiceAccountKeys: Sendable {
    /// The folder under `directory` that lists revoked key IDs, one empty file each.
    public static let revokedFolder = "revoked"

    let directory: String
    private let state = Mutex<(keys: [String: ServiceAccountKey], readAt: ContinuousClock.Instant?, folderChanged: Date?)>(([:], nil, nil))

    init(directory: String) {
        self.directory = directory
    }

    /// The key with this ID, if the folder has it and it was not revoked.
    func key(_ id: String) -> ServiceAccountKey? {
        let now = ContinuousClock.now
        let changed = (try? FileManager.default.attributesOfItem(atPath: directory))?[.modificationDate] as? Date
        let (known, readAt, folderChanged) = state.withLock { ($0.keys[id], $0.readAt, $0.folderChanged) }
        if let readAt, changed == folderChanged {
            if known != nil, now - readAt < .seconds(2) { return known }
            if known == nil, now - readAt < .seconds(1) { return nil }
        }
        let loaded = Self.readAll(directory)
        state.withLock { $0 = (loaded, now, changed) }
        return loaded[id]
    }

    /// Every key in `directory` but the revoked ones, by ID.
    static func readAll(_ directory: String) -> [String: ServiceAccountKey] {
        let revoked = Set(
            (try? FileManager.default.contentsOfDirectory(atPath: (directory as NSString).appendingPathComponent(revokedFolder))) ?? [])
        return ServiceAccountKey.readAll(directory).filter { !revoked.contains($0.key) }
    }

    /// What `actionlinks keys revoke` did.
    public struct Revocation: Sendable {
        /// The key files moved into `revoked/` (none when the key was revoked before).
        public var movedFiles: [String]
        /// Whether the key was revoked already.
        public var wasRevoked: Bool
    }

    /// Revokes the key `id` in the folder `directory`: records it in `revoked/` (so it is never taken
    /// again), then moves every file that holds it there too. Running servers refuse it, and the
    /// access tokens granted for it, within two seconds. An ID that no file holds and that was
    /// never revoked is an error (a typing mistake must not look like a revocation).
    public static func revoke(_ id: String, in directory: String) throws -> Revocation {
        guard !id.isEmpty, id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }), id != ".", id != ".." else {
            throw ServerKeysError(path: directory, message: "'\(id)' is not a key ID (the private_key_id of a service-account file)")
        }
        let revoked = (directory as NSString).appendingPathComponent(revokedFolder)
        let marker = (revoked as NSString).appendingPathComponent(id)
        let wasRevoked = FileManager.default.fileExists(atPath: marker)
        let holders = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { name in
            guard name.hasSuffix(".json"),
                let data = FileManager.default.contents(atPath: (directory as NSString).appendingPathComponent(name)),
                let key = try? JSONDecoder().decode(ServiceAccountKey.self, from: data)
            else { return false }
            return key.keyID == id
        }
        guard wasRevoked || !holders.isEmpty else {
            let known = ServiceAccountKey.readAll(directory).keys.sorted()
            throw ServerKeysError(
                path: directory,
                message: "no service-account key '\(id)' here; the keys are: \(known.isEmpty ? "none" : known.joined(separator: ", "))")
        }
        try PrivateFiles.makeDirectory(revoked)
        if !wasRevoked { _ = try PrivateFiles.createFile(marker) }
        var moved: [String] = []
        for name in holders {
            let target = (revoked as NSString).appendingPathComponent(name)
            try? FileManager.default.removeItem(atPath: target)
            try FileManager.default.moveItem(atPath: (directory as NSString).appendingPathComponent(name), toPath: target)
            moved.append(target)
        }
        return Revocation(movedFiles: moved, wasRevoked: wasRevoked)
    }
}
