import Foundation

/// One mail waiting to go out: written to the store before the request that made it is answered
/// (in the write that stores its link's code, where there is one), delivered by whichever instance
/// claims it first, and deleted once delivered or given up. The message is sealed (AES-256-GCM under
/// a key derived from the server key: ``OutboxSealing``), so the outbox never holds a link or a code
/// in clear.
public struct OutboxMail: Sendable, Hashable {
    /// 32 lower-case hex digits, unique: the row's key, and the left part of the message's
    /// `Message-ID`, so a receiver can drop a repeat.
    public var id: String
    /// The rendered message, sealed (nonce, ciphertext and tag).
    public var sealed: Data
    /// The hash of the link's code in this server's code store (``ActionCodeRecord/hash``): once that
    /// code is consumed, retired or deleted, the mail is not sent; `nil` for a mail whose link is
    /// another's (a front's, Google's), which goes until ``expiresAt``.
    public var codeHash: Data?
    /// When the mail was made.
    public var createdAt: Timestamp
    /// When its link stops working: the mail is not sent after it.
    public var expiresAt: Timestamp
    /// When its next delivery attempt may start.
    public var dueAt: Timestamp
    /// The delivery attempts made so far.
    public var attempts: Int

    /// Makes the value from each of its fields.
    public init(
        id: String, sealed: Data, codeHash: Data?, createdAt: Timestamp, expiresAt: Timestamp, dueAt: Timestamp, attempts: Int = 0
    ) {
        self.id = id
        self.sealed = sealed
        self.codeHash = codeHash
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.dueAt = dueAt
        self.attempts = attempts
    }
}

/// What claiming due mail found.
public struct OutboxClaim: Sendable, Hashable {
    /// The mails now leased to the claimer, oldest due first.
    public var mails: [OutboxMail]
    /// How many due mails were deleted instead, because they can no longer be sent: their link
    /// expired, or their code was consumed, retired or deleted.
    public var dropped: Int

    /// Makes the value from each of its fields.
    public init(mails: [OutboxMail], dropped: Int) {
        self.mails = mails
        self.dropped = dropped
    }
}

/// Where mail waits to go out, shared by every instance on the store. A mail is delivered at least
/// once: a deliverer claims it with a lease, and until the lease ends no other deliverer claims it
/// (on PostgreSQL, `FOR UPDATE SKIP LOCKED`), so two instances do not send one mail twice in the
/// ordinary case; a deliverer that dies mid-send leaves the mail to be claimed again when its lease
/// ends.
public protocol MailOutboxStore: Sendable {
    /// Stores a mail (its own write).
    func enqueue(_ mail: OutboxMail) async throws

    /// In one atomic step: deletes the due mails that can no longer be sent (``OutboxClaim/dropped``),
    /// then leases up to `limit` other mails due at `now` (`dueAt <= now`) that no live lease holds
    /// (none, or one that ended before `now`) to `owner` until `leaseUntil`, and returns them,
    /// oldest due first.
    func claim(now: Timestamp, limit: Int, leaseUntil: Timestamp, owner: String) async throws -> OutboxClaim

    /// Deletes a mail (delivered, or given up) if `owner` still holds its lease; whether it did.
    @discardableResult
    func remove(id: String, owner: String) async throws -> Bool

    /// Ends `owner`'s lease on a mail, counts one more attempt and makes it due again at `dueAt`;
    /// whether `owner` still held it.
    @discardableResult
    func reschedule(id: String, owner: String, dueAt: Timestamp) async throws -> Bool

    /// How many mails wait, and when the oldest of them was made (`nil` when none waits).
    func backlog() async throws -> (count: Int, oldest: Timestamp?)

    /// The owners of the leases the outbox holds, live or ended, each once.
    func leaseHolders() async throws -> [String]

    /// Ends every lease `owner` holds (a process known to be gone), so that its mails can be
    /// claimed at once rather than when the leases end; how many there were.
    @discardableResult
    func releaseLeases(heldBy owner: String) async throws -> Int
}
