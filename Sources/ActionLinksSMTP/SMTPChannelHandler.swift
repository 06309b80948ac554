import NIOCore
import NIOSSL
import NIOTLS
import Synchronization

/// What a connection asks of its channel: one request at a time, each with its own timeout.
enum SMTPRequest: Sendable {
    /// Sends `command` (or nothing, for the greeting) and completes `promise` with the next reply.
    case reply(command: ByteBuffer?, step: SMTPError.Step, timeout: TimeAmount, promise: EventLoopPromise<SMTPReply>)
    /// Completes `promise` once the TLS handler in front of this one has finished its handshake.
    case tlsHandshake(timeout: TimeAmount, promise: EventLoopPromise<Void>)

    var step: SMTPError.Step {
        switch self {
        case .reply(_, let step, _, _): return step
        case .tlsHandshake: return .tlsHandshake
        }
    }
}

/// The first failure of a connection, shared by its channel handler (which records it) and the
/// connection (which reads it when a request could not even reach the handler, the channel being
/// closed already).
final class ConnectionFailure: Sendable {
    private let error = Mutex<SMTPError?>(nil)

    /// The first failure, if any.
    var first: SMTPError? { error.withLock { $0 } }

    /// Records `failure` unless there is one already; returns the first.
    func record(_ failure: SMTPError) -> SMTPError {
        error.withLock { error in
            if error == nil { error = failure }
            return error!
        }
    }
}

/// Matches the server's replies to the connection's requests, and fails the waiting request (and every
/// later one) when the connection fails, closes or a reply is late. Any failure closes the channel, so a
/// connection is never used after one.
final class SMTPChannelHandler: ChannelDuplexHandler {
    typealias InboundIn = SMTPReply
    typealias OutboundIn = SMTPRequest
    typealias OutboundOut = ByteBuffer

    private enum Waiter {
        case reply(SMTPError.Step, EventLoopPromise<SMTPReply>)
        case tlsHandshake(EventLoopPromise<Void>)

        var step: SMTPError.Step {
            switch self {
            case .reply(let step, _): return step
            case .tlsHandshake: return .tlsHandshake
            }
        }

        func fail(_ error: SMTPError) {
            switch self {
            case .reply(_, let promise): promise.fail(error)
            case .tlsHandshake(let promise): promise.fail(error)
            }
        }
    }

    /// The server, for messages.
    private let endpoint: String
    private var waiter: (waiter: Waiter, timeout: Scheduled<Void>)?
    /// Replies that came before anyone asked (the greeting, or a 421 before the server hangs up).
    private var unclaimedReplies: [SMTPReply] = []
    private var handshakeCompleted = false
    /// Set by the first failure; every request after it fails with it.
    private let failure: ConnectionFailure

    init(endpoint: String, failure: ConnectionFailure) {
        self.endpoint = endpoint
        self.failure = failure
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        if var failure = failure.first {
            // A failure while nobody waited (a handshake refused before it was awaited) belongs to this step.
            failure.step = failure.step ?? request.step
            switch request {
            case .reply(_, _, _, let reply): reply.fail(failure)
            case .tlsHandshake(_, let handshake): handshake.fail(failure)
            }
            promise?.fail(failure)
            return
        }
        precondition(waiter == nil, "SMTPConnection sends one request at a time")
        switch request {
        case .reply(let command, let step, let timeout, let reply):
            // A reply nobody asked for answers the next request: the greeting, or a 421 that the server
            // sent before hanging up, which is its answer to whatever comes next.
            if !unclaimedReplies.isEmpty {
                reply.succeed(unclaimedReplies.removeFirst())
                promise?.succeed(())
                return
            }
            wait(for: .reply(step, reply), timeout: timeout, context: context)
            guard let command else {
                promise?.succeed(())
                return
            }
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.assumeIsolated().whenComplete { [weak self] result in
                if case .failure(let error) = result { self?.fail(with: error, context: context) }
                promise?.completeWith(result)
            }
            context.writeAndFlush(wrapOutboundOut(command), promise: written)
        case .tlsHandshake(let timeout, let handshake):
            promise?.succeed(())
            if handshakeCompleted {
                handshake.succeed(())
            } else {
                wait(for: .tlsHandshake(handshake), timeout: timeout, context: context)
            }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let reply = unwrapInboundIn(data)
        guard case .reply(_, let promise) = waiter?.waiter else {
            unclaimedReplies.append(reply)
            if unclaimedReplies.count > 8 {
                fail(
                    with: SMTPError(
                        code: .protocolViolation, message: "\(endpoint) sent replies nobody asked for (\(reply.summary))"),
                    context: context)
            }
            return
        }
        waiter?.timeout.cancel()
        waiter = nil
        promise.succeed(reply)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            handshakeCompleted = true
            if case .tlsHandshake(let promise) = waiter?.waiter {
                waiter?.timeout.cancel()
                waiter = nil
                promise.succeed(())
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(with: error, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(
            with: SMTPError(
                code: .connectionClosed,
                message: "\(endpoint) closed the connection: it may be restarting or limiting connections; try again later"),
            context: context)
        context.fireChannelInactive()
    }

    private func wait(for newWaiter: Waiter, timeout: TimeAmount, context: ChannelHandlerContext) {
        let step = newWaiter.step
        let endpoint = self.endpoint
        let timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [weak self] () -> Void in
            self?.fail(
                with: SMTPError(
                    code: .timedOut, message: "\(endpoint) did not answer within \(timeout.seconds) (\(step)): try again later",
                    step: step),
                context: context)
        }
        waiter = (newWaiter, timer)
    }

    /// Fails the waiting request and every later one with `error` (the first failure wins), and closes the channel.
    private func fail(with error: any Error, context: ChannelHandlerContext) {
        let smtpError = failure.record(SMTPError(error, step: waiter?.waiter.step, endpoint: endpoint))
        if let (pending, timeout) = waiter {
            waiter = nil
            timeout.cancel()
            pending.fail(smtpError)
        }
        context.close(promise: nil)
    }
}

extension TimeAmount {
    /// `12 s`, `0.5 s`: for messages.
    fileprivate var seconds: String {
        let seconds = Double(nanoseconds) / 1e9
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}

extension SMTPError {
    /// `error` as an ``SMTPError`` of `step` with `endpoint`: a refused TLS handshake is permanent, the
    /// rest of what a channel reports is a connection that failed (temporary).
    init(_ error: any Error, step: SMTPError.Step?, endpoint: String) {
        if var error = error as? SMTPError {
            error.step = error.step ?? step
            self = error
            return
        }
        if Self.isTLSRefusal(error) {
            self.init(
                code: .tlsFailed,
                message:
                    "the TLS handshake with \(endpoint) failed: its certificate is not trusted (give its CA in the trust "
                    + "setting), names another host (connect by the name on the certificate), or it speaks no TLS version this "
                    + "client accepts (1.2 or later)",
                step: step, cause: error)
            return
        }
        self.init(
            code: .connectionClosed, message: "the connection to \(endpoint) failed: try again later", step: step, cause: error)
    }

    /// Whether `error` is the TLS handshake refused (a certificate, a host name, no common version), not
    /// a connection that broke during it.
    private static func isTLSRefusal(_ error: any Error) -> Bool {
        if error is NIOSSLExtraError { return true }
        switch error as? NIOSSLError {
        case .handshakeFailed(.sslError), .handshakeFailed(.unknownError), .noCertificateToValidate, .unableToValidateCertificate,
            .cannotMatchULabel:
            return true
        default:
            return false
        }
    }
}
