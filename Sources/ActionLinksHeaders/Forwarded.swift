/// One element of a `Forwarded` header: what one proxy says about the hop it received.
public struct ForwardedElement: Sendable, Hashable {
    /// `for`: the client (or previous proxy) address, without brackets or port; obfuscated
    /// identifiers (`_hidden`, `unknown`) as they are.
    public var forAddress: String?
    /// `proto`: the scheme the request arrived with, lower case.
    public var proto: String?
    /// `host`: the `Host` the request arrived with.
    public var host: String?
    /// `by`: the interface the proxy received it on.
    public var by: String?

    /// An element with the given parameters.
    public init(forAddress: String? = nil, proto: String? = nil, host: String? = nil, by: String? = nil) {
        self.forAddress = forAddress
        self.proto = proto
        self.host = host
        self.by = by
    }
}

/// `Forwarded` (RFC 7239): `for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8::17]:4711"`.
public enum ForwardedHeader {
    /// The elements of every `Forwarded` header line, in order (the nearest proxy's last). An element
    /// that does not parse is kept empty, so positions still count hops; at most 64 elements.
    public static func elements(_ headers: some Sequence<String>) -> [ForwardedElement] {
        var elements: [ForwardedElement] = []
        for header in headers {
            let bytes = Array(header.utf8)
            guard bytes.count <= HeaderText.maximumLength else { return [] }
            for item in HeaderText.split(bytes[...], on: UInt8(ascii: ",")) {
                guard elements.count < HeaderText.maximumItems else { return elements }
                var element = ForwardedElement()
                for pair in HeaderText.split(item, on: UInt8(ascii: ";"), limit: 8) {
                    let pair = HeaderText.trimmed(pair)
                    guard let equals = pair.firstIndex(of: UInt8(ascii: "=")),
                        let value = HeaderText.tokenOrQuoted(HeaderText.trimmed(pair[(equals + 1)...]))
                    else { continue }
                    switch HeaderText.lowercased(HeaderText.trimmed(pair[..<equals])) {
                    case "for": element.forAddress = nodeAddress(value)
                    case "proto": element.proto = value.lowercased()
                    case "host": element.host = value
                    case "by": element.by = nodeAddress(value)
                    default: break
                    }
                }
                elements.append(element)
            }
        }
        return elements
    }

    /// A node (`192.0.2.1:80`, `[2001:db8::1]:80`, `_hidden`) without brackets and port.
    static func nodeAddress(_ node: String) -> String {
        if node.hasPrefix("[") {
            guard let close = node.firstIndex(of: "]") else { return node }
            return String(node[node.index(after: node.startIndex)..<close])
        }
        if let colon = node.firstIndex(of: ":"), node[node.index(after: colon)...].firstIndex(of: ":") == nil {
            return String(node[..<colon])
        }
        return node
    }
}

/// `X-Forwarded-For`: comma-separated addresses, the nearest proxy's peer last.
public enum XForwardedFor {
    /// The addresses of every header line in order, trimmed, empty items dropped, an IPv4 `:port`
    /// and `[v6]:port` reduced to the address; at most 64.
    public static func addresses(_ headers: some Sequence<String>) -> [String] {
        var result: [String] = []
        for header in headers {
            let bytes = Array(header.utf8)
            guard bytes.count <= HeaderText.maximumLength else { return [] }
            for item in HeaderText.split(bytes[...], on: UInt8(ascii: ",")) {
                guard result.count < HeaderText.maximumItems else { return result }
                let item = HeaderText.trimmed(item)
                guard !item.isEmpty else { continue }
                result.append(ForwardedHeader.nodeAddress(String(decoding: item, as: UTF8.self)))
            }
        }
        return result
    }
}
