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

    @inline(__always)
    func slice(_ range: Range<Int>) -> Substring {
        let utf8 = string.utf8
        let lower = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
        let upper = utf8.index(lower, offsetBy: range.count)
        return string[lower..<upper]
    }

    /// Splits `string`, or throws a ``URLSplitError`` that says what is wrong and where.
    public init(_ string: String) throws(URLSplitError) {
        var text = string
        let result = text.withUTF8 { bytes in URLParts.split(bytes) }
        switch result {
        case .success(let offsets):
            self.string = text
            schemeEnd = offsets.schemeEnd
            userinfoRange = offsets.userinfo
            hostRange = offsets.host
            portRange = offsets.port
            pathRange = offsets.path
            queryRange = offsets.query
            fragmentRange = offsets.fragment
        case .failure(let error):
            throw error
        }
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

    static func split(_ b: UnsafeBufferPointer<UInt8>) -> Result<Offsets, URLSplitError> {
        let n = b.count
        func fail(_ code: URLSplitError.Code, _ at: Int?, _ message: String) -> Result<Offsets, URLSplitError> {
            .failure(URLSplitError(code: code, offset: at, message: message))
        }
        if n == 0 { return fail(.empty, nil, "the URL is empty") }
        if n > maximumLength {
            return fail(.tooLong, nil, "the URL is \(n) bytes long; the limit is \(maximumLength)")
        }
        // One pass for the characters that are wrong anywhere, so the messages are specific.
        var i = 0
        while i < n {
            let c = b[i]
            if c >= 0x80 {
                return fail(.nonASCII, i, "non-ASCII byte at offset \(i): percent-encode it (hosts must be punycode)")
            }
            if c <= 0x20 || c == 0x7F {
                let what = c == 0x20 ? "a space" : c == 0x09 ? "a tab" : c == 0x0A || c == 0x0D ? "a line break" : "a control character"
                return fail(.controlCharacter, i, "\(what) at offset \(i): percent-encode it (browsers strip or change it)")
            }
            if c == UInt8(ascii: "\\") {
                return fail(.backslash, i, "a backslash at offset \(i): browsers read it as '/'; use '/' or %5C")
            }
            if c == UInt8(ascii: "%") {
                guard i + 2 < n, isHexDigit(b[i + 1]), isHexDigit(b[i + 2]) else {
                    return fail(.malformedPercentEscape, i, "'%' at offset \(i) is not followed by two hexadecimal digits")
                }
                i += 3
                continue
            }
            i += 1
        }

        var o = Offsets()
        // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
        guard isAlpha(b[0]) else {
            return fail(.missingScheme, 0, "not an absolute URL: it must start with a scheme such as 'https:'")
        }
        i = 1
        while i < n, isSchemeCharacter(b[i]) { i += 1 }
        guard i < n, b[i] == UInt8(ascii: ":") else {
            return fail(.missingScheme, 0, "not an absolute URL: it must start with a scheme such as 'https:'")
        }
        o.schemeEnd = i
        let special = isSpecialScheme(b, 0..<i)
        i += 1

        if i + 1 < n, b[i] == UInt8(ascii: "/"), b[i + 1] == UInt8(ascii: "/") {
            let authorityStart = i + 2
            var end = authorityStart
            while end < n, b[end] != UInt8(ascii: "/"), b[end] != UInt8(ascii: "?"), b[end] != UInt8(ascii: "#") {
                end += 1
            }
            var hostStart = authorityStart
            var at = authorityStart
            while at < end {
                if b[at] == UInt8(ascii: "@") {
                    if o.userinfo != nil {
                        return fail(.invalidCharacter, at, "a second '@' at offset \(at) in the authority")
                    }
                    o.userinfo = authorityStart..<at
                    hostStart = at + 1
                }
                at += 1
            }
            if let userinfo = o.userinfo {
                for k in userinfo where !isUserinfoCharacter(b[k]) {
                    return fail(.invalidCharacter, k, "character '\(Character(Unicode.Scalar(b[k])))' at offset \(k) is not allowed in user information")
                }
            }
            var hostEnd = end
            if hostStart < end, b[hostStart] == UInt8(ascii: "[") {
                var close = hostStart + 1
                while close < end, b[close] != UInt8(ascii: "]") { close += 1 }
                guard close < end else {
                    return fail(.invalidHost, hostStart, "the IP literal starting at offset \(hostStart) has no closing ']'")
                }
                var sawColon = false
                for k in (hostStart + 1)..<close {
                    let c = b[k]
                    if c == UInt8(ascii: ":") { sawColon = true; continue }
                    if !(isHexDigit(c) || c == UInt8(ascii: ".")) {
                        return fail(.invalidHost, k, "character '\(Character(Unicode.Scalar(c)))' at offset \(k) is not allowed in an IPv6 literal")
                    }
                }
                if !sawColon {
                    return fail(.invalidHost, hostStart, "the IP literal at offset \(hostStart) is not an IPv6 address")
                }
                hostEnd = close + 1
                if hostEnd < end, b[hostEnd] != UInt8(ascii: ":") {
                    return fail(.invalidHost, hostEnd, "unexpected character after the IP literal at offset \(hostEnd)")
                }
            } else {
                var k = hostStart
                while k < end, b[k] != UInt8(ascii: ":") {
                    if !isRegNameCharacter(b[k]) {
                        return fail(.invalidHost, k, "character '\(Character(Unicode.Scalar(b[k])))' at offset \(k) is not allowed in a host")
                    }
                    k += 1
                }
                hostEnd = k
            }
            o.host = hostStart..<hostEnd
            if hostEnd < end {
                // b[hostEnd] == ":"
                for k in (hostEnd + 1)..<end where !isDigit(b[k]) {
                    return fail(.invalidPort, k, "the port must be digits; found '\(Character(Unicode.Scalar(b[k])))' at offset \(k)")
                }
                o.port = (hostEnd + 1)..<end
            }
            if special, hostStart == hostEnd {
                return fail(.emptyHost, hostStart, "the URL has no host after '//'")
            }
            i = end
        } else if special {
            return fail(.missingAuthority, i, "a '\(String(decoding: UnsafeBufferPointer(rebasing: b[0..<o.schemeEnd]), as: UTF8.self)):' URL must continue with '//' and a host")
        }

        let pathStart = i
        while i < n, b[i] != UInt8(ascii: "?"), b[i] != UInt8(ascii: "#") {
            if !(isPathCharacter(b[i])) {
                return fail(.invalidCharacter, i, "character '\(Character(Unicode.Scalar(b[i])))' at offset \(i) is not allowed in a path; percent-encode it")
            }
            i += 1
        }
        o.path = pathStart..<i
        if i < n, b[i] == UInt8(ascii: "?") {
            let start = i + 1
            i = start
            while i < n, b[i] != UInt8(ascii: "#") {
                if !isQueryCharacter(b[i]) {
                    return fail(.invalidCharacter, i, "character '\(Character(Unicode.Scalar(b[i])))' at offset \(i) is not allowed in a query; percent-encode it")
                }
                i += 1
            }
            o.query = start..<i
        }
        if i < n, b[i] == UInt8(ascii: "#") {
            let start = i + 1
            i = start
            while i < n {
                if !isQueryCharacter(b[i]) {
                    return fail(.invalidCharacter, i, "character '\(Character(Unicode.Scalar(b[i])))' at offset \(i) is not allowed in a fragment; percent-encode it")
                }
                i += 1
            }
            o.fragment = start..<n
        }
        return .success(o)
    }

    /// The WHATWG "special schemes": browsers always give their URLs an authority (`http:x` is
    /// read as `http://x`), so we refuse such URLs without `//` instead of guessing.
    private static func isSpecialScheme(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Bool {
        func equals(_ word: StaticString) -> Bool {
            guard word.utf8CodeUnitCount == r.count else { return false }
            let w = word.utf8Start
            for k in 0..<r.count where b[r.lowerBound + k] | 0x20 != w[k] { return false }
            return true
        }
        return equals("https") || equals("http") || equals("wss") || equals("ws") || equals("ftp") || equals("file")
    }
}

// MARK: - RFC 3986 character classes

@inline(__always) func isAlpha(_ c: UInt8) -> Bool { (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A }
@inline(__always) func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
@inline(__always) func isHexDigit(_ c: UInt8) -> Bool { isDigit(c) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66) }

@inline(__always) private func isSchemeCharacter(_ c: UInt8) -> Bool {
    isAlpha(c) || isDigit(c) || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") || c == UInt8(ascii: ".")
}

/// unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"
@inline(__always) func isUnreserved(_ c: UInt8) -> Bool {
    isAlpha(c) || isDigit(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || c == UInt8(ascii: "_") || c == UInt8(ascii: "~")
}

/// sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "="
@inline(__always) private func isSubDelimiter(_ c: UInt8) -> Bool {
    switch c {
    case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
        UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
        UInt8(ascii: "="):
        return true
    default:
        return false
    }
}

// `%` is accepted by these classes because escapes were validated in the first pass.
@inline(__always) private func isRegNameCharacter(_ c: UInt8) -> Bool {
    isUnreserved(c) || isSubDelimiter(c) || c == UInt8(ascii: "%")
}

@inline(__always) private func isUserinfoCharacter(_ c: UInt8) -> Bool {
    isRegNameCharacter(c) || c == UInt8(ascii: ":")
}

@inline(__always) private func isPathCharacter(_ c: UInt8) -> Bool {
    isUserinfoCharacter(c) || c == UInt8(ascii: "@") || c == UInt8(ascii: "/")
}

@inline(__always) private func isQueryCharacter(_ c: UInt8) -> Bool {
    isPathCharacter(c) || c == UInt8(ascii: "?")
}
