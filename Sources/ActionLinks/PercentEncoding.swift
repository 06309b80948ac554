/// Percent-decoding and -encoding as action links need them (RFC 3986 §2.1; `+` is never a space).
public enum PercentEncoding {
    /// Decodes every `%HH` escape; `nil` when an escape is malformed or the bytes are not UTF-8.
    ///
    /// `+` stays `+`: action links are not HTML form data, and the Firebase SDKs read them that way.
    public static func decode(_ text: Substring) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let c = iterator.next() {
            guard c == UInt8(ascii: "%") else {
                bytes.append(c)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Decodes every `%HH` escape; `nil` when an escape is malformed or the bytes are not UTF-8.
    public static func decode(_ text: String) -> String? { decode(text[...]) }

    /// Decodes every `%HH` escape in `bytes`, which come from a URL the splitter accepted (so are
    /// ASCII); `nil` when an escape is malformed or the decoded bytes are not UTF-8.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard let firstEscape = bytes.firstIndex(of: UInt8(ascii: "%")) else { return String(decoding: bytes, as: UTF8.self) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count) { buffer -> String? in
            _ = buffer.initialize(fromContentsOf: bytes[0..<firstEscape])
            var i = firstEscape
            var count = firstEscape
            var ascii = true
            while i < bytes.count {
                var c = bytes[i]
                if c == UInt8(ascii: "%") {
                    guard i + 2 < bytes.count, let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) else { return nil }
                    c = high << 4 | low
                    if c >= 0x80 { ascii = false }
                    i += 3
                } else {
                    i += 1
                }
                buffer[count] = c
                count += 1
            }
            let decoded = UnsafeBufferPointer(rebasing: buffer[0..<count])
            return ascii || isValidUTF8(decoded) ? String(decoding: decoded, as: UTF8.self) : nil
        }
    }

    /// Whether `bytes` are well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
    /// past U+10FFFF). The standard library's validating initialiser is generic and several times
    /// slower on this path.
    static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let n = bytes.count
        while i < n {
            let c = bytes[i]
            if c < 0x80 {
                i += 1
                continue
            }
            func continuation(_ k: Int) -> Bool { i + k < n && bytes[i + k] & 0xC0 == 0x80 }
            switch c {
            case 0xC2...0xDF:
                guard continuation(1) else { return false }
                i += 2
            case 0xE0...0xEF:
                guard continuation(1), continuation(2) else { return false }
                if c == 0xE0, bytes[i + 1] < 0xA0 { return false }
                if c == 0xED, bytes[i + 1] >= 0xA0 { return false }
                i += 3
            case 0xF0...0xF4:
                guard continuation(1), continuation(2), continuation(3) else { return false }
                if c == 0xF0, bytes[i + 1] < 0x90 { return false }
                if c == 0xF4, bytes[i + 1] >= 0x90 { return false }
                i += 4
            default:
                return false
            }
        }
        return true
    }

    /// Whether `raw` decodes to exactly `expected`, without allocating when `raw` has no escapes.
    static func decodedEquals(_ raw: Substring, _ expected: String) -> Bool {
        if raw.utf8.contains(UInt8(ascii: "%")) { return decode(raw) == expected }
        return raw.utf8.elementsEqual(expected.utf8)
    }

    /// Encodes everything but RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`), so the result
    /// is safe as a query value for every reader: no `&`, `=`, `#`, `+`, `%` or space survives.
    public static func encodeComponent(_ text: String) -> String {
        if text.utf8.allSatisfy(isUnreserved) { return text }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count * 3)
        for c in text.utf8 {
            if isUnreserved(c) {
                out.append(c)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(c >> 4)])
                out.append(hexDigits[Int(c & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Escapes only `%`, `&` and `=`: what a link nested in another link's query must escape so that
    /// both the JS SDK (split, then decode) and the iOS SDK (decode the whole query, then split) read it.
    static func escapeNestedLink(_ link: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(link.utf8.count + 32)
        for c in link.utf8 {
            switch c {
            case UInt8(ascii: "%"): out.append(contentsOf: [UInt8(ascii: "%"), UInt8(ascii: "2"), UInt8(ascii: "5")])
            case UInt8(ascii: "&"): out.append(contentsOf: [UInt8(ascii: "%"), UInt8(ascii: "2"), UInt8(ascii: "6")])
            case UInt8(ascii: "="): out.append(contentsOf: [UInt8(ascii: "%"), UInt8(ascii: "3"), UInt8(ascii: "D")])
            default: out.append(c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    @inline(__always)
    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
