/// The query parameters that links are made of, found in one pass over a URL's bytes.
///
/// This is the hot path of link parsing: names are compared as bytes, values are kept as byte
/// ranges, and only the values that are used get decoded into strings.
struct QueryScan {
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
    }

    private var mode, oobCode, apiKey, continueUrl, lang, tenantId, link, deepLinkID: Range<Int>?
    /// One bit per ``Name`` that appeared more than once (the last occurrence wins).
    private(set) var repeated: UInt8 = 0

    /// The byte range of the last value of `name` (empty for an item without `=`), if it appeared.
    subscript(name: Name) -> Range<Int>? {
        get {
            switch name {
            case .mode: mode
            case .oobCode: oobCode
            case .apiKey: apiKey
            case .continueUrl: continueUrl
            case .lang: lang
            case .tenantId: tenantId
            case .link: link
            case .deepLinkID: deepLinkID
            }
        }
        set {
            switch name {
            case .mode: mode = newValue
            case .oobCode: oobCode = newValue
            case .apiKey: apiKey = newValue
            case .continueUrl: continueUrl = newValue
            case .lang: lang = newValue
            case .tenantId: tenantId = newValue
            case .link: link = newValue
            case .deepLinkID: deepLinkID = newValue
            }
        }
    }

    /// Scans `query` (a range of `bytes`): items split at `&`, each at its first `=`.
    init(_ bytes: UnsafeBufferPointer<UInt8>, query: Range<Int>?) {
        guard let query else { return }
        var start = query.lowerBound
        let end = query.upperBound
        while start < end {
            var i = start
            while i < end, bytes[i] != UInt8(ascii: "&"), bytes[i] != UInt8(ascii: "=") { i += 1 }
            let nameEnd = i
            var valueStart = i
            if i < end, bytes[i] == UInt8(ascii: "=") {
                i += 1
                valueStart = i
                while i < end, bytes[i] != UInt8(ascii: "&") { i += 1 }
            }
            if nameEnd > start || i > valueStart, let name = Self.name(bytes, start..<nameEnd) {
                if self[name] != nil { repeated |= 1 << UInt8(name.rawValue) }
                self[name] = valueStart..<i
            }
            start = i + 1
        }
    }

    /// Which known name the bytes spell, after decoding any escapes.
    private static func name(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Name? {
        switch range.count {
        case 4:
            if equals(bytes, range, "mode") { return .mode }
            if equals(bytes, range, "lang") { return .lang }
            if equals(bytes, range, "link") { return .link }
        case 6: if equals(bytes, range, "apiKey") { return .apiKey }
        case 7: if equals(bytes, range, "oobCode") { return .oobCode }
        case 8: if equals(bytes, range, "tenantId") { return .tenantId }
        case 11: if equals(bytes, range, "continueUrl") { return .continueUrl }
        case 12: if equals(bytes, range, "deep_link_id") { return .deepLinkID }
        default: break
        }
        // A name written with escapes (`%6Dode`) still names the parameter after decoding.
        guard range.count > 4, bytes[range].contains(UInt8(ascii: "%")),
            let decoded = PercentEncoding.decode(UnsafeBufferPointer(rebasing: bytes[range]))
        else { return nil }
        return Name.allCases.first { $0.text.description == decoded }
    }

    @inline(__always)
    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ text: StaticString) -> Bool {
        let other = text.utf8Start
        var k = 0
        for i in range {
            if bytes[i] != other[k] { return false }
            k += 1
        }
        return true
    }
}

/// A URL split into parts together with its scanned query.
struct ScannedURL {
    let parts: URLParts
    let query: QueryScan

    init(_ text: String) throws(URLSplitError) {
        let parts = try URLParts(text)
        let queryRange = parts.queryRange
        self.init(parts: parts, query: parts.withBytes { QueryScan($0, query: queryRange) })
    }

    init(parts: URLParts, query: QueryScan) {
        self.parts = parts
        self.query = query
    }

    /// The decoded value of `name`, `nil` when absent; throws when it does not decode to UTF-8.
    func value(_ name: QueryScan.Name) throws(LinkInspection.Failure) -> String? {
        guard let range = query[name] else { return nil }
        guard let value = parts.withBytes({ PercentEncoding.decode(UnsafeBufferPointer(rebasing: $0[range])) }) else {
            throw LinkInspection.Failure(code: .undecodableParameter, message: "the \(name.text) parameter does not decode to UTF-8 text")
        }
        return value
    }

    /// The decoded value of `name` when present, non-empty and decodable (the JS SDK's truthiness).
    func nonEmptyValue(_ name: QueryScan.Name) -> String? {
        guard let range = query[name], !range.isEmpty else { return nil }
        return parts.withBytes { bytes in PercentEncoding.decode(UnsafeBufferPointer(rebasing: bytes[range])) }.nonEmpty
    }
}
