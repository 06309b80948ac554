/// A link found in an email or page, as a person would click it, and where it was found.
public struct FoundLink: Sendable, Hashable {
    /// What kind of markup or text held the link.
    public enum Origin: String, Sendable, Hashable, Codable {
        /// `<a href>`.
        case anchor
        /// `<area href>` of an image map.
        case area
        /// An `href` in an Outlook conditional comment (`<!--[if mso]>`): the VML button Outlook shows.
        case outlookConditional
        /// A bare URL in the text of an HTML part, which mail clients turn into a link.
        case htmlText
        /// A URL in a plain-text part.
        case plainText
    }

    /// The URL as a browser would follow it: surrounding spaces trimmed, tabs and line breaks removed.
    public let url: String
    /// The visible text of the link (or an image's `alt`), whitespace collapsed; `nil` for bare URLs.
    public let text: String?
    /// The line of the part's decoded text where the link is (1-based).
    public let line: Int
    /// What held the link.
    public let origin: Origin
    /// Things a person should know about how the link was written (a line break inside it, ...).
    public let notes: [String]

    /// Creates a found link; `rawURL` is normalised the way browsers read an `href`.
    public init(rawURL: String, text: String?, line: Int, origin: Origin) {
        var notes: [String] = []
        // WHATWG URL parsing: strip leading and trailing C0 controls and spaces, remove every tab and newline.
        var scalars = Array(rawURL.unicodeScalars)
        while let first = scalars.first, first.value <= 0x20 { scalars.removeFirst() }
        while let last = scalars.last, last.value <= 0x20 { scalars.removeLast() }
        if scalars.contains(where: { $0 == "\t" || $0 == "\n" || $0 == "\r" }) {
            scalars.removeAll { $0 == "\t" || $0 == "\n" || $0 == "\r" }
            notes.append("the link contains tabs or line breaks, which browsers remove before following it")
        }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        url = String(view)
        self.text = text
        self.line = line
        self.origin = origin
        self.notes = notes
    }
}

/// Finds URLs in plain text, as mail clients do when they turn them into links.
public enum TextLinkFinder {
    /// The longest URL taken from text.
    static let maximumLength = 16_384

    /// Every `http:` or `https:` URL in `text`, with the line it starts on (`firstLine` is the line of
    /// the text's first character).
    ///
    /// A URL ends at whitespace, a non-ASCII character (Japanese text often follows a URL with no
    /// space), or `<`, `>`, `"`; trailing punctuation is left out, and a closing bracket only counts when
    /// the URL opened one. `<https://...>` may span lines (RFC 3986 Appendix C): the breaks are removed.
    public static func links(in text: String, firstLine: Int = 1, origin: FoundLink.Origin = .plainText) -> [FoundLink] {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBufferPointer { links(in: UnsafeBufferPointer($0), firstLine: firstLine, origin: origin) }
    }

    static func links(in b: UnsafeBufferPointer<UInt8>, firstLine: Int, origin: FoundLink.Origin) -> [FoundLink] {
        var found: [FoundLink] = []
        var line = firstLine
        var lineCountedTo = 0
        var i = 0
        let n = b.count
        while i + 7 <= n {
            let c = b[i] | 0x20
            guard c == UInt8(ascii: "h"), let schemeLength = schemeLength(b, at: i) else {
                i += 1
                continue
            }
            if i > 0, isAlphanumeric(b[i - 1]) {
                i += schemeLength
                continue
            }
            while lineCountedTo < i {
                if b[lineCountedTo] == UInt8(ascii: "\n") { line += 1 }
                lineCountedTo += 1
            }
            let bracketed = i > 0 && b[i - 1] == UInt8(ascii: "<")
            var end = i
            var url: [UInt8] = []
            if bracketed, let close = closingBracket(b, from: i) {
                for k in i..<close where !isSpace(b[k]) { url.append(b[k]) }
                end = close
            } else {
                while end < n, end - i < maximumLength, isURLByte(b[end]) { end += 1 }
                url = Array(b[i..<end])
                trimTrailingPunctuation(&url)
            }
            if url.count > schemeLength {
                found.append(FoundLink(rawURL: String(decoding: url, as: UTF8.self), text: nil, line: line, origin: origin))
            }
            i = max(end, i + schemeLength)
        }
        return found
    }

    /// The length of `http://` or `https://` at `i` (any case), or `nil`.
    private static func schemeLength(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> Int? {
        func matches(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard i + count <= b.count else { return false }
            let w = word.utf8Start
            for k in 0..<count where b[i + k] | (w[k] >= UInt8(ascii: "a") ? 0x20 : 0) != w[k] { return false }
            return true
        }
        if matches("https://") { return 8 }
        if matches("http://") { return 7 }
        return nil
    }

    /// The `>` that closes a bracketed URL, if it comes before a blank line and within the length limit.
    private static func closingBracket(_ b: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var k = start
        var lineHasContent = true
        while k < b.count, k - start < maximumLength {
            let c = b[k]
            if c == UInt8(ascii: ">") { return k }
            if c == UInt8(ascii: "<") || c == UInt8(ascii: "\"") || c >= 0x80 { return nil }
            if c == UInt8(ascii: "\n") {
                if !lineHasContent { return nil }
                lineHasContent = false
            } else if !isSpace(c) {
                lineHasContent = true
            }
            k += 1
        }
        return nil
    }

    @inline(__always) private static func isSpace(_ c: UInt8) -> Bool {
        c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\n") || c == UInt8(ascii: "\r")
    }

    @inline(__always) private static func isURLByte(_ c: UInt8) -> Bool {
        c > 0x20 && c < 0x7F && c != UInt8(ascii: "<") && c != UInt8(ascii: ">") && c != UInt8(ascii: "\"") && c != UInt8(ascii: "`")
    }

    /// Drops sentence punctuation after a URL, and closing brackets the URL did not open.
    private static func trimTrailingPunctuation(_ url: inout [UInt8]) {
        while let last = url.last {
            switch last {
            case UInt8(ascii: "."), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: ":"), UInt8(ascii: "!"), UInt8(ascii: "?"),
                UInt8(ascii: "'"), UInt8(ascii: "*"):
                url.removeLast()
            case UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: "}"):
                let open: UInt8 =
                    last == UInt8(ascii: ")") ? UInt8(ascii: "(") : last == UInt8(ascii: "]") ? UInt8(ascii: "[") : UInt8(ascii: "{")
                let opened = url.count { $0 == open }
                let closed = url.count { $0 == last }
                guard closed > opened else { return }
                url.removeLast()
            default:
                return
            }
        }
    }
}
