import Foundation
import Synchronization

/// The public keys of this server's service accounts (`keys/service-accounts/`), shared by what
/// checks their signatures: custom tokens and the token endpoint's JWT-bearer assertions.
///
/// A key made while the server runs (`actionlinks service-account`) works at once: a key ID not
/// seen yet has the folder read again when the folder changed since the last read (a new file
/// changes its modification time), and otherwise at most once a second (a key file still being
/// written when it was read). A token naming a made-up key ID costs one `stat`, not a read of
/// every file.
final class ServiceAccountKeys: Sendable {
    let directory: String
    private let state = Mutex<(keys: [String: ServiceAccountKey], readAt: ContinuousClock.Instant?, folderChanged: Date?)>(([:], nil, nil))

    init(directory: String) {
        self.directory = directory
    }

    /// The key with this ID, if the folder has it.
    func key(_ id: String) -> ServiceAccountKey? {
        let now = ContinuousClock.now
        let (known, readAt, folderChanged) = state.withLock { ($0.keys[id], $0.readAt, $0.folderChanged) }
        if let known { return known }
        let changed = (try? FileManager.default.attributesOfItem(atPath: directory))?[.modificationDate] as? Date
        if let readAt, now - readAt < .seconds(1), changed == folderChanged { return nil }
        let loaded = ServiceAccountKey.readAll(directory)
        state.withLock { $0 = (loaded, now, changed) }
        return loaded[id]
    }
}
