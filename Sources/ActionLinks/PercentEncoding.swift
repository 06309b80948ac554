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
    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
