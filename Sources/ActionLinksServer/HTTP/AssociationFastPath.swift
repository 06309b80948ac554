import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Answers `GET`/`HEAD` of the association files on the connection's event loop, in
/// the channel pipeline, instead of handing the request to the async responder and back.
///
/// These are the requests Apple's CDN and Android's verifier make, they are answered from memory,
/// and Hummingbird's hand-off to Swift concurrency costs more than the answer itself. The answer is
/// the one ``AssociationRoutes`` gives (same ``PrebuiltJSON``, same headers, plus `Date` as
/// Hummingbird adds it), counted and timed in the metrics and logged as the route's are. Anything
/// else passes through untouched: other paths and methods, a
/// `Connection` header, and any request that arrives while an earlier one on the connection is
/// still being answered by the responder (so pipelined responses stay in order).
final class AssociationFastPath: FastPathHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let files: [String: PrebuiltJSON]
    let metrics: ServerMetrics
    let logger: Logger
    var forwarded = 0
    /// The request being answered here, until its `.end` arrives.
    private var answering: Answering?

    /// A request this handler answers: its file, method, `If-None-Match`, target and start.
    private typealias Answering = (
        file: PrebuiltJSON, method: HTTPRequest.Method, ifNoneMatch: String?, path: String, start: ContinuousClock.Instant
    )
    var raw: RawAnswers?

    init(files: [String: PrebuiltJSON], metrics: ServerMetrics, logger: Logger) {
        self.files = files
        self.metrics = metrics
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            if forwarded == 0, request.method == .get || request.method == .head, let path = request.path, let file = file(for: path),
                !request.headerFields.contains(.connection)
            {
                answering = (file, request.method, request.headerFields[.ifNoneMatch], path, ContinuousClock.now)
                return
            }
            forwarded += 1
            context.fireChannelRead(data)
        case .body:
            if answering == nil { context.fireChannelRead(data) }
        case .end:
            guard let (file, method, ifNoneMatch, path, start) = answering else {
                context.fireChannelRead(data)
                return
            }
            answering = nil
            let status: Int
            if method == .get, ifNoneMatch != file.etag, let raw {
                raw.write(file.encodedAnswer())
                status = 200
            } else {
                let (response, body) = file.response(method: method, ifNoneMatch: ifNoneMatch)
                var head = response.head
                head.headerFields[.date] = HTTPDate.now
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                if let body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                status = response.status.code
            }
            let duration = ContinuousClock.now - start
            metrics.request(.association, status: status, duration: duration)
            // The route, as the router's log line names it: the file's path, never the query.
            logger.debug(
                "request",
                metadata: [
                    "method": "\(method.rawValue)", "route": "\(path.prefix { $0 != "?" })", "status": "\(status)",
                    "duration": "\(duration)",
                ])
        }
    }

    /// A fast path after this one answered a request this one passed on: its answer went out below
    /// the codec, past ``write(context:data:promise:)``, so it is counted here.
    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is FastPathAnswered else { return context.triggerUserOutboundEvent(event, promise: promise) }
        if forwarded > 0 { forwarded -= 1 }
        promise?.succeed()
    }

    /// The file for a request target: the exact path, with or without a query.
    func file(for target: String) -> PrebuiltJSON? {
        if let query = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            return files[String(target[..<query])]
        }
        return files[target]
    }
}

/// What the event-loop fast paths share: HTTP parts in and out, the writer below the codec while
/// the handler is in a pipeline, and the count of requests passed on to the responder whose
/// response has not ended (a later request waits behind them, so pipelined answers stay in order).
protocol FastPathHandler: ChannelDuplexHandler, RemovableChannelHandler
where InboundIn == HTTPRequestPart, InboundOut == HTTPRequestPart, OutboundIn == HTTPResponsePart, OutboundOut == HTTPResponsePart {
    /// Where whole encoded answers are written, below the HTTP encoder.
    var raw: RawAnswers? { get set }
    /// Requests passed on to the responder whose response has not ended yet.
    var forwarded: Int { get set }
}

extension FastPathHandler {
    func handlerAdded(context: ChannelHandlerContext) {
        raw = RawAnswers(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        raw = nil
    }

    /// Counts the end of a response the responder wrote for a request passed on.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), forwarded > 0 { forwarded -= 1 }
        context.write(data, promise: promise)
    }
}

/// Sent toward the head by a fast path that answered a request below the codec, for the fast
/// paths before it, which passed that request on and count it until its answer ends.
struct FastPathAnswered: Sendable {}

/// Writes a fast path's whole answer, already encoded, from below the HTTP codec (the connection
/// guard's place in the pipeline): no response head is converted, validated or encoded per request.
/// The bytes are what the codec writes for the same head and body (``encode(_:body:)``), and the
/// connection guard is told that a response started and ended, as its request watcher would tell it.
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

    /// `head` and `body` as NIO's HTTP/1.1 encoder writes them after Hummingbird's codec: the status
    /// line with the status's reason phrase, then every field as `Name: value`, in order. The head
    /// must carry its `Content-Length` (the encoder adds nothing then).
    static func encode(_ head: HTTPResponse, body: ByteBuffer?) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(256 + (body?.readableBytes ?? 0))
        buffer.writeStaticString("HTTP/1.1 ")
        buffer.writeString(String(head.status.code))
        buffer.writeStaticString(" ")
        buffer.writeString(head.status.reasonPhrase)
        buffer.writeStaticString("\r\n")
        for field in head.headerFields {
            buffer.writeString(field.name.rawName)
            buffer.writeStaticString(": ")
            buffer.writeString(field.value)
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString("\r\n")
        if let body { buffer.writeImmutableBuffer(body) }
        return buffer
    }
}

/// The `Date` header value (IMF-fixdate), formatted once per second.
enum HTTPDate {
    private static let cache = Mutex<(second: Int, text: String)>((-1, ""))

    static var now: String {
        let second = currentSecond
        return cache.withLock { cache in
            if cache.second != second { cache = (second, format(second)) }
            return cache.text
        }
    }

    /// The wall clock's second.
    static var currentSecond: Int {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int(time.tv_sec)
    }

    static func format(_ second: Int) -> String {
        var seconds = time_t(second)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
