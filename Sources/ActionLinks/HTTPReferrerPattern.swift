/// One entry of an API key's HTTP referrer restriction ("website restrictions"), in the form Google
/// Cloud documents for browser keys, and whether a request's `Referer` matches it.
///
/// An entry is `[http://|https://]host[:port][/path]`:
///
/// | Entry | Matches |
/// |---|---|
/// | `www.example.com/path` | that page only (`/path/` is another page: a trailing `/` matters) |
/// | `example.com/*` | every page of `example.com`, no subdomain |
/// | `*.example.com/*` | every page of every subdomain of `example.com` (the `*` is one or more whole labels; not the apex) |
/// | `www.example.com:8000/*` | a port that is not the scheme's default (without one, only the default port) |
/// | `www.example.com` | no path: every page (as `www.example.com/*`) |
/// | `https://app.example.com/*` | with a scheme, that scheme only; without one, `http` and `https` |
///
/// A `*` may stand only for the first labels of the host (`*.`) and at the very end of the path (a
/// prefix); an entry with a query, a fragment, user information or a `*` anywhere else is refused,
/// as is a bare `*` (that would be no restriction). Hosts are compared case-insensitively; the
/// referrer's query and fragment are ignored, as Google ignores them.
public struct HTTPReferrerPattern: Sendable, Hashable, CustomStringConvertible {
    /// The entry as written.
    public let text: String
    /// `http` or `https`, or `nil` for either.
    let scheme: String?
    /// The lower-cased host, without the `*.` of a wildcard.
    let host: String
    /// Whether the entry was `*.<host>`: one or more labels before ``host``.
    let subdomains: Bool
    /// The port when given (the scheme's default port is dropped).
    let port: Int?
    /// The path before a final `*`, or the exact path; `nil` for any path.
    let path: String?
    /// Whether ``path`` is a prefix (the entry's path ended in `*`).
    let pathIsPrefix: Bool

    /// Checks `text`; a refusal says what was expected.
    public init(_ text: String) throws(HTTPReferrerPatternError) {
        func refuse(_ message: String) -> HTTPReferrerPatternError { HTTPReferrerPatternError(text: text, message: message) }
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw refuse("expected printable ASCII without spaces")
        }
        if text.utf8.contains(UInt8(ascii: "?")) || text.utf8.contains(UInt8(ascii: "#")) || text.utf8.contains(UInt8(ascii: "@")) {
            throw refuse("a referrer entry has no query, fragment or user information")
        }
        var rest = Substring(text)
        var scheme: String?
        if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") {
            scheme = rest[..<colon].lowercased()
            guard scheme == "http" || scheme == "https" else { throw refuse("the scheme, when given, is http:// or https://") }
            rest = rest[rest.index(colon, offsetBy: 3)...]
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash]
        let pathText = rest[slash...]
        var port: Int?
        if let colon = authority.lastIndex(of: ":") {
            let digits = authority[authority.index(after: colon)...]
            guard !digits.isEmpty, digits.utf8.allSatisfy(isDigit), digits.utf8.count <= 5, let value = Int(digits),
                (1...65535).contains(value)
            else { throw refuse("the port after ':' must be a number from 1 to 65535") }
            port = value
            authority = authority[..<colon]
        }
        var host = authority.lowercased()
        let subdomains = host.hasPrefix("*.")
        if subdomains { host.removeFirst(2) }
        guard !host.contains("*") else {
            throw refuse("'*' may stand only for the first labels of the host ('*.example.com') or end the path ('/app/*')")
        }
        guard LinkDomain.isDNSName(host) else {
            throw refuse("expected a host name such as app.example.com or *.example.com, then an optional :port and /path")
        }
        if subdomains, !host.contains(".") { throw refuse("'*.' needs a domain of at least two labels after it") }
        if let scheme, port == (scheme == "https" ? 443 : 80) { port = nil }
        var path: String?
        var pathIsPrefix = false
        if !pathText.isEmpty {
            let star = pathText.firstIndex(of: "*")
            guard star == nil || star == pathText.index(before: pathText.endIndex) else {
                throw refuse("'*' may stand only for the first labels of the host ('*.example.com') or end the path ('/app/*')")
            }
            pathIsPrefix = star != nil
            path = String(pathText.dropLast(pathIsPrefix ? 1 : 0))
            // `/*` is every page, as no path at all.
            if pathIsPrefix, path == "/" { path = nil }
        }
        self.text = text
        self.scheme = scheme
        self.host = host
        self.subdomains = subdomains
        self.port = port
        self.path = path
        self.pathIsPrefix = pathIsPrefix
    }

    /// The entry as written.
    public var description: String { text }

    /// Whether `referrer` (a `Referer` header's value) is a page this entry allows: an `http(s)` URL
    /// whose scheme, host, port and path the entry admits.
    public func matches(_ referrer: String) -> Bool {
        guard let url = try? URLParts(referrer), url.userinfo == nil, let rawHost = url.host, !rawHost.isEmpty else { return false }
        let scheme = url.scheme.lowercased()
        guard scheme == "http" || scheme == "https", self.scheme == nil || self.scheme == scheme else { return false }
        let host = rawHost.lowercased()
        if subdomains {
            guard host.utf8.count > self.host.utf8.count + 1, host.hasSuffix("." + self.host) else { return false }
        } else {
            guard host == self.host else { return false }
        }
        var port: Int?
        if let digits = url.port, !digits.isEmpty {
            guard let value = Int(digits) else { return false }
            port = value == (scheme == "https" ? 443 : 80) ? nil : value
        }
        guard port == self.port else { return false }
        guard let path else { return true }
        let requested = url.path.isEmpty ? "/" : String(url.path)
        return pathIsPrefix ? requested.hasPrefix(path) : requested == path
    }
}

/// Why a text is not a referrer entry.
public struct HTTPReferrerPatternError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The entry as written.
    public let text: String
    /// What is wrong and what was expected.
    public let message: String
    /// `'<text>': <message>`.
    public var description: String { "'\(text)': \(message)" }
}
