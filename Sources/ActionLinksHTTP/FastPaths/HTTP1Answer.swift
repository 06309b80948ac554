import ActionLinksDomain
import Foundation
import HTTPTypes
import NIOCore
import Synchronization

/// Answers as NIO's HTTP/1.1 encoder writes them after Hummingbird's codec: the status line with
/// the status's reason phrase, then every field as `Name: value`, in order, an empty line, and the
/// body. The fast paths write their answers with these bytes below the codec (``RawAnswers``).
enum HTTP1Answer {
    /// `head` and `body`. The head must carry its `Content-Length` (the encoder adds nothing then).
    static func encode(_ head: HTTPResponse, body: ByteBuffer?) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(256 + (body?.readableBytes ?? 0))
        writeStatusLine(head.status, into: &buffer)
        writeLines(head.headerFields, into: &buffer)
        buffer.writeStaticString("\r\n")
        if let body { buffer.writeImmutableBuffer(body) }
        return buffer
    }

    /// `HTTP/1.1 <code> <reason>\r\n`.
    static func writeStatusLine(_ status: HTTPResponse.Status, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("HTTP/1.1 ")
        buffer.writeString(String(status.code))
        buffer.writeStaticString(" ")
        buffer.writeString(status.reasonPhrase)
        buffer.writeStaticString("\r\n")
    }

    /// The fields' lines, `Name: value\r\n` each.
    static func writeLines(_ fields: HTTPFields, into buffer: inout ByteBuffer) {
        for field in fields {
            buffer.writeString(field.name.rawName)
            buffer.writeStaticString(": ")
            buffer.writeString(field.value)
            buffer.writeStaticString("\r\n")
        }
    }
}

/// A head whose fields are fixed but for `Content-Length` and `Date`, its lines encoded once: the
/// status line (when the status is fixed too) and the fields before the length, then the fields
/// between the length and `Date`. An answer is then the length, the date and the body.
struct CachedHead: Sendable {
    /// The status line when fixed, the fields before the length, and `Content-Length: `.
    private let start: [UInt8]
    /// `\r\n`, the fields after the length, and `Date: `.
    private let middle: [UInt8]
    private let hasStatus: Bool

    init(status: HTTPResponse.Status?, beforeLength: HTTPFields, afterLength: HTTPFields) {
        var start = ByteBuffer()
        if let status { HTTP1Answer.writeStatusLine(status, into: &start) }
        HTTP1Answer.writeLines(beforeLength, into: &start)
        start.writeStaticString("Content-Length: ")
        var middle = ByteBuffer(string: "\r\n")
        HTTP1Answer.writeLines(afterLength, into: &middle)
        middle.writeStaticString("Date: ")
        self.start = Array(start.readableBytesView)
        self.middle = Array(middle.readableBytesView)
        hasStatus = status != nil
    }

    /// The answer with `body` (its length in `Content-Length`) and `date`; `status` when the head
    /// has none of its own.
    func encode(status: HTTPResponse.Status? = nil, body: ByteBuffer?, date: String) -> ByteBuffer {
        encode(status: status, length: body?.readableBytes ?? 0, date: date) { buffer in
            if let body { buffer.writeImmutableBuffer(body) }
        }
    }

    /// The answer with the bytes of `json`.
    func encode(status: HTTPResponse.Status? = nil, json: Data, date: String) -> ByteBuffer {
        encode(status: status, length: json.count, date: date) { $0.writeBytes(json) }
    }

    private func encode(status: HTTPResponse.Status?, length: Int, date: String, body: (inout ByteBuffer) -> Void) -> ByteBuffer {
        precondition(hasStatus == (status == nil), "a cached head has its status, or is given one")
        var buffer = ByteBuffer()
        buffer.reserveCapacity(start.count + middle.count + 64 + length)
        if let status { HTTP1Answer.writeStatusLine(status, into: &buffer) }
        buffer.writeBytes(start)
        buffer.writeString(String(length))
        buffer.writeBytes(middle)
        buffer.writeString(date)
        buffer.writeStaticString("\r\n\r\n")
        body(&buffer)
        return buffer
    }
}

/// The `Date` header value (IMF-fixdate), formatted once per second.
package enum HTTPDate {
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
