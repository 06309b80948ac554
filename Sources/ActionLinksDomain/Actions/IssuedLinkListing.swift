import ActionLinks
import Synchronization

/// The links this process issued, kept (in memory, the last 1000) only on a development server
/// that lists them as Firebase's Auth emulator does (`GET /emulator/v1/projects/<p>/oobCodes`).
public final class IssuedLinkListing: Sendable {
    /// One issued link.
    public struct Entry: Sendable {
        /// The tenant ("" for the project).
        public var tenantID: String
        /// The account's address (for an email change, the current one).
        public var email: String
        /// For an email change, the new address.
        public var newEmail: String?
        /// Its mode.
        public var mode: ActionCodeLink.Mode
        /// The code.
        public var code: String
        /// The link.
        public var link: String
    }

    private let entries = Mutex<[Entry]>([])
    static let capacity = 1000

    func record(_ entry: Entry) {
        entries.withLock { list in
            list.append(entry)
            if list.count > Self.capacity { list.removeFirst(list.count - Self.capacity) }
        }
    }

    /// Every entry of a tenant, oldest first.
    public func all(tenantID: String) -> [Entry] { entries.withLock { $0.filter { $0.tenantID == tenantID } } }

    /// Forgets a tenant's entries; returns them.
    @discardableResult
    package func removeAll(tenantID: String) -> [Entry] {
        entries.withLock { list in
            let removed = list.filter { $0.tenantID == tenantID }
            list.removeAll { $0.tenantID == tenantID }
            return removed
        }
    }
}
