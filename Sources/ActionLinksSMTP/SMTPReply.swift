import NIOCore

/// One reply of the server: its code and the text of each of its lines, codes and separators removed.
struct SMTPReply: Sendable, Hashable {
    /// The three-digit reply code.
    var code: Int
    /// Each line's text (an enhanced status code such as `5.7.8`, if any, is kept in it).
    var lines: [String]

    /// The reply as the server wrote it, on one line (for messages).
    var summary: String {
        let text = lines.joined(separator: " / ").prefix(300)
        return text.isEmpty ? "\(code)" : "\(code) \(text)"
    }
}

/// Gathers the lines of a reply (`250-first`, `250-second`, `250 last`) into one ``SMTPReply``.
struct SMTPReplyAssembler {
    /// More lines than any EHLO answer has; a server sending more is not speaking SMTP.
    static let maximumLines = 200

    private var code: Int?
    private var lines: [String] = []

    /// Adds one line (without its line end); returns the reply when it was the last line.
    mutating func add(_ line: some Collection<UInt8>) throws(SMTPError) -> SMTPReply? {
        let bytes = Array(line)
        guard bytes.count >= 3, bytes[0] >= UInt8(ascii: "2"), bytes[0] <= UInt8(ascii: "5"),
            bytes[1...2].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { throw Self.violation("a reply line without a reply code: \(Self.printable(bytes))") }
        let lineCode = bytes[0..<3].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        let isLast: Bool
        switch bytes.count > 3 ? bytes[3] : UInt8(ascii: " ") {
        case UInt8(ascii: " "): isLast = true
        case UInt8(ascii: "-"): isLast = false
        default: throw Self.violation("a reply line with \(Self.printable(bytes[3...3])) after its code")
        }
        if let code, code != lineCode {
            throw Self.violation("a multi-line reply whose lines have different codes (\(code), \(lineCode))")
        }
        guard lines.count < Self.maximumLines else { throw Self.violation("a reply of more than \(Self.maximumLines) lines") }
        code = lineCode
        lines.append(String(decoding: bytes.dropFirst(4), as: UTF8.self))
        guard isLast else { return nil }
        defer { (code, lines) = (nil, []) }
        return SMTPReply(code: lineCode, lines: lines)
    }

    private static func violation(_ what: String) -> SMTPError {
        SMTPError(code: .protocolViolation, message: "the server sent \(what): is it an SMTP server?")
    }

    /// The line as ASCII text with anything else escaped, at most 100 bytes of it.
    private static func printable(_ bytes: some Collection<UInt8>) -> String {
        String(
            bytes.prefix(100).flatMap { byte -> String in
                (0x20..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "\\x" + String(byte, radix: 16)
            })
    }
}

/// Splits the server's bytes into replies: lines end with CRLF (a bare LF is accepted too).
struct SMTPReplyDecoder: ByteToMessageDecoder {
    typealias InboundOut = SMTPReply

    /// RFC 5321 allows reply lines of 512 octets; this leaves room for servers that go beyond it.
    static let maximumLineLength = 4096

    private var assembler = SMTPReplyAssembler()

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let end = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > Self.maximumLineLength {
                throw SMTPError(
                    code: .protocolViolation,
                    message: "the server sent a line of more than \(Self.maximumLineLength) bytes: is it an SMTP server?")
            }
            return .needMoreData
        }
        let length = end - buffer.readerIndex
        var line = buffer.readBytes(length: length + 1)!.dropLast()
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        if let reply = try assembler.add(line) {
            context.fireChannelRead(wrapInboundOut(reply))
        }
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}
