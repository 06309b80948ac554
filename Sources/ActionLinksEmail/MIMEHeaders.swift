/// The header fields of a message or body part (RFC 5322 §2.2), unfolded, with encoded words
/// (RFC 2047) decoded.
public struct MIMEHeaders: Sendable, Hashable {
    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The name as written.
        public let name: String
        /// The value, unfolded, with RFC 2047 encoded words decoded.
        public let value: String
        /// The value unfolded but not decoded: parameters (boundary, charset) are read from this.
        public let rawValue: String
    }

    /// The fields in order.
    public let fields: [Field]

    /// The decoded value of the first field called `name` (case-insensitive).
    public subscript(name: String) -> String? { field(name)?.value }

    /// The first field called `name` (case-insensitive).
    public func field(_ name: String) -> Field? {
        let wanted = name.lowercased()
        return fields.first { $0.name.lowercased() == wanted }
    }

    /// Parses the header block `bytes` (without the blank line that ends it); `firstLine` is the
    /// line number of its first line, for problems.
    static func parse(_ bytes: ArraySlice<UInt8>, firstLine: Int, problems: inout [String]) -> MIMEHeaders {
        var fields: [Field] = []
        var name: ArraySlice<UInt8>?
        var value: [UInt8] = []
        var line = firstLine
        func finish() {
            guard let current = name else { return }
            let raw = headerText(value)
            fields.append(Field(name: headerText(Array(current)), value: EncodedWords.decode(raw), rawValue: raw))
            name = nil
            value = []
        }
        for text in lines(bytes) {
            defer { line += 1 }
            if let first = text.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
                if name != nil {
                    // Unfolding removes the line break, not the whitespace after it.
                    value.append(contentsOf: text)
                } else {
                    problems.append("header line \(line) continues a field that never started")
                }
                continue
            }
            finish()
            guard let colon = text.firstIndex(of: UInt8(ascii: ":")), colon > text.startIndex,
                text[text.startIndex..<colon].allSatisfy({ $0 > 0x20 && $0 < 0x7F })
            else {
                if !text.isEmpty { problems.append("header line \(line) is not a 'Name: value' field; skipped") }
                continue
            }
            name = text[text.startIndex..<colon]
            value = Array(text[(colon + 1)...])
        }
        finish()
        return MIMEHeaders(fields: fields)
    }

    /// Header bytes as text: UTF-8 when valid (RFC 6532 allows it), otherwise Latin-1, byte for byte.
    static func headerText(_ bytes: [UInt8]) -> String {
        var text = String(validating: bytes, as: UTF8.self) ?? String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        while let first = text.unicodeScalars.first, first == " " || first == "\t" { text.unicodeScalars.removeFirst() }
        while let last = text.unicodeScalars.last, last == " " || last == "\t" || last == "\r" { text.unicodeScalars.removeLast() }
        return text
    }
}

/// Splits bytes into lines at LF, dropping a CR before it.
func lines(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
    var result: [ArraySlice<UInt8>] = []
    var start = bytes.startIndex
    var i = start
    while i < bytes.endIndex {
        if bytes[i] == UInt8(ascii: "\n") {
            var end = i
            if end > start, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            result.append(bytes[start..<end])
            start = i + 1
        }
        i += 1
    }
    if start < bytes.endIndex {
        var end = bytes.endIndex
        if bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        result.append(bytes[start..<end])
    }
    return result
}

/// RFC 2047 encoded words: `=?charset?B?...?=` and `=?charset?Q?...?=` in header values.
public enum EncodedWords {
    /// Decodes every encoded word in `value`. Whitespace between adjacent encoded words is dropped
    /// (RFC 2047 §6.2), and adjacent words in one charset are decoded together, because senders split
    /// multi-byte characters across words.
    public static func decode(_ value: String) -> String {
        guard value.contains("=?") else { return value }
        let scalars = Array(value.unicodeScalars)
        var output = String.UnicodeScalarView()
        var pendingBytes: [UInt8] = []
        var pendingCharset: String?
        var pendingWhitespace = String.UnicodeScalarView()
        func flush() {
            if let charset = pendingCharset {
                output.append(contentsOf: CharsetDecoder.decode(pendingBytes, charset: charset).text.unicodeScalars)
            }
            pendingBytes = []
            pendingCharset = nil
        }
        var i = 0
        while i < scalars.count {
            if let word = encodedWord(scalars, at: i) {
                if pendingCharset != nil, pendingCharset != word.charset.lowercased() { flush() }
                if pendingCharset == nil {
                    output.append(contentsOf: pendingWhitespace)
                    pendingCharset = word.charset.lowercased()
                }
                pendingWhitespace = String.UnicodeScalarView()
                pendingBytes.append(contentsOf: word.bytes)
                i = word.end
                continue
            }
            let c = scalars[i]
            if c == " " || c == "\t" || c == "\r" || c == "\n" {
                // Held back: dropped if the next thing is another encoded word.
                pendingWhitespace.append(c)
            } else {
                flush()
                output.append(contentsOf: pendingWhitespace)
                pendingWhitespace = String.UnicodeScalarView()
                output.append(c)
            }
            i += 1
        }
        flush()
        output.append(contentsOf: pendingWhitespace)
        return String(output)
    }

    /// The encoded word starting at `start`, if one does.
    private static func encodedWord(_ s: [Unicode.Scalar], at start: Int) -> (charset: String, bytes: [UInt8], end: Int)? {
        guard start + 1 < s.count, s[start] == "=", s[start + 1] == "?" else { return nil }
        var i = start + 2
        var charset = ""
        while i < s.count, s[i] != "?" {
            guard s[i].isASCII, s[i].value > 0x20, charset.unicodeScalars.count < 64 else { return nil }
            charset.unicodeScalars.append(s[i])
            i += 1
        }
        guard !charset.isEmpty, i + 2 < s.count, s[i + 2] == "?" else { return nil }
        let encoding = s[i + 1]
        i += 3
        let textStart = i
        while i + 1 < s.count, !(s[i] == "?" && s[i + 1] == "=") {
            guard s[i].isASCII, s[i] != " ", s[i] != "\t" else { return nil }
            i += 1
        }
        guard i + 1 < s.count else { return nil }
        let text = ArraySlice(s[textStart..<i].map { UInt8(truncatingIfNeeded: $0.value) })
        let bytes: [UInt8]
        switch encoding {
        case "B", "b": bytes = Base64.decode(text).bytes
        case "Q", "q": bytes = QuotedPrintable.decode(text, underscoreIsSpace: true).bytes
        default: return nil
        }
        return (charset, bytes, i + 2)
    }
}

/// A `Content-Type` (RFC 2045 §5.1) or `Content-Disposition` value: a token and its parameters,
/// with RFC 2231 continuations and charset-encoded values.
public struct HeaderValueWithParameters: Sendable, Hashable {
    /// The value before the first `;`, lower-cased (`text/html`, `attachment`).
    public let value: String
    /// The parameters, names lower-cased.
    public let parameters: [String: String]

    /// Parses `text`; anything unreadable is skipped rather than refused.
    public init(_ text: String) {
        let scalars = Array(text.unicodeScalars)
        var i = 0
        func skipWhitespace() {
            while i < scalars.count, scalars[i] == " " || scalars[i] == "\t" || scalars[i] == "\r" || scalars[i] == "\n" { i += 1 }
        }
        func skipComment() {
            // (comments) may appear almost anywhere in structured headers.
            while i < scalars.count, scalars[i] == "(" {
                var depth = 0
                while i < scalars.count {
                    if scalars[i] == "\\" { i += 2; continue }
                    if scalars[i] == "(" { depth += 1 }
                    if scalars[i] == ")" { depth -= 1; if depth == 0 { i += 1; break } }
                    i += 1
                }
                skipWhitespace()
            }
        }
        skipWhitespace()
        var head = String.UnicodeScalarView()
        while i < scalars.count, scalars[i] != ";" {
            if scalars[i] != " ", scalars[i] != "\t" { head.append(scalars[i]) }
            i += 1
        }
        value = String(head).lowercased()
        var raw: [(name: String, value: String)] = []
        while i < scalars.count {
            i += 1  // the ';'
            skipWhitespace()
            skipComment()
            var name = String.UnicodeScalarView()
            while i < scalars.count, scalars[i] != "=", scalars[i] != ";" {
                if scalars[i] != " ", scalars[i] != "\t" { name.append(scalars[i]) }
                i += 1
            }
            guard i < scalars.count, scalars[i] == "=" else { continue }
            i += 1
            skipWhitespace()
            var parameterValue = String.UnicodeScalarView()
            if i < scalars.count, scalars[i] == "\"" {
                i += 1
                while i < scalars.count, scalars[i] != "\"" {
                    if scalars[i] == "\\", i + 1 < scalars.count { i += 1 }
                    parameterValue.append(scalars[i])
                    i += 1
                }
                // Skip to the next ';' (past the closing quote and anything stray after it).
                while i < scalars.count, scalars[i] != ";" { i += 1 }
            } else {
                while i < scalars.count, scalars[i] != ";" {
                    if scalars[i] == "(" { break }
                    parameterValue.append(scalars[i])
                    i += 1
                }
                while let last = parameterValue.last, last == " " || last == "\t" { parameterValue.removeLast() }
                while i < scalars.count, scalars[i] != ";" { i += 1 }
            }
            if !name.isEmpty { raw.append((String(name).lowercased(), String(parameterValue))) }
        }
        parameters = Self.combineContinuations(raw)
    }

    /// RFC 2231: `name*0=`, `name*1*=` continuations and `name*=charset'lang'%XX` values.
    private static func combineContinuations(_ raw: [(name: String, value: String)]) -> [String: String] {
        var plain: [String: String] = [:]
        var sections: [String: [(index: Int, value: String, encoded: Bool)]] = [:]
        for (name, value) in raw {
            guard let star = name.firstIndex(of: "*") else {
                if plain[name] == nil { plain[name] = value }
                continue
            }
            let base = String(name[..<star])
            let rest = name[name.index(after: star)...]
            if rest.isEmpty {
                sections[base, default: []].append((0, value, true))
            } else {
                let encoded = rest.hasSuffix("*")
                guard let index = Int(encoded ? rest.dropLast() : rest), index < 1000 else { continue }
                sections[base, default: []].append((index, value, encoded))
            }
        }
        for (base, parts) in sections {
            let ordered = parts.sorted { $0.index < $1.index }
            var charset: String?
            var bytes: [UInt8] = []
            for (position, part) in ordered.enumerated() {
                var text = Substring(part.value)
                if part.encoded, position == 0 {
                    // charset'language'value
                    let pieces = text.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                    if pieces.count == 3 {
                        charset = pieces[0].isEmpty ? nil : String(pieces[0])
                        text = pieces[2]
                    }
                }
                if part.encoded {
                    var j = text.utf8.startIndex
                    let utf8 = text.utf8
                    while j < utf8.endIndex {
                        let c = utf8[j]
                        let next = utf8.index(after: j)
                        if c == UInt8(ascii: "%"), next < utf8.endIndex, utf8.index(after: next) < utf8.endIndex,
                            let high = hexValue(utf8[next]), let low = hexValue(utf8[utf8.index(after: next)])
                        {
                            bytes.append(high << 4 | low)
                            j = utf8.index(after: utf8.index(after: next))
                        } else {
                            bytes.append(c)
                            j = next
                        }
                    }
                } else {
                    bytes.append(contentsOf: text.utf8)
                }
            }
            plain[base] = CharsetDecoder.decode(bytes, charset: charset ?? "utf-8").text
        }
        return plain
    }
}
