/// An `Origin` header (RFC 6454): `scheme://host[:port]`.
public enum OriginHeader {
    /// The scheme and host in lower case and the port, or `nil` for `null`, anything with a path,
    /// query, fragment or user information, and anything else that is not a serialised origin.
    public static func parse(_ value: String) -> (scheme: String, host: String, port: Int?)? {
        let bytes = Array(value.utf8)
        guard bytes.count <= 1024, let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0,
            bytes[colon...].starts(with: Array("://".utf8))
        else { return nil }
        let scheme = bytes[..<colon]
        guard let first = scheme.first, (0x41...0x5A).contains(first) || (0x61...0x7A).contains(first),
            scheme.allSatisfy({
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2B || $0 == 0x2D
                    || $0 == 0x2E
            })
        else { return nil }
        var authority = bytes[(colon + 3)...]
        guard !authority.isEmpty, !authority.contains(where: { "/?#@\\".utf8.contains($0) || $0 <= 0x20 || $0 >= 0x7F }) else { return nil }
        var port: Int?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            let after = authority[(close + 1)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":"), let parsed = parsePort(after.dropFirst()) else { return nil }
                port = parsed
            }
            authority = authority[...close]
            guard IPAddress(String(decoding: authority.dropFirst().dropLast(), as: UTF8.self)) != nil else { return nil }
        } else if let portColon = authority.firstIndex(of: UInt8(ascii: ":")) {
            guard let parsed = parsePort(authority[(portColon + 1)...]) else { return nil }
            port = parsed
            authority = authority[..<portColon]
        }
        guard !authority.isEmpty else { return nil }
        return (HeaderText.lowercased(scheme), HeaderText.lowercased(authority), port)
    }

    static func parsePort(_ digits: ArraySlice<UInt8>) -> Int? {
        guard (1...5).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let value = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return value <= 65535 ? value : nil
    }
}
