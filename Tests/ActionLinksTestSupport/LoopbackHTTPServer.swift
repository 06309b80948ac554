import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal HTTP/1.1 server on 127.0.0.1 for tests that need a real peer: it answers each request
/// from a fixed table of routes and closes the connection. Nothing leaves the loopback interface.
public final class LoopbackHTTPServer: @unchecked Sendable {
    /// One canned answer.
    public struct Route: Sendable {
        public var status: Int = 200
        public var headers: [String: String] = ["Content-Type": "application/json"]
        public var body: Data

        public init(status: Int = 200, headers: [String: String] = ["Content-Type": "application/json"], body: Data) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    /// The port it listens on.
    public let port: UInt16
    private let socketFD: Int32
    private let routes: [String: Route]
    private let thread: Thread
    private let stopLock = NSLock()
    private var stopped = false

    /// Starts answering `routes` (paths with their query) at once.
    public init(routes: [String: Route]) throws {
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
                LoopbackHTTPServer.serve(client, routes: table)
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

    private static func serve(_ client: Int32, routes: [String: Route]) {
        defer { close(client) }
        var request = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.contains("\r\n\r\n".data(using: .utf8)!) {
            let count = read(client, &buffer, buffer.count)
            if count <= 0 { return }
            request.append(contentsOf: buffer[0..<count])
        }
        let line = String(decoding: request.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
        let path = line.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
        let route = routes[path] ?? Route(status: 404, headers: ["Content-Type": "text/plain"], body: Data("not found".utf8))
        var head = "HTTP/1.1 \(route.status) Status\r\nContent-Length: \(route.body.count)\r\nConnection: close\r\n"
        for (name, value) in route.headers { head += "\(name): \(value)\r\n" }
        let response = Data((head + "\r\n").utf8) + route.body
        response.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(client, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
