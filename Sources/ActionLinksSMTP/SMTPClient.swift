import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// Sends messages through one SMTP server over a small pool of connections.
///
/// A connection is opened when a message needs one and none is idle, kept for the next message (which
/// starts with RSET) while it is idle for less than `maximumIdleTime`, and closed after any failure.
/// At most `maximumConnections` are open at once; further sends wait for one to be free. Call
/// ``shutdown()`` when done: it QUITs the idle connections.
///
/// ```swift
/// let client = try SMTPClient(server: SMTPServer(host: "smtp.example.com", credentials: .init(username: "u", password: "p")))
/// let mail = try MailComposer.compose(OutgoingMail(from: from, to: to, subject: "Sign in", text: text, html: html))
/// try await client.send(SMTPEnvelope(sender: from.address, recipients: [to.address], message: mail.bytes))
/// await client.shutdown()
/// ```
public final class SMTPClient: Sendable {
    /// The server messages go through.
    public let server: SMTPServer
    /// The most connections open at once.
    public let maximumConnections: Int
    /// How long an idle connection is kept for the next message before it is closed.
    public let maximumIdleTime: Duration

    private let group: any EventLoopGroup
    private let tls: NIOSSLContext?
    private let logger: Logger
    private let pool = Mutex(Pool())

    private struct Pool {
        var idle: [(connection: SMTPConnection, since: ContinuousClock.Instant)] = []
        /// Connections handed to a send, or being opened for one: with `idle`, never more than the maximum.
        var leased = 0
        var waiters: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
        /// Waiters whose task was cancelled before they were queued.
        var cancelled: Set<Int> = []
        var nextWaiterID = 0
        var isShutDown = false
    }

    /// Creates a client; nothing connects until the first ``send(_:)``. Throws an
    /// ``SMTPError/Code/invalidConfiguration`` error for a configuration that cannot work (an
    /// unreadable CA file, credentials that would go out in clear).
    public init(
        server: SMTPServer, maximumConnections: Int = 2, maximumIdleTime: Duration = .seconds(30),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "ActionLinksSMTP", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(SMTPError) {
        try server.validate()
        guard maximumConnections >= 1 else {
            throw SMTPError(code: .invalidConfiguration, message: "maximumConnections is \(maximumConnections): give 1 or more")
        }
        self.server = server
        self.maximumConnections = maximumConnections
        self.maximumIdleTime = maximumIdleTime
        self.group = eventLoopGroup
        self.logger = logger
        self.tls = server.security == .none ? nil : try Self.makeTLSContext(trust: server.trust)
    }

    /// Sends one message: a permanent ``SMTPError`` means it will never go through as it is, a
    /// temporary one that a later try may succeed. Throws `CancellationError` when cancelled while
    /// waiting for a connection.
    public func send(_ envelope: SMTPEnvelope) async throws {
        try envelope.validate()
        let payload = try SMTPData.payload(of: envelope.message)
        let connection = try await lease()
        do {
            try await withTaskCancellationHandler {
                try await connection.send(from: envelope.sender, to: envelope.recipients, payload: payload)
            } onCancel: {
                connection.close()
            }
        } catch {
            connection.close()
            release(nil)
            throw error
        }
        release(connection)
    }

    /// Stops sending: QUITs the idle connections, fails the sends waiting for a connection, and QUITs
    /// the others as their messages finish.
    public func shutdown() async {
        let (idle, waiters) = pool.withLock { pool in
            pool.isShutDown = true
            defer { (pool.idle, pool.waiters) = ([], []) }
            return (pool.idle.map(\.connection), pool.waiters.map(\.continuation))
        }
        for waiter in waiters { waiter.resume(throwing: shutDownError) }
        await withTaskGroup(of: Void.self) { group in
            for connection in idle { group.addTask { await connection.quit() } }
        }
    }

    private var shutDownError: SMTPError {
        SMTPError(code: .shutDown, message: "the SMTP client was shut down: send through a new one")
    }

    /// A connection for one message: an idle one that still answers RSET, or a new one.
    private func lease() async throws -> SMTPConnection {
        try await acquireSlot()
        do {
            while let connection = takeIdleConnection() {
                do {
                    try await connection.reset()
                    return connection
                } catch {
                    // The server may have closed it while it was idle: a new connection is the answer.
                    logger.debug("smtp idle connection unusable", metadata: ["smtp.error": "\(error.code)"])
                    connection.close()
                }
            }
            return try await SMTPConnection.open(to: server, tls: tls, group: group, logger: logger)
        } catch {
            release(nil)
            throw error
        }
    }

    /// Waits until fewer than `maximumConnections` are leased, and leases one.
    private func acquireSlot() async throws {
        let id = pool.withLock { pool in
            defer { pool.nextWaiterID += 1 }
            return pool.nextWaiterID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let result: Result<Void, any Error>? = pool.withLock { pool in
                    if pool.isShutDown { return .failure(shutDownError) }
                    if pool.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if pool.leased < maximumConnections {
                        pool.leased += 1
                        return .success(())
                    }
                    pool.waiters.append((id, continuation))
                    return nil
                }
                if let result { continuation.resume(with: result) }
            }
        } onCancel: {
            let waiter = pool.withLock { pool in
                guard let index = pool.waiters.firstIndex(where: { $0.id == id }) else {
                    pool.cancelled.insert(id)
                    return CheckedContinuation<Void, any Error>?.none
                }
                return pool.waiters.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
        // A slot granted as the task was cancelled stays in `cancelled`; it only ever holds a few ids.
        pool.withLock { _ = $0.cancelled.remove(id) }
    }

    /// The most recently used idle connection that is still open and not idle for too long; the
    /// others are QUIT.
    private func takeIdleConnection() -> SMTPConnection? {
        let (connection, expired) = removeExpiredIdleConnections { pool in pool.idle.popLast()?.connection }
        for connection in expired { Task { await connection.quit() } }
        return connection
    }

    /// Gives back a leased slot, with its connection when it can carry another message: to the first
    /// waiting send, or to the pool.
    private func release(_ connection: SMTPConnection?) {
        let (waiter, quitting): (CheckedContinuation<Void, any Error>?, SMTPConnection?) = pool.withLock { pool in
            var quitting: SMTPConnection?
            if let connection {
                if pool.isShutDown {
                    quitting = connection
                } else {
                    pool.idle.append((connection, .now))
                }
            }
            guard !pool.waiters.isEmpty else {
                pool.leased -= 1
                return (nil, quitting)
            }
            // The slot passes straight to the waiter: `leased` stays as it is.
            return (pool.waiters.removeFirst().continuation, quitting)
        }
        waiter?.resume()
        if let quitting { Task { await quitting.quit() } }
        if let connection, quitting == nil {
            connection.channel.eventLoop.scheduleTask(in: TimeAmount(maximumIdleTime) + .milliseconds(10)) { [weak self] in
                guard let self else { return }
                let (_, expired) = self.removeExpiredIdleConnections { _ in () }
                for connection in expired { Task { await connection.quit() } }
            }
        }
    }

    /// Removes the idle connections that are closed or have been idle longer than `maximumIdleTime`,
    /// then runs `body` on the pool; returns its result and the expired connections (to be QUIT).
    private func removeExpiredIdleConnections<Value>(then body: (inout Pool) -> Value) -> (Value, [SMTPConnection]) {
        let now = ContinuousClock.now
        return pool.withLock { pool in
            var expired: [SMTPConnection] = []
            pool.idle.removeAll { entry in
                guard !entry.connection.channel.isActive || now - entry.since > maximumIdleTime else { return false }
                expired.append(entry.connection)
                return true
            }
            return (body(&pool), expired)
        }
    }

    private static func makeTLSContext(trust: SMTPServer.Trust) throws(SMTPError) -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        configuration.certificateVerification = .fullVerification
        if case .certificateAuthorities(let file) = trust {
            do {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
            } catch {
                throw SMTPError(
                    code: .invalidConfiguration,
                    message: "could not read the CA certificates in \(file): give a readable PEM file of the server's CA",
                    cause: error)
            }
        }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw SMTPError(code: .invalidConfiguration, message: "could not set up TLS: \(error)", cause: error)
        }
    }
}
