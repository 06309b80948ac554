import CLibXML2

/// Finds every link in an HTML document with libxml2's HTML parser, which repairs broken markup the
/// way browsers roughly do (unclosed tags, stray `</html>`, bad nesting) instead of giving up.
///
/// The parser runs with `HTML_PARSE_NONET` and never loads DTDs or external entities (the HTML parser
/// knows only HTML's built-in entities), so a hostile email cannot make it fetch anything.
public enum HTMLLinkExtractor {
    /// Text collected for one link stops here: a link's text is for recognising it, not for reading.
    static let maximumTextLength = 300

    /// libxml2's parser must be initialised once before use from several threads.
    private static let initialized: Bool = {
        xmlInitParser()
        return true
    }()

    /// Every `<a href>`, `<area href>`, `href` in an Outlook conditional comment, and bare URL in the
    /// text (outside links, scripts and styles) of `html`, in document order.
    public static func links(in html: String) -> [FoundLink] {
        _ = initialized
        var bytes = Array(html.utf8)
        guard !bytes.isEmpty, bytes.count < Int(Int32.max) else { return [] }
        // The text is already UTF-8 (decoded from the part's charset), so the document's own <meta charset>
        // must not make libxml2 decode it a second time: HTML_PARSE_IGNORE_ENC. Without XML_PARSE_HUGE the
        // parser stops at 256 levels of nesting and drops every link after that point; the HTML parser
        // keeps its element stack on the heap, and so does our walk, so deep documents cost no stack.
        let options =
            Int32(HTML_PARSE_RECOVER.rawValue) | Int32(HTML_PARSE_NONET.rawValue) | Int32(HTML_PARSE_NOERROR.rawValue)
            | Int32(HTML_PARSE_NOWARNING.rawValue) | Int32(HTML_PARSE_IGNORE_ENC.rawValue) | Int32(HTML_PARSE_COMPACT.rawValue)
            | Int32(XML_PARSE_HUGE.rawValue)
        let document = bytes.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                htmlReadMemory($0, Int32(buffer.count), nil, "UTF-8", options)
            }
        }
        guard let document else { return [] }
        defer { xmlFreeDoc(document) }
        return collect(from: document.pointee.children)
    }

    /// Walks the tree without recursion (a hostile document can nest deeply), counting how many
    /// enclosing elements hide text from the bare-URL search.
    private static func collect(from first: UnsafeMutablePointer<xmlNode>?) -> [FoundLink] {
        var found: [FoundLink] = []
        var hiding = 0
        var node = first
        while let current = node {
            switch current.pointee.type {
            case XML_ELEMENT_NODE:
                if let link = link(current) { found.append(link) }
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if hiding == 0, let content = current.pointee.content {
                    // Scanned in place: most text nodes hold no URL, so no String is built for them.
                    let text = UnsafeBufferPointer(start: content, count: Int(xmlStrlen(content)))
                    found.append(contentsOf: TextLinkFinder.links(in: text, firstLine: line(current), origin: .htmlText))
                }
            case XML_COMMENT_NODE:
                if let content = current.pointee.content {
                    found.append(contentsOf: conditionalCommentLinks(string(content), line: line(current)))
                }
            default:
                break
            }
            if current.pointee.type == XML_ELEMENT_NODE, let child = current.pointee.children {
                if hidesText(current) { hiding += 1 }
                node = child
                continue
            }
            var step = current
            node = nil
            while true {
                if let next = step.pointee.next {
                    node = next
                    break
                }
                // The document node is the parent of the top level: the walk ends there.
                guard let parent = step.pointee.parent, parent.pointee.type == XML_ELEMENT_NODE else { break }
                if hidesText(parent) { hiding -= 1 }
                step = parent
            }
        }
        return found
    }

    /// The link an `<a>` or `<area>` element makes, if it has an `href`.
    private static func link(_ element: UnsafeMutablePointer<xmlNode>) -> FoundLink? {
        let isAnchor = nameIs(element, "a")
        guard isAnchor || nameIs(element, "area"), let href = attribute(element, "href") else { return nil }
        var text: String?
        if isAnchor {
            text = visibleText(of: element)
        } else {
            text = attribute(element, "alt").map(collapseWhitespace)
        }
        if text?.isEmpty == true { text = nil }
        let found = FoundLink(rawURL: href, text: text, line: line(element), origin: isAnchor ? .anchor : .area)
        // An href of only control characters is empty once normalised: nothing a person could follow.
        return found.url.isEmpty ? nil : found
    }

    /// The text a reader sees for an element: its text nodes, or the `alt` of its first image when it
    /// has none (image buttons), whitespace collapsed and cut at ``maximumTextLength``.
    private static func visibleText(of element: UnsafeMutablePointer<xmlNode>) -> String {
        var text = ""
        var imageAlt: String?
        var node = element.pointee.children
        var depth = 1
        while let current = node, text.utf8.count < maximumTextLength * 8 {
            switch current.pointee.type {
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if let content = current.pointee.content { text += string(content) }
            case XML_ELEMENT_NODE:
                if imageAlt == nil, nameIs(current, "img") { imageAlt = attribute(current, "alt") }
            default:
                break
            }
            if current.pointee.type == XML_ELEMENT_NODE, !nameIs(current, "script"), !nameIs(current, "style"),
                let child = current.pointee.children
            {
                depth += 1
                node = child
                continue
            }
            var climbing: UnsafeMutablePointer<xmlNode>? = current
            node = nil
            while let step = climbing, depth > 0 {
                if let next = step.pointee.next {
                    node = next
                    break
                }
                climbing = step.pointee.parent
                depth -= 1
            }
            if depth == 0 { node = nil }
        }
        var collapsed = collapseWhitespace(text)
        if collapsed.isEmpty, let imageAlt { collapsed = collapseWhitespace(imageAlt) }
        if collapsed.unicodeScalars.count > maximumTextLength {
            collapsed = String(String.UnicodeScalarView(collapsed.unicodeScalars.prefix(maximumTextLength))) + "…"
        }
        return collapsed
    }

    /// Outlook's "bulletproof buttons" live in `<!--[if mso]>` comments as VML with their own `href`.
    private static func conditionalCommentLinks(_ comment: String, line: Int) -> [FoundLink] {
        guard comment.hasPrefix("[if"), comment.contains("href") else { return [] }
        var found: [FoundLink] = []
        let scalars = Array(comment.unicodeScalars)
        var i = 0
        var currentLine = line
        while i + 5 < scalars.count {
            if scalars[i] == "\n" { currentLine += 1 }
            guard scalars[i] == "h", scalars[i + 1] == "r", scalars[i + 2] == "e", scalars[i + 3] == "f" else {
                i += 1
                continue
            }
            var j = i + 4
            while j < scalars.count, scalars[j] == " " { j += 1 }
            guard j + 1 < scalars.count, scalars[j] == "=", scalars[j + 1] == "\"" || scalars[j + 1] == "'" else {
                i += 4
                continue
            }
            let quote = scalars[j + 1]
            var k = j + 2
            var value = String.UnicodeScalarView()
            while k < scalars.count, scalars[k] != quote {
                value.append(scalars[k])
                k += 1
            }
            let link = FoundLink(
                rawURL: decodeCharacterReferences(String(value)), text: nil, line: currentLine, origin: .outlookConditional)
            if !link.url.isEmpty { found.append(link) }
            for scalar in scalars[i..<min(k, scalars.count)] where scalar == "\n" { currentLine += 1 }
            i = k + 1
        }
        return found
    }

    /// A comment's content is not parsed, so `&amp;` there is still written out; Outlook decodes it.
    private static func decodeCharacterReferences(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = text
        for (entity, character) in [("&amp;", "&"), ("&quot;", "\""), ("&#39;", "'"), ("&lt;", "<"), ("&gt;", ">")] {
            result = result.replacing(entity, with: character)
        }
        return result
    }

    /// Elements whose text is not shown as text a mail client would linkify.
    private static func hidesText(_ element: UnsafeMutablePointer<xmlNode>) -> Bool {
        nameIs(element, "a") || nameIs(element, "script") || nameIs(element, "style") || nameIs(element, "title")
    }

    private static func nameIs(_ node: UnsafeMutablePointer<xmlNode>, _ name: StaticString) -> Bool {
        guard let nodeName = node.pointee.name else { return false }
        let expected = name.utf8Start
        let count = name.utf8CodeUnitCount
        for k in 0..<count where nodeName[k] | 0x20 != expected[k] { return false }
        return nodeName[count] == 0
    }

    /// An attribute's value as the parser decoded it (entities resolved), read without copying the tree.
    private static func attribute(_ element: UnsafeMutablePointer<xmlNode>, _ name: StaticString) -> String? {
        var property = element.pointee.properties
        while let current = property {
            if let attributeName = current.pointee.name, matches(attributeName, name) {
                var value = ""
                var child = current.pointee.children
                while let text = child {
                    if let content = text.pointee.content { value += string(content) }
                    child = text.pointee.next
                }
                return value
            }
            property = current.pointee.next
        }
        return nil
    }

    private static func matches(_ text: UnsafePointer<xmlChar>, _ name: StaticString) -> Bool {
        let expected = name.utf8Start
        let count = name.utf8CodeUnitCount
        for k in 0..<count where text[k] | 0x20 != expected[k] { return false }
        return text[count] == 0
    }

    private static func string(_ text: UnsafePointer<xmlChar>) -> String {
        String(cString: text)
    }

    /// libxml2 keeps line numbers in 16 bits; lines past 65535 all read as 65535.
    private static func line(_ node: UnsafeMutablePointer<xmlNode>) -> Int {
        max(1, Int(node.pointee.line))
    }

    static func collapseWhitespace(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !result.isEmpty
            } else {
                if pendingSpace { result.append(" ") }
                pendingSpace = false
                result.append(scalar)
            }
        }
        return String(result)
    }
}
