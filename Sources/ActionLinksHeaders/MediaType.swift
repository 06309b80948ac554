/// A `Content-Type` value (RFC 9110 §8.3.1): `type/subtype` and parameters.
public struct MediaType: Sendable, Hashable {
    /// The type in lower case (`application`).
    public let type: String
    /// The subtype in lower case (`json`).
    public let subtype: String
    /// The parameters in order, names in lower case, quoted values unquoted.
    public let parameters: [Parameter]

    /// One `name=value` parameter.
    public struct Parameter: Sendable, Hashable {
        /// The name, lower case.
        public let name: String
        /// The value, unquoted.
        public let value: String
    }

    /// Parses a media type; `nil` when the type or subtype is not a token. Malformed parameters are
    /// dropped.
    public init?(_ contentType: String) {
        let bytes = Array(contentType.utf8)
        guard bytes.count <= HeaderText.maximumLength else { return nil }
        let parts = HeaderText.split(bytes[...], on: UInt8(ascii: ";"), limit: 16)
        guard let essence = parts.first.map(HeaderText.trimmed), let slash = essence.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let type = essence[..<slash]
        let subtype = essence[(slash + 1)...]
        guard HeaderText.isToken(type), HeaderText.isToken(subtype) else { return nil }
        self.type = HeaderText.lowercased(type)
        self.subtype = HeaderText.lowercased(subtype)
        var parameters: [Parameter] = []
        for part in parts.dropFirst() {
            let part = HeaderText.trimmed(part)
            guard let equals = part.firstIndex(of: UInt8(ascii: "=")), HeaderText.isToken(part[..<equals]),
                let value = HeaderText.tokenOrQuoted(part[(equals + 1)...])
            else { continue }
            parameters.append(Parameter(name: HeaderText.lowercased(part[..<equals]), value: value))
        }
        self.parameters = parameters
    }

    /// Whether this is `type/subtype` (compared case-insensitively).
    public func matches(_ type: String, _ subtype: String) -> Bool {
        self.type == type.lowercased() && self.subtype == subtype.lowercased()
    }
}
