/// The MIME content transfer encodings (RFC 2045 §6), decoded leniently: real mail breaks the rules,
/// and a support engineer needs whatever can still be read.
public enum TransferEncoding: Sendable, Hashable {
    /// `7bit`, `8bit` or `binary`: the bytes are the content.
    case identity
    /// `quoted-printable`: `=XX` escapes and `=` soft line breaks.
    case quotedPrintable
    /// `base64`.
    case base64
    /// Anything else (`x-uuencode`, a typo): the part cannot be decoded.
    case unknown(String)

    /// Reads a `Content-Transfer-Encoding` value (`nil` when the header is absent).
    public init(header: String?) {
        guard let header else {
            self = .identity
            return
        }
        let value = CharsetDecoder.normalizedLabel(header)
        switch value {
        case "", "7bit", "8bit", "binary", "7-bit", "8-bit": self = .identity
        case "quoted-printable", "quoted_printable": self = .quotedPrintable
        case "base64": self = .base64
        default: self = .unknown(header)
        }
    }

    /// Decodes `body`; the problems say what was malformed (the decoding goes on past it).
    public func decode(_ body: ArraySlice<UInt8>) -> (bytes: [UInt8], problems: [String]) {
        switch self {
        case .identity: return (Array(body), [])
        case .quotedPrintable: return QuotedPrintable.decode(body)
        case .base64: return Base64.decode(body)
        case .unknown(let name): return (Array(body), ["unknown Content-Transfer-Encoding '\(name)': the part is read as it stands"])
        }
    }
}

/// Quoted-printable (RFC 2045 §6.7).
enum QuotedPrintable {
    /// Decodes `=XX` escapes and soft line breaks; a malformed `=` is kept literally, as mail readers do.
    static func decode(_ body: ArraySlice<UInt8>, underscoreIsSpace: Bool = false) -> (bytes: [UInt8], problems: [String]) {
        var output: [UInt8] = []
        output.reserveCapacity(body.count)
        var malformed = 0
        var i = body.startIndex
        let end = body.endIndex
        while i < end {
            let c = body[i]
            if c == UInt8(ascii: "=") {
                // Soft line break: '=' then optional transport padding, then CRLF or LF.
                var j = i + 1
                while j < end, body[j] == UInt8(ascii: " ") || body[j] == UInt8(ascii: "\t") { j += 1 }
                if j < end, body[j] == UInt8(ascii: "\r") || body[j] == UInt8(ascii: "\n") {
                    if body[j] == UInt8(ascii: "\r"), j + 1 < end, body[j + 1] == UInt8(ascii: "\n") { j += 1 }
                    i = j + 1
                    continue
                }
                if j == end {
                    i = end
                    continue
                }
                if i + 2 < end, let high = hexValue(body[i + 1]), let low = hexValue(body[i + 2]) {
                    output.append(high << 4 | low)
                    i += 3
                    continue
                }
                malformed += 1
                output.append(c)
                i += 1
            } else if underscoreIsSpace, c == UInt8(ascii: "_") {
                output.append(UInt8(ascii: " "))
                i += 1
            } else {
                output.append(c)
                i += 1
            }
        }
        let problems = malformed == 0 ? [] : ["\(malformed) malformed quoted-printable escape\(malformed == 1 ? "" : "s") kept as written"]
        return (output, problems)
    }
}

/// Base64 (RFC 4648 §4; RFC 2045 §6.8 lets line breaks and other characters appear and be ignored).
enum Base64 {
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(c)] = UInt8(index)
        }
        // The URL-safe alphabet (RFC 4648 §5) too: Proofpoint and some senders use it.
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()

    /// Decodes, skipping whitespace; other stray characters are skipped and counted, and decoding
    /// stops at padding.
    static func decode(_ body: ArraySlice<UInt8>) -> (bytes: [UInt8], problems: [String]) {
        var output: [UInt8] = []
        output.reserveCapacity(body.count / 4 * 3)
        var accumulator: UInt32 = 0
        var bits = 0
        var stray = 0
        var sawPadding = false
        for c in body {
            let value = values[Int(c)]
            if value != 0xFF {
                if sawPadding {
                    // Data after '=': concatenated base64 blobs happen; keep reading rather than drop them.
                    sawPadding = false
                    accumulator = 0
                    bits = 0
                }
                accumulator = accumulator << 6 | UInt32(value)
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                }
            } else if c == UInt8(ascii: "=") {
                sawPadding = true
            } else if c != UInt8(ascii: "\r"), c != UInt8(ascii: "\n"), c != UInt8(ascii: " "), c != UInt8(ascii: "\t") {
                stray += 1
            }
        }
        var problems: [String] = []
        if stray > 0 { problems.append("\(stray) character\(stray == 1 ? "" : "s") outside the base64 alphabet skipped") }
        if bits >= 6 { problems.append("the base64 data ends in the middle of a byte") }
        return (output, problems)
    }

    /// Decodes text that must be clean base64 (no stray characters); `nil` when it is not.
    static func decodeStrict(_ text: Substring) -> [UInt8]? {
        var trimmed = text.utf8[...]
        while trimmed.last == UInt8(ascii: "=") { trimmed = trimmed.dropLast() }
        guard trimmed.allSatisfy({ values[Int($0)] != 0xFF }) else { return nil }
        let decoded = decode(ArraySlice(trimmed))
        return decoded.problems.isEmpty ? decoded.bytes : nil
    }
}

@inline(__always) func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
    default: nil
    }
}
