import ActionLinks

/// Every link in an email (an `.eml` message, an HTML page or plain text), each explained: its text,
/// where it is, the rewriters wrapped around it, and the action link inside.
public struct EmailInspection: Sendable {
    /// What kind of input was read.
    public enum Format: String, Sendable, Hashable, CaseIterable, Codable {
        /// A whole message with headers (RFC 5322 / MIME), as saved by "Show original" or "Save as".
        case eml
        /// An HTML document (an email's HTML part, or a page).
        case html
        /// Plain text.
        case text

        /// Guesses the format from the first bytes, as `inspect` does when `--format-in` is not given.
        ///
        /// A header block naming a known message header makes a message, markup makes HTML, and
        /// anything else is text. `fileExtension` (`eml`, `html`, ...) decides when it is a known one.
        public static func detect(_ bytes: some Collection<UInt8>, fileExtension: String? = nil) -> Format {
            switch fileExtension?.lowercased() {
            case "eml", "msg", "mbox", "mht", "mhtml": return .eml
            case "html", "htm", "xhtml": return .html
            default: break
            }
            let head = Array(bytes.prefix(8192))
            if looksLikeMessage(head) { return .eml }
            if looksLikeHTML(head) { return .html }
            return .text
        }

        private static let knownHeaders: Set<String> = [
            "from", "to", "subject", "date", "mime-version", "content-type", "received", "message-id", "return-path", "delivered-to",
            "reply-to", "dkim-signature", "x-mailer", "arc-seal", "authentication-results", "cc", "sender",
        ]

        /// Whether the input opens with header fields, at least one of them a known message header.
        static func looksLikeMessage(_ head: [UInt8]) -> Bool {
            var sawKnown = false
            var lineNumber = 0
            for line in lines(head[...]) {
                lineNumber += 1
                if line.isEmpty { return sawKnown }
                if lineNumber == 1, line.starts(with: Array("From ".utf8)) { continue }
                if line.first == UInt8(ascii: " ") || line.first == UInt8(ascii: "\t") {
                    if lineNumber == 1 { return false }
                    continue
                }
                guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                    line[line.startIndex..<colon].allSatisfy({ $0 > 0x20 && $0 < 0x7F })
                else { return false }
                if knownHeaders.contains(String(decoding: line[line.startIndex..<colon], as: UTF8.self).lowercased()) { sawKnown = true }
            }
            return sawKnown
        }

        static func looksLikeHTML(_ head: [UInt8]) -> Bool {
            let lowered = String(decoding: head.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 }, as: UTF8.self)
            return ["<!doctype html", "<html", "<head", "<body", "<a ", "<table", "<div", "<p>", "<p ", "<br", "<span", "<meta"].contains {
                lowered.contains($0)
            }
        }
    }

    /// The format that was read.
    public let format: Format
    /// The message's parts (for `.eml`; empty otherwise).
    public let parts: [MIMEMessage.Part]
    /// The message's top-level headers (for `.eml`).
    public let headers: MIMEHeaders?
    /// What could not be read (malformed MIME, undecodable text), by part.
    public let problems: [MIMEMessage.Problem]
    /// Every link, in the order of the parts and of the text within them.
    public let links: [InspectedLink]
    /// The sign-in codes beside a sign-in link (looked for only when the email has one), in the
    /// order of the parts.
    public let signInCodes: [FoundSignInCode]

    /// Reads `bytes` as `format` (detected when `nil`) and inspects every link, checking continue
    /// URLs against `policy` when one is given.
    public init(_ bytes: some Collection<UInt8>, format: Format? = nil, policy: ContinueURLPolicy? = nil) {
        let bytes = Array(bytes)
        let format = format ?? Format.detect(bytes)
        self.format = format
        var found: [(link: FoundLink, part: String?, contentType: String, bodyLine: Int)] = []
        var texts: [(text: String, part: String?, contentType: String)] = []
        switch format {
        case .eml:
            let message = MIMEMessage(bytes)
            parts = message.parts
            headers = message.headers
            var problems = message.problems
            for part in message.parts {
                guard let text = part.text else { continue }
                let links = part.contentType == "text/html" ? HTMLLinkExtractor.links(in: text) : TextLinkFinder.links(in: text)
                for link in links { found.append((link, part.path, part.contentType, part.bodyLine)) }
                texts.append((text, part.path, part.contentType))
            }
            if !message.parts.contains(where: { $0.text != nil }) {
                problems.append(MIMEMessage.Problem(part: nil, message: "the message has no text or HTML part to look for links in"))
            }
            self.problems = problems
        case .html, .text:
            parts = []
            headers = nil
            let declared = format == .html ? HTMLCharsetSniffer.declaredCharset(bytes) : nil
            let payload = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
            let decoded = CharsetDecoder.decode(payload, charset: declared)
            problems = decoded.problems.map { MIMEMessage.Problem(part: nil, message: $0) }
            let links = format == .html ? HTMLLinkExtractor.links(in: decoded.text) : TextLinkFinder.links(in: decoded.text)
            let type = format == .html ? "text/html" : "text/plain"
            for link in links { found.append((link, nil, type, 1)) }
            texts.append((decoded.text, nil, type))
        }
        let links = found.map { InspectedLink($0.link, part: $0.part, contentType: $0.contentType, partLine: $0.bodyLine, policy: policy) }
        self.links = links
        if links.contains(where: { $0.inspection.action?.mode == .signIn }) {
            signInCodes = texts.flatMap { text in
                text.contentType == "text/html"
                    ? SignInCodeFinder.codes(inHTML: text.text, part: text.part, contentType: text.contentType)
                    : SignInCodeFinder.codes(inText: text.text, part: text.part, contentType: text.contentType)
            }
        } else {
            signInCodes = []
        }
    }

    /// Whether every action link found is valid (and its continue URL allowed, when a policy was given).
    public var allActionLinksValid: Bool { !links.contains { $0.verdict == .invalidActionLink } }
}

/// One link of an email, explained.
public struct InspectedLink: Sendable {
    /// What the link amounts to.
    public enum Verdict: String, Sendable, Hashable, Codable {
        /// An action link that parses, with an allowed continue URL (when a policy was given).
        case validActionLink
        /// A link that is meant to be an action link (its path or parameters say so) but is broken, or
        /// whose continue URL the policy refuses.
        case invalidActionLink
        /// A rewriter hides the target: whether it is an action link cannot be told from the email.
        case hiddenByRewriter
        /// Any other link.
        case notAnActionLink
    }

    /// The link as found.
    public let found: FoundLink
    /// The MIME part it is in (`nil` for a standalone HTML or text file).
    public let part: String?
    /// The media type of that part.
    public let contentType: String
    /// The line of the input where the part's body starts.
    public let partLine: Int
    /// The rewriters wrapped around the link.
    public let rewriting: RewriterUnwrapping
    /// The inspection of what is left once the rewriters are removed (or of the last rewriter, when
    /// its target is hidden).
    public let inspection: LinkInspection
    /// What the link amounts to.
    public let verdict: Verdict
    /// Things a person should know about this link that the inspection does not say.
    public let notes: [String]

    /// Explains `found`, located in `part`.
    public init(_ found: FoundLink, part: String?, contentType: String, partLine: Int, policy: ContinueURLPolicy?) {
        self.found = found
        self.part = part
        self.contentType = contentType
        self.partLine = partLine
        let rewriting = RewriterUnwrapping(found.url)
        self.rewriting = rewriting
        let target = rewriting.target ?? rewriting.layers.last?.url ?? found.url
        let inspection = LinkInspection(target, policy: policy)
        self.inspection = inspection
        var notes = found.notes + rewriting.problems
        if target.contains("&amp;") {
            notes.append("the link contains '&amp;': HTML escaping leaked into the URL, so parameter names start with 'amp;'")
        }
        if let first = rewriting.layers.first {
            let host = (try? URLParts(first.url))?.host.map(String.init) ?? "the rewriter's domain"
            notes.append(
                "tapping it opens \(host), not the link domain: iOS and Android choose an app from the URL that was tapped, and the "
                    + "rewriter's redirect in the browser does not open the app; it lands on the web page instead")
        }
        self.notes = notes
        if rewriting.target == nil {
            verdict = .hiddenByRewriter
        } else if inspection.action != nil {
            if case .rejected? = inspection.continueURLDecision {
                verdict = .invalidActionLink
            } else {
                verdict = .validActionLink
            }
        } else {
            verdict = Self.looksLikeActionLink(inspection) ? .invalidActionLink : .notAnActionLink
        }
    }

    /// Whether any layer has an action path (`/__/auth/action`, `/__/auth/links`) or an `oobCode`.
    static func looksLikeActionLink(_ inspection: LinkInspection) -> Bool {
        for layer in inspection.layers {
            guard let parts = try? URLParts(layer.url) else { continue }
            if parts.path == ActionCodeLink.actionPath[...] || parts.path == ActionCodeLink.mobileLinkPath[...] { return true }
            var hasCode = false
            parts.forEachQueryItem { name, _ in
                if name == "oobCode" { hasCode = true }
            }
            if hasCode { return true }
        }
        return false
    }
}
