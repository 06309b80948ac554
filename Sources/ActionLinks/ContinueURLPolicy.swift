/// The allow-list for continue URLs: where the link domain may send a browser after an action.
///
/// A continue URL is dangerous input, because the server redirects to it. The policy refuses
/// anything a browser might read differently from us, matches what is left against the configured
/// entries, and hands back a re-serialised URL (never the raw input). Rejection messages never
/// reveal the allow-list.
public struct ContinueURLPolicy: Sendable {
    /// The entries, in the order they were configured.
    public let entries: [Entry]
    /// The origin that relative continue URLs (`/done`) resolve against, as `scheme://host[:port]`.
    public let defaultOrigin: String?

    /// Continue URLs longer than this are refused.
    public static let maximumLength = 2048
    /// Schemes that are refused even when an entry names them.
    public static let forbiddenSchemes: Set<String> = ["javascript", "data", "vbscript", "file", "blob"]

    /// Builds a policy from the configured entries; throws for an entry or origin that cannot be used,
    /// naming it (`allow[2]`, `defaultOrigin`) and saying what was expected.
    public init(allow: [String], defaultOrigin: String? = nil) throws(ConfigurationError) {
        var entries: [Entry] = []
        for (index, text) in allow.enumerated() {
            do {
                entries.append(try Entry(text))
            } catch {
                throw ConfigurationError(key: "allow[\(index)]", value: text, expected: error.expected)
            }
        }
        self.entries = entries
        guard let defaultOrigin else {
            self.defaultOrigin = nil
            return
        }
        let originExpectation =
            "an origin such as https://app.example.com (scheme, host and optional port; no path, query or user information)"
        guard let origin = try? URLParts(defaultOrigin), origin.userinfo == nil, origin.query == nil, origin.fragment == nil,
            origin.path.isEmpty || origin.path == "/", let host = origin.host,
            ["https", "http"].contains(origin.scheme.lowercased())
        else {
            throw ConfigurationError(key: "defaultOrigin", value: defaultOrigin, expected: originExpectation)
        }
        let serialised =
            origin.scheme.lowercased() + "://" + host.lowercased() + (origin.port.flatMap { $0.isEmpty ? nil : ":" + $0 } ?? "")
        self.defaultOrigin = serialised
        guard evaluate(serialised + "/").isAllowed else {
            throw ConfigurationError(
                key: "defaultOrigin", value: defaultOrigin,
                expected: "an origin that continueUrls.allow itself allows (add it to allow, or change it)")
        }
    }

    /// Whether a web page on `origin` (a serialised origin, `scheme://host[:port]`, as browsers send
    /// it in `Origin`) is one the allow-list names: an entry's scheme, host and port, whatever its
    /// path. App schemes, `null` and anything with a path, query or user information are not origins.
    public func allowsOrigin(_ origin: String) -> Bool {
        guard origin.utf8.count <= 300, origin.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }),
            let url = try? URLParts(origin), url.userinfo == nil, url.query == nil, url.fragment == nil, url.path.isEmpty,
            let rawHost = url.host, !rawHost.isEmpty, !rawHost.utf8.contains(UInt8(ascii: "%"))
        else { return false }
        let scheme = url.scheme.lowercased()
        guard scheme == "https" || scheme == "http" else { return false }
        var port: Int?
        if let digits = url.port, !digits.isEmpty {
            guard digits.utf8.count <= 5, let value = Int(digits), value <= 65535 else { return false }
            port = value == Self.defaultPort(scheme) ? nil : value
        }
        let host = rawHost.lowercased()
        return entries.contains { entry in
            entry.kind != .appScheme && entry.matches(scheme: scheme, host: host, port: port, path: (entry.pathPrefix ?? "") + "/")
        }
    }

    /// Decides whether `input` may be used as a continue URL, and if so, the URL to use instead of it.
    public func evaluate(_ input: String) -> Decision {
        let utf8 = input.utf8
        if utf8.isEmpty { return .reject(.empty, "the continue URL is empty") }
        if utf8.count > Self.maximumLength {
            return .reject(.tooLong, "the continue URL is \(utf8.count) bytes long; at most \(Self.maximumLength) are allowed")
        }
        for (offset, c) in utf8.enumerated() {
            if c <= 0x20 || c == 0x7F {
                return .reject(.controlCharacter, "the continue URL contains a space or control character at offset \(offset)")
            }
            if c == UInt8(ascii: "\\") {
                return .reject(.backslash, "the continue URL contains a backslash at offset \(offset) (browsers read it as '/')")
            }
            if c >= 0x80 {
                return .reject(
                    .nonASCII,
                    "the continue URL contains non-ASCII text at offset \(offset): percent-encode it, and write hosts in punycode")
            }
        }

        // Named before splitting, so `data:text/html,<script>` is refused for what it is.
        if let colon = utf8.firstIndex(of: UInt8(ascii: ":")),
            Self.forbiddenSchemes.contains(String(input[..<colon]).lowercased())
        {
            return .reject(.forbiddenScheme, "'\(input[..<colon].lowercased()):' continue URLs are never allowed")
        }
        var text = input
        if utf8.first == UInt8(ascii: "/") {
            if utf8.dropFirst().first == UInt8(ascii: "/") {
                return .reject(.schemeRelative, "the continue URL starts with '//' (scheme-relative): write an absolute https URL")
            }
            guard let defaultOrigin else {
                return .reject(.relativeURL, "the continue URL is a path, and no default origin is configured: write an absolute URL")
            }
            text = defaultOrigin + input
            // The limit applies to the URL we hand back, so a path near the limit cannot outgrow it.
            if text.utf8.count > Self.maximumLength {
                return .reject(
                    .tooLong, "the continue URL is \(text.utf8.count) bytes long with its origin; at most \(Self.maximumLength) are allowed"
                )
            }
        }
        let url: URLParts
        do {
            url = try URLParts(text)
        } catch {
            return .reject(
                error.code == .missingScheme ? .relativeURL : .malformed, "the continue URL is not a valid URL: \(error.message)")
        }
        if url.userinfo != nil {
            return .reject(.userinfo, "the continue URL contains user information ('user@'), which is never allowed")
        }
        let scheme = url.scheme.lowercased()
        guard let rawHost = url.host, !rawHost.isEmpty else {
            return .reject(.notAllowed, Self.notAllowedMessage)
        }
        if rawHost.utf8.contains(UInt8(ascii: "%")) {
            return .reject(.encodedHost, "the continue URL's host contains percent-encoded characters: write the host plainly, in punycode")
        }
        let host = rawHost.lowercased()
        if host.hasPrefix("[") || Self.isNumericHost(host) {
            guard Self.loopbackHosts.contains(host), entries.contains(where: { $0.kind == .loopback && $0.host == host }) else {
                return .reject(.ipAddress, "the continue URL's host is an IP address or a numeric host; use a domain name")
            }
        } else if !LinkDomain.isDNSName(host.hasSuffix(".") ? String(host.dropLast()) : host) {
            return .reject(.invalidHost, "the continue URL's host is not a valid domain name")
        }
        var port: Int?
        if let digits = url.port, !digits.isEmpty {
            guard digits.utf8.count <= 5, let value = Int(digits), value <= 65535 else {
                return .reject(.invalidPort, "the continue URL's port is not a number from 0 to 65535")
            }
            port = value == Self.defaultPort(scheme) ? nil : value
        }
        let rawPath = url.path
        if rawPath.utf8.contains(UInt8(ascii: ";")) {
            return .reject(.pathParameters, "the continue URL's path contains ';' parameters, which servers read differently")
        }
        for segment in rawPath.split(separator: "/") where segment.utf8.contains(UInt8(ascii: "%")) {
            let decoded = PercentEncoding.decode(segment)
            if decoded == "." || decoded == ".." {
                return .reject(.encodedDotSegment, "the continue URL's path contains an encoded '.' or '..' segment")
            }
            if let decoded, decoded.contains("/") || decoded.contains("\\") {
                return .reject(.encodedSlash, "the continue URL's path contains an encoded '/' or '\\'")
            }
        }
        var path = Self.removingDotSegments(rawPath)
        if path.isEmpty, scheme == "https" || scheme == "http" { path = "/" }

        guard entries.contains(where: { $0.matches(scheme: scheme, host: host, port: port, path: path) }) else {
            return .reject(.notAllowed, Self.notAllowedMessage)
        }
        var result = scheme + "://" + host
        if let port { result += ":" + String(port) }
        result += path
        if let query = url.query { result += "?" + query }
        if let fragment = url.fragment { result += "#" + fragment }
        return .allowed(url: result)
    }

    static let notAllowedMessage = "the continue URL is not on the project's allow-list (its scheme, domain, port and path are all checked)"
    static let loopbackHosts: Set<String> = ["127.0.0.1", "[::1]", "localhost"]

    static func defaultPort(_ scheme: String) -> Int? {
        switch scheme {
        case "https": 443
        case "http": 80
        default: nil
        }
    }

    /// A host browsers would parse as an IPv4 address: its last label is a number (decimal, octal or
    /// `0x` hex), per the WHATWG URL standard's "ends in a number" rule.
    static func isNumericHost(_ host: String) -> Bool {
        var labels = host.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count > 1, labels.last?.isEmpty == true { labels.removeLast() }
        guard let last = labels.last, !last.isEmpty else { return false }
        if last.utf8.allSatisfy(isDigit) { return true }
        let lower = last.lowercased()
        return lower.hasPrefix("0x") && lower.utf8.dropFirst(2).allSatisfy(isHexDigit)
    }

    /// RFC 3986 §5.2.4, on whole segments.
    static func removingDotSegments(_ path: Substring) -> String {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.contains(where: { $0 == "." || $0 == ".." }) else { return String(path) }
        let absolute = path.hasPrefix("/")
        var output: [Substring] = []
        for (index, segment) in segments.enumerated() {
            if index == 0, absolute { continue }
            let isLast = index == segments.count - 1
            switch segment {
            case ".":
                if isLast { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        return (absolute ? "/" : "") + output.joined(separator: "/")
    }
}

extension ContinueURLPolicy {
    /// One allow-list entry.
    public struct Entry: Sendable, Hashable, CustomStringConvertible {
        /// The forms an entry can take.
        public enum Kind: String, Sendable, Hashable {
            /// `example.com`: https on the default port, any path.
            case domain
            /// `*.example.com` or `https://*.example.com/path/`: one or more whole labels before the
            /// suffix, never the apex.
            case wildcardDomain
            /// `https://host[:port]/path/`: that origin, paths under that prefix.
            case urlPrefix
            /// `http://127.0.0.1`, `http://[::1]`, `http://localhost`: any port unless one is given.
            case loopback
            /// `com.example.app://callback`: an app's own scheme.
            case appScheme
        }

        /// Which form the entry has.
        public let kind: Kind
        /// The entry as configured.
        public let description: String
        let scheme: String
        /// The exact host, or for a wildcard entry the suffix after `*.`.
        let host: String
        let port: Int?
        let anyPort: Bool
        /// The path prefix without its trailing `/`; `nil` allows any path.
        let pathPrefix: String?

        /// Parses an entry; throws when the text has none of the forms of ``Kind``.
        public init(_ text: String) throws(EntryError) {
            description = text
            guard text.contains("://") else {
                let wildcard = text.hasPrefix("*.")
                let name = (wildcard ? String(text.dropFirst(2)) : text).lowercased()
                guard LinkDomain.isDNSName(name), !wildcard || name.contains(".") else { throw EntryError() }
                kind = wildcard ? .wildcardDomain : .domain
                scheme = "https"
                host = name
                port = nil
                anyPort = false
                pathPrefix = nil
                return
            }
            guard let url = try? URLParts(text), url.userinfo == nil, url.query == nil, url.fragment == nil,
                let rawHost = url.host, !rawHost.isEmpty
            else { throw EntryError() }
            let scheme = url.scheme.lowercased()
            let hostText = rawHost.lowercased()
            guard !ContinueURLPolicy.forbiddenSchemes.contains(scheme) else { throw EntryError() }
            var port: Int?
            if let digits = url.port, !digits.isEmpty {
                guard let value = Int(digits), value <= 65535 else { throw EntryError() }
                port = value == ContinueURLPolicy.defaultPort(scheme) ? nil : value
            }
            let path = ContinueURLPolicy.removingDotSegments(url.path)
            let prefix = path.hasSuffix("/") ? String(path.dropLast()) : path
            pathPrefix = prefix.isEmpty ? nil : prefix
            self.scheme = scheme
            self.port = port
            let loopback = ContinueURLPolicy.loopbackHosts.contains(hostText)
            switch scheme {
            case "http", "https":
                if loopback {
                    kind = .loopback
                    host = hostText
                    anyPort = url.port == nil
                } else if scheme == "http" {
                    throw EntryError()
                } else if hostText.hasPrefix("*.") {
                    let suffix = String(hostText.dropFirst(2))
                    guard LinkDomain.isDNSName(suffix), suffix.contains(".") else { throw EntryError() }
                    kind = .wildcardDomain
                    host = suffix
                    anyPort = false
                } else {
                    guard LinkDomain.isDNSName(hostText), !ContinueURLPolicy.isNumericHost(hostText) else { throw EntryError() }
                    kind = .urlPrefix
                    host = hostText
                    anyPort = false
                }
            case "ws", "wss", "ftp":
                throw EntryError()
            default:
                guard LinkDomain.isDNSName(hostText) else { throw EntryError() }
                kind = .appScheme
                host = hostText
                anyPort = false
            }
        }

        func matches(scheme: String, host: String, port: Int?, path: String) -> Bool {
            guard scheme == self.scheme else { return false }
            if kind == .wildcardDomain {
                guard host.utf8.count > self.host.utf8.count + 1, host.hasSuffix("." + self.host) else { return false }
            } else if host != self.host {
                return false
            }
            if !anyPort, port != self.port { return false }
            guard let pathPrefix else { return true }
            return path == pathPrefix || path.hasPrefix(pathPrefix + "/")
        }
    }

    /// An entry that has none of the accepted forms.
    public struct EntryError: Error, Hashable, Sendable {
        /// What an entry must look like.
        public var expected: String {
            "a domain (example.com), a wildcard domain (*.example.com), a URL prefix (https://host[:port]/path/), "
                + "a loopback URL (http://127.0.0.1, http://[::1], http://localhost) or an app scheme (com.example.app://callback)"
        }
    }

    /// A configuration value the policy cannot use.
    public struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The key under `continueUrls`, such as `allow[2]` or `defaultOrigin`.
        public let key: String
        /// The configured value.
        public let value: String
        /// What was expected instead.
        public let expected: String
        /// `<key>: expected <expected>; got '<value>'`.
        public var description: String { "\(key): expected \(expected); got '\(value)'" }
    }

    /// What the policy decided about a continue URL.
    public enum Decision: Sendable, Hashable {
        /// Allowed; use `url`, the re-serialised URL, instead of the input.
        case allowed(url: String)
        /// Refused, for the reason given.
        case rejected(Rejection)

        /// Whether the URL is allowed.
        public var isAllowed: Bool {
            if case .allowed = self { return true }
            return false
        }

        /// The re-serialised URL when allowed.
        public var url: String? {
            if case .allowed(let url) = self { return url }
            return nil
        }

        /// The reason when refused.
        public var rejection: Rejection? {
            if case .rejected(let rejection) = self { return rejection }
            return nil
        }

        static func reject(_ code: Rejection.Code, _ message: String) -> Decision {
            .rejected(Rejection(code: code, message: message))
        }
    }

    /// Why a continue URL was refused; the message never reveals the allow-list.
    public struct Rejection: Error, Hashable, Sendable, CustomStringConvertible {
        /// A stable identifier of the reason.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            /// The identifier, stable across releases.
            public let rawValue: String
            /// Empty input.
            public static let empty = Code(rawValue: "empty")
            /// Longer than ``ContinueURLPolicy/maximumLength``.
            public static let tooLong = Code(rawValue: "tooLong")
            /// A control character, space, tab, CR or LF.
            public static let controlCharacter = Code(rawValue: "controlCharacter")
            /// A backslash.
            public static let backslash = Code(rawValue: "backslash")
            /// Text outside ASCII.
            public static let nonASCII = Code(rawValue: "nonASCII")
            /// `//host/...` without a scheme.
            public static let schemeRelative = Code(rawValue: "schemeRelative")
            /// Not absolute, and no default origin to resolve it against.
            public static let relativeURL = Code(rawValue: "relativeURL")
            /// Not a URL the strict splitter accepts.
            public static let malformed = Code(rawValue: "malformed")
            /// `user@host`.
            public static let userinfo = Code(rawValue: "userinfo")
            /// `javascript:`, `data:`, `vbscript:`, `file:`, `blob:`.
            public static let forbiddenScheme = Code(rawValue: "forbiddenScheme")
            /// Percent-encoding in the host.
            public static let encodedHost = Code(rawValue: "encodedHost")
            /// An IP literal or numeric host that is not a configured loopback.
            public static let ipAddress = Code(rawValue: "ipAddress")
            /// A host that is not a domain name.
            public static let invalidHost = Code(rawValue: "invalidHost")
            /// A port out of range.
            public static let invalidPort = Code(rawValue: "invalidPort")
            /// `;` in the path.
            public static let pathParameters = Code(rawValue: "pathParameters")
            /// `%2e` or `%2e%2e` as a path segment.
            public static let encodedDotSegment = Code(rawValue: "encodedDotSegment")
            /// `%2F` or `%5C` in the path.
            public static let encodedSlash = Code(rawValue: "encodedSlash")
            /// Well-formed, but no entry allows it.
            public static let notAllowed = Code(rawValue: "notAllowed")
            /// See ``rawValue``.
            public var description: String { rawValue }
        }

        /// The reason, as a stable code.
        public let code: Code
        /// The reason, in a sentence.
        public let message: String
        /// See ``message``.
        public var description: String { message }
    }
}
