/// The query parameters that links are made of, found in one pass over a URL's bytes.
///
/// This is the hot path of link parsing: the splitter hands the query to ``scan(_:from:)`` while it
/// validates it, names are compared as bytes, values are kept as byte ranges, and only the values
/// that are used get decoded into strings.
struct QueryScan: QueryScanner {
    /// The parameters the library reads.
    enum Name: Int, CaseIterable {
        case mode, oobCode, apiKey, continueUrl, lang, tenantId, link, deepLinkID

        /// The name as written in a query.
        var text: StaticString {
            switch self {
            case .mode: "mode"
            case .oobCode: "oobCode"
            case .apiKey: "apiKey"
            case .continueUrl: "continueUrl"
            case .lang: "lang"
            case .tenantId: "tenantId"
            case .link: "link"
            case .deepLinkID: "deep_link_id"
            }
        }

        @inline(__always) var bit: UInt8 { 1 << UInt8(rawValue) }
    }

    /// Where each parameter's last value starts (high half) and ends (low half), in ``Name`` order;
    /// valid when its bit is set in ``present``. URLs are at most 64 KiB, so offsets fit in 32 bits.
    private var spans: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// One bit per ``Name`` that appeared.
    private(set) var present: UInt8 = 0
    /// One bit per ``Name`` that appeared more than once (the last occurrence wins).
    private(set) var repeated: UInt8 = 0
    /// One bit per ``Name`` whose last value holds a `%` escape (the others need no decoding).
    private(set) var escaped: UInt8 = 0
    /// One bit per ``Name`` whose last value escapes a byte outside ASCII (`%80` to `%FF`): only such
    /// a value can fail to decode (the splitter accepts only well-formed escapes), by not being UTF-8.
    private(set) var escapedHigh: UInt8 = 0

    init() {}

    /// Scans `query`, a range of `bytes` that the splitter accepted as a query.
    init(_ bytes: UnsafeBufferPointer<UInt8>, query: Range<Int>?) {
        guard let query else { return }
        _ = scan(UnsafeBufferPointer(rebasing: bytes[..<query.upperBound]), from: query.lowerBound)
    }

    /// The byte range of the last value of `name` (empty for an item without `=`), if it appeared.
    @inline(__always)
    subscript(name: Name) -> Range<Int>? {
        guard present & name.bit != 0 else { return nil }
        let span: UInt64
        switch name {
        case .mode: span = spans.0
        case .oobCode: span = spans.1
        case .apiKey: span = spans.2
        case .continueUrl: span = spans.3
        case .lang: span = spans.4
        case .tenantId: span = spans.5
        case .link: span = spans.6
        case .deepLinkID: span = spans.7
        }
        return Int(truncatingIfNeeded: span &>> 32)..<Int(truncatingIfNeeded: span & 0xFFFF_FFFF)
    }

    /// Stores the span of `name` at its offset in ``spans`` (a store, not a jump table on the name).
    @inline(__always)
    private mutating func setSpan(_ name: Name, _ range: Range<Int>) {
        let span = UInt64(truncatingIfNeeded: range.lowerBound) &<< 32 | UInt64(truncatingIfNeeded: range.upperBound)
        withUnsafeMutableBytes(of: &spans) { $0.storeBytes(of: span, toByteOffset: name.rawValue &* 8, as: UInt64.self) }
    }

    /// Whether the last value of `name` holds a `%` escape.
    @inline(__always)
    func isEscaped(_ name: Name) -> Bool { escaped & name.bit != 0 }

    /// Whether the last value of `name` may fail to decode: it escapes bytes outside ASCII, which must
    /// then be UTF-8. A value without such an escape decodes to ASCII, so always decodes.
    @inline(__always)
    func mayFailToDecode(_ name: Name) -> Bool { escapedHigh & name.bit != 0 }

    /// Advances over the query from `start`, as ``URLParts`` would, and records every item on the way:
    /// items split at `&`, each at its first `=`.
    ///
    /// Sixteen bytes at a time (``ByteClasses/queryStops(_:)``): each block yields the lanes that are
    /// not plain query text, and only those are looked at, in order. The last block of the buffer is
    /// loaded so that it ends at the buffer's end (overlapping the one before, whose lanes it skips),
    /// so nothing is read outside `bytes`; a buffer shorter than 16 bytes is read a byte at a time.
    mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        let n = bytes.count
        guard let base = bytes.baseAddress, n >= ByteClasses.width else { return scanBytes(bytes, from: start) }
        let table = characterClasses
        var item = Item(start: start)
        var block = start
        while block < n {
            let at = min(block, n &- ByteClasses.width)
            // Lanes before `block` belong to the block before (only the last block overlaps it).
            var stops = ByteClasses.queryStops(base + at) & (~0 &<< UInt32(truncatingIfNeeded: block &- at))
            while stops != 0 {
                let i = at &+ stops.trailingZeroBitCount
                stops &= stops &- 1
                let c = bytes[i]
                if c == UInt8(ascii: "%"), i &+ 2 < n, table[Int(bytes[i &+ 1])] & hexClass != 0,
                    table[Int(bytes[i &+ 2])] & hexClass != 0
                {
                    // The two digits are plain text, never a stop: nothing to skip.
                    item.escape(high: bytes[i &+ 1] >= UInt8(ascii: "8"))
                } else if c == UInt8(ascii: "&") {
                    record(bytes, item, end: i)
                    item = Item(start: i &+ 1)
                } else if c == UInt8(ascii: "=") {
                    if item.equals < 0 { item.equals = i }
                } else {
                    record(bytes, item, end: i)
                    return i
                }
            }
            block = at &+ ByteClasses.width
        }
        record(bytes, item, end: n)
        return n
    }

    /// ``scan(_:from:)`` a byte at a time, for buffers shorter than one block.
    mutating func scanBytes(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        let table = characterClasses
        let n = bytes.count
        var i = start
        var item = Item(start: start)
        while i < n {
            let c = bytes[i]
            if table[Int(c)] & queryTextClass != 0 {
                i &+= 1
            } else if c == UInt8(ascii: "&") {
                record(bytes, item, end: i)
                i &+= 1
                item = Item(start: i)
            } else if c == UInt8(ascii: "=") {
                if item.equals < 0 { item.equals = i }
                i &+= 1
            } else if c == UInt8(ascii: "%"), i &+ 2 < n, table[Int(bytes[i &+ 1])] & hexClass != 0,
                table[Int(bytes[i &+ 2])] & hexClass != 0
            {
                item.escape(high: bytes[i &+ 1] >= UInt8(ascii: "8"))
                i &+= 3
            } else {
                break
            }
        }
        record(bytes, item, end: i)
        return i
    }

    /// The item being scanned: where it starts, its first `=` (-1: none yet), and its escapes.
    private struct Item {
        let start: Int
        var equals = -1
        var nameEscaped = false
        var valueEscaped = false
        /// Whether the value has an escape of a byte outside ASCII (`%80` to `%FF`).
        var valueEscapedHigh = false

        init(start: Int) { self.start = start }

        /// Notes an escape at the scan's position; `high` when its first digit is 8 or more (the
        /// digits are already checked: `8`, `9` and letters are the ones at or above `8`).
        @inline(__always)
        mutating func escape(high: Bool) {
            if equals < 0 {
                nameEscaped = true
            } else {
                valueEscaped = true
                if high { valueEscapedHigh = true }
            }
        }
    }

    /// Records `item`, which ends at `end`, if its name is one we read.
    @inline(__always)
    private mutating func record(_ bytes: UnsafeBufferPointer<UInt8>, _ item: Item, end: Int) {
        let start = item.start
        let nameEnd = item.equals < 0 ? end : item.equals
        let valueStart = item.equals < 0 ? end : item.equals &+ 1
        guard nameEnd > start || end > valueStart, let name = Self.name(bytes, start..<nameEnd, escaped: item.nameEscaped) else {
            return
        }
        let bit = name.bit
        repeated |= present & bit
        present |= bit
        if item.valueEscaped { escaped |= bit } else { escaped &= ~bit }
        if item.valueEscapedHigh { escapedHigh |= bit } else { escapedHigh &= ~bit }
        setSpan(name, valueStart..<end)
    }

    /// Which known name the bytes spell, after decoding any escapes.
    ///
    /// Compared as little-endian words of up to eight bytes (the constants spell the names; the tests
    /// check them against ``Name/text``).
    @inline(__always)
    static func name(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, escaped: Bool) -> Name? {
        if escaped { return decodedName(bytes, range) }
        let start = range.lowerBound
        switch range.count {
        case 4:
            switch word(bytes, start, 4) {
            case 0x6564_6F6D: return .mode  // "mode"
            case 0x676E_616C: return .lang  // "lang"
            case 0x6B6E_696C: return .link  // "link"
            default: return nil
            }
        case 6: return word(bytes, start, 6) == 0x7965_4B69_7061 ? .apiKey : nil  // "apiKey"
        case 7: return word(bytes, start, 7) == 0x65_646F_4362_6F6F ? .oobCode : nil  // "oobCode"
        case 8: return word(bytes, start, 8) == 0x6449_746E_616E_6574 ? .tenantId : nil  // "tenantId"
        case 11:  // "continue" "Url"
            return word(bytes, start, 8) == 0x6575_6E69_746E_6F63 && word(bytes, start &+ 8, 3) == 0x6C_7255 ? .continueUrl : nil
        case 12:  // "deep_lin" "k_id"
            return word(bytes, start, 8) == 0x6E69_6C5F_7065_6564 && word(bytes, start &+ 8, 4) == 0x6469_5F6B ? .deepLinkID : nil
        default: return nil
        }
    }

    /// The `count` (1 to 8) bytes at `at` as a little-endian word: one load when eight bytes are there
    /// to read, else a byte at a time (never past the buffer's end).
    @inline(__always)
    static func word(_ bytes: UnsafeBufferPointer<UInt8>, _ at: Int, _ count: Int) -> UInt64 {
        if at &+ 8 <= bytes.count, let base = bytes.baseAddress {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + at).loadUnaligned(as: UInt64.self))
            return count == 8 ? word : word & ((1 &<< UInt64(truncatingIfNeeded: count &* 8)) &- 1)
        }
        var word: UInt64 = 0
        for k in 0..<count { word |= UInt64(bytes[at &+ k]) &<< UInt64(truncatingIfNeeded: k &* 8) }
        return word
    }

    /// A name written with escapes (`%6Dode`) still names the parameter after decoding.
    private static func decodedName(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Name? {
        guard let decoded = PercentEncoding.decode(UnsafeBufferPointer(rebasing: bytes[range])) else { return nil }
        return Name.allCases.first { $0.text.description == decoded }
    }

}

/// A URL split into parts together with its scanned query.
struct ScannedURL {
    let parts: URLParts
    let query: QueryScan

    init(_ text: String) throws(URLSplitError) {
        var query = QueryScan()
        let parts = try URLParts(text, query: &query)
        self.init(parts: parts, query: query)
    }

    init(parts: URLParts, query: QueryScan) {
        self.parts = parts
        self.query = query
    }

    /// The decoded value of `name`, `nil` when absent; throws when it does not decode to UTF-8.
    func value(_ name: QueryScan.Name) throws(LinkInspection.Failure) -> String? {
        guard let range = query[name] else { return nil }
        let escaped = query.isEscaped(name)
        guard let value = parts.withBytes({ PercentEncoding.decode(UnsafeBufferPointer(rebasing: $0[range]), escaped: escaped) }) else {
            throw LinkInspection.Failure(code: .undecodableParameter, message: "the \(name.text) parameter does not decode to UTF-8 text")
        }
        return value
    }

    /// The decoded value of `name` when present, non-empty and decodable (the JS SDK's truthiness).
    func nonEmptyValue(_ name: QueryScan.Name) -> String? {
        guard let range = query[name], !range.isEmpty else { return nil }
        let escaped = query.isEscaped(name)
        return parts.withBytes { bytes in PercentEncoding.decode(UnsafeBufferPointer(rebasing: bytes[range]), escaped: escaped) }.nonEmpty
    }
}
