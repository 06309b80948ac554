/// Byte-level helpers shared by the header parsers: every parser works on a header's UTF-8 bytes,
/// caps its work, and never traps on any input.
enum HeaderText {
    /// Headers longer than this are treated as absent: no legitimate value of the headers parsed
    /// here comes near it, and it bounds the work per request.
    static let maximumLength = 8192
    /// The most list items a parser looks at.
    static let maximumItems = 64

    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")

    /// RFC 9110 `tchar`.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    static func isToken(_ bytes: ArraySlice<UInt8>) -> Bool { !bytes.isEmpty && bytes.allSatisfy(isTokenCharacter) }

    /// The bytes without leading and trailing spaces and tabs.
    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == space || first == tab { slice = slice.dropFirst() }
        while let last = slice.last, last == space || last == tab { slice = slice.dropLast() }
        return slice
    }

    /// Splits on `separator` outside double-quoted strings (a backslash escapes inside them), at most
    /// `limit` pieces; empty pieces are kept (callers drop them).
    static func split(_ bytes: ArraySlice<UInt8>, on separator: UInt8, limit: Int = maximumItems) -> [ArraySlice<UInt8>] {
        var pieces: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        var quoted = false
        while index < bytes.endIndex {
            let byte = bytes[index]
            if quoted {
                if byte == UInt8(ascii: "\\") {
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    quoted = false
                }
            } else if byte == UInt8(ascii: "\"") {
                quoted = true
            } else if byte == separator {
                pieces.append(bytes[start..<index])
                if pieces.count == limit { return pieces }
                start = index + 1
            }
            index += 1
        }
        pieces.append(bytes[start..<bytes.endIndex])
        return pieces
    }

    /// A token or a quoted string's content (RFC 9110 `token / quoted-string`); `nil` for anything else.
    static func tokenOrQuoted(_ bytes: ArraySlice<UInt8>) -> String? {
        if bytes.first == UInt8(ascii: "\"") {
            guard bytes.count >= 2, bytes.last == UInt8(ascii: "\"") else { return nil }
            var content: [UInt8] = []
            var index = bytes.startIndex + 1
            while index < bytes.endIndex - 1 {
                var byte = bytes[index]
                if byte == UInt8(ascii: "\\") {
                    index += 1
                    guard index < bytes.endIndex - 1 else { return nil }
                    byte = bytes[index]
                } else if byte == UInt8(ascii: "\"") {
                    return nil
                }
                guard byte == tab || (byte >= 0x20 && byte != 0x7F) else { return nil }
                content.append(byte)
                index += 1
            }
            return String(decoding: content, as: UTF8.self)
        }
        return isToken(bytes) ? String(decoding: bytes, as: UTF8.self) : nil
    }

    /// ASCII lower case.
    static func lowercased(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
