import Foundation
import Synchronization

/// The public keys of this server's service accounts (`keys/service-accounts/`), shared by what
/// checks their signatures: custom tokens and the token endpoint's JWT-bearer assertions.
///
/// A key made while the server runs (`actionlinks service-account`) works at once: a key ID not
/// seen yet has the folder read again, but at most once a second, so tokens naming made-up key IDs
/// cannot make the server read its folder on every request.
final class ServiceAccountKeys: Sendable {
    let directory: String
    private let state = Mutex<(keys: [String: ServiceAccountKey], readAt: ContinuousClock.Instant?)>(([:], nil))

    init(directory: String) {
        self.directory = directory
    }

    /// The key with this ID, if the folder has it.
    func key(_ id: String) -> ServiceAccountKey? {
        let now = ContinuousClock.now
        let (known, readAt) = state.withLock { ($0.keys[id], $0.readAt) }
        if let known { return known }
        if let readAt, now - readAt < .seconds(1) { return nil }
        let loaded = ServiceAccountKey.readAll(directory)
        state.withLock { $0 = (loaded, now) }
        return loaded[id]
    }
}
