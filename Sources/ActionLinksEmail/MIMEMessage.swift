/// An email message (RFC 5322 + MIME, RFC 2045–2049) read into its parts, forgivingly: malformed
/// MIME never stops the reading; what can be read is kept and what cannot is named in ``problems``.
public struct MIMEMessage: Sendable {
    /// One entity of the message: the message itself, a multipart container, or a leaf part.
    public struct Part: Sendable {
        /// The part number as IMAP gives it: `1`, `2.1`, ...; empty for a multipart message's root.
        public let path: String
        /// The part's header fields.
        public let headers: MIMEHeaders
        /// The media type, lower-cased (`text/html`, `multipart/alternative`).
        public let contentType: String
        /// The `Content-Type` parameters (`charset`, `boundary`, ...).
        public let parameters: [String: String]
        /// The line of the input where the part's body starts (1-based).
        public let bodyLine: Int
        /// The decoded text, for `text/*` leaf parts; `nil` for containers and other media types.
        public let text: String?
        /// The charset the text was decoded from, for text parts.
        public let charset: String?
        /// Whether the part is marked as an attachment.
        public let isAttachment: Bool
        /// The size of the part's decoded body in bytes (0 for containers).
        public let decodedSize: Int

        /// Whether this part is a container (`multipart/*`, or an attached `message/rfc822`).
        public var isContainer: Bool {
            contentType.hasPrefix("multipart/") || contentType == "message/rfc822" || contentType == "message/global"
        }
    }

    /// A problem found while reading, and the part it is in.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// The part number (`nil` for the message as a whole).
        public let part: String?
        /// What is wrong, as a sentence.
        public let message: String

        /// `part 1.2: message`.
        public var description: String { part.map { "part \($0): \(message)" } ?? message }
    }

    /// The top-level header fields.
    public let headers: MIMEHeaders
    /// Every entity, in document order (containers before their children).
    public let parts: [Part]
    /// What could not be read.
    public let problems: [Problem]

    /// Nesting deeper than this is not followed (each level is named in ``problems``).
    public static let maximumDepth = 32
    /// More parts than this are not read.
    public static let maximumParts = 2_000

    /// Reads `bytes` as a message.
    public init(_ bytes: some Collection<UInt8>) {
        var reader = Reader(bytes: Array(bytes))
        var start = 0
        var line = 1
        // An mbox "From " separator line, as saved by some clients, is not a header.
        if reader.bytes.starts(with: Array("From ".utf8)) {
            start = (reader.bytes.firstIndex(of: UInt8(ascii: "\n")) ?? reader.bytes.count - 1) + 1
            line = 2
        }
        let root = reader.parseEntity(
            start..<reader.bytes.count, firstLine: line, path: "", leafPath: "1", defaultType: "text/plain", depth: 0)
        headers = root
        parts = reader.parts
        problems = reader.problems
    }

    private struct Reader {
        let bytes: [UInt8]
        var parts: [Part] = []
        var problems: [Problem] = []

        /// Parses one entity and appends it (and its children) to `parts`; returns its headers.
        ///
        /// `path` numbers a multipart container and prefixes its children; `leafPath` numbers the entity
        /// when it is not multipart. They differ for the whole message ("" and "1") and for the body of an
        /// attached message ("2" and "2.1"), whose multipart root is not listed (IMAP gives it no number).
        mutating func parseEntity(
            _ range: Range<Int>, firstLine: Int, path: String, leafPath: String, defaultType: String, depth: Int,
            listsContainer: Bool = true
        ) -> MIMEHeaders {
            var localProblems: [String] = []
            let (headerRange, bodyStart, bodyLine) = splitHeaders(range, firstLine: firstLine)
            let headers = MIMEHeaders.parse(bytes[headerRange], firstLine: firstLine, problems: &localProblems)
            let name = leafPath
            defer { problems.append(contentsOf: localProblems.map { Problem(part: depth == 0 ? nil : name, message: $0) }) }

            var type = defaultType
            var parameters: [String: String] = [:]
            if let field = headers.field("Content-Type") {
                let parsed = HeaderValueWithParameters(field.rawValue)
                let pieces = parsed.value.split(separator: "/", omittingEmptySubsequences: false)
                if pieces.count == 2, !pieces[0].isEmpty, !pieces[1].isEmpty {
                    type = parsed.value
                    parameters = parsed.parameters
                } else {
                    localProblems.append("Content-Type '\(field.rawValue)' is not a media type: read as \(defaultType)")
                }
            }
            let disposition = headers.field("Content-Disposition").map { HeaderValueWithParameters($0.rawValue).value }
            let body = bodyStart..<range.upperBound

            if type.hasPrefix("multipart/") {
                guard depth < MIMEMessage.maximumDepth else {
                    localProblems.append("multipart nesting deeper than \(MIMEMessage.maximumDepth) levels: not read")
                    return headers
                }
                guard let boundary = parameters["boundary"], !boundary.isEmpty else {
                    localProblems.append("\(type) without a boundary parameter: read as text/plain")
                    appendLeaf(
                        path: name, headers: headers, type: "text/plain", parameters: parameters, body: body, bodyLine: bodyLine,
                        disposition: disposition, problems: &localProblems)
                    return headers
                }
                if listsContainer {
                    parts.append(
                        Part(
                            path: path, headers: headers, contentType: type, parameters: parameters, bodyLine: bodyLine, text: nil,
                            charset: nil, isAttachment: disposition == "attachment", decodedSize: 0))
                }
                let children = splitMultipart(body, boundary: Array(boundary.utf8), bodyLine: bodyLine, problems: &localProblems)
                let childDefault = type == "multipart/digest" ? "message/rfc822" : "text/plain"
                for (index, child) in children.enumerated() {
                    guard parts.count < MIMEMessage.maximumParts else {
                        localProblems.append("more than \(MIMEMessage.maximumParts) parts: the rest are not read")
                        break
                    }
                    let childPath = path.isEmpty ? "\(index + 1)" : "\(path).\(index + 1)"
                    _ = parseEntity(
                        child.range, firstLine: child.line, path: childPath, leafPath: childPath, defaultType: childDefault,
                        depth: depth + 1)
                }
                return headers
            }

            if type == "message/rfc822" || type == "message/global" {
                guard depth < MIMEMessage.maximumDepth else {
                    localProblems.append("messages nested deeper than \(MIMEMessage.maximumDepth) levels: not read")
                    return headers
                }
                parts.append(
                    Part(
                        path: name, headers: headers, contentType: type, parameters: parameters, bodyLine: bodyLine, text: nil,
                        charset: nil,
                        isAttachment: disposition == "attachment", decodedSize: 0))
                // An attached message (a forwarded sign-in email) is read like the outer one. Its body is
                // normally not transfer-encoded; when it is, decode it first.
                let encoding = TransferEncoding(header: headers["Content-Transfer-Encoding"])
                if case .identity = encoding {
                    _ = parseEntity(
                        body, firstLine: bodyLine, path: name, leafPath: "\(name).1", defaultType: "text/plain", depth: depth + 1,
                        listsContainer: false)
                } else {
                    let decoded = encoding.decode(bytes[body])
                    localProblems.append(contentsOf: decoded.problems)
                    var inner = MIMEMessage.Reader(bytes: decoded.bytes)
                    _ = inner.parseEntity(
                        0..<decoded.bytes.count, firstLine: 1, path: name, leafPath: "\(name).1", defaultType: "text/plain",
                        depth: depth + 1,
                        listsContainer: false)
                    parts.append(contentsOf: inner.parts)
                    problems.append(contentsOf: inner.problems)
                }
                return headers
            }

            appendLeaf(
                path: name, headers: headers, type: type, parameters: parameters, body: body, bodyLine: bodyLine, disposition: disposition,
                problems: &localProblems)
            return headers
        }

        private mutating func appendLeaf(
            path: String, headers: MIMEHeaders, type: String, parameters: [String: String], body: Range<Int>, bodyLine: Int,
            disposition: String?, problems: inout [String]
        ) {
            let encoding = TransferEncoding(header: headers["Content-Transfer-Encoding"])
            let decoded = encoding.decode(bytes[body])
            problems.append(contentsOf: decoded.problems)
            var text: String?
            var charset: String?
            if type.hasPrefix("text/") {
                var declared = parameters["charset"]
                if declared == nil, type == "text/html" { declared = HTMLCharsetSniffer.declaredCharset(decoded.bytes) }
                let result = CharsetDecoder.decode(decoded.bytes, charset: declared)
                problems.append(contentsOf: result.problems)
                text = result.text
                charset = result.charset
            }
            parts.append(
                Part(
                    path: path, headers: headers, contentType: type, parameters: parameters, bodyLine: bodyLine, text: text,
                    charset: charset,
                    isAttachment: disposition == "attachment", decodedSize: decoded.bytes.count))
        }

        /// The header block, where the body starts, and the body's first line number.
        private func splitHeaders(_ range: Range<Int>, firstLine: Int) -> (headers: Range<Int>, bodyStart: Int, bodyLine: Int) {
            var lineStart = range.lowerBound
            var line = firstLine
            while lineStart < range.upperBound {
                var end = lineStart
                while end < range.upperBound, bytes[end] != UInt8(ascii: "\n") { end += 1 }
                let isBlank = end == lineStart || (end == lineStart + 1 && bytes[lineStart] == UInt8(ascii: "\r"))
                let next = min(end + 1, range.upperBound)
                if isBlank { return (range.lowerBound..<lineStart, next, line + 1) }
                lineStart = next
                line += 1
            }
            // No blank line: all headers, no body.
            return (range, range.upperBound, line)
        }

        /// The byte ranges (and first lines) of the parts between `--boundary` delimiter lines.
        private func splitMultipart(_ body: Range<Int>, boundary: [UInt8], bodyLine: Int, problems: inout [String]) -> [(
            range: Range<Int>, line: Int
        )] {
            var children: [(range: Range<Int>, line: Int)] = []
            var partStart: Int?
            var partLine = 0
            var lineStart = body.lowerBound
            var line = bodyLine
            var closed = false
            while lineStart < body.upperBound {
                var end = lineStart
                while end < body.upperBound, bytes[end] != UInt8(ascii: "\n") { end += 1 }
                if let kind = delimiter(lineStart..<end, boundary: boundary) {
                    if let start = partStart {
                        // The line break before a delimiter belongs to the delimiter (RFC 2046 §5.1.1).
                        var partEnd = lineStart
                        if partEnd > start, bytes[partEnd - 1] == UInt8(ascii: "\n") { partEnd -= 1 }
                        if partEnd > start, bytes[partEnd - 1] == UInt8(ascii: "\r") { partEnd -= 1 }
                        children.append((start..<max(start, partEnd), partLine))
                    }
                    if kind == .close {
                        closed = true
                        partStart = nil
                        break
                    }
                    partStart = min(end + 1, body.upperBound)
                    partLine = line + 1
                }
                lineStart = end + 1
                line += 1
            }
            if let start = partStart {
                children.append((start..<body.upperBound, partLine))
            }
            if children.isEmpty {
                problems.append("no part starts with the boundary '--\(String(decoding: boundary, as: UTF8.self))'")
            } else if !closed {
                problems.append(
                    "the closing boundary '--\(String(decoding: boundary, as: UTF8.self))--' is missing; the last part runs to the end")
            }
            return children
        }

        private enum Delimiter { case open, close }

        /// Whether the line is `--boundary` or `--boundary--` (trailing whitespace allowed).
        private func delimiter(_ line: Range<Int>, boundary: [UInt8]) -> Delimiter? {
            guard line.count >= boundary.count + 2, bytes[line.lowerBound] == UInt8(ascii: "-"),
                bytes[line.lowerBound + 1] == UInt8(ascii: "-")
            else { return nil }
            var i = line.lowerBound + 2
            for b in boundary {
                guard bytes[i] == b else { return nil }
                i += 1
            }
            var kind = Delimiter.open
            if i + 1 < line.upperBound, bytes[i] == UInt8(ascii: "-"), bytes[i + 1] == UInt8(ascii: "-") {
                kind = .close
                i += 2
            }
            while i < line.upperBound {
                let c = bytes[i]
                guard c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\r") else { return nil }
                i += 1
            }
            return kind
        }
    }
}

/// Finds the charset an HTML document declares for itself (`<meta charset>` or `http-equiv`), the way
/// browsers pre-scan the first bytes.
public enum HTMLCharsetSniffer {
    /// The charset a byte-order mark or a `<meta>` in the first 4 KB declares, if any.
    public static func declaredCharset(_ bytes: [UInt8]) -> String? {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return "utf-8" }
        let head = bytes.prefix(4096).map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 }
        let key = Array("charset".utf8)
        var i = 0
        while i + key.count < head.count {
            guard head[i] == key[0], Array(head[i..<(i + key.count)]) == key else {
                i += 1
                continue
            }
            // Only inside a <meta ...> tag.
            guard let open = head[..<i].lastIndex(of: UInt8(ascii: "<")),
                head[..<i].lastIndex(of: UInt8(ascii: ">")).map({ $0 < open }) ?? true,
                head[open...].starts(with: Array("<meta".utf8))
            else {
                i += key.count
                continue
            }
            var j = i + key.count
            while j < head.count, head[j] == UInt8(ascii: " ") { j += 1 }
            guard j < head.count, head[j] == UInt8(ascii: "=") else {
                i = j
                continue
            }
            j += 1
            while j < head.count, head[j] == UInt8(ascii: " ") || head[j] == UInt8(ascii: "\"") || head[j] == UInt8(ascii: "'") { j += 1 }
            let start = j
            while j < head.count,
                isAlphanumeric(head[j]) || head[j] == UInt8(ascii: "-") || head[j] == UInt8(ascii: "_") || head[j] == UInt8(ascii: ".")
                    || head[j] == UInt8(ascii: ":")
            {
                j += 1
            }
            if j > start { return String(decoding: head[start..<j], as: UTF8.self) }
            i = j
        }
        return nil
    }
}
