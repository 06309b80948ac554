/// A link domain: the `host[:port]` on which action links are built, checked once so building
/// can never produce a malformed link.
public struct LinkDomain: Sendable, Hashable, CustomStringConvertible {
    /// The lower-cased host name.
    public let host: String
    /// The port, when it is not the scheme's default.
    public let port: Int?
    /// `https`, or `http` for a development domain on this machine (`http://localhost:8080`).
    public let scheme: String

    /// Checks `text` (`links.example.com` or `localhost:8080`): DNS labels of letters, digits and
    /// hyphens, optionally a port; no path or IP literal. `http://` is accepted only before
    /// `localhost` (or a name under `.localhost`), for a development server that has no TLS.
    public init(_ text: String) throws(LinkDomainError) {
        var rest = Substring(text)
        var scheme = "https"
        if rest.lowercased().hasPrefix("https://") {
            rest = rest.dropFirst(8)
        } else if rest.lowercased().hasPrefix("http://") {
            rest = rest.dropFirst(7)
            scheme = "http"
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        var hostPart = rest
        var port: Int?
        if let colon = rest.lastIndex(of: ":") {
            hostPart = rest[..<colon]
            let digits = rest[rest.index(after: colon)...]
            guard !digits.isEmpty, digits.utf8.allSatisfy(isDigit), let value = Int(digits), (1...65535).contains(value) else {
                throw LinkDomainError(text: text, message: "the port after ':' must be a number from 1 to 65535")
            }
            port = value == (scheme == "https" ? 443 : 80) ? nil : value
        }
        let host = hostPart.lowercased()
        guard Self.isDNSName(host) else {
            throw LinkDomainError(
                text: text,
                message: "expected a host name such as links.example.com (letters, digits, hyphens and dots; no path)")
        }
        // An all-digit last label is an IPv4 address (no top-level domain is all digits): universal
        // links and App Links are verified for host names only.
        guard let last = host.split(separator: ".").last, !last.utf8.allSatisfy(isDigit) else {
            throw LinkDomainError(text: text, message: "expected a host name such as links.example.com, not an IP address")
        }
        if scheme == "http", host != "localhost", !host.hasSuffix(".localhost") {
            throw LinkDomainError(
                text: text,
                message: "http:// is only for a development domain on localhost; a public link domain must use https")
        }
        self.host = host
        self.port = port
        self.scheme = scheme
    }

    /// `host` or `host:port`.
    public var description: String { port.map { "\(host):\($0)" } ?? host }

    /// `https://host[:port]` (or `http://` for a development domain): where links on it start.
    public var origin: String { scheme + "://" + description }

    static func isDNSName(_ host: String) -> Bool {
        guard !host.isEmpty, host.utf8.count <= 253 else { return false }
        for label in host.split(separator: ".", omittingEmptySubsequences: false) {
            guard (1...63).contains(label.utf8.count),
                label.utf8.allSatisfy({ isAlpha($0) || isDigit($0) || $0 == UInt8(ascii: "-") }),
                label.utf8.first != UInt8(ascii: "-"), label.utf8.last != UInt8(ascii: "-")
            else { return false }
        }
        return true
    }
}

/// Why a text is not a usable link domain.
public struct LinkDomainError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The text that was refused.
    public let text: String
    /// What was expected instead.
    public let message: String
    /// `'<text>': <message>`.
    public var description: String { "'\(text)': \(message)" }
}
