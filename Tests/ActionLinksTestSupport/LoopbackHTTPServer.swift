import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal HTTP/1.1 server on 127.0.0.1 for tests that need a real peer: it answers each request
/// from a fixed table of routes and closes the connection, or (``Connections/keptAliveOnce``) keeps
/// it open after one answer and closes it on reading the next request, unanswered, as a server
/// whose keep-alive timeout ends just as a client reuses the connection. A route may trickle its
/// body (``Trickle``): the head at once, then a byte at a time, as a slow upstream does. Nothing
/// leaves the loopback interface.
public final class LoopbackHTTPServer: @unchecked Sendable {
    /// What happens to a connection after its first answer.
    public enum Connections: Sendable {
        /// `Connection: close`, and closed.
        case closedAfterEachAnswer
        /// Kept open; the next request on it is read and the connection closed without an answer.
        case keptAliveOnce
        /// As ``keptAliveOnce``, but the connection is reset (`SO_LINGER` 0: an RST, which the
        /// client reads as `ECONNRESET`), as a server does that closes with unread bytes pending.
        case keptAliveOnceReset
    }

    /// One canned answer.
    public struct Route: Sendable {
        public var status: Int = 200
        public var headers: [String: String] = ["Content-Type": "application/json"]
        public var body: Data
        /// How the body is sent; nil: with the head, at once.
        public var trickle: Trickle?
        /// Request headers (name, case-insensitive, and exact value) the answer needs; a request
        /// without one gets `403 Missing required header`, as Google's metadata server answers.
        public var requires: [String: String]

        public init(
            status: Int = 200, headers: [String: String] = ["Content-Type": "application/json"], body: Data, trickle: Trickle? = nil,
            requires: [String: String] = [:]
        ) {
            self.status = status
            self.headers = headers
            self.body = body
            self.trickle = trickle
            self.requires = requires
        }

        /// Whether a request head carries every header ``requires`` names.
        func isMet(by head: String) -> Bool {
            let lines = head.split(separator: "\r\n").dropFirst().map { line -> (String, String) in
                let name = line.prefix { $0 != ":" }
                return (name.lowercased(), line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces))
            }
            return requires.allSatisfy { required in lines.contains { $0 == (required.key.lowercased(), required.value) } }
        }
    }

    /// A body sent after its head a byte at a time, one every `interval` (the head's
    /// `Content-Length` is the whole body's), until `released` says to send the rest at once, or
    /// until the peer closes the connection (``tricklesCut``).
    public struct Trickle: Sendable {
        public var interval: Duration
        public var released: @Sendable () -> Bool

        public init(every interval: Duration = .seconds(1), releasedWhen released: @escaping @Sendable () -> Bool = { false }) {
            self.interval = interval
            self.released = released
        }
    }

    /// The port it listens on.
    public let port: UInt16
    private let socketFD: Int32
    private let routes: [String: Route]
    private let thread: Thread
    private let stopLock = NSLock()
    private var stopped = false
    private let counter = RequestCounter()

    /// How many requests have been read, answered or not.
    public var requestsRead: Int { counter.value.read }
    /// How many requests were read and left unanswered (``Connections/keptAliveOnce``, ``Connections/keptAliveOnceReset``).
    public var requestsDropped: Int { counter.value.dropped }
    /// How many trickled bodies the peer cut short by closing the connection.
    public var tricklesCut: Int { counter.value.cut }

    /// Starts answering `routes` (paths with their query) at once.
    public init(routes: [String: Route], connections: Connections = .closedAfterEachAnswer) throws {
        self.routes = routes
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        socketFD = fd
        let table = routes
        let counter = counter
        // The accepting thread owns the socket and closes it when `accept` fails for good (after
        // `stop()` shut it down): closing it anywhere else could close a number that another
        // socket of the process (a database connection) has been given since.
        thread = Thread {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    close(fd)
                    return
                }
                // A thread per connection: one kept alive never holds up the next.
                Thread { LoopbackHTTPServer.serve(client, routes: table, connections: connections, counter: counter) }.start()
            }
        }
        thread.start()
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port>`.
    public var origin: String { "http://127.0.0.1:\(port)" }

    /// Stops listening (once; later calls, and the one `deinit` makes, do nothing).
    public func stop() {
        let first = stopLock.withLock {
            defer { stopped = true }
            return !stopped
        }
        // Shutting a listening socket down wakes the blocked `accept`, whose thread then closes it.
        if first { shutdown(socketFD, Int32(SHUT_RDWR)) }
    }

    private static func serve(_ client: Int32, routes: [String: Route], connections: Connections, counter: RequestCounter) {
        defer { close(client) }
        var pending = Data()
        for answered in 0... {
            guard let (path, requestHead) = readRequest(client, into: &pending) else { return }
            let drop = connections != .closedAfterEachAnswer && answered == 1
            counter.add(dropped: drop)
            if drop {
                if connections == .keptAliveOnceReset {
                    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                    setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                }
                return
            }
            var route = routes[path] ?? Route(status: 404, headers: ["Content-Type": "text/plain"], body: Data("not found".utf8))
            if !route.isMet(by: requestHead) {
                route = Route(status: 403, headers: ["Content-Type": "text/plain"], body: Data("Missing required header".utf8))
            }
            let closing = connections == .closedAfterEachAnswer
            var head = "HTTP/1.1 \(route.status) Status\r\nContent-Length: \(route.body.count)\r\n"
            head += closing ? "Connection: close\r\n" : "Connection: keep-alive\r\n"
            for (name, value) in route.headers { head += "\(name): \(value)\r\n" }
            if let trickle = route.trickle {
                guard write(client, Data((head + "\r\n").utf8)) else { return }
                guard send(route.body, trickling: trickle, to: client) else { return counter.addCut() }
                if closing { return }
                continue
            }
            guard write(client, Data((head + "\r\n").utf8) + route.body), !closing else { return }
        }
    }

    /// The path and head of the next request on `client` (its head and a `Content-Length` body are
    /// taken from `pending` and the socket), or nil when the peer closed.
    private static func readRequest(_ client: Int32, into pending: inout Data) -> (String, String)? {
        let separator = Data("\r\n\r\n".utf8)
        var buffer = [UInt8](repeating: 0, count: 4096)
        func fill() -> Bool {
            let count = read(client, &buffer, buffer.count)
            if count <= 0 { return false }
            pending.append(contentsOf: buffer[0..<count])
            return true
        }
        while pending.range(of: separator) == nil { guard fill() else { return nil } }
        let headEnd = pending.range(of: separator)!.upperBound
        let head = String(decoding: pending[pending.startIndex..<headEnd], as: UTF8.self)
        let length =
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        while pending.count - (headEnd - pending.startIndex) < length { guard fill() else { return nil } }
        pending = Data(pending[(headEnd + length)...])
        let line = head.prefix { $0 != "\r" }
        return (line.split(separator: " ").dropFirst().first.map(String.init) ?? "/", head)
    }

    /// Sends `body` as `trickle` says; false when the peer closed the connection first. A byte at a
    /// time with `MSG_NOSIGNAL`: a write to a closed connection fails instead of raising SIGPIPE.
    private static func send(_ body: Data, trickling trickle: Trickle, to client: Int32) -> Bool {
        for (index, byte) in body.enumerated() {
            if trickle.released() { return write(client, body.dropFirst(index)) }
            Thread.sleep(
                forTimeInterval: Double(trickle.interval.components.seconds) + Double(trickle.interval.components.attoseconds) / 1e18)
            guard withUnsafeBytes(of: byte, { Glibc.send(client, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }) == 1 else { return false }
        }
        return true
    }

    private static func write(_ client: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(client, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { return false }
                offset += written
            }
            return true
        }
    }
}

/// A count shared with the connections' threads.
private final class RequestCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = (read: 0, dropped: 0, cut: 0)
    var value: (read: Int, dropped: Int, cut: Int) { lock.withLock { count } }
    func addCut() { lock.withLock { count.cut += 1 } }
    func add(dropped: Bool) {
        lock.withLock {
            count.read += 1
            if dropped { count.dropped += 1 }
        }
    }
}
