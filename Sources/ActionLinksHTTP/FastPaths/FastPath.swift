import ActionLinksDomain
import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes

/// A request the server answers on the connection's event loop, in the channel pipeline, instead of
/// handing it to the router, the middleware and the async responder and back: the association
/// files (``AssociationFastPath``), the landing page (``ActionPageFastPath``) and the SDKs' token
/// refresh (``TokenRefreshFastPath``), and links issued (``SendOobCodeFastPath``). A route says
/// which requests it claims and what it answers, at once or once a write has committed
/// (``answersLater``); ``FastPathHandler`` does the rest, the same way for each: the state machine
/// of a request's parts, the body, the write, the fallback to the router, the order of pipelined
/// answers, the metrics and the log line. The server's routes are one (``ServerFastPaths``), in one
/// handler.
///
/// An answer is the route's own, made by the same code with the same headers in the same order,
/// `Date` as Hummingbird adds it. A route steps aside (the router answers, with whatever was read
/// of the body) whenever an answer needs more than the event loop may do.
package protocol FastPathRoute: Sendable {
    /// What the route keeps of a claimed request's head until the request ends.
    associatedtype Claim
    /// What the route answers.
    associatedtype Answer: Sendable

    /// The route the metrics count a claimed request's answer under, as the router's middleware
    /// counts the route's.
    func metricsRoute(for claim: Claim) -> ServerMetrics.Route
    /// The most body the route reads for a claimed request; a longer body goes on to the router.
    /// `nil`: the body is not read (a `GET`'s).
    func maximumBody(for claim: Claim) -> Int?

    /// The claim on a request whose head the route may answer, or `nil` (the request goes on to the
    /// router untouched). A request with `Connection` never reaches it.
    func claim(_ head: HTTPRequest) -> Claim?
    /// Whether the route answers a claimed request once something it starts has finished (a write
    /// to commit: ``start(_:head:body:peer:reply:)``) rather than at once (``answer(_:head:body:)``).
    func answersLater(_ claim: Claim) -> Bool
    /// The answer once the claimed request has ended, or `nil` to step aside.
    func answer(_ claim: Claim, head: HTTPRequest, body: ByteBuffer) -> Answer?
    /// Starts the answer of a route that ``answersLater``, once the claimed request has ended:
    /// `reply` is called once, from any thread, with what makes the answer, which is made on the
    /// connection's event loop (so the thread that calls `reply` only hands it over); `false` to
    /// step aside, having started nothing. `peer` is the connection's remote IP address.
    func start(
        _ claim: Claim, head: HTTPRequest, body: ByteBuffer, peer: String?,
        reply: @escaping @Sendable (@escaping @Sendable () -> Answer) -> Void
    ) -> Bool
    /// The answer's status code.
    func status(of answer: Answer) -> Int
    /// The whole answer as the HTTP/1.1 encoder would write it, `Date` included (``HTTP1Answer``),
    /// or `nil` when it goes out as response parts through the codec.
    func encoded(_ answer: Answer) -> ByteBuffer?
    /// The answer as response parts: the head before `Date`, and the body.
    func parts(of answer: Answer) -> (head: HTTPResponse, body: ByteBuffer?)
    /// The route in the log line, as the router's logging names it (a path, never a query).
    func logRoute(_ claim: Claim) -> String
}

extension FastPathRoute {
    package func answersLater(_ claim: Claim) -> Bool { false }

    package func start(
        _ claim: Claim, head: HTTPRequest, body: ByteBuffer, peer: String?,
        reply: @escaping @Sendable (@escaping @Sendable () -> Answer) -> Void
    ) -> Bool { false }
}

/// The channel handler of one ``FastPathRoute``. Requests it does not claim, or that arrive while
/// an earlier one on the connection is still with the router (so pipelined answers stay in order),
/// go on untouched; a claimed request is read to its end and answered, or handed on whole. While an
/// answer that comes later is awaited, what arrives on the connection is held, and read once it
/// has gone out.
package final class FastPathHandler<Route: FastPathRoute>: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    let route: Route
    let metrics: ServerMetrics
    let logger: Logger
    /// Requests passed on to the router whose response has not ended yet.
    private var forwarded = 0
    /// The request being read here, until its `.end` arrives.
    private var claimed: Claimed?
    /// Where whole encoded answers are written, below the HTTP encoder, while in a pipeline.
    private var raw: RawAnswers?
    /// Whether an answer that comes later is awaited (``FastPathRoute/answersLater``).
    private var awaiting = false
    /// What arrived on the connection while an answer was awaited, in order.
    private var held: [NIOAny] = []
    /// Whether a read was asked for while an answer was awaited (none is passed on meanwhile, so a
    /// client that sends request after request fills its own socket, not this buffer).
    private var readHeld = false
    /// Whether the handler has left the pipeline (its context is no longer to be used).
    private var removed = false

    private struct Claimed {
        var head: HTTPRequest
        var claim: Route.Claim
        var body: ByteBuffer?
        var start: ContinuousClock.Instant
    }

    package init(_ route: Route, metrics: ServerMetrics, logger: Logger) {
        self.route = route
        self.metrics = metrics
        self.logger = logger
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        raw = RawAnswers(context)
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        raw = nil
        removed = true
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if awaiting { return held.append(data) }
        switch unwrapInboundIn(data) {
        case .head(let request):
            if forwarded == 0, !request.headerFields.contains(.connection), let claim = route.claim(request) {
                claimed = Claimed(head: request, claim: claim, body: nil, start: .now)
                return
            }
            forwarded += 1
            context.fireChannelRead(data)
        case .body(var part):
            guard var reading = claimed else { return context.fireChannelRead(data) }
            guard let maximum = route.maximumBody(for: reading.claim) else { return }
            claimed = nil  // the buffer is uniquely referenced while it grows
            guard (reading.body?.readableBytes ?? 0) + part.readableBytes <= maximum else {
                // Too long for this route: the router reads it (and refuses it where it must).
                forward(context: context, reading)
                context.fireChannelRead(data)
                return
            }
            if reading.body == nil { reading.body = part } else { reading.body!.writeBuffer(&part) }
            claimed = reading
        case .end:
            guard let reading = claimed else { return context.fireChannelRead(data) }
            claimed = nil
            if route.answersLater(reading.claim) { return start(context: context, reading, end: data) }
            guard let answer = route.answer(reading.claim, head: reading.head, body: reading.body ?? emptyBody) else {
                forward(context: context, reading)
                context.fireChannelRead(data)
                return
            }
            respond(context: context, reading, answer)
        }
    }

    /// Starts a later answer (or passes the request on, when the route steps aside), and holds what
    /// arrives until it has gone out.
    private func start(context: ChannelHandlerContext, _ reading: Claimed, end: NIOAny) {
        let promise = context.eventLoop.makePromise(of: (@Sendable () -> Route.Answer).self)
        let started = route.start(
            reading.claim, head: reading.head, body: reading.body ?? emptyBody, peer: context.channel.remoteAddress?.ipAddress,
            reply: promise.succeed)
        guard started else {
            promise.fail(StepAside())
            forward(context: context, reading)
            context.fireChannelRead(end)
            return
        }
        awaiting = true
        promise.futureResult.assumeIsolated().whenSuccess { makeAnswer in
            guard !self.removed else { return }
            self.respond(context: context, reading, makeAnswer())
            self.awaiting = false
            // What arrived meanwhile, in order, until it awaits another answer.
            if !self.held.isEmpty {
                var rest = self.held[...]
                self.held = []
                while !self.awaiting, let part = rest.popFirst() { self.channelRead(context: context, data: part) }
                self.held.insert(contentsOf: rest, at: 0)
                // The router's reader takes what it was given at the end of a read.
                context.fireChannelReadComplete()
            }
            if !self.awaiting, self.readHeld {
                self.readHeld = false
                context.read()
            }
        }
    }

    /// Writes the answer to a claimed request, and counts and logs it.
    private func respond(context: ChannelHandlerContext, _ reading: Claimed, _ answer: Route.Answer) {
        if let raw, let encoded = route.encoded(answer) {
            raw.write(encoded)
        } else {
            var (head, body) = route.parts(of: answer)
            head.headerFields[.date] = HTTPDate.now
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            if let body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        let status = route.status(of: answer)
        let duration = ContinuousClock.now - reading.start
        metrics.request(route.metricsRoute(for: reading.claim), status: status, duration: duration)
        logger.debug(
            "request",
            metadata: [
                "method": "\(reading.head.method.rawValue)", "route": "\(route.logRoute(reading.claim))", "status": "\(status)",
                "duration": "\(duration)",
            ])
    }

    /// Passes a request read here on to the router: its head and what arrived of its body.
    private func forward(context: ChannelHandlerContext, _ reading: Claimed) {
        forwarded += 1
        context.fireChannelRead(wrapInboundOut(.head(reading.head)))
        if let body = reading.body, body.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(.body(body))) }
    }

    /// Asks for more of the connection, except while an answer is awaited (then once it has gone out).
    package func read(context: ChannelHandlerContext) {
        if awaiting { readHeld = true } else { context.read() }
    }

    /// Counts the end of a response the router wrote for a request passed on.
    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), forwarded > 0 { forwarded -= 1 }
        context.write(data, promise: promise)
    }
}

/// What a fast path reads of a request target.
enum FastPathTarget {
    /// The one of `paths` that `target` names, with or without a query, or `nil`.
    static func path(_ target: String, in paths: [String]) -> String? {
        let bytes = target.utf8
        let path = bytes[..<(bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.endIndex)]
        return paths.first { $0.utf8.elementsEqual(path) }
    }
}

/// The body of a request that had none.
private let emptyBody = ByteBuffer()

/// A route that answers later stepped aside: its promise is settled with this, and never read.
private struct StepAside: Error {}

/// Writes a fast path's whole answer, already encoded, from below the HTTP codec (the connection
/// guard's place in the pipeline): no response head is converted, validated or encoded per request.
/// The connection guard is told that a response started and ended, as its request watcher would
/// tell it.
struct RawAnswers {
    let context: ChannelHandlerContext
    let connection: ConnectionGuard

    /// The writer for a fast path's pipeline, or `nil` when it has no connection guard (then the
    /// fast path writes response parts through the codec).
    init?(_ context: ChannelHandlerContext) {
        guard let connection = try? context.pipeline.syncOperations.handler(type: ConnectionGuard.self),
            let below = try? context.pipeline.syncOperations.context(handlerType: ConnectionGuard.self)
        else { return nil }
        self.context = below
        self.connection = connection
    }

    func write(_ answer: ByteBuffer) {
        connection.responseStarted()
        context.writeAndFlush(NIOAny(answer), promise: nil)
        connection.responseEnded()
    }
}
