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
    /// The hash of the link's action code in this server's code store (``ActionCodeRecord/hash``):
    /// the sign-in code dies in the write that consumes, retires or deletes that code. `nil` for a
    /// link whose code is another's (a front's: Google's), which the exchange checks with its owner.
    public var linkHash: Data?
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

    /// The start of the key of a count whose window is longer than a day (the sign-in codes' 30
    /// days): the purge keeps those counts until their window is over, the others a week.
    public static let longWindowPrefix = "long:"
}

/// Rate limits counted together, in one window: each key counts one more event in the window that
/// starts at `windowStart`, and a count over its limit's maximum refuses what is counted. Stages
/// are counted in order, and the first one over a limit ends the counting: what it and the stages
/// before it counted stays counted, the stages after it count nothing (so a request refused for its
/// client's IP spends nothing of the address's budget).
public struct EventLimitStage: Sendable, Hashable {
    /// The limits counted.
    public var limits: [EventLimit]
    /// The start of the window they are counted in.
    public var windowStart: Timestamp

    /// Makes the value from each of its fields.
    public init(limits: [EventLimit], windowStart: Timestamp) {
        self.limits = limits
        self.windowStart = windowStart
    }
}

/// What counting one try of a sign-in code found.
public enum SignInCodeTry: Sendable, Hashable {
    /// The counts of `stage` (an index into the stages given) went past a maximum: the try was not
    /// counted against the code, and the later stages counted nothing.
    case limited(stage: Int)
    /// The try was counted against the address's code: `mac` is the code's MAC and `sealedLink` its
    /// sealed link, or both `nil` when the address has no code that can still be tried (none,
    /// expired, used, dead with its link, or out of tries).
    case counted(mac: Data?, sealedLink: Data?)
}

/// Where sign-in codes live: at most one per (tenant, address). Implementations must make each
/// method one atomic step, so that, across any number of server processes sharing the store, a
/// code is tried at most its number of times and used at most once.
public protocol SignInCodeStore: Sendable {
    /// Stores the code of a new sign-in link, replacing the address's previous code (its tries
    /// start again from none).
    func issue(_ record: SignInCodeRecord) async throws

    /// Counts the stages in order (each key one event in its stage's window, as
    /// ``CodeStore/countEvents(keys:windowStart:)`` counts them; the first stage over a limit ends
    /// the counting) and, when every count is within its maximum, one try of the address's code, if
    /// it is live (unused, unexpired at `now`, tried fewer than `maximumTries` times): all in one
    /// atomic step, before the code is checked.
    func tryCode(tenantID: String, email: String, now: Timestamp, maximumTries: Int, stages: [EventLimitStage]) async throws
        -> SignInCodeTry

    /// Marks the address's code used if it is still the one whose MAC is `mac`, unused and
    /// unexpired at `now`, and returns its sealed link; `nil` when another call used it first, or it
    /// was replaced, expired or died with its link meanwhile. The use is one atomic step: of
    /// concurrent calls, one wins. When it used the code, one event under each key of `givingBack`
    /// is then taken back (never below zero: a right code is no failed guess); a store may do that
    /// after the use, so a failure there leaves the guess counted, never a code used twice.
    func use(tenantID: String, email: String, mac: Data, now: Timestamp, givingBack: [EventLimitStage]) async throws -> Data?

    /// Deletes the codes that expired or were used before `cutoff`; returns how many.
    @discardableResult
    func purge(before cutoff: Timestamp) async throws -> Int
}
