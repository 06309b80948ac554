import ActionLinksConfiguration
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Sends the mail waiting in the outbox (docs/ARCHITECTURE.md §13), on every instance: each claims
/// due mail with a lease, renders it with this server's templates and hands it to the backend.
///
/// - Delivered: deleted. A temporary failure (unreachable, 4xx, a timeout): tried again after a
///   backoff (2 s, doubling, at most a minute) until `mail.retryFor` after the mail was made, then
///   given up. A permanent failure (5xx, a message that cannot be written): given up at once.
///   Given up means deleted, counted and logged without the address; the link stays valid, and the
///   person can ask for another.
/// - A mail whose link's code was used or voided, or whose link expired, is dropped at its claim,
///   never sent late.
/// - At least once: a deliverer that dies mid-send leaves its mail leased until ``lease`` is over,
///   then another instance (or this one, restarted) sends it; the `Message-ID` is the same, so a
///   receiver can drop the repeat. The backend's own deadlines end well inside the lease.
/// - A mail this instance writes wakes it at once; mail other instances wrote, and retries, are
///   found by polling every ``pollInterval``.
public final class MailDeliverer: Service, Sendable {
    let mailer: Mailer
    let outbox: any MailOutboxStore
    let transport: MailTransport
    /// Stops the backend (an SMTP client's pool) when the deliverer ends.
    let stopTransport: @Sendable () async -> Void
    let settings: MailSettings
    let metrics: ServerMetrics?
    let clock: any ServiceClock
    let logger: Logger
    /// This process, as the outbox's leases name it: `host/pid/random`.
    let owner: String
    /// Whether only processes of this machine share the store (SQLite): then a lease held by one of
    /// them that no longer runs is taken back at start (``releaseAbandonedLeases()``).
    let storeIsLocal: Bool
    /// What `/readyz` and `/metrics` read: the waiting mails and the age of the oldest, as last seen.
    let backlog = Mutex<(count: Int, oldest: Timestamp?)>((0, nil))

    /// How long a claimed mail is this deliverer's before another may claim it.
    static let lease = Duration.seconds(90)
    /// How often the outbox is read when nothing woke the deliverer.
    static let pollInterval = Duration.seconds(2)
    /// Mails claimed, and sent at once, at most.
    static let batch = 8

    /// A deliverer sending `mailer`'s outbox through `transport` (the configured backend, or a
    /// test's mailbox) until graceful shutdown.
    public init(
        mailer: Mailer, transport: @escaping MailTransport, stopTransport: @escaping @Sendable () async -> Void = {},
        metrics: ServerMetrics?,
        storeIsLocal: Bool, clock: any ServiceClock, logger: Logger
    ) {
        self.storeIsLocal = storeIsLocal
        self.mailer = mailer
        outbox = mailer.outbox
        self.transport = transport
        self.stopTransport = stopTransport
        settings = mailer.settings
        self.metrics = metrics
        self.clock = clock
        self.logger = logger
        owner = Self.hostName().prefix(40) + "/\(getpid())/" + Secrets.hexID().prefix(8)
    }

    /// The deliverer of the configured backend (`mail.backend`).
    public static func configured(
        mailer: Mailer, printsSecrets: Bool, ehloName: String, metrics: ServerMetrics?, storeIsLocal: Bool, clock: any ServiceClock,
        logger: Logger
    ) throws(ActionError) -> MailDeliverer {
        let (transport, stop) = try MailBackends.transport(
            mailer.settings, printsSecrets: printsSecrets, ehloName: ehloName, logger: logger)
        return MailDeliverer(
            mailer: mailer, transport: transport, stopTransport: stop, metrics: metrics, storeIsLocal: storeIsLocal, clock: clock,
            logger: logger)
    }

    /// Opens when the store's schema is up to date (``storeIsReady()``).
    private let ready = WakeSignal()

    /// Lets the deliverer start: the store's schema is up to date. PostgreSQL's is brought up to
    /// date after the services start, and a claim prepared before would stay broken on its
    /// connection (PostgresNIO keeps a failed preparation).
    public func storeIsReady() { ready.signal() }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await self.ready.wait(upTo: .seconds(365 * 86400))
            if self.storeIsLocal { await self.releaseAbandonedLeases() }
            while !Task.isCancelled {
                let claimed = await self.round()
                // A full batch may have more behind it; else wait for a wake-up or the next poll.
                if claimed < Self.batch { await self.mailer.written.wait(upTo: Self.pollInterval) }
            }
        }
        await stopTransport()
    }

    /// This machine's name (`gethostname`, which asks no resolver), without slashes.
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "host" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).replacingOccurrences(
            of: "/", with: "-")
    }

    /// Takes back the leases of this machine's processes that no longer run (killed mid-send), so
    /// that their mail goes now rather than when the leases end. Only for a store no other machine
    /// shares: elsewhere a process ID says nothing (every container's server is PID 1).
    func releaseAbandonedLeases() async {
        guard let holders = try? await outbox.leaseHolders() else { return }
        for holder in holders where Self.isAbandoned(holder, by: owner) {
            if let released = try? await outbox.releaseLeases(heldBy: holder), released > 0 {
                logger.info(
                    "mail of a process that no longer runs is sent again", metadata: ["count": "\(released)", "process": "\(holder)"])
            }
        }
    }

    /// Whether `holder` (`host/pid/random`) is a process of this machine that no longer runs: an
    /// earlier run with this process ID (a container's PID 1 restarted), or a process ID with no
    /// process.
    static func isAbandoned(_ holder: String, by owner: String) -> Bool {
        let theirs = holder.split(separator: "/", omittingEmptySubsequences: false)
        let ours = owner.split(separator: "/", omittingEmptySubsequences: false)
        guard theirs.count == 3, ours.count == 3, theirs[0] == ours[0], holder != owner, let pid = pid_t(theirs[1]), pid > 0 else {
            return false
        }
        if pid == getpid() { return true }
        return kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Claims what is due and delivers it; returns how many mails were claimed.
    func round() async -> Int {
        let now = clock.now
        let claim: OutboxClaim
        do {
            claim = try await outbox.claim(now: now, limit: Self.batch, leaseUntil: now + Self.lease, owner: owner)
            try await readBacklog()
        } catch {
            logger.warning("the mail outbox could not be read", metadata: ["error": "\(error)"])
            return 0
        }
        for _ in 0..<claim.dropped { metrics?.mailSent(.dropped) }
        if claim.dropped > 0 { logger.info("mail dropped: its link was used, voided or expired", metadata: ["count": "\(claim.dropped)"]) }
        await withTaskGroup(of: Void.self) { group in
            for mail in claim.mails { group.addTask { await self.deliver(mail) } }
        }
        // What went (or was given up) is no longer waiting.
        if !claim.mails.isEmpty { try? await readBacklog() }
        return claim.mails.count
    }

    /// Reads the outbox's backlog for `/readyz` and `/metrics`.
    private func readBacklog() async throws {
        let waiting = try await outbox.backlog()
        backlog.withLock { $0 = waiting }
        metrics?.mailBacklog(count: waiting.count, oldestAge: waiting.oldest.map { clock.now - $0 })
    }

    /// One attempt at `mail`, and what follows from it.
    func deliver(_ mail: OutboxMail) async {
        let attempt = mail.attempts + 1
        guard let message = mailer.message(of: mail) else {
            // Sealed under a key this server no longer has: it can never be read again.
            await finish(mail, .rejected, "the mail does not open with this server's key (the form key changed)", attempt: attempt)
            return
        }
        let mode = message.mode.rawValue
        do {
            try await withDeadline(Self.lease / 2) { try await self.transport(message) }
            await finish(mail, .delivered, nil, attempt: attempt, mode: mode)
        } catch {
            let failure = error as? MailDeliveryError
            let reason = failure?.message ?? "\(error)"
            if failure?.permanent == true {
                await finish(mail, .rejected, reason, attempt: attempt, mode: mode)
                return
            }
            let retryEnd = mail.createdAt + .seconds(settings.retryFor)
            let next = clock.now + Self.backoff(attempt: attempt)
            guard next < retryEnd else {
                await finish(mail, .expired, reason, attempt: attempt, mode: mode)
                return
            }
            metrics?.mailSent(.retried)
            logger.warning(
                "mail delivery failed; it is tried again",
                metadata: ["mode": "\(mode)", "attempt": "\(attempt)", "error": "\(reason)", "next": "\(Self.backoff(attempt: attempt))"])
            _ = try? await outbox.reschedule(id: mail.id, owner: owner, dueAt: next)
        }
    }

    /// A mail done with: deleted from the outbox, counted, and, unless delivered, logged without
    /// its address.
    private func finish(
        _ mail: OutboxMail, _ outcome: ServerMetrics.MailOutcome, _ reason: String?, attempt: Int, mode: String = "?"
    ) async {
        _ = try? await outbox.remove(id: mail.id, owner: owner)
        metrics?.mailSent(outcome)
        switch outcome {
        case .delivered: logger.info("mail delivered", metadata: ["mode": "\(mode)", "attempt": "\(attempt)"])
        default:
            logger.error(
                "mail given up; the link stays valid and a new one can be requested",
                metadata: ["mode": "\(mode)", "outcome": "\(outcome.rawValue)", "attempts": "\(attempt)", "error": "\(reason ?? "")"])
        }
    }

    /// The wait before attempt `attempt + 1`: 2 s, doubling, at most a minute (so a backend back
    /// from an outage gets its mail within a minute).
    static func backoff(attempt: Int) -> Duration {
        .seconds(min(60, 1 << min(attempt, 6)))
    }

    /// `body`, cancelled when `limit` passes first.
    private func withDeadline(_ limit: Duration, _ body: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await body()
                return true
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return false
            }
            let finished = try await group.next() ?? false
            group.cancelAll()
            if !finished { throw MailDeliveryError(message: "no answer within \(limit)", permanent: false) }
        }
    }
}
