import ActionLinksSMTPTestSupport
import Foundation

/// Decoders written apart from the composer's encoders, so that a round trip proves the encoding.
enum MIMEDecoding {
    /// The header fields of `message` (before the first empty line), unfolded, by lower-cased name, in order.
    static func headers(of message: String) -> [(name: String, value: String, raw: String)] {
        let head = message.components(separatedBy: "\r\n\r\n")[0]
        var fields: [String] = []
        for line in head.components(separatedBy: "\r\n") {
            if line.hasPrefix(" ") || line.hasPrefix("\t"), !fields.isEmpty {
                fields[fields.count - 1] += "\r\n" + line
            } else {
                fields.append(line)
            }
        }
        return fields.map { raw in
            let colon = raw.firstIndex(of: ":")!
            let value = raw[raw.index(after: colon)...].replacingOccurrences(of: "\r\n", with: "")
            return (raw[..<colon].lowercased(), String(value.drop { $0 == " " }), raw)
        }
    }

    /// The value of header `name`, unfolded.
    static func header(_ name: String, of message: String) -> String? {
        headers(of: message).first { $0.name == name.lowercased() }?.value
    }

    /// The RFC 2047 `=?UTF-8?B?...?=` words of `value` (separated by whitespace).
    static func encodedWords(in value: String) -> [String] {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init).filter { $0.hasPrefix("=?") && $0.hasSuffix("?=") }
    }

    /// One encoded word's bytes, or `nil` when it is not a UTF-8 "B" word of valid base64.
    static func decodeWordBytes(_ word: String) -> [UInt8]? {
        guard word.hasPrefix("=?UTF-8?B?"), word.hasSuffix("?=") else { return nil }
        let payload = word.dropFirst("=?UTF-8?B?".count).dropLast(2)
        return Data(base64Encoded: String(payload)).map { Array($0) }
    }

    /// A header value with its encoded words decoded (whitespace between adjacent words dropped, as RFC 2047 §6.2 says).
    static func decodeHeaderValue(_ value: String) -> String? {
        let tokens = value.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        var result = ""
        var previousWasWord = false
        for (index, token) in tokens.enumerated() {
            if let bytes = decodeWordBytes(token) {
                if index > 0, !previousWasWord { result += " " }
                result += String(decoding: bytes, as: UTF8.self)
                previousWasWord = true
            } else {
                if token.hasPrefix("=?") { return nil }
                if index > 0 { result += " " }
                result += token
                previousWasWord = false
            }
        }
        return result
    }

    /// Quoted-printable decoded (RFC 2045 §6.7): `=XX` escapes, `=` CRLF soft breaks, CRLF hard breaks.
    static func decodeQuotedPrintable(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "=") {
                if index + 2 < bytes.count, bytes[index + 1] == 13, bytes[index + 2] == 10 {
                    index += 3
                    continue
                }
                guard index + 2 < bytes.count, let value = UInt8(String(decoding: bytes[index + 1...index + 2], as: UTF8.self), radix: 16)
                else { return nil }
                out.append(value)
                index += 3
            } else {
                out.append(byte)
                index += 1
            }
        }
        return out
    }

    /// The parts of a multipart message: each part's headers and encoded body, split at `boundary`.
    static func parts(of message: String) -> [(headers: [(name: String, value: String, raw: String)], body: String)] {
        guard let contentType = header("Content-Type", of: message),
            let range = contentType.range(of: "boundary=\"")
        else { return [] }
        let boundary = String(contentType[range.upperBound...].prefix { $0 != "\"" })
        let body = message.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        let sections = body.components(separatedBy: "--" + boundary)
        // Before the first delimiter: the preamble; after the last: `--` and the epilogue.
        return sections.dropFirst().dropLast().map { section in
            // The CRLF after the delimiter, and the one before the next, which belongs to it. (CR LF is
            // one Character.)
            var part = Substring(section)
            if part.hasPrefix("\r\n") { part = part.dropFirst() }
            if part.hasSuffix("\r\n") { part = part.dropLast() }
            let split = part.components(separatedBy: "\r\n\r\n")
            return (headers(of: split[0] + "\r\n\r\n"), split.dropFirst().joined(separator: "\r\n\r\n"))
        }
    }

    /// A part's body decoded by its Content-Transfer-Encoding, line ends as `\n`.
    static func decodedText(_ part: (headers: [(name: String, value: String, raw: String)], body: String)) -> String? {
        let encoding = part.headers.first { $0.name == "content-transfer-encoding" }?.value
        let bytes: [UInt8]?
        switch encoding {
        case "quoted-printable": bytes = decodeQuotedPrintable(part.body)
        case "base64": bytes = Data(base64Encoded: part.body, options: .ignoreUnknownCharacters).map { Array($0) }
        default: bytes = nil
        }
        return bytes.flatMap { String(bytes: $0, encoding: .utf8) }?.replacingOccurrences(of: "\r\n", with: "\n")
    }
}
