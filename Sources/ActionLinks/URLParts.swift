/// A URL split into its RFC 3986 components by ActionLinks' own strict splitter.
///
/// The splitter accepts only what RFC 3986 allows and additionally refuses what browsers would
/// silently repair (backslashes, tabs and newlines, `http:host` without `//`), so that what we
/// validate is exactly what a browser would request. Every component is a slice of ``string``:
/// splitting copies nothing.
public struct URLParts: Sendable, Hashable {
    /// The text that was split.
    public let string: String

    // UTF-8 offsets into `string`; all ASCII, so they are also character offsets.
    let schemeEnd: Int
    let userinfoRange: Range<Int>?
    let hostRange: Range<Int>?
    let portRange: Range<Int>?
    let pathRange: Range<Int>
    let queryRange: Range<Int>?
    let fragmentRange: Range<Int>?

    /// The scheme as written (compare it case-insensitively).
    public var scheme: Substring { slice(0..<schemeEnd) }
    /// The user information before `@` in the authority, if any.
    public var userinfo: Substring? { userinfoRange.map(slice) }
    /// The host as written, or `nil` when the URL has no authority (`mailto:x`).
    public var host: Substring? { hostRange.map(slice) }
    /// The port digits as written (possibly empty), or `nil` when there is no `:` after the host.
    public var port: Substring? { portRange.map(slice) }
    /// The path as written, percent-encoded.
    public var path: Substring { slice(pathRange) }
    /// The query without its `?`, as written, or `nil` when there is no `?`.
    public var query: Substring? { queryRange.map(slice) }
    /// The fragment without its `#`, as written, or `nil` when there is no `#`.
    public var fragment: Substring? { fragmentRange.map(slice) }
    /// Whether the URL has an authority (`scheme://...`).
    public var hasAuthority: Bool { hostRange != nil }

    /// Calls `body` with the UTF-8 bytes of ``string`` (contiguous: `init` made it native).
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = string
        return copy.withUTF8(body)
    }

    @inline(__always)
    func slice(_ range: Range<Int>) -> Substring {
        let utf8 = string.utf8
        let lower = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
        let upper = utf8.index(lower, offsetBy: range.count)
        return string[lower..<upper]
    }

    /// Splits `string`, or throws a ``URLSplitError`` that says what is wrong and where.
    public init(_ string: String) throws(URLSplitError) {
        var scanner = PlainQueryScanner()
        try self.init(string, query: &scanner)
    }

    /// Splits `string`, handing its query to `scanner` while validating it (one pass over the bytes).
    init<Scanner: QueryScanner>(_ string: String, query scanner: inout Scanner) throws(URLSplitError) {
        var text = string
        var offsets = Offsets()
        if let error = text.withUTF8({ bytes in URLParts.split(bytes, into: &offsets, query: &scanner) }) { throw error }
        self.string = text
        schemeEnd = offsets.schemeEnd
        userinfoRange = offsets.userinfo
        hostRange = offsets.host
        portRange = offsets.port
        pathRange = offsets.path
        queryRange = offsets.query
        fragmentRange = offsets.fragment
    }

    /// Calls `body` with the raw (still percent-encoded) name and value of each `&`-separated query
    /// item, split at the first `=`; an item without `=` has a `nil` value. Empty items are skipped.
    public func forEachQueryItem(_ body: (_ name: Substring, _ value: Substring?) -> Void) {
        guard let query else { return }
        var rest = query[...]
        while !rest.isEmpty {
            let item: Substring
            if let amp = rest.utf8.firstIndex(of: UInt8(ascii: "&")) {
                item = rest[rest.startIndex..<amp]
                rest = rest[rest.utf8.index(after: amp)...]
            } else {
                item = rest
                rest = rest[rest.endIndex...]
            }
            if item.isEmpty { continue }
            if let eq = item.utf8.firstIndex(of: UInt8(ascii: "=")) {
                body(item[item.startIndex..<eq], item[item.utf8.index(after: eq)...])
            } else {
                body(item, nil)
            }
        }
    }

    /// The percent-decoded value of the last query item called `name`, `nil` when absent or when its
    /// value does not decode to UTF-8. Names are compared after decoding.
    public func queryValue(named name: String) -> String? {
        var found: Substring?
        forEachQueryItem { itemName, value in
            if PercentEncoding.decodedEquals(itemName, name) { found = value ?? "" }
        }
        return found.flatMap(PercentEncoding.decode)
    }
}

/// Why a text is not a URL the strict splitter accepts.
public struct URLSplitError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable identifier of the kind of problem.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The identifier, stable across releases (used in JSON output).
        public let rawValue: String
        /// The text is empty.
        public static let empty = Code(rawValue: "empty")
        /// A control character, space, tab, CR or LF.
        public static let controlCharacter = Code(rawValue: "controlCharacter")
        /// A backslash, which browsers read as `/`.
        public static let backslash = Code(rawValue: "backslash")
        /// A byte outside ASCII: URLs must be percent-encoded and hosts punycode.
        public static let nonASCII = Code(rawValue: "nonASCII")
        /// `%` not followed by two hexadecimal digits.
        public static let malformedPercentEscape = Code(rawValue: "malformedPercentEscape")
        /// No `scheme:` at the start: not an absolute URL.
        public static let missingScheme = Code(rawValue: "missingScheme")
        /// An `http`/`https`-like URL without `//host`.
        public static let missingAuthority = Code(rawValue: "missingAuthority")
        /// The authority has no host.
        public static let emptyHost = Code(rawValue: "emptyHost")
        /// The host is not a valid RFC 3986 host.
        public static let invalidHost = Code(rawValue: "invalidHost")
        /// The port is not made of digits.
        public static let invalidPort = Code(rawValue: "invalidPort")
        /// A character that RFC 3986 does not allow where it stands.
        public static let invalidCharacter = Code(rawValue: "invalidCharacter")
        /// The text is longer than the limit.
        public static let tooLong = Code(rawValue: "tooLong")
        /// See ``rawValue``.
        public var description: String { rawValue }
    }

    /// What kind of problem this is.
    public let code: Code
    /// The UTF-8 offset of the offending character, when there is one.
    public let offset: Int?
    /// A sentence saying what is wrong and what to do.
    public let message: String

    /// See ``message``.
    public var description: String { message }
}

extension URLParts {
    struct Offsets {
        var schemeEnd = 0
        var userinfo: Range<Int>?
        var host: Range<Int>?
        var port: Range<Int>?
        var path = 0..<0
        var query: Range<Int>?
        var fragment: Range<Int>?
    }

    /// Inputs longer than this are refused outright, bounding the work any input can cause.
    public static let maximumLength = 65_536

    /// Splits in one pass into `o`, validating each byte with a table lookup for the component it is
    /// in; the query is walked by `scanner`, which may collect its items on the way. Returns `nil`, or
    /// what is wrong (the message is only built then).
    static func split<Scanner: QueryScanner>(
        _ b: UnsafeBufferPointer<UInt8>, into o: inout Offsets, query scanner: inout Scanner
    ) -> URLSplitError? {
        let n = b.count
        let table = characterClasses
        if n == 0 { return URLSplitError(code: .empty, offset: nil, message: "the URL is empty") }
        if n > maximumLength {
            return URLSplitError(code: .tooLong, offset: nil, message: "the URL is \(n) bytes long; the limit is \(maximumLength)")
        }
        // Any failure first reports the leftmost byte that is wrong anywhere (a space, a backslash, a bad
        // escape), which says more than the structural problem it caused.
        func fail(_ code: URLSplitError.Code, _ at: Int, _ message: String) -> URLSplitError {
            firstInvalidByte(b) ?? URLSplitError(code: code, offset: at, message: message)
        }
        func character(_ at: Int) -> String { String(Character(Unicode.Scalar(b[at]))) }
        func scan(_ start: Int, _ allowed: UInt16) -> Int { advance(b, from: start, over: allowed) }

        // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
        var i = 0
        if table[Int(b[0])] & alphaClass != 0 {
            i = 1
            while i < n, table[Int(b[i])] & schemeClass != 0 { i += 1 }
        }
        guard i > 0, i < n, b[i] == UInt8(ascii: ":") else {
            return fail(.missingScheme, 0, "not an absolute URL: it must start with a scheme such as 'https:'")
        }
        o.schemeEnd = i
        // Whether the scheme is special matters only for an empty host or a missing `//`: worked out then.
        func special() -> Bool { isSpecialScheme(b, 0..<o.schemeEnd) }
        i += 1

        if i + 1 < n, b[i] == UInt8(ascii: "/"), b[i + 1] == UInt8(ascii: "/") {
            let authorityStart = i + 2
            var hostStart = authorityStart
            // Most authorities are a host alone: when a host's characters run up to something other than
            // ':' or '@' (and do not open an IP literal), so would userinfo's (the same class with ':'),
            // and there is no '@': that run is the host.
            var hostEnd = scan(authorityStart, regNameClass)
            let hostAlone =
                (hostEnd == n || (b[hostEnd] != UInt8(ascii: ":") && b[hostEnd] != UInt8(ascii: "@")))
                && (authorityStart == n || b[authorityStart] != UInt8(ascii: "["))
            if !hostAlone {
                // userinfo: up to an '@' before the end of the authority
                let userinfoEnd = scan(authorityStart, userinfoClass)
                if userinfoEnd < n, b[userinfoEnd] == UInt8(ascii: "@") {
                    o.userinfo = authorityStart..<userinfoEnd
                    hostStart = userinfoEnd + 1
                }
                if hostStart < n, b[hostStart] == UInt8(ascii: "[") {
                    var close = hostStart + 1
                    var sawColon = false
                    while close < n, table[Int(b[close])] & ipv6Class != 0 {
                        if b[close] == UInt8(ascii: ":") { sawColon = true }
                        close += 1
                    }
                    guard close < n, b[close] == UInt8(ascii: "]") else {
                        if close < n, !isAuthorityEnd(b[close]) {
                            return fail(
                                .invalidHost, close, "character '\(character(close))' at offset \(close) is not allowed in an IPv6 literal")
                        }
                        return fail(.invalidHost, hostStart, "the IP literal starting at offset \(hostStart) has no closing ']'")
                    }
                    guard sawColon else {
                        return fail(.invalidHost, hostStart, "the IP literal at offset \(hostStart) is not an IPv6 address")
                    }
                    hostEnd = close + 1
                } else {
                    hostEnd = scan(hostStart, regNameClass)
                }
            }
            o.host = hostStart..<hostEnd
            var end = hostEnd
            if end < n, b[end] == UInt8(ascii: ":") {
                end += 1
                while end < n, table[Int(b[end])] & digitClass != 0 { end += 1 }
                o.port = (hostEnd + 1)..<end
                if end < n, !isAuthorityEnd(b[end]) {
                    return fail(.invalidPort, end, "the port must be digits; found '\(character(end))' at offset \(end)")
                }
            } else if end < n, !isAuthorityEnd(b[end]) {
                if b[end] == UInt8(ascii: "@") {
                    return fail(.invalidCharacter, end, "a second '@' at offset \(end) in the authority")
                }
                if b[end] == UInt8(ascii: "%") {
                    return fail(.malformedPercentEscape, end, "'%' at offset \(end) is not followed by two hexadecimal digits")
                }
                return fail(.invalidHost, end, "character '\(character(end))' at offset \(end) is not allowed in a host")
            }
            if hostStart == hostEnd, special() {
                return fail(.emptyHost, hostStart, "the URL has no host after '//'")
            }
            i = end
        } else if special() {
            let scheme = String(decoding: UnsafeBufferPointer(rebasing: b[0..<o.schemeEnd]), as: UTF8.self)
            return fail(.missingAuthority, i, "a '\(scheme):' URL must continue with '//' and a host")
        }

        let pathStart = i
        i = scan(i, pathClass)
        o.path = pathStart..<i
        if i < n, b[i] == UInt8(ascii: "?") {
            let start = i + 1
            i = scanner.scan(b, from: start)
            o.query = start..<i
        }
        if i < n, b[i] == UInt8(ascii: "#") {
            let start = i + 1
            i = scan(start, queryClass)
            o.fragment = start..<i
        }
        if i < n {
            if b[i] == UInt8(ascii: "%") {
                return fail(.malformedPercentEscape, i, "'%' at offset \(i) is not followed by two hexadecimal digits")
            }
            let part = o.fragment != nil ? "a fragment" : o.query != nil ? "a query" : "a path"
            return fail(.invalidCharacter, i, "character '\(character(i))' at offset \(i) is not allowed in \(part); percent-encode it")
        }
        return nil
    }

    /// Advances over bytes of the class `allowed` and valid escapes; stops at the first other byte.
    ///
    /// Sixteen bytes at a time for the classes ``ByteClasses/stops(_:outside:)`` knows, the last block
    /// loaded so that it ends at the buffer's end (overlapping, its lanes before `i` dropped); a byte
    /// at a time for other classes and buffers shorter than a block.
    @inline(__always)
    static func advance(_ b: UnsafeBufferPointer<UInt8>, from start: Int, over allowed: UInt16) -> Int {
        let n = b.count
        guard let base = b.baseAddress, n >= ByteClasses.width, ByteClasses.handles(allowed) else {
            return advanceBytes(b, from: start, over: allowed)
        }
        let table = characterClasses
        var i = start
        while i < n {
            let at = min(i, n &- ByteClasses.width)
            let stops = ByteClasses.stops(base + at, outside: allowed)! & (~0 &<< UInt32(truncatingIfNeeded: i &- at))
            if stops == 0 {
                i = at &+ ByteClasses.width
                continue
            }
            i = at &+ stops.trailingZeroBitCount
            guard b[i] == UInt8(ascii: "%"), i &+ 2 < n, table[Int(b[i &+ 1])] & hexClass != 0, table[Int(b[i &+ 2])] & hexClass != 0
            else { return i }
            i &+= 3
        }
        return n
    }

    /// ``advance(_:from:over:)`` a byte at a time.
    @inline(__always)
    static func advanceBytes(_ b: UnsafeBufferPointer<UInt8>, from start: Int, over allowed: UInt16) -> Int {
        let table = characterClasses
        let n = b.count
        var i = start
        while i < n {
            let c = b[i]
            if table[Int(c)] & allowed != 0 {
                i += 1
            } else if c == UInt8(ascii: "%"), i + 2 < n, table[Int(b[i + 1])] & hexClass != 0, table[Int(b[i + 2])] & hexClass != 0 {
                i += 3
            } else {
                break
            }
        }
        return i
    }

    @inline(__always)
    private static func isAuthorityEnd(_ c: UInt8) -> Bool {
        c == UInt8(ascii: "/") || c == UInt8(ascii: "?") || c == UInt8(ascii: "#")
    }

    /// The leftmost byte that no URL may contain, or a malformed escape, with a message that names it.
    private static func firstInvalidByte(_ b: UnsafeBufferPointer<UInt8>) -> URLSplitError? {
        var i = 0
        while i < b.count {
            let c = b[i]
            if c >= 0x80 {
                return URLSplitError(
                    code: .nonASCII, offset: i, message: "non-ASCII byte at offset \(i): percent-encode it (hosts must be punycode)")
            }
            if c <= 0x20 || c == 0x7F {
                let what = c == 0x20 ? "a space" : c == 0x09 ? "a tab" : c == 0x0A || c == 0x0D ? "a line break" : "a control character"
                return URLSplitError(
                    code: .controlCharacter, offset: i, message: "\(what) at offset \(i): percent-encode it (browsers strip or change it)")
            }
            if c == UInt8(ascii: "\\") {
                return URLSplitError(
                    code: .backslash, offset: i, message: "a backslash at offset \(i): browsers read it as '/'; use '/' or %5C")
            }
            if c == UInt8(ascii: "%") {
                guard i + 2 < b.count, isHexDigit(b[i + 1]), isHexDigit(b[i + 2]) else {
                    return URLSplitError(
                        code: .malformedPercentEscape, offset: i, message: "'%' at offset \(i) is not followed by two hexadecimal digits")
                }
                i += 3
                continue
            }
            i += 1
        }
        return nil
    }

    /// The WHATWG "special schemes": browsers always give their URLs an authority (`http:x` is
    /// read as `http://x`), so we refuse such URLs without `//` instead of guessing.
    static func isSpecialScheme(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Bool {
        // The scheme's bytes as a little-endian word with ASCII letters lower-cased (scheme characters
        // other than letters already have the 0x20 bit); the constants spell the schemes.
        guard (2...5).contains(r.count) else { return false }
        let word = QueryScan.word(b, r.lowerBound, r.count) | (0x20_2020_2020 & ((1 &<< UInt64(r.count &* 8)) &- 1))
        switch word {
        case 0x73_7074_7468, 0x7074_7468, 0x656C_6966: return true  // "https", "http", "file"
        case 0x73_7377, 0x70_7466, 0x7377: return true  // "wss", "ftp", "ws"
        default: return false
        }
    }
}

/// Walks the query while the splitter validates it, so that a caller can collect query items in
/// the same pass over the bytes.
protocol QueryScanner {
    /// Advances from `start` over what a query may hold (its characters and valid `%HH` escapes) and
    /// returns the offset of the first other byte (`#`, the end, or an invalid byte).
    mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int
}

/// Validates the query and collects nothing.
struct PlainQueryScanner: QueryScanner {
    @inline(__always)
    func scan(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        URLParts.advance(bytes, from: start, over: queryClass)
    }
}

// MARK: - RFC 3986 character classes

@inline(__always) func isAlpha(_ c: UInt8) -> Bool { characterClasses[Int(c)] & alphaClass != 0 }
@inline(__always) func isDigit(_ c: UInt8) -> Bool { characterClasses[Int(c)] & digitClass != 0 }
@inline(__always) func isHexDigit(_ c: UInt8) -> Bool { characterClasses[Int(c)] & hexClass != 0 }
/// unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"
@inline(__always) func isUnreserved(_ c: UInt8) -> Bool { characterClasses[Int(c)] & unreservedClass != 0 }

let alphaClass: UInt16 = 1 << 0
let digitClass: UInt16 = 1 << 1
let hexClass: UInt16 = 1 << 2
let unreservedClass: UInt16 = 1 << 3
/// Scheme characters after the first: ALPHA / DIGIT / "+" / "-" / ".".
let schemeClass: UInt16 = 1 << 4
/// reg-name = unreserved / sub-delims (escapes are checked separately, in `scan`).
let regNameClass: UInt16 = 1 << 5
/// userinfo = reg-name / ":".
let userinfoClass: UInt16 = 1 << 6
/// A path: pchar (userinfo / "@") and "/".
let pathClass: UInt16 = 1 << 7
/// A query or fragment: a path's characters and "?".
let queryClass: UInt16 = 1 << 8
/// Inside `[...]`: hex digits, ":" and ".".
let ipv6Class: UInt16 = 1 << 9
/// A query's characters that carry no structure: all of ``queryClass`` but `&` and `=`.
let queryTextClass: UInt16 = 1 << 10

/// The classes of each byte value; built once, read for every byte of every URL.
nonisolated(unsafe) let characterClasses: UnsafePointer<UInt16> = {
    let table = UnsafeMutablePointer<UInt16>.allocate(capacity: 256)
    table.initialize(repeating: 0, count: 256)
    func add(_ characters: String, _ flags: UInt16) {
        for c in characters.utf8 { table[Int(c)] |= flags }
    }
    let alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    let digits = "0123456789"
    let subDelimiters = "!$&'()*+,;="
    add(alpha, alphaClass | schemeClass)
    add(digits, digitClass | schemeClass)
    add(digits + "abcdefABCDEF", hexClass)
    add("+-.", schemeClass)
    add(digits + "abcdefABCDEF:.", ipv6Class)
    add(alpha + digits + "-._~", unreservedClass | regNameClass | userinfoClass | pathClass | queryClass)
    add(subDelimiters, regNameClass | userinfoClass | pathClass | queryClass)
    add(":", userinfoClass | pathClass | queryClass)
    add("@/", pathClass | queryClass)
    add("?", queryClass)
    for c in 0..<256 where table[c] & queryClass != 0 && c != Int(UInt8(ascii: "&")) && c != Int(UInt8(ascii: "=")) {
        table[c] |= queryTextClass
    }
    return UnsafePointer(table)
}()
