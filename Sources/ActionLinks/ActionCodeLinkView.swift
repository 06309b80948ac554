/// An action link read without copying: the mode, and each field as the bytes that spell it in the
/// link (or, for a link nested in another and escaped there, in the buffer it was decoded into).
///
/// ``ActionCodeLink/withView(of:_:)`` hands one to a closure; it reads exactly the links
/// ``ActionCodeLink/parse(_:)`` reads (the same layers, rules and refusals: every field it holds
/// decodes), but makes no strings. Its fields point into memory that lives only while the closure
/// runs: take what is needed (``Field/string``, ``Field/equals(_:)``, ``Field/withDecodedBytes(_:)``)
/// before returning, and never keep the view or a field.
public struct ActionCodeLinkView {
    /// One field of the link, as written there.
    public struct Field {
        /// The bytes as written (percent-encoded when ``isEscaped``); valid only inside the closure.
        public let raw: UnsafeBufferPointer<UInt8>
        /// Whether ``raw`` holds a `%` escape (else it is the value itself).
        public let isEscaped: Bool

        /// The value, as a new string (what ``ActionCodeLink/parse(_:)`` would hold).
        public var string: String {
            // Checked when the view was made: every field decodes.
            PercentEncoding.decode(raw, escaped: isEscaped) ?? ""
        }

        /// Calls `body` with the decoded bytes: ``raw`` itself when nothing is escaped, else a
        /// temporary buffer.
        public func withDecodedBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
            guard isEscaped else { return try body(raw) }
            return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: raw.count) { buffer in
                let count = PercentEncoding.decode(raw, into: buffer) ?? 0
                return try body(UnsafeBufferPointer(rebasing: buffer[..<count]))
            }
        }

        /// Whether the decoded value is `text`, compared byte for byte without making a string.
        public func equals(_ text: String) -> Bool {
            withDecodedBytes { bytes in
                var text = text
                return text.withUTF8 { memoryEquals($0, bytes) }
            }
        }

        /// The field's bytes if it is present, non-empty and decodes (as `parse` reads it); `decodes`
        /// turns false for one that is present but does not decode. Inlined: called with a constant
        /// name, the span's lookup folds away, and a call's saving of registers cost more than its body.
        @inline(__always)
        static func read(_ bytes: UnsafeBufferPointer<UInt8>, _ query: QueryScan, _ name: QueryScan.Name, decodes: inout Bool)
            -> Field?
        {
            guard let range = query[name], !range.isEmpty else { return nil }
            let raw = UnsafeBufferPointer(rebasing: bytes[range])
            let escaped = query.isEscaped(name)
            // Only escapes of bytes outside ASCII can fail (by not being UTF-8): check those by decoding.
            if query.mayFailToDecode(name) {
                let valid = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: raw.count) {
                    PercentEncoding.decode(raw, into: $0) != nil
                }
                if !valid {
                    decodes = false
                    return nil
                }
            }
            return Field(raw: raw, isEscaped: escaped)
        }
    }

    /// What the link does.
    public let mode: ActionCodeLink.Mode
    /// The one-time code (never empty).
    public let oobCode: Field
    /// The API key, if the link carries one.
    public let apiKey: Field?
    /// The continue URL, if any (not yet checked against a policy).
    public let continueURL: Field?
    /// The language code, if any.
    public let languageCode: Field?
    /// The tenant ID, if any.
    public let tenantID: Field?

    /// The view of the innermost layer's query, as ``LinkParser`` reads its action: a known mode, a
    /// non-empty code, and every field present decodable.
    init?(_ bytes: UnsafeBufferPointer<UInt8>, _ query: QueryScan) {
        guard let mode = LinkParser.mode(bytes, query) else { return nil }
        var decodes = true
        guard let code = Field.read(bytes, query, .oobCode, decodes: &decodes) else { return nil }
        apiKey = Field.read(bytes, query, .apiKey, decodes: &decodes)
        continueURL = Field.read(bytes, query, .continueUrl, decodes: &decodes)
        languageCode = Field.read(bytes, query, .lang, decodes: &decodes)
        tenantID = Field.read(bytes, query, .tenantId, decodes: &decodes)
        guard decodes else { return nil }
        self.mode = mode
        oobCode = code
    }

    /// The link as ``ActionCodeLink/parse(_:)`` returns it (strings made now).
    public var link: ActionCodeLink {
        ActionCodeLink(
            mode: mode, oobCode: oobCode.string, apiKey: apiKey?.string, continueURL: continueURL?.string,
            languageCode: languageCode?.string, tenantID: tenantID?.string)
    }
}

extension ActionCodeLink {
    /// Reads `link` as ``parse(_:)`` does, without copying, and calls `body` with what it found;
    /// `nil` when it is not an action link (then `body` is not called). The view and its fields are
    /// valid only inside `body`.
    @inlinable
    public static func withView<R>(of link: String, _ body: (ActionCodeLinkView) -> R) -> R? {
        // Inlined into the caller, where `R` is known: a generic `R?` here would look up its metadata
        // on every call, which cost more than the strings the view saves. The layers are read by the
        // non-generic entry below.
        var result: R?
        return _readView(of: link) { result = body($0) } ? result : nil
    }

    /// ``withView(of:_:)`` without a result: whether `link` is an action link (then `body` ran).
    @usableFromInline
    static func _readView(of link: String, _ body: (ActionCodeLinkView) -> Void) -> Bool {
        // `LinkParser.parse` specialised for a concrete result (`Bool`).
        let found = LinkParser.parse(link) { bytes, query -> Bool? in
            guard let view = ActionCodeLinkView(bytes, query) else { return nil }
            body(view)
            return true
        }
        return found == true
    }
}
