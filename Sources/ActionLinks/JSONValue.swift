/// A JSON document as written, keeping member order and duplicate keys so validators can report them.
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// The parsed value together with the literal text, so serialising never changes how a number is spelt.
    case number(Double, literal: String)
    /// A string, escapes already decoded.
    case string(String)
    /// Elements in document order.
    case array([JSONValue])
    /// Members in document order; duplicates are kept rather than silently collapsed.
    case object([Member])

    /// One `"key": value` pair of an object.
    public struct Member: Sendable, Hashable {
        /// The member name exactly as decoded.
        public var key: String
        /// The member value.
        public var value: JSONValue

        /// Creates a member; used when building documents in code.
        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// Builds an integer number whose literal is its decimal spelling.
    public static func integer(_ value: Int) -> JSONValue {
        .number(Double(value), literal: String(value))
    }

    /// The string payload, or nil for any other kind.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The boolean payload, or nil for any other kind.
    public var boolValue: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    /// The elements of an array, or nil for any other kind.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The members of an object, or nil for any other kind.
    public var objectMembers: [Member]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The value of the last member named `key`, matching how dictionary-building parsers resolve duplicates.
    public subscript(key: String) -> JSONValue? {
        objectMembers?.last(where: { $0.key == key })?.value
    }

    /// A short noun for the kind of value, used in diagnostics such as "expected a string, found a number".
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

// MARK: - Parsing

extension JSONValue {
    /// Bounds that keep hostile input from exhausting the stack or memory.
    public struct ParseLimits: Sendable, Hashable {
        /// Deepest allowed nesting of arrays and objects.
        public var maximumDepth: Int
        /// Largest accepted input, in bytes.
        public var maximumByteCount: Int

        /// Creates limits; the defaults are far above any real association file.
        public init(maximumDepth: Int = 128, maximumByteCount: Int = 4 * 1024 * 1024) {
            self.maximumDepth = maximumDepth
            self.maximumByteCount = maximumByteCount
        }
    }

    /// Parses UTF-8 bytes strictly per RFC 8259, reporting the first problem with its line and column.
    public static func parse(
        _ bytes: some Collection<UInt8>,
        limits: ParseLimits = ParseLimits()
    ) throws(JSONParseError) -> JSONValue {
        var parser = StrictJSONParser(bytes: Array(bytes), limits: limits)
        return try parser.parseDocument()
    }

    /// Parses text; convenient in tests and tools that already hold a `String`.
    public static func parse(_ text: String, limits: ParseLimits = ParseLimits()) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), limits: limits)
    }
}

/// Why JSON text was rejected, where, and how to fix it.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The category of problem; stable so callers can branch on it.
    public enum Kind: Sendable, Hashable {
        /// Nothing but whitespace.
        case emptyInput
        /// The input starts with EF BB BF.
        case byteOrderMark
        /// More bytes than `ParseLimits.maximumByteCount`.
        case inputTooLarge(limit: Int)
        /// Deeper than `ParseLimits.maximumDepth`.
        case nestingTooDeep(limit: Int)
        /// The text stops inside a value.
        case unexpectedEndOfInput
        /// A byte that cannot start or continue the expected token.
        case unexpectedCharacter
        /// A comma directly before `]` or `}`.
        case trailingComma
        /// `//` or `/*` comments.
        case comment
        /// A `'`-quoted string.
        case singleQuote
        /// An object member name without quotes.
        case unquotedKey
        /// A misspelt `true`, `false` or `null`.
        case invalidLiteral
        /// A number outside RFC 8259 grammar (leading zeros, bare `-`, `1.`).
        case invalidNumber
        /// A backslash escape JSON does not define.
        case invalidEscape
        /// A `\u` surrogate without its partner.
        case loneSurrogate
        /// An unescaped U+0000–U+001F inside a string.
        case controlCharacterInString
        /// Bytes that are not well-formed UTF-8.
        case invalidUTF8
        /// Anything but whitespace after the top-level value.
        case trailingContent
    }

    /// The category of problem.
    public let kind: Kind
    /// 1-based line of the offending byte.
    public let line: Int
    /// 1-based column, counted in Unicode scalars, of the offending byte.
    public let column: Int
    /// 0-based byte offset of the offending byte.
    public let byteOffset: Int
    /// What is wrong, without the position.
    public let reason: String

    /// The reason followed by the position, e.g. "trailing comma before ']' at line 3 column 5".
    public var description: String { "\(reason) at line \(line) column \(column)" }
}

/// Recursive descent over bytes; recursion is bounded by `maximumDepth`, so hostile nesting cannot overflow the stack.
private struct StrictJSONParser {
    let bytes: [UInt8]
    let limits: JSONValue.ParseLimits
    var index = 0
    var depth = 0

    init(bytes: [UInt8], limits: JSONValue.ParseLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        if bytes.count > limits.maximumByteCount {
            throw failure(
                .inputTooLarge(limit: limits.maximumByteCount), at: 0,
                "input is \(bytes.count) bytes, more than the limit of \(limits.maximumByteCount) bytes")
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw failure(
                .byteOrderMark, at: 0, "input starts with a UTF-8 byte order mark (EF BB BF); save the file as UTF-8 without a BOM")
        }
        skipWhitespace()
        if index == bytes.count {
            throw failure(.emptyInput, at: index, "input is empty or only whitespace; expected a JSON value")
        }
        let value = try parseValue()
        skipWhitespace()
        if index < bytes.count {
            throw unexpected(context: "after the top-level value; only whitespace may follow it", kind: .trailingContent)
        }
        return value
    }

    // MARK: Values

    mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw endOfInput(expecting: "a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw unexpected(context: "where a value was expected")
        }
    }

    mutating func enterContainer() throws(JSONParseError) {
        depth += 1
        if depth > limits.maximumDepth {
            throw failure(
                .nestingTooDeep(limit: limits.maximumDepth), at: index,
                "arrays and objects are nested more than \(limits.maximumDepth) levels deep")
        }
    }

    mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1
        var members: [JSONValue.Member] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw endOfInput(expecting: "a member name") }
            let byte = bytes[index]
            if byte != UInt8(ascii: "\"") {
                if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "/") {
                    throw unexpected(context: "where a member name was expected")
                }
                if isIdentifierByte(byte) {
                    throw failure(.unquotedKey, at: index, "object member names must be double-quoted strings")
                }
                throw unexpected(context: "where a member name was expected")
            }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count else { throw endOfInput(expecting: "':'") }
            guard bytes[index] == UInt8(ascii: ":") else {
                throw unexpected(context: "after member name \"\(key)\"; expected ':'")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            members.append(JSONValue.Member(key, value))
            skipWhitespace()
            guard index < bytes.count else { throw endOfInput(expecting: "',' or '}'") }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                depth -= 1
                return .object(members)
            }
            guard bytes[index] == UInt8(ascii: ",") else {
                throw unexpected(context: "after a member value; expected ',' or '}'")
            }
            try rejectTrailingComma(closing: UInt8(ascii: "}"))
        }
    }

    mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw endOfInput(expecting: "',' or ']'") }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return .array(elements)
            }
            guard bytes[index] == UInt8(ascii: ",") else {
                throw unexpected(context: "after an array element; expected ',' or ']'")
            }
            try rejectTrailingComma(closing: UInt8(ascii: "]"))
        }
    }

    /// Consumes a comma and fails if the container closes right after it, pointing at the comma itself.
    mutating func rejectTrailingComma(closing: UInt8) throws(JSONParseError) {
        let commaOffset = index
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == closing {
            throw failure(.trailingComma, at: commaOffset, "trailing comma before '\(Character(Unicode.Scalar(closing)))'")
        }
    }

    mutating func parseLiteral(_ word: String, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
        let start = index
        for expected in word.utf8 {
            guard index < bytes.count, bytes[index] == expected else {
                throw failure(.invalidLiteral, at: start, "invalid literal; expected '\(word)'")
            }
            index += 1
        }
        if index < bytes.count, isIdentifierByte(bytes[index]) {
            throw failure(.invalidLiteral, at: start, "invalid literal; expected '\(word)'")
        }
        return value
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else {
            throw failure(.invalidNumber, at: start, "invalid number; a digit must follow '-'")
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) {
                throw failure(.invalidNumber, at: start, "invalid number; leading zeros are not allowed")
            }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw failure(.invalidNumber, at: start, "invalid number; a digit must follow '.'")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw failure(.invalidNumber, at: start, "invalid number; the exponent needs digits")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let literal = String(decoding: bytes[start..<index], as: UTF8.self)
        // Out-of-range literals become ±infinity; the literal text is kept, so nothing is lost on output.
        return .number(Double(literal) ?? .nan, literal: literal)
    }

    // MARK: Strings

    mutating func parseString() throws(JSONParseError) -> String {
        index += 1
        var utf8: [UInt8] = []
        while true {
            guard index < bytes.count else { throw endOfInput(expecting: "a closing '\"'") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &utf8)
            case 0x00..<0x20:
                throw failure(
                    .controlCharacterInString, at: index,
                    "control character U+00\(hexByte(byte)) inside a string; escape it (for example \\n or \\u00\(hexByte(byte)))")
            case 0x00..<0x80:
                utf8.append(byte)
                index += 1
            default:
                try copyMultiByteScalar(into: &utf8)
            }
        }
    }

    mutating func parseEscape(into utf8: inout [UInt8]) throws(JSONParseError) {
        let escapeStart = index
        index += 1
        guard index < bytes.count else { throw endOfInput(expecting: "an escape character") }
        let simple: UInt8? =
            switch bytes[index] {
            case UInt8(ascii: "\""): UInt8(ascii: "\"")
            case UInt8(ascii: "\\"): UInt8(ascii: "\\")
            case UInt8(ascii: "/"): UInt8(ascii: "/")
            case UInt8(ascii: "b"): 0x08
            case UInt8(ascii: "f"): 0x0C
            case UInt8(ascii: "n"): 0x0A
            case UInt8(ascii: "r"): 0x0D
            case UInt8(ascii: "t"): 0x09
            default: nil
            }
        if let simple {
            utf8.append(simple)
            index += 1
            return
        }
        guard bytes[index] == UInt8(ascii: "u") else {
            throw failure(
                .invalidEscape, at: escapeStart,
                "invalid escape sequence; JSON allows only \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX")
        }
        index += 1
        let first = try parseHexQuad(escapeStart: escapeStart)
        var scalarValue = first
        if (0xD800...0xDBFF).contains(first) {
            let lowStart = index
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw failure(.loneSurrogate, at: escapeStart, "high surrogate \\u\(hexQuad(first)) is not followed by a low surrogate")
            }
            index += 2
            let second = try parseHexQuad(escapeStart: lowStart)
            guard (0xDC00...0xDFFF).contains(second) else {
                throw failure(.loneSurrogate, at: escapeStart, "high surrogate \\u\(hexQuad(first)) is not followed by a low surrogate")
            }
            scalarValue = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(first) {
            throw failure(.loneSurrogate, at: escapeStart, "low surrogate \\u\(hexQuad(first)) without a preceding high surrogate")
        }
        guard let scalar = Unicode.Scalar(scalarValue) else {
            throw failure(.invalidEscape, at: escapeStart, "escape does not name a Unicode scalar")
        }
        utf8.append(contentsOf: UTF8.encode(scalar).map(Array.init) ?? [])
    }

    mutating func parseHexQuad(escapeStart: Int) throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard index < bytes.count, let digit = hexDigitValue(bytes[index]) else {
                throw failure(.invalidEscape, at: escapeStart, "\\u must be followed by exactly four hexadecimal digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// Validates one multi-byte UTF-8 sequence (no overlongs, no surrogates, nothing past U+10FFFF) and copies it.
    mutating func copyMultiByteScalar(into utf8: inout [UInt8]) throws(JSONParseError) {
        let lead = bytes[index]
        let length: Int
        var lowerBoundForSecond: UInt8 = 0x80
        var upperBoundForSecond: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lowerBoundForSecond = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upperBoundForSecond = 0x9F
        case 0xF0: length = 4; lowerBoundForSecond = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upperBoundForSecond = 0x8F
        default: throw failure(.invalidUTF8, at: index, "invalid UTF-8 byte 0x\(hexByte(lead))")
        }
        guard index + length <= bytes.count else {
            throw failure(.invalidUTF8, at: index, "truncated UTF-8 sequence")
        }
        for offset in 1..<length {
            let continuation = bytes[index + offset]
            let range = offset == 1 ? lowerBoundForSecond...upperBoundForSecond : 0x80...0xBF
            guard range.contains(continuation) else {
                throw failure(.invalidUTF8, at: index, "invalid UTF-8 sequence starting with byte 0x\(hexByte(lead))")
            }
        }
        utf8.append(contentsOf: bytes[index..<index + length])
        index += length
    }

    // MARK: Helpers

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    func isIdentifierByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "$")
    }

    func endOfInput(expecting: String) -> JSONParseError {
        failure(.unexpectedEndOfInput, at: bytes.count, "unexpected end of input; expected \(expecting)")
    }

    /// Names the common non-JSON habits (comments, single quotes) instead of a generic complaint.
    func unexpected(context: String, kind: JSONParseError.Kind = .unexpectedCharacter) -> JSONParseError {
        let byte = bytes[index]
        if byte == UInt8(ascii: "/"), index + 1 < bytes.count,
            bytes[index + 1] == UInt8(ascii: "/") || bytes[index + 1] == UInt8(ascii: "*")
        {
            return failure(.comment, at: index, "comments are not allowed in JSON")
        }
        if byte == UInt8(ascii: "'") {
            return failure(.singleQuote, at: index, "single-quoted strings are not allowed in JSON; use double quotes")
        }
        let shown = byte < 0x80 && byte >= 0x20 ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(hexByte(byte))"
        return failure(kind, at: index, "unexpected \(shown) \(context)")
    }

    func failure(_ kind: JSONParseError.Kind, at offset: Int, _ reason: String) -> JSONParseError {
        var line = 1
        var column = 1
        for byte in bytes[..<min(offset, bytes.count)] {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return JSONParseError(kind: kind, line: line, column: column, byteOffset: offset, reason: reason)
    }
}

private func hexDigitValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

private let upperHexDigits = Array("0123456789ABCDEF".utf8)

private func hexByte(_ byte: UInt8) -> String {
    String(decoding: [upperHexDigits[Int(byte >> 4)], upperHexDigits[Int(byte & 0x0F)]], as: UTF8.self)
}

private func hexQuad(_ value: UInt32) -> String {
    hexByte(UInt8(truncatingIfNeeded: value >> 8)) + hexByte(UInt8(truncatingIfNeeded: value))
}

// MARK: - Serialising

extension JSONValue {
    /// Output layout; both are deterministic for a given value.
    public enum SerializationStyle: Sendable, Hashable {
        /// Two-space indentation, one member or element per line, `"key": value`.
        case pretty
        /// No insignificant whitespace.
        case compact
    }

    /// UTF-8 bytes of this value, members in stored order; pretty output ends with a newline as text files should.
    public func serialized(_ style: SerializationStyle = .pretty) -> [UInt8] {
        var output: [UInt8] = []
        write(into: &output, style: style, indent: 0)
        if style == .pretty { output.append(0x0A) }
        return output
    }

    /// The serialised text; see `serialized(_:)`.
    public func serializedText(_ style: SerializationStyle = .pretty) -> String {
        String(decoding: serialized(style), as: UTF8.self)
    }

    private func write(into output: inout [UInt8], style: SerializationStyle, indent: Int) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(_, let literal): output.append(contentsOf: literal.utf8)
        case .string(let text): Self.writeString(text, into: &output)
        case .array(let elements):
            writeContainer(open: "[", close: "]", count: elements.count, into: &output, style: style, indent: indent) {
                output, position, childIndent in
                elements[position].write(into: &output, style: style, indent: childIndent)
            }
        case .object(let members):
            writeContainer(open: "{", close: "}", count: members.count, into: &output, style: style, indent: indent) {
                output, position, childIndent in
                Self.writeString(members[position].key, into: &output)
                output.append(UInt8(ascii: ":"))
                if style == .pretty { output.append(0x20) }
                members[position].value.write(into: &output, style: style, indent: childIndent)
            }
        }
    }

    private func writeContainer(
        open: Unicode.Scalar, close: Unicode.Scalar, count: Int, into output: inout [UInt8],
        style: SerializationStyle, indent: Int, element: (inout [UInt8], Int, Int) -> Void
    ) {
        output.append(UInt8(ascii: open))
        guard count > 0 else {
            output.append(UInt8(ascii: close))
            return
        }
        for position in 0..<count {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            if style == .pretty {
                output.append(0x0A)
                output.append(contentsOf: repeatElement(0x20, count: (indent + 1) * 2))
            }
            element(&output, position, indent + 1)
        }
        if style == .pretty {
            output.append(0x0A)
            output.append(contentsOf: repeatElement(0x20, count: indent * 2))
        }
        output.append(UInt8(ascii: close))
    }

    private static func writeString(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: "\\\\".utf8)
            case 0x0A: output.append(contentsOf: "\\n".utf8)
            case 0x0D: output.append(contentsOf: "\\r".utf8)
            case 0x09: output.append(contentsOf: "\\t".utf8)
            case 0x08: output.append(contentsOf: "\\b".utf8)
            case 0x0C: output.append(contentsOf: "\\f".utf8)
            case 0x00..<0x20: output.append(contentsOf: "\\u00\(hexByte(byte))".utf8)
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
