/// The two 7-bit body encodings of RFC 2045 (§6.7 quoted-printable, §6.8 base64), for text in its
/// canonical form: UTF-8 with CRLF line ends.
enum TransferEncoding: String, Sendable {
    case quotedPrintable = "quoted-printable"
    case base64

    /// RFC 2045's limit for an encoded line, without its CRLF.
    static let maximumLineLength = 76

    /// The shorter encoding of `text` (quoted-printable on a tie, as people can read it): mostly ASCII
    /// text comes out as quoted-printable, text mostly in other scripts as base64.
    static func shorter(of text: String) -> (encoding: TransferEncoding, body: String) {
        let canonical = canonicalLines(text)
        let quoted = quotedPrintable(canonical)
        let base64 = base64Lines(Array(canonical.joined(separator: Array("\r\n".utf8))))
        return quoted.utf8.count <= base64.utf8.count ? (.quotedPrintable, quoted) : (.base64, base64)
    }

    /// The lines of `text`, split at CRLF, CR or LF (the line ends are put back as CRLF).
    static func canonicalLines(_ text: String) -> [Substring.UTF8View] {
        // CR LF is one Character in Swift, so splitting characters splits at each kind of line end.
        text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\r\n" || $0 == "\n" || $0 == "\r" }).map(\.utf8)
    }

    /// Quoted-printable: each line's bytes as they are when printable ASCII (but `=`), `=XX` otherwise
    /// and for a space or tab at the end of a line; soft line breaks (`=` CRLF) keep every encoded line
    /// within 76 characters; the text's own line ends stay CRLF (hard breaks).
    static func quotedPrintable(_ lines: [Substring.UTF8View]) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for (lineIndex, line) in lines.enumerated() {
            if lineIndex > 0 { out += Array("\r\n".utf8) }
            var length = 0
            var index = line.startIndex
            while index != line.endIndex {
                let byte = line[index]
                index = line.index(after: index)
                let isLastOfLine = index == line.endIndex
                let literal =
                    (0x21...0x7E).contains(byte) && byte != UInt8(ascii: "=")
                    || (byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")) && !isLastOfLine
                let token = literal ? [byte] : [UInt8(ascii: "="), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
                // The line's last token may use the 76th column; any other leaves it for a soft break's `=`.
                let room = isLastOfLine ? maximumLineLength : maximumLineLength - 1
                if length + token.count > room {
                    out += Array("=\r\n".utf8)
                    length = 0
                }
                out += token
                length += token.count
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Base64 in lines of 76 characters, CRLF between them.
    static func base64Lines(_ bytes: [UInt8]) -> String {
        let encoded = Array(bytes.base64.utf8)
        return stride(from: 0, to: encoded.count, by: maximumLineLength).map { start in
            String(decoding: encoded[start..<Swift.min(start + maximumLineLength, encoded.count)], as: UTF8.self)
        }.joined(separator: "\r\n")
    }
}
