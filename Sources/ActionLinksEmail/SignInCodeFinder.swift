import ActionLinks

/// A sign-in code found in a sign-in mail: ActionLinks puts one beside every email sign-in link
/// (`codes.signInCode`), on a line (or an element) of its own, in groups (`123 456`), after a line
/// that says to type it into the app that asked for the link. Encoded (`inspect --json`) with every
/// key, `null` for what is not there.
public struct FoundSignInCode: Sendable, Hashable, Encodable {
    /// The code's digits, ungrouped (`123456`).
    public let code: String
    /// The code as the mail shows it (`123 456`), without invisible formatting.
    public let shown: String
    /// The MIME part it is in (`nil` for a standalone HTML or text file).
    public let part: String?
    /// The media type of that part.
    public let contentType: String
    /// The line of the part's text (of the file, for a standalone file) it is on, from 1.
    public let line: Int
    /// The text just before it (the sentence that says what to do with it), if any.
    public let sentence: String?

    enum CodingKeys: String, CodingKey { case code, shown, part, contentType, line, sentence }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let texts: [(CodingKeys, String?)] = [
            (.code, code), (.shown, shown), (.part, part), (.contentType, contentType), (.sentence, sentence),
        ]
        for (key, text) in texts { try container.encode(text, forKey: key) }
        try container.encode(line, forKey: .line)
    }
}

/// Finds sign-in codes in a mail's text or HTML: a line (a text node, in HTML) that holds nothing
/// but 6 to 10 ASCII digits, in groups of two to five separated by single spaces, once spaces and
/// invisible formatting (bidi isolates) around it are dropped.
public enum SignInCodeFinder {
    /// The codes in plain text.
    public static func codes(inText text: String, part: String?, contentType: String) -> [FoundSignInCode] {
        var found: [FoundSignInCode] = []
        var previous: String?
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let visible = trimmed(Substring(line))
            if let code = code(visible) {
                found.append(
                    FoundSignInCode(code: code, shown: visible, part: part, contentType: contentType, line: index + 1, sentence: previous))
            }
            if !visible.isEmpty { previous = visible }
        }
        return found
    }

    /// The codes in HTML: each text between two tags (entities decoded) is read as a line.
    public static func codes(inHTML html: String, part: String?, contentType: String) -> [FoundSignInCode] {
        var found: [FoundSignInCode] = []
        var previous: String?
        var line = 1
        var text = ""
        var textLine = 1
        var inTag = false
        var skipped: String?
        func endText() {
            let visible = trimmed(Substring(decodeEntities(text)))
            if let code = code(visible) {
                found.append(
                    FoundSignInCode(code: code, shown: visible, part: part, contentType: contentType, line: textLine, sentence: previous))
            }
            if !visible.isEmpty { previous = visible }
            text = ""
        }
        var tag = ""
        for character in html {
            if inTag {
                if character == ">" {
                    inTag = false
                    let name =
                        tag.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.map(String.init) ?? ""
                    if name == "style" || name == "script" || name == "title" { skipped = name }
                    if name == "/" + (skipped ?? "\u{0}") { skipped = nil }
                    textLine = line
                } else {
                    tag.append(character)
                }
            } else if character == "<" {
                endText()
                inTag = true
                tag = ""
            } else if skipped == nil {
                if text.isEmpty { textLine = line }
                text.append(character)
            }
            if character.isNewline { line += 1 }
        }
        endText()
        return found
    }

    /// The code a line is, or `nil`: 6 to 10 ASCII digits in groups of two to five, single spaces between.
    static func code(_ visible: String) -> String? {
        let groups = visible.split(separator: " ", omittingEmptySubsequences: false)
        guard groups.allSatisfy({ group in !group.isEmpty && group.allSatisfy { $0.isASCII && $0.isNumber } }),
            groups.count == 1 || groups.allSatisfy({ (2...5).contains($0.count) })
        else { return nil }
        let digits = groups.joined()
        return (6...10).contains(digits.count) ? digits : nil
    }

    /// `text` without the whitespace and invisible formatting (bidi controls, zero-width
    /// characters) around it and in it, but the spaces between groups.
    static func trimmed(_ text: Substring) -> String {
        var kept = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where scalar.properties.generalCategory != .format {
            kept.append(scalar == "\u{00A0}" ? " " : scalar)
        }
        var result = String(kept)
        while let first = result.first, first.isWhitespace { result.removeFirst() }
        while let last = result.last, last.isWhitespace { result.removeLast() }
        return result
    }

    /// `&nbsp;`, `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#39;` and numeric references decoded.
    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        let named: [String: String] = ["nbsp": "\u{00A0}", "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            let after = rest[rest.index(after: ampersand)...]
            guard let semicolon = after.prefix(12).firstIndex(of: ";") else {
                result += "&"
                rest = after
                continue
            }
            let name = after[..<semicolon]
            var replacement: String?
            if name.hasPrefix("#x") || name.hasPrefix("#X") {
                replacement = UInt32(name.dropFirst(2), radix: 16).flatMap { Unicode.Scalar($0) }.map { String(Character($0)) }
            } else if name.hasPrefix("#") {
                replacement = UInt32(name.dropFirst()).flatMap { Unicode.Scalar($0) }.map { String(Character($0)) }
            } else {
                replacement = named[String(name)]
            }
            if let replacement {
                result += replacement
                rest = after[after.index(after: semicolon)...]
            } else {
                result += "&"
                rest = after
            }
        }
        return result + rest
    }
}
