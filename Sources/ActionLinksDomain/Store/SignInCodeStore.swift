import Foundation

/// The live sign-in code of one address (``SignInCodes``), as the store keeps it: neither the code
/// nor the link is stored, only a MAC of (tenant, address, code) and the link sealed under a key
/// derived from a server key and the code.
public struct SignInCodeRecord: Sendable, Hashable {
    /// The tenant ("" for the project itself).
    public var tenantID: String
    /// The canonical address the link was sent to.
    public var email: String
    /// HMAC-SHA-256 of (tenant, address, code) under the server's sign-in code MAC key.
    public var mac: Data
    /// The link, sealed with AES-256-GCM (nonce, ciphertext and tag).
    public var sealedLink: Data
    /// When the code was issued.
    public var createdAt: Timestamp
    /// When the code stops being accepted (never later than its link).
    public var expiresAt: Timestamp
}

/// A rate limit counted with a try: the key of its count (as ``CodeStore/countEvents(keys:windowStart:)``
/// keeps them) and the most the count may reach in its window.
public struct EventLimit: Sendable, Hashable {
    /// The count's key.
    public var key: String
    /// The highest count that is still within the limit.
    public var maximum: Int
}

/// What counting one try of a sign-in code found.
public enum SignInCodeTry: Sendable, Hashable {
    /// A rate limit's count went past its maximum: the try was not counted against the code.
    case limited
    /// The try was counted against the address's code; `mac` is the code's MAC, or `nil` when the
    /// address has no code that can still be tried (none, expired, used, or out of tries).
    case counted(mac: Data?)
}

/// Where sign-in codes live: at most one per (tenant, address). Implementations must make each
/// method one atomic step, so that, across any number of server processes sharing the store, a
/// code is tried at most its number of times and used at most once.
public protocol SignInCodeStore: Sendable {
    /// Stores the code of a new sign-in link, replacing the address's previous code (its tries
    /// start again from none).
    func issue(_ record: SignInCodeRecord) async throws

    /// Counts one event under each limit's key in the window starting at `windowStart` (as
    /// ``CodeStore/countEvents(keys:windowStart:)`` counts them) and, when every count is within its
    /// maximum, one try of the address's code, if it is live (unused, unexpired at `now`, tried fewer
    /// than `maximumTries` times): all in one atomic step, before the code is checked.
    func tryCode(tenantID: String, email: String, now: Timestamp, maximumTries: Int, limits: [EventLimit], windowStart: Timestamp)
        async throws -> SignInCodeTry

    /// Marks the address's code used if it is still the one whose MAC is `mac`, unused and
    /// unexpired at `now`, and returns its sealed link; `nil` when another call used it first (or it
    /// was replaced or expired meanwhile). One atomic statement: of concurrent calls, one wins.
    func use(tenantID: String, email: String, mac: Data, now: Timestamp) async throws -> Data?

    /// Deletes the codes that expired or were used before `cutoff`; returns how many.
    @discardableResult
    func purge(before cutoff: Timestamp) async throws -> Int
}
