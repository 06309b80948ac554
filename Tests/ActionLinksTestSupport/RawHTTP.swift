import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A bare HTTP/1.1 client on blocking sockets, for what URLSession cannot send: races (every
/// request on its own connection, opened before the starting gate, so that all requests reach the
/// servers at the same moment), header bytes that are not text, pipelined requests.
public enum RawHTTP {
    /// A status and a body.
    public struct Response: Sendable {
        public var status: Int
        public var body: String
    }

    /// One prepared request: a connected socket and the bytes to send.
    public final class Prepared: @unchecked Sendable {
        let socket: Int32
        let bytes: [UInt8]
        init(socket: Int32, bytes: [UInt8]) {
            self.socket = socket
            self.bytes = bytes
        }
    }

    /// A blocking TCP connection to an IPv4 `host` and `port`, or `nil` when it cannot connect.
    public static func connect(host: String, port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            close(fd)
            return nil
        }
        return fd
    }

    /// The host and port of `base` (`http://127.0.0.1:port`).
    public static func hostAndPort(_ base: String) throws -> (host: String, port: Int) {
        guard let url = URL(string: base), let host = url.host, let port = url.port else { throw TestSupportError("bad base \(base)") }
        return (host, port)
    }

    /// Connects to `base` (http://127.0.0.1:port) and prepares a POST of `body`.
    public static func prepare(base: String, path: String, json body: String, headers: [String: String] = [:]) throws -> Prepared {
        let (host, port) = try hostAndPort(base)
        guard let fd = connect(host: host, port: port) else { throw TestSupportError("cannot connect to \(base)") }
        var head =
            "POST \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return Prepared(socket: fd, bytes: Array((head + "\r\n" + body).utf8))
    }

    /// Sends a prepared request and reads the whole response (the server closes the connection).
    public static func send(_ prepared: Prepared) -> Response {
        defer { close(prepared.socket) }
        var sent = 0
        while sent < prepared.bytes.count {
            let n = prepared.bytes[sent...].withUnsafeBytes { write(prepared.socket, $0.baseAddress, $0.count) }
            if n <= 0 { return Response(status: 0, body: "write failed") }
            sent += n
        }
        let text = String(decoding: readToEnd(prepared.socket), as: UTF8.self)
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return Response(status: status(of: text), body: body)
    }

    /// Sends every prepared request at once, one thread each, released together; returns the
    /// responses in order.
    public static func race(_ requests: [Prepared]) async -> [Response] {
        await withCheckedContinuation { continuation in
            let gate = DispatchGroup()
            gate.enter()
            let done = DispatchGroup()
            let results = ResultSlots(count: requests.count)
            for (index, request) in requests.enumerated() {
                done.enter()
                Thread.detachNewThread {
                    gate.wait()
                    results.set(index, send(request))
                    done.leave()
                }
            }
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: 0.1)  // every thread is waiting at the gate
                gate.leave()
            }
            done.notify(queue: .global()) { continuation.resume(returning: results.values) }
        }
    }

    final class ResultSlots: @unchecked Sendable {
        private let lock = NSLock()
        private var slots: [Response?]
        init(count: Int) { slots = Array(repeating: nil, count: count) }
        func set(_ index: Int, _ value: Response) { lock.withLock { slots[index] = value } }
        var values: [Response] { lock.withLock { slots.map { $0 ?? Response(status: 0, body: "no response") } } }
    }

    /// Sends `request` on a new connection to `host:port` and reads until the server closes it (at
    /// most 1 MB; a read that waits 120 s ends it, a hang guard: a loaded machine's fsync has stalled
    /// an answer past the 10 s this was). Blocking: call it from a thread of its own.
    public static func exchange(host: String, port: Int, _ request: [UInt8]) throws -> [UInt8] {
        guard let fd = connect(host: host, port: port) else { throw TestSupportError("cannot connect to \(host):\(port)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            sent += n
        }
        return readToEnd(fd)
    }

    /// Runs `exchange` on a thread of its own, so a slow answer never holds a cooperative thread.
    public static func exchangeOffThread(base: String, _ request: [UInt8]) async throws -> [UInt8] {
        let (host, port) = try hostAndPort(base)
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try exchange(host: host, port: port, request) }) }
        }
    }

    /// Everything the peer sends until it closes the connection (at most 1 MB).
    static func readToEnd(_ fd: Int32) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while received.count < 1 << 20 {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        return received
    }

    /// The status code of the first response in `text`, or 0 when there is none.
    public static func status(of text: String) -> Int {
        let line = text.prefix { $0 != "\r" }.split(separator: " ")
        return line.count > 1 ? Int(line[1]) ?? 0 : 0
    }
}

/// A plain TCP connection to a test server that sends what it is told, when it is told, and
/// polls for the answer without blocking a thread.
public final class RawConnection: @unchecked Sendable {
    let socket: Int32
    /// Guards `received` and `closed`: the trickling task and the waiting one both poll.
    private let lock = NSLock()
    private var received: [UInt8] = []
    private var isClosed = false
    /// Whether the server has closed the connection.
    public var closed: Bool { lock.withLock { isClosed } }
    /// Whether any bytes of an answer have arrived.
    public var hasAnswer: Bool { lock.withLock { !received.isEmpty } }
    /// When the test began this connection, taken before connecting: a time measured from it is at
    /// least what the server measured from accepting it, so load can only make it longer.
    public let opened: ContinuousClock.Instant

    public init(base: String) throws {
        opened = .now
        let (host, port) = try RawHTTP.hostAndPort(base)
        guard let socket = RawHTTP.connect(host: host, port: port) else { throw TestSupportError("cannot connect to \(base)") }
        self.socket = socket
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
    }

    deinit { close(socket) }

    /// Sends `text`; false once the server has closed the connection.
    @discardableResult
    public func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Reads whatever has arrived; notes when the server closed the connection.
    public func poll() {
        lock.withLock {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !isClosed {
                let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    received += buffer[0..<count]
                } else if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                    isClosed = true
                } else {
                    return
                }
            }
        }
    }

    /// Everything received so far.
    public var text: String {
        poll()
        return lock.withLock { String(decoding: received, as: UTF8.self) }
    }

    /// Waits (without blocking a thread) until `condition` holds or `timeout` passes; returns when
    /// it was seen to hold, measured from `since` (by default ``opened``), or nil. The moment is seen
    /// late on a loaded machine, never early: a lower bound on it cannot be broken by load.
    public func wait(
        upTo timeout: Duration, since start: ContinuousClock.Instant? = nil, until condition: (RawConnection) -> Bool
    ) async throws -> Duration? {
        let waiting = ContinuousClock.now
        while ContinuousClock.now - waiting < timeout {
            poll()
            if condition(self) { return ContinuousClock.now - (start ?? opened) }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }
}

/// Loopback ports.
public enum LoopbackPort {
    /// A loopback port nobody listens on now (for a server whose address must be known before it
    /// starts: a link domain naming its port, a PostgreSQL cluster, a script's webhook).
    ///
    /// It is drawn at random from below the kernel's ephemeral range: a port from `bind(0)` is an
    /// ephemeral one, which the next outgoing connection of any test may take as its own before the
    /// server that was promised it binds it (CI once lost the browser test's mail webhook that way,
    /// `EADDRINUSE` seconds after the port was chosen). Below that range only another caller of
    /// this function, or a server with a fixed port, can take it.
    public static func free() throws -> Int {
        let lowest = 20_000
        let below = max(lowest + 1_000, ephemeralRange().lowerBound)
        for _ in 0..<200 {
            let port = Int.random(in: lowest..<below)
            if canBind(port) { return port }
        }
        throw TestSupportError("cannot find a free loopback port in \(lowest)..<\(below)")
    }

    /// The kernel's ephemeral ports (`/proc/sys/net/ipv4/ip_local_port_range`; Linux's default
    /// where it cannot be read).
    static func ephemeralRange() -> ClosedRange<Int> {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let bounds = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard bounds.count == 2, bounds[0] <= bounds[1] else { return 32_768...60_999 }
        return bounds[0]...bounds[1]
    }

    static func canBind(_ port: Int) -> Bool {
        let socket = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 }
        }
    }
}
