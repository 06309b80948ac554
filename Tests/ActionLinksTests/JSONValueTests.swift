import ActionLinks
import Testing

private func parseError(_ text: String) -> JSONParseError? {
    parseError(Array(text.utf8))
}

private func parseError(_ bytes: [UInt8]) -> JSONParseError? {
    do {
        _ = try JSONValue.parse(bytes)
        return nil
    } catch {
        return error
    }
}

@Suite("JSONValue parsing", .timeLimit(.minutes(5)))
struct JSONValueParsingTests {
    @Test func parsesEveryKindAndKeepsMemberOrderAndDuplicates() throws {
        let value = try JSONValue.parse(#"{"b": [1, -2.5e3, true, false, null], "a": "x", "b": {}}"#)
        let members = try #require(value.objectMembers)
        #expect(members.map(\.key) == ["b", "a", "b"])
        #expect(
            members[0].value == .array([.number(1, literal: "1"), .number(-2500, literal: "-2.5e3"), .bool(true), .bool(false), .null]))
        #expect(value["b"] == .object([]), "lookup returns the last duplicate")
        #expect(value["a"]?.stringValue == "x")
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        let value = try JSONValue.parse(#""a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00""#)
        #expect(value.stringValue == "a\"\\/\u{8}\u{c}\n\r\té😀")
    }

    @Test func reportsTrailingCommaWithPosition() throws {
        let error = try #require(parseError("{\n  \"a\": [\n    1,\n    2,\n  ]\n}"))
        #expect(error.kind == .trailingComma)
        #expect(error.line == 4)
        #expect(error.column == 6)
        #expect(error.description == "trailing comma before ']' at line 4 column 6")
    }

    @Test func reportsTrailingCommaInObject() throws {
        let error = try #require(parseError(#"{"a": 1,}"#))
        #expect(error.kind == .trailingComma)
        #expect(error.description.hasPrefix("trailing comma before '}'"))
    }

    @Test func reportsByteOrderMarkDistinctly() throws {
        let error = try #require(parseError([0xEF, 0xBB, 0xBF] + Array("{}".utf8)))
        #expect(error.kind == .byteOrderMark)
    }

    @Test(arguments: [
        ("{} // note", JSONParseError.Kind.comment),
        ("[1, /* two */ 2]", .comment),
        ("{'a': 1}", .singleQuote),
        ("['a']", .singleQuote),
        ("{a: 1}", .unquotedKey),
        (#""\x41""#, .invalidEscape),
        (#""\u12""#, .invalidEscape),
        (#""\ud800""#, .loneSurrogate),
        (#""\udc00x""#, .loneSurrogate),
        (#""\ud800\u0041""#, .loneSurrogate),
        ("\"tab\there\"", .controlCharacterInString),
        ("\"line\nbreak\"", .controlCharacterInString),
        ("[01]", .invalidNumber),
        ("[1.]", .invalidNumber),
        ("[-]", .invalidNumber),
        ("[1e]", .invalidNumber),
        ("[tru]", .invalidLiteral),
        ("[nulls]", .invalidLiteral),
        ("{} {}", .trailingContent),
        ("", .emptyInput),
        ("   ", .emptyInput),
        ("[1, 2", .unexpectedEndOfInput),
        (#"{"a": "#, .unexpectedEndOfInput),
        (#""abc"#, .unexpectedEndOfInput),
        ("[1 2]", .unexpectedCharacter),
        ("NaN", .unexpectedCharacter),
    ])
    func rejectsNonJSON(text: String, kind: JSONParseError.Kind) throws {
        let error = try #require(parseError(text), "\(text) should be rejected")
        #expect(error.kind == kind, "\(text): \(error)")
    }

    @Test(arguments: [
        [0xFF] as [UInt8],
        [0x22, 0xC3, 0x22],  // truncated 2-byte sequence
        [0x22, 0xC0, 0xAF, 0x22],  // overlong '/'
        [0x22, 0xED, 0xA0, 0x80, 0x22],  // UTF-8 encoded surrogate
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // beyond U+10FFFF
        [0x22, 0xE2, 0x28, 0xA1, 0x22],  // bad continuation
    ])
    func rejectsInvalidUTF8(bytes: [UInt8]) throws {
        let error = try #require(parseError(bytes))
        #expect(error.kind == .invalidUTF8 || error.kind == .unexpectedCharacter)
    }

    @Test func columnsCountScalarsNotBytes() throws {
        let error = try #require(parseError(#"["é", x]"#))
        #expect(error.column == 7)
    }

    @Test func limitsNestingDepthWithoutOverflowingTheStack() throws {
        let hostile = String(repeating: "[", count: 100_000)
        let error = try #require(parseError(hostile))
        #expect(error.kind == .nestingTooDeep(limit: 128))
        let allowed = String(repeating: "[", count: 128) + String(repeating: "]", count: 128)
        #expect(parseError(allowed) == nil)
        let tooDeep = String(repeating: "{\"a\":", count: 129) + "1" + String(repeating: "}", count: 129)
        #expect(parseError(tooDeep)?.kind == .nestingTooDeep(limit: 128))
    }

    @Test func enforcesTheInputSizeLimit() throws {
        let limits = JSONValue.ParseLimits(maximumByteCount: 10)
        #expect(throws: JSONParseError.self) { try JSONValue.parse(Array("[1,2,3,4,5,6]".utf8), limits: limits) }
        #expect(try JSONValue.parse(Array("[1,2,3]".utf8), limits: limits) == .array([.integer(1), .integer(2), .integer(3)]))
    }

    @Test func keepsHugeNumbersLiterally() throws {
        let value = try JSONValue.parse("[1e999999, 123456789012345678901234567890]")
        let elements = try #require(value.arrayValue)
        guard case .number(let huge, let literal) = elements[0] else {
            Issue.record("expected a number")
            return
        }
        #expect(huge == .infinity)
        #expect(literal == "1e999999")
        #expect(value.serializedText(.compact) == "[1e999999,123456789012345678901234567890]")
    }

    @Test func neverCrashesOnTruncationsOfAValidDocument() {
        let document = Array(
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.x"], "components": [{"/": "/é\u00e9*", "?": {"a": "b"}}]}]}}"#.utf8)
        for length in 0..<document.count {
            #expect(parseError(Array(document[..<length])) != nil, "prefix of \(length) bytes must be rejected")
        }
        #expect(parseError(document) == nil)
    }

    @Test func neverCrashesOnPseudoRandomBytes() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let alphabet = Array(#"{}[]",:0123456789-+.eE\tnulrfas"u/é"#.utf8) + [0x00, 0xFF, 0xC3, 0xED]
        for _ in 0..<2_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(state % 40) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes.append(alphabet[Int(state >> 33) % alphabet.count])
            }
            state = state &* 6_364_136_223_846_793_005 &+ 1
            _ = try? JSONValue.parse(bytes)
        }
    }
}

@Suite("JSONValue serialising", .timeLimit(.minutes(5)))
struct JSONValueSerializingTests {
    @Test func compactOutputKeepsOrderAndDoesNotEscapeSlashes() throws {
        let value = JSONValue.object([
            .init("z", .string("/a/b")), .init("a", .array([.bool(true), .null])), .init("z", .integer(2)),
        ])
        #expect(value.serializedText(.compact) == #"{"z":"/a/b","a":[true,null],"z":2}"#)
    }

    @Test func prettyOutputIsStableAndIndented() {
        let value = JSONValue.object([.init("apps", .array([.string("A")])), .init("empty", .object([])), .init("list", .array([]))])
        #expect(value.serializedText(.pretty) == "{\n  \"apps\": [\n    \"A\"\n  ],\n  \"empty\": {},\n  \"list\": []\n}\n")
    }

    @Test func escapesQuotesBackslashesAndControlCharacters() {
        #expect(JSONValue.string("q\"b\\n\n\u{1}é").serializedText(.compact) == #""q\"b\\n\n\u0001é""#)
    }

    @Test func roundTripsThroughTheParser() throws {
        let text = #"{"b":[1.50,{"c":"\u0000é/"}],"a":-0,"b":null}"#
        let value = try JSONValue.parse(text)
        #expect(try JSONValue.parse(value.serialized(.pretty)) == value)
        #expect(value.serializedText(.compact) == #"{"b":[1.50,{"c":"\u0000é/"}],"a":-0,"b":null}"#)
    }
}
