/// Header fields as RFC 5322 and RFC 2047 want them: 7-bit, folded at spaces so that lines stay within
/// 78 characters where a space allows it, and text that is not plain ASCII as `=?UTF-8?B?...?=` words.
enum HeaderField {
    /// The line length RFC 5322 §2.1.1 asks for where it can be kept.
    static let preferredLineLength = 78
    /// RFC 5322 §2.1.1: no line may be longer than 998 characters.
    static let maximumLineLength = 998
    /// RFC 2047 §2: an encoded word is at most 75 characters, `=?UTF-8?B?` and `?=` included.
    static let maximumEncodedWordLength = 75
    private static let encodedWordOverhead = "=?UTF-8?B??=".count

    /// `name: value` folded, with CRLF between its lines and none at the end. `value` is unstructured
    /// text (a subject): encoded as RFC 2047 words when it is not plain ASCII.
    static func unstructured(_ name: String, _ value: String) -> String {
        folded(name, needsEncoding(value) ? encodedWords(value, after: name.count + 2).joined(separator: " ") : value)
    }

    /// `name: Display Name <address>` folded: the name bare when it is only letters, digits and spaces,
    /// quoted when it has other ASCII characters, RFC 2047 words when it is not ASCII.
    static func address(_ name: String, _ mailAddress: MailAddress) -> String {
        guard let displayName = mailAddress.displayName, !displayName.isEmpty else {
            return folded(name, mailAddress.address)
        }
        let phrase: String
        if needsEncoding(displayName) {
            phrase = encodedWords(displayName, after: name.count + 2).joined(separator: " ")
        } else if displayName.utf8.allSatisfy({ isAtomText($0) || $0 == UInt8(ascii: " ") }), !displayName.contains("  "),
            displayName.first != " ", displayName.last != " "
        {
            phrase = displayName
        } else {
            phrase = "\"" + displayName.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
        }
        return folded(name, phrase + " <" + mailAddress.address + ">")
    }

    /// Whether `text` must be encoded: anything outside printable ASCII and space, text that a
    /// reader would take for an encoded word (`=?`), or a run without spaces too long for one line.
    static func needsEncoding(_ text: String) -> Bool {
        !text.utf8.allSatisfy { (0x20...0x7E).contains($0) } || text.contains("=?")
            || text.split(separator: " ").contains { $0.utf8.count > maximumLineLength - 100 }
    }

    /// `text` as RFC 2047 "B" words of at most 75 characters, the first one short enough to follow a
    /// header name that takes `prefixLength` characters. Words end only between characters (a user-
    /// perceived character split between its scalars only when it does not fit in one word alone), so
    /// each word decodes to whole UTF-8 on its own, as RFC 2047 §5 requires.
    static func encodedWords(_ text: String, after prefixLength: Int) -> [String] {
        // Each 3 bytes become 4 characters of base64.
        func capacity(_ length: Int) -> Int { Swift.max(0, length - encodedWordOverhead) / 4 * 3 }
        let fullCapacity = capacity(maximumEncodedWordLength)
        // The first word shares its line with the header's name; it holds at least one scalar whatever the name.
        var limit = Swift.max(capacity(Swift.min(maximumEncodedWordLength, preferredLineLength - prefixLength)), 6)
        var words: [String] = []
        var chunk: [UInt8] = []
        func flush() {
            words.append("=?UTF-8?B?" + chunk.base64 + "?=")
            chunk = []
            limit = fullCapacity
        }
        for character in text {
            let bytes = Array(character.utf8)
            if chunk.count + bytes.count <= limit {
                chunk += bytes
                continue
            }
            if !chunk.isEmpty { flush() }
            if bytes.count <= limit {
                chunk = bytes
                continue
            }
            for scalar in character.unicodeScalars {
                let scalarBytes = Array(String(scalar).utf8)
                if chunk.count + scalarBytes.count > limit { flush() }
                chunk += scalarBytes
            }
        }
        if !chunk.isEmpty || words.isEmpty { flush() }
        return words
    }

    /// `name: value`, a line break (CRLF and a space) put before a word wherever the line would
    /// otherwise pass 78 characters. Breaks go only where `value` has a single space, so unfolding
    /// gives `value` back; a line with no such space stays long (`needsEncoding` keeps it under 998).
    static func folded(_ name: String, _ value: String) -> String {
        var lines: [String] = []
        var line = name + ":"
        var lineHasWord = false
        for word in value.split(separator: " ", omittingEmptySubsequences: false) {
            if !word.isEmpty, lineHasWord, line.count + 1 + word.count > preferredLineLength {
                lines.append(line)
                line = ""
            }
            line += " " + word
            lineHasWord = lineHasWord || !word.isEmpty
        }
        lines.append(line)
        return lines.joined(separator: "\r\n")
    }

    /// RFC 5322 `atext`: what a display name may hold without quotes.
    private static func isAtomText(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-/=?^_`{|}~".utf8.contains(byte)
        }
    }
}
