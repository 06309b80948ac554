import Foundation

/// A bare HTTP/1.1 client on blocking sockets, for races: every request gets its own connection,
/// opened before the starting gate, so that all requests reach the servers at the same moment
/// (URLSession would queue them behind a few connections per host).
enum RawHTTP {
    struct Response: Sendable {
        var status: Int
        var body: String
    }

    /// One prepared request: a connected socket and the bytes to send.
    final class Prepared: @unchecked Sendable {
        let socket: Int32
        let bytes: [UInt8]
        init(socket: Int32, bytes: [UInt8]) {
            self.socket = socket
            self.bytes = bytes
        }
    }

    /// A blocking TCP connection to an IPv4 `host` and `port`, or `nil` when it cannot connect.
    static func connect(host: String, port: Int) -> Int32? {
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

    /// Connects to `base` (http://127.0.0.1:port) and prepares a POST of `body`.
    static func prepare(base: String, path: String, json body: String, headers: [String: String] = [:]) throws -> Prepared {
        guard let url = URL(string: base), let host = url.host, let port = url.port else {
            throw TestServerError(message: "bad base \(base)")
        }
        guard let fd = connect(host: host, port: port) else { throw TestServerError(message: "cannot connect to \(base)") }
        var head =
            "POST \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return Prepared(socket: fd, bytes: Array((head + "\r\n" + body).utf8))
    }

    /// Sends a prepared request and reads the whole response (the server closes the connection).
    static func send(_ prepared: Prepared) -> Response {
        defer { close(prepared.socket) }
        var sent = 0
        while sent < prepared.bytes.count {
            let n = prepared.bytes[sent...].withUnsafeBytes { write(prepared.socket, $0.baseAddress, $0.count) }
            if n <= 0 { return Response(status: 0, body: "write failed") }
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(prepared.socket, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        let text = String(decoding: received, as: UTF8.self)
        let statusLine = text.prefix { $0 != "\r" }.split(separator: " ")
        let status = statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return Response(status: status, body: body)
    }

    /// Sends every prepared request at once, one thread each, released together; returns the
    /// responses in order.
    static func race(_ requests: [Prepared]) async -> [Response] {
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
            Thread.sleep(forTimeInterval: 0.1)  // every thread is waiting at the gate
            gate.leave()
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
}
