import ActionLinks
import Foundation

/// One issued action code, as the store keeps it: the code itself is never stored, only its
/// HMAC-SHA-256 under the server's code key.
public struct ActionCodeRecord: Sendable, Hashable {
    /// HMAC-SHA-256 of the code under the current code key.
    public var hash: Data
    /// What the code does.
    public var mode: ActionCodeLink.Mode
    /// The tenant ("" for the project itself).
    public var tenantID: String
    /// The account the code acts on; `nil` for a sign-in link to an address with no account yet.
    public var accountID: String?
    /// The canonical address the link was sent to.
    public var email: String
    /// The new address, for `verifyAndChangeEmail`; the address to restore away from, for `recoverEmail`.
    public var newEmail: String?
    /// The allow-listed, re-serialised continue URL.
    public var continueURL: String?
    /// The language the link was issued in.
    public var languageCode: String?
    /// The app settings given when the link was issued (iOS bundle ID, Android package, ...), as JSON.
    public var appSettings: String?
    /// When the code was issued.
    public var createdAt: Timestamp
    /// When the code stops being accepted.
    public var expiresAt: Timestamp
    /// When the code was consumed, if it was.
    public var consumedAt: Timestamp?
    /// Who consumed it: `page` or `api`, and the client address when known.
    public var consumedBy: String?

    /// Creates a record.
    public init(
        hash: Data, mode: ActionCodeLink.Mode, tenantID: String = "", accountID: String?, email: String, newEmail: String? = nil,
        continueURL: String? = nil, languageCode: String? = nil, appSettings: String? = nil, createdAt: Timestamp,
        expiresAt: Timestamp, consumedAt: Timestamp? = nil, consumedBy: String? = nil
    ) {
        self.hash = hash
        self.mode = mode
        self.tenantID = tenantID
        self.accountID = accountID
        self.email = email
        self.newEmail = newEmail
        self.continueURL = continueURL
        self.languageCode = languageCode
        self.appSettings = appSettings
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.consumedAt = consumedAt
        self.consumedBy = consumedBy
    }
}

/// The app settings a code was issued with, stored with it as JSON (`ActionCodeRecord.appSettings`).
/// Flags are stored as the string `"true"`, as they always have been.
public struct AppSettings: Codable, Sendable, Hashable {
    /// The iOS app's bundle ID.
    public var iOSBundleId: String?
    /// The Android app's package name.
    public var androidPackageName: String?
    /// The lowest Android version code that can handle the link (digits only).
    public var androidMinimumVersion: String?
    /// `"true"` when the Android fallback should offer to install the app.
    public var androidInstallApp: String?
    /// `"true"` when the app completes the action itself.
    public var canHandleCodeInApp: String?

    /// Whether nothing is set.
    public var isEmpty: Bool { self == AppSettings() }

    /// The stored JSON, or `nil` when nothing is set.
    var json: String? {
        guard !isEmpty else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The settings stored as `json` (none when it is missing or unreadable).
    package init(json: String?) {
        self = json.flatMap { try? JSONDecoder().decode(AppSettings.self, from: Data($0.utf8)) } ?? AppSettings()
    }

    /// No settings.
    public init() {}
}

extension ActionCodeRecord {
    /// The `recoverEmail` code that a consumed `verifyAndChangeEmail` code (this one) leaves for the
    /// old address: it restores the address this code moved away from.
    func recovery(hash: Data, now: Timestamp, expiresAt: Timestamp) -> ActionCodeRecord {
        ActionCodeRecord(
            hash: hash, mode: .recoverEmail, tenantID: tenantID, accountID: accountID, email: email, newEmail: newEmail,
            languageCode: languageCode, createdAt: now, expiresAt: expiresAt)
    }
}

/// What the store knows about a code that was presented.
public enum CodeLookup: Sendable, Hashable {
    /// The code can still be used.
    case live(ActionCodeRecord)
    /// The code was issued but its lifetime is over.
    case expired(ActionCodeRecord)
    /// The code is unknown, was used, or was retired by a newer code or an account change.
    case invalid
}

/// What consuming a code did.
public enum CodeConsumption: Sendable, Hashable {
    /// This call consumed the code; no other call ever will.
    case consumed(ActionCodeRecord)
    /// The code was issued but its lifetime is over (`EXPIRED_OOB_CODE`).
    case expired
    /// The code is unknown, already used or retired, or of another mode (`INVALID_OOB_CODE`).
    case invalid
}

/// Where action codes live. Implementations must make ``consume(hashes:modes:now:by:)`` a single
/// atomic step: under any concurrency, across any number of server processes sharing the store, a
/// code is consumed at most once.
public protocol CodeStore: Sendable {
    /// Stores a new code and, in the same transaction, retires every live code of the same tenant,
    /// address and mode, so that only the newest link works.
    func issue(_ record: ActionCodeRecord) async throws

    /// Looks a code up without consuming it. `hashes` are the code's HMACs under each code key that
    /// is still accepted (the newest first), so a key rotation does not void links in flight.
    func lookup(hashes: [Data], now: Timestamp) async throws -> CodeLookup

    /// Consumes a live code of one of `modes` in one atomic statement.
    func consume(hashes: [Data], modes: Set<ActionCodeLink.Mode>, now: Timestamp, by consumer: String) async throws -> CodeConsumption

    /// Retires every outstanding code for an address; returns how many.
    @discardableResult
    func retireCodes(tenantID: String, email: String, now: Timestamp) async throws -> Int

    /// Counts one more event under each key in the window starting at `windowStart`, and returns the
    /// counts after counting (for rate limits shared by every instance on the store). Each count is
    /// one atomic statement, so concurrent callers get distinct counts: a caller that counts first
    /// and proceeds only while its count is within the limit can never pass the limit with others.
    func countEvents(keys: [String], windowStart: Timestamp) async throws -> [Int]

    /// Takes back one event under each key in the window starting at `windowStart` (never below
    /// zero): an attempt counted ahead that turned out not to count (a sign-in that succeeded).
    func uncountEvents(keys: [String], windowStart: Timestamp) async throws

    /// Deletes codes that expired or were consumed before `cutoff`, the counts of windows that
    /// started before `countCutoff`, and those of keys that start with
    /// ``EventLimit/longWindowPrefix`` (windows longer than a day) only once their window started
    /// before `longCountCutoff`; returns how many codes.
    @discardableResult
    func purge(before cutoff: Timestamp, countsBefore countCutoff: Timestamp, longCountsBefore longCountCutoff: Timestamp) async throws
        -> Int
}
