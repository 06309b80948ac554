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
        decode(bytes, escaped: bytes.contains(UInt8(ascii: "%")))
    }

    /// ``decode(_:)-(UnsafeBufferPointer<UInt8>)`` for a caller that already knows whether `bytes`
    /// hold a `%`: without one they are copied as they are, with one they are decoded straight into
    /// the new string's storage.
    @inline(__always)
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, escaped: Bool) -> String? {
        guard escaped else { return String(decoding: bytes, as: UTF8.self) }
        var decodes = true
        let text = String(unsafeUninitializedCapacity: bytes.count) { storage in
            guard let count = decode(bytes, into: storage) else {
                decodes = false
                return 0
            }
            return count
        }
        return decodes ? text : nil
    }

    /// Decodes `bytes` into `output`, which has room for at least `bytes.count` bytes, and returns how
    /// many it wrote; `nil` when an escape is malformed or the decoded bytes are not UTF-8.
    ///
    /// Runs without `%` are copied eight bytes at a time: a word is checked for `%` with the usual
    /// zero-byte test, and written whole (the output never gets ahead of the input, so the eight
    /// bytes fit even when only some of them are kept).
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        guard let input = bytes.baseAddress, let out = output.baseAddress, output.count >= bytes.count else { return 0 }
        let n = bytes.count
        let hex = hexValues
        var i = 0
        var count = 0
        // Every input byte looked at and every decoded byte, or-ed together: its high bits say whether
        // all that was written is ASCII (an input byte is either written as it is or part of an escape,
        // `%` and two hexadecimal digits, all ASCII).
        var seen: UInt64 = 0
        while i < n {
            if i &+ 8 <= n {
                // In little-endian order, a borrow only runs towards later bytes, so the first flagged byte is a `%`.
                let word = UInt64(littleEndian: UnsafeRawPointer(input + i).loadUnaligned(as: UInt64.self))
                UnsafeMutableRawPointer(out + count).storeBytes(of: word.littleEndian, as: UInt64.self)
                seen |= word
                let percents = word ^ 0x2525_2525_2525_2525
                let found = (percents &- 0x0101_0101_0101_0101) & ~percents & 0x8080_8080_8080_8080
                if found == 0 {
                    i &+= 8
                    count &+= 8
                    continue
                }
                let run = found.trailingZeroBitCount &>> 3
                i &+= run
                count &+= run
            } else if input[i] != UInt8(ascii: "%") {
                seen |= UInt64(input[i])
                out[count] = input[i]
                i &+= 1
                count &+= 1
                continue
            }
            // A `%` at `i`.
            guard i &+ 2 < n else { return nil }
            let high = hex[Int(input[i &+ 1])]
            let low = hex[Int(input[i &+ 2])]
            guard (high | low) & 0xF0 == 0 else { return nil }
            let c = high &<< 4 | low
            seen |= UInt64(c)
            out[count] = c
            i &+= 3
            count &+= 1
        }
        let ascii = seen & 0x8080_8080_8080_8080 == 0
        return ascii || isValidUTF8(UnsafeBufferPointer(start: out, count: count)) ? count : nil
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

    /// The value of each hexadecimal digit, 0xFF for every other byte.
    nonisolated(unsafe) private static let hexValues: UnsafePointer<UInt8> = {
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        for c in 0..<256 { table[c] = hexValue(UInt8(c)) ?? 0xFF }
        return UnsafePointer(table)
    }()

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
