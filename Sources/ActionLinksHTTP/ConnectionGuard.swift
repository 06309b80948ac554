import ActionLinksDomain
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// Deadlines for reading a request, so that a client sending slowly (slowloris) cannot hold a
/// connection: the head must be complete within the header timeout of its first byte (of the
/// accept, for a connection's first request, so a TLS handshake counts too), and the body within
/// the body timeout of the head. When one passes, the connection is closed, after a
/// `408 Request Timeout` when no response is under way on it.
///
/// It watches two levels of the pipeline: this handler sees the bytes as they arrive (after TLS,
/// before the HTTP decoder), to notice when a request begins; its ``RequestWatcher`` sees the
/// decoded parts, to notice when a head and a body are complete and when responses start and end.
/// Between requests, once every response has been written, the idle timeout applies: the
/// connection is closed quietly. (It is here and not Hummingbird's: the fast paths answer below
/// Hummingbird's connection-state handler, which would see a connection that only they serve as
/// idle and close it under them; this guard hears of every answer, theirs included.)
///
/// One timer per connection, re-armed lazily: moving a deadline later costs a clock read, not a
/// new scheduled task, which keeps the per-request cost on the hot path negligible.
package final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer

    /// How long each part of a request may take.
    package struct Timeouts: Sendable {
        /// From the first byte of a request (or the accept) to the end of its head.
        var header: TimeAmount
        /// From the end of a request's head to the end of its body.
        var body: TimeAmount
        /// From the end of the last response to the first byte of the next request (`nil`: none).
        var idle: TimeAmount? = nil

        /// Makes the value from each of its fields.
        package init(header: TimeAmount, body: TimeAmount, idle: TimeAmount? = nil) {
            self.header = header
            self.body = body
            self.idle = idle
        }
    }

    /// What the connection is waiting for.
    enum Phase {
        /// Between requests.
        case idle
        /// The rest of a request's head.
        case head
        /// The rest of a request's body.
        case body
    }

    static let requestTimeout: [UInt8] = Array("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".utf8)

    let timeouts: Timeouts
    let logger: Logger
    private(set) var phase = Phase.head
    /// When the current phase must be over; `nil` when idle.
    private var deadline: NIODeadline?
    private var timer: Scheduled<Void>?
    private var timerDeadline: NIODeadline?
    /// Requests whose response has not ended.
    private var unanswered = 0
    /// Whether a response head has been written for the oldest unanswered request.
    private var responding = false
    /// Whether any byte of the awaited head has arrived (a connection opened ahead of use, as
    /// browsers do, is closed without a 408 it never asked for).
    private var headStarted = false
    private var context: ChannelHandlerContext?

    init(timeouts: Timeouts, logger: Logger) {
        self.timeouts = timeouts
        self.logger = logger
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        begin(.head)
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        stop()
        self.context = nil
    }

    package func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if phase == .idle { begin(.head) }
        if phase == .head { headStarted = true }
        context.fireChannelRead(data)
    }

    // MARK: Events from the request watcher

    func headReceived() {
        unanswered += 1
        begin(.body)
    }

    func requestEnded() {
        phase = .idle
        deadline = nil
        if unanswered == 0 { beginIdle() }
    }

    func responseStarted() { responding = true }

    func responseEnded() {
        unanswered = max(0, unanswered - 1)
        responding = false
        if phase == .idle, unanswered == 0 { beginIdle() }
    }

    /// The idle deadline, from now: nothing is being read or answered.
    private func beginIdle() {
        guard let idle = timeouts.idle else { return }
        let deadline = NIODeadline.now() + idle
        self.deadline = deadline
        if let timerDeadline, timerDeadline <= deadline { return }
        timer?.cancel()
        schedule(at: deadline)
    }

    // MARK: The timer

    private func begin(_ next: Phase) {
        phase = next
        headStarted = false
        let deadline = NIODeadline.now() + (next == .head ? timeouts.header : timeouts.body)
        self.deadline = deadline
        // A timer due earlier re-arms itself for the new deadline when it fires.
        if let timerDeadline, timerDeadline <= deadline { return }
        timer?.cancel()
        schedule(at: deadline)
    }

    private func schedule(at deadline: NIODeadline) {
        guard let context else { return }
        timerDeadline = deadline
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in expired() }
    }

    private func stop() {
        timer?.cancel()
        timer = nil
        timerDeadline = nil
        deadline = nil
    }

    private func expired() {
        timer = nil
        timerDeadline = nil
        guard let deadline, let context else { return }
        guard deadline <= .now() else {
            schedule(at: deadline)
            return
        }
        self.deadline = nil
        if phase == .idle {
            logger.debug("closing an idle connection", metadata: ["peer": "\(context.channel.remoteAddress?.description ?? "?")"])
            context.close(promise: nil)
            return
        }
        let what = phase == .head ? "request head" : "request body"
        logger.info(
            "closing a connection: \(what) not received in time", metadata: ["peer": "\(context.channel.remoteAddress?.description ?? "?")"]
        )
        if phase == .body || headStarted, unanswered == (phase == .body ? 1 : 0), !responding {
            context.writeAndFlush(NIOAny(context.channel.allocator.buffer(bytes: Self.requestTimeout)), promise: nil)
        }
        context.close(promise: nil)
    }

    /// Tells the guard where each request and response begins and ends; sits right after the HTTP
    /// codec, before any handler that answers requests itself.
    final class RequestWatcher: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart

        let connection: ConnectionGuard

        init(connection: ConnectionGuard) {
            self.connection = connection
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head: connection.headReceived()
            case .body: break
            case .end: connection.requestEnded()
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            switch unwrapOutboundIn(data) {
            case .head: connection.responseStarted()
            case .body: break
            case .end: connection.responseEnded()
            }
            context.write(data, promise: promise)
        }
    }
}

/// Hummingbird's HTTP/1.1 channel with a ``ConnectionGuard`` on every connection.
package struct GuardedHTTP1Channel: ServerChildChannel {
    package typealias Value = HTTP1Channel.Value

    let http1: HTTP1Channel
    let timeouts: ConnectionGuard.Timeouts

    package init(
        responder: @escaping HTTPChannelHandler.Responder, configuration: HTTP1Channel.Configuration, timeouts: ConnectionGuard.Timeouts
    ) {
        http1 = HTTP1Channel(responder: responder, configuration: configuration)
        self.timeouts = timeouts
    }

    package func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let connectionGuard = ConnectionGuard(timeouts: timeouts, logger: logger)
        do {
            try channel.pipeline.syncOperations.addHandler(connectionGuard)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        // The configuration's handlers are made on the channel's event loop, during setup.
        let bound = NIOLoopBound(connectionGuard, eventLoop: channel.eventLoop)
        var configuration = http1.configuration
        let others = configuration.additionalChannelHandlers
        configuration.additionalChannelHandlers = { [ConnectionGuard.RequestWatcher(connection: bound.value)] + others() }
        return HTTP1Channel(responder: http1.responder, configuration: configuration).setup(channel: channel, logger: logger)
    }

    package func handle(value: Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}
