import ActionLinks

/// One link rewriter that stood between the email and the link it was sent with: a security
/// scanner (Outlook Safe Links, Proofpoint, Mimecast), a redirect (Google), or an email service's
/// click tracking (SendGrid, Mailgun, Mandrill, Mailchimp, Amazon SES, or a generic redirect).
public struct RewriterLayer: Sendable, Hashable {
    /// A stable identifier of the rewriter.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The identifier, stable across releases (used in JSON output).
        public let rawValue: String
        /// Microsoft Defender for Office 365 Safe Links: `*.safelinks.protection.outlook.com/?url=`.
        public static let safeLinks = Kind(rawValue: "safeLinks")
        /// Proofpoint URL Defense v1: `urldefense.proofpoint.com/v1/url?u=` (percent-encoded).
        public static let proofpointV1 = Kind(rawValue: "proofpointV1")
        /// Proofpoint URL Defense v2: `urldefense.proofpoint.com/v2/url?u=` (`-` for `%`, `_` for `/`).
        public static let proofpointV2 = Kind(rawValue: "proofpointV2")
        /// Proofpoint URL Defense v3: `urldefense.com/v3/__URL__;BYTES!!...$`.
        public static let proofpointV3 = Kind(rawValue: "proofpointV3")
        /// Mimecast URL Protect: the target is kept on Mimecast's servers; only its domain shows.
        public static let mimecast = Kind(rawValue: "mimecast")
        /// Google's redirect: `www.google.com/url?q=`.
        public static let googleRedirect = Kind(rawValue: "googleRedirect")
        /// Amazon SES click tracking: `*.awstrack.me/L0/<encoded URL>/...`.
        public static let amazonSES = Kind(rawValue: "amazonSES")
        /// SendGrid click tracking (`/ls/click?upn=`): the target is encoded opaquely.
        public static let sendGrid = Kind(rawValue: "sendGrid")
        /// Mailgun click tracking (`/c/<token>`): the target is encoded opaquely.
        public static let mailgun = Kind(rawValue: "mailgun")
        /// Mandrill (Mailchimp Transactional) click tracking: `mandrillapp.com/track/click/...`.
        public static let mandrill = Kind(rawValue: "mandrill")
        /// Mailchimp click tracking: `*.list-manage.com/track/click?...`.
        public static let mailchimp = Kind(rawValue: "mailchimp")
        /// Any other redirect that carries its target in a query parameter (`?url=https://...`).
        public static let redirect = Kind(rawValue: "redirect")
        /// See ``rawValue``.
        public var description: String { rawValue }
    }

    /// The URL of this layer.
    public let url: String
    /// Which rewriter it is.
    public let kind: Kind
    /// The service's name, for people.
    public let service: String
    /// Where the next layer was found (`url`, `u`, `q`, `path`), or `nil` when the target is opaque.
    public let innerParameter: String?
    /// Whether the target cannot be read from the link.
    public var isOpaque: Bool { innerParameter == nil }
    /// What a person should know about this rewriter.
    public let note: String
}

/// Removes link rewriters from a URL, outermost first, until what is left is the link that was sent.
public struct RewriterUnwrapping: Sendable, Hashable {
    /// The most rewriters removed from one link.
    public static let maximumDepth = 8

    /// The rewriting layers, outermost (the URL in the email) first.
    public let layers: [RewriterLayer]
    /// The URL with every rewriter removed, or `nil` when an opaque or malformed rewriter hides it.
    public let target: String?
    /// What went wrong while unwrapping (a malformed Proofpoint link, a parameter that does not decode).
    public let problems: [String]

    /// Unwraps every rewriter it recognises in `url`.
    public init(_ url: String) {
        var layers: [RewriterLayer] = []
        var problems: [String] = []
        var current = url
        var target: String? = url
        while let recognised = Self.recognise(current) {
            layers.append(recognised.layer)
            guard let inner = recognised.inner else {
                // Opaque, or recognised but malformed: either way the target cannot be read.
                target = nil
                if let problem = recognised.problem { problems.append(problem) }
                break
            }
            current = inner
            target = inner
            if layers.count == Self.maximumDepth {
                problems.append("more than \(Self.maximumDepth) rewriters: stopped unwrapping")
                break
            }
        }
        self.layers = layers
        self.target = target
        self.problems = problems
    }

    private struct Recognition {
        let layer: RewriterLayer
        let inner: String?
        var problem: String?
    }

    // MARK: - Recognising rewriters

    private static func recognise(_ url: String) -> Recognition? {
        if let v3 = proofpointV3(url) { return v3 }
        guard let parts = try? URLParts(url), let rawHost = parts.host else { return nil }
        let scheme = parts.scheme.lowercased()
        guard scheme == "https" || scheme == "http" else { return nil }
        var host = rawHost.lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        let path = String(parts.path)

        if host.hasSuffix(".safelinks.protection.outlook.com") {
            return parameterLayer(
                parts, url: url, kind: .safeLinks, service: "Outlook Safe Links", names: ["url"],
                note: "Microsoft Defender rewrote the link; Outlook shows the original, but a tap opens Microsoft's server first")
        }
        if host == "urldefense.proofpoint.com" || host == "urldefense.com" {
            if path == "/v2/url" {
                // v2 turns '%' into '-' and '/' into '_' so the URL survives as one parameter.
                return parameterLayer(
                    parts, url: url, kind: .proofpointV2, service: "Proofpoint URL Defense (v2)", names: ["u"], note: proofpointNote
                ) { raw in
                    String(raw.map { $0 == "-" ? "%" : $0 == "_" ? "/" : $0 })
                }
            }
            if path == "/v1/url" {
                return parameterLayer(
                    parts, url: url, kind: .proofpointV1, service: "Proofpoint URL Defense (v1)", names: ["u"], note: proofpointNote)
            }
        }
        if host.hasSuffix(".mimecastprotect.com") || (host.hasSuffix(".mimecast.com") && host.contains("protect")) {
            let domain = parts.queryValue(named: "domain")
            let shown = domain.map { " (Mimecast shows only its domain: \($0))" } ?? ""
            return Recognition(
                layer: RewriterLayer(
                    url: url, kind: .mimecast, service: "Mimecast URL Protect", innerParameter: nil,
                    note: "Mimecast keeps the original link on its servers\(shown); it cannot be read from the email"),
                inner: nil)
        }
        if (host == "www.google.com" || host == "google.com" || host.hasPrefix("www.google.")) && path == "/url" {
            return parameterLayer(
                parts, url: url, kind: .googleRedirect, service: "Google redirect", names: ["q", "url"],
                note: "a Google redirect page: the browser stops there and may ask before going on")
        }
        if host.hasSuffix(".awstrack.me"), path.hasPrefix("/L0/") {
            let segment = path.dropFirst(4).prefix { $0 != "/" }
            let inner = PercentEncoding.decode(segment)
            return Recognition(
                layer: RewriterLayer(
                    url: url, kind: .amazonSES, service: "Amazon SES click tracking", innerParameter: "path", note: clickTrackingNote),
                inner: inner, problem: inner == nil ? "the Amazon SES tracking path does not percent-decode" : nil)
        }
        // SendGrid serves click tracking on *.ct.sendgrid.net or on the sender's branded domain; the path says it.
        if path == "/ls/click" || path == "/wf/click", parts.queryValue(named: "upn") != nil {
            return opaque(url, kind: .sendGrid, service: "SendGrid click tracking")
        }
        if host.hasSuffix(".mailgun.org") && path.hasPrefix("/c/") || path.hasPrefix("/c/eJ") {
            // Mailgun's token is zlib-compressed JSON in base64 ("eJ" is how a zlib header encodes).
            return opaque(url, kind: .mailgun, service: "Mailgun click tracking")
        }
        if host == "mandrillapp.com" || host.hasSuffix(".mandrillapp.com"), path.hasPrefix("/track/click") {
            return opaque(url, kind: .mandrill, service: "Mandrill click tracking")
        }
        if host.hasSuffix(".list-manage.com"), path.hasPrefix("/track/click") {
            return opaque(url, kind: .mailchimp, service: "Mailchimp click tracking")
        }
        return genericRedirect(parts, url: url)
    }

    private static let proofpointNote =
        "Proofpoint rewrote the link; a tap opens Proofpoint's server, which checks the target and redirects"
    private static let clickTrackingNote = "the email service counts the click on its own domain, then redirects"

    /// Names that redirects and click trackers commonly put their target in.
    private static let redirectParameters = [
        "url", "u", "q", "target", "targetUrl", "target_url", "dest", "destination", "redirect", "redirect_url", "redirectUrl",
        "redir", "to", "goto", "out", "r", "href",
    ]

    /// A URL whose query carries another absolute `http(s)` URL under a redirect-like name, unless the
    /// URL is itself an action link or a Firebase wrapper (their parameters are the action's own).
    private static func genericRedirect(_ parts: URLParts, url: String) -> Recognition? {
        guard let query = parts.query, query.contains("http") else { return nil }
        if parts.path.hasPrefix("/__/auth/") || ActionCodeLink.parse(url) != nil || parts.queryValue(named: "oobCode") != nil { return nil }
        if let host = parts.host?.lowercased(), host.hasSuffix(".page.link") || host.hasSuffix(".app.goo.gl") { return nil }
        for name in redirectParameters {
            guard let value = parts.queryValue(named: name), isAbsoluteHTTP(value), (try? URLParts(value)) != nil else { continue }
            return Recognition(
                layer: RewriterLayer(
                    url: url, kind: .redirect, service: "redirect through \(parts.host.map(String.init) ?? "another site")",
                    innerParameter: name,
                    note: "a redirect or click tracker that carries the target in its '\(name)' parameter"),
                inner: value)
        }
        return nil
    }

    private static func isAbsoluteHTTP(_ text: String) -> Bool {
        let head = text.prefix(8).lowercased()
        return head.hasPrefix("https://") || head.hasPrefix("http://")
    }

    private static func opaque(_ url: String, kind: RewriterLayer.Kind, service: String) -> Recognition {
        Recognition(
            layer: RewriterLayer(
                url: url, kind: kind, service: service, innerParameter: nil,
                note: "\(service) encodes the target opaquely: it cannot be read from the email, only by following the link"),
            inner: nil)
    }

    private static func parameterLayer(
        _ parts: URLParts, url: String, kind: RewriterLayer.Kind, service: String, names: [String], note: String,
        transform: ((Substring) -> String)? = nil
    ) -> Recognition {
        let layer = RewriterLayer(url: url, kind: kind, service: service, innerParameter: names[0], note: note)
        var raw: Substring?
        var usedName = names[0]
        for name in names {
            parts.forEachQueryItem { itemName, value in
                if PercentEncoding.decode(itemName) == name { raw = value ?? "" }
            }
            if raw != nil {
                usedName = name
                break
            }
        }
        let named = RewriterLayer(url: url, kind: kind, service: service, innerParameter: usedName, note: note)
        guard let raw, !raw.isEmpty else {
            return Recognition(layer: layer, inner: nil, problem: "\(service) link without its '\(names[0])' parameter")
        }
        let encoded = transform.map { $0(raw) } ?? String(raw)
        guard let inner = PercentEncoding.decode(encoded) else {
            return Recognition(
                layer: named, inner: nil, problem: "the '\(usedName)' parameter of the \(service) link does not percent-decode to UTF-8")
        }
        return Recognition(layer: named, inner: inner)
    }

    // MARK: - Proofpoint v3

    /// Proofpoint v3 keeps the URL readable between `__` and `__;`, with each character it had to
    /// replace written as `*` (or a run of them as `**` and a length letter); the replaced characters
    /// follow, base64url-encoded, between `__;` and `!`.
    private static func proofpointV3(_ url: String) -> Recognition? {
        let lowered = url.prefix(40).lowercased()
        let prefix: Int
        if lowered.hasPrefix("https://urldefense.com/v3/__") {
            prefix = 28
        } else if lowered.hasPrefix("http://urldefense.com/v3/__") {
            prefix = 27
        } else {
            return nil
        }
        let service = "Proofpoint URL Defense (v3)"
        let layer = RewriterLayer(url: url, kind: .proofpointV3, service: service, innerParameter: "path", note: proofpointNote)
        let rest = url.unicodeScalars.dropFirst(prefix)
        guard let separator = find(Array("__;".unicodeScalars), in: rest) else {
            return Recognition(layer: layer, inner: nil, problem: "the Proofpoint v3 link has no '__;' after the URL")
        }
        let template = rest[rest.startIndex..<separator]
        let afterSeparator = rest[rest.index(separator, offsetBy: 3)...]
        let encodedBytes = afterSeparator.prefix { $0 != "!" }
        var replacements: [Unicode.Scalar] = []
        if !encodedBytes.isEmpty {
            guard let bytes = Base64.decodeStrict(Substring(String(String.UnicodeScalarView(encodedBytes)))),
                let text = String(validating: bytes, as: UTF8.self)
            else {
                return Recognition(
                    layer: layer, inner: nil, problem: "the Proofpoint v3 replacement characters are not base64url-encoded UTF-8")
            }
            replacements = Array(text.unicodeScalars)
        }
        var output = String.UnicodeScalarView()
        var next = 0
        var i = template.startIndex
        while i < template.endIndex {
            let c = template[i]
            guard c == "*" else {
                output.append(c)
                i = template.index(after: i)
                continue
            }
            var count = 1
            let afterStar = template.index(after: i)
            if afterStar < template.endIndex, template[afterStar] == "*" {
                let lengthIndex = template.index(after: afterStar)
                guard lengthIndex < template.endIndex, let length = runLength(template[lengthIndex]) else {
                    return Recognition(layer: layer, inner: nil, problem: "the Proofpoint v3 link has a '**' run without a valid length")
                }
                count = length
                i = template.index(after: lengthIndex)
            } else {
                i = afterStar
            }
            guard next + count <= replacements.count else {
                return Recognition(layer: layer, inner: nil, problem: "the Proofpoint v3 link has more '*' than replacement characters")
            }
            output.append(contentsOf: replacements[next..<(next + count)])
            next += count
        }
        return Recognition(layer: layer, inner: String(output))
    }

    /// The run lengths `**A`...`**_` stand for: A is 2, B 3, ..., Z 27, a 28, ..., 9 63, '-' 64, '_' 65.
    private static func runLength(_ c: Unicode.Scalar) -> Int? {
        switch c {
        case "A"..."Z": Int(c.value - 65) + 2
        case "a"..."z": Int(c.value - 97) + 28
        case "0"..."9": Int(c.value - 48) + 54
        case "-": 64
        case "_": 65
        default: nil
        }
    }

    private static func find(_ needle: [Unicode.Scalar], in haystack: Substring.UnicodeScalarView) -> Substring.UnicodeScalarView.Index? {
        var i = haystack.startIndex
        while i < haystack.endIndex {
            var j = i
            var k = 0
            while k < needle.count, j < haystack.endIndex, haystack[j] == needle[k] {
                j = haystack.index(after: j)
                k += 1
            }
            if k == needle.count { return i }
            i = haystack.index(after: i)
        }
        return nil
    }
}
