import HTTPTypes
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Synchronization
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP

/// ``FastPathHandler`` with a route that answers later, when the test says: a request that arrives
/// meanwhile waits, so answers go out in the order the requests came.
@Suite("Fast path: answers that come later")
struct LaterAnswerTests {
    /// Claims `POST /later`; its answers wait for ``reply(_:)``.
    final class LaterRoute: FastPathRoute, Sendable {
        let replies = Mutex<[@Sendable (@escaping @Sendable () -> String) -> Void]>([])
        let stepAside: Bool

        init(stepAside: Bool = false) { self.stepAside = stepAside }

        func answersLater(_ claim: String) -> Bool { true }
        func metricsRoute(for claim: String) -> ServerMetrics.Route { .api }
        func maximumBody(for claim: String) -> Int? { 100 }
        func claim(_ head: HTTPRequest) -> String? { head.method == .post && head.path == "/later" ? "/later" : nil }
        func answer(_ claim: String, head: HTTPRequest, body: ByteBuffer) -> String? { nil }
        func start(
            _ claim: String, head: HTTPRequest, body: ByteBuffer, peer: String?,
            reply: @escaping @Sendable (@escaping @Sendable () -> String) -> Void
        ) -> Bool {
            if stepAside { return false }
            replies.withLock { $0.append(reply) }
            return true
        }
        func status(of answer: String) -> Int { 200 }
        func encoded(_ answer: String) -> ByteBuffer? { nil }
        func parts(of answer: String) -> (head: HTTPResponse, body: ByteBuffer?) {
            (HTTPResponse(status: .ok, headerFields: [.contentLength: String(answer.utf8.count)]), ByteBuffer(string: answer))
        }
        func logRoute(_ claim: String) -> String { claim }

        /// Answers the oldest request still waiting with `answer`.
        func reply(_ answer: String) {
            let reply = replies.withLock { $0.removeFirst() }
            reply { answer }
        }
    }

    static func send(_ channel: EmbeddedChannel, _ method: HTTPRequest.Method, _ path: String, body: String = "") throws {
        try channel.writeInbound(
            HTTPRequestPart.head(HTTPRequest(method: method, scheme: nil, authority: "localhost", path: path, headerFields: [:])))
        if !body.isEmpty { try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: body))) }
        try channel.writeInbound(HTTPRequestPart.end(nil))
    }

    /// The bodies of the answers written so far.
    static func answers(_ channel: EmbeddedChannel) throws -> [String] {
        var answers: [String] = []
        while let part = try channel.readOutbound(as: HTTPResponsePart.self) {
            if case .body(let body) = part { answers.append(String(buffer: body)) }
        }
        return answers
    }

    /// The paths of the requests passed on to the router so far.
    static func forwarded(_ channel: EmbeddedChannel) throws -> [String] {
        var paths: [String] = []
        while let part = try channel.readInbound(as: HTTPRequestPart.self) {
            if case .head(let head) = part { paths.append(head.path ?? "") }
        }
        return paths
    }

    @Test("requests that arrive while an answer is awaited wait for it, and are read in order after it")
    func heldInOrder() throws {
        let route = LaterRoute()
        let channel = EmbeddedChannel(handler: FastPathHandler(route, metrics: ServerMetrics(), logger: Logger(label: "later")))
        try Self.send(channel, .post, "/later", body: "1")
        try Self.send(channel, .post, "/later", body: "2")
        try Self.send(channel, .get, "/other")
        try Self.send(channel, .post, "/later", body: "4")
        #expect(try Self.answers(channel).isEmpty && Self.forwarded(channel).isEmpty)
        #expect(route.replies.withLock { $0.count } == 1, "the second request waits for the first's answer")
        route.reply("first")
        #expect(try Self.answers(channel) == ["first"])
        #expect(try Self.forwarded(channel).isEmpty, "the third waits behind the second")
        route.reply("second")
        #expect(try Self.answers(channel) == ["second"])
        // The third goes to the router; the fourth follows it there, so the router answers in order.
        #expect(try Self.forwarded(channel) == ["/other", "/later"])
        #expect(route.replies.withLock { $0.isEmpty })
        // Once the router has answered both, the fast path answers again.
        for _ in 0..<2 { try channel.writeOutbound(HTTPResponsePart.end(nil)) }
        while try channel.readOutbound(as: HTTPResponsePart.self) != nil {}
        try Self.send(channel, .post, "/later", body: "5")
        route.reply("fifth")
        #expect(try Self.answers(channel) == ["fifth"])
    }

    /// Counts the reads asked for that reach it (it sits nearer the socket).
    final class ReadCounter: ChannelOutboundHandler, Sendable {
        typealias OutboundIn = Never
        let reads = Mutex(0)
        func read(context: ChannelHandlerContext) {
            reads.withLock { $0 += 1 }
            context.read()
        }
    }

    @Test("while an answer is awaited no read is passed on; one asked for meanwhile goes once the answer is out")
    func readsWait() throws {
        let route = LaterRoute()
        let counter = ReadCounter()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers([
            counter, FastPathHandler(route, metrics: ServerMetrics(), logger: Logger(label: "later")),
        ])
        channel.read()
        #expect(counter.reads.withLock { $0 } == 1)
        try Self.send(channel, .post, "/later", body: "1")
        channel.read()
        channel.read()
        #expect(counter.reads.withLock { $0 } == 1, "no read while the answer is awaited")
        route.reply("first")
        #expect(try Self.answers(channel) == ["first"])
        #expect(counter.reads.withLock { $0 } == 2, "the reads asked for meanwhile, once")
        channel.read()
        #expect(counter.reads.withLock { $0 } == 3)
    }

    @Test("an answer that comes after its connection closed is dropped, and what was held with it")
    func closedWhileAwaited() throws {
        let route = LaterRoute()
        let channel = EmbeddedChannel(handler: FastPathHandler(route, metrics: ServerMetrics(), logger: Logger(label: "later")))
        try Self.send(channel, .post, "/later", body: "1")
        try Self.send(channel, .get, "/other")
        _ = try channel.finish()
        route.reply("late")
        #expect(try Self.answers(channel).isEmpty && Self.forwarded(channel).isEmpty)
    }

    @Test("a route that steps aside when it starts passes the request on whole")
    func stepsAside() throws {
        let channel = EmbeddedChannel(
            handler: FastPathHandler(LaterRoute(stepAside: true), metrics: ServerMetrics(), logger: Logger(label: "later")))
        try Self.send(channel, .post, "/later", body: "abc")
        var parts: [String] = []
        while let part = try channel.readInbound(as: HTTPRequestPart.self) {
            switch part {
            case .head(let head): parts.append("head " + (head.path ?? ""))
            case .body(let body): parts.append("body " + String(buffer: body))
            case .end: parts.append("end")
            }
        }
        #expect(parts == ["head /later", "body abc", "end"])
        #expect(try Self.answers(channel).isEmpty)
    }
}
