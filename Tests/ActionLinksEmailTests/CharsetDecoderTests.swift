import Testing

@testable import ActionLinksEmail

@Suite("Charsets", .timeLimit(.minutes(5)))
struct CharsetDecoderTests {
    struct Sample: Sendable, CustomTestStringConvertible {
        let charset: String
        let bytes: [UInt8]
        let text: String
        var testDescription: String { charset }
    }

    /// One sample per charset the seeds' users write in; the bytes come from Python's codecs.
    static let samples: [Sample] = [
        Sample(charset: "UTF-8", bytes: Array("Привет, 日本".utf8), text: "Привет, 日本"),
        Sample(charset: "ISO-8859-1", bytes: [0x63, 0x61, 0x66, 0xE9], text: "café"),
        Sample(charset: "ISO-8859-15", bytes: [0xA4, 0x75, 0x72, 0x6F, 0xBC], text: "€uroŒ"),
        Sample(charset: "windows-1251", bytes: [0xCF, 0xF0, 0xE8, 0xE2, 0xE5, 0xF2], text: "Привет"),
        Sample(charset: "windows-1252", bytes: [0x80, 0xE9, 0x93], text: "€é“"),
        Sample(charset: "KOI8-R", bytes: [0xF0, 0xD2, 0xC9, 0xD7, 0xC5, 0xD4], text: "Привет"),
        Sample(charset: "Shift_JIS", bytes: [0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA], text: "日本語"),
        Sample(charset: "EUC-JP", bytes: [0xC6, 0xFC, 0xCB, 0xDC, 0xB8, 0xEC], text: "日本語"),
        Sample(
            charset: "ISO-2022-JP",
            bytes: [0x1B, 0x24, 0x42, 0x46, 0x7C, 0x4B, 0x5C, 0x38, 0x6C, 0x24, 0x47, 0x24, 0x39, 0x1B, 0x28, 0x42],
            text: "日本語です"),
    ]

    @Test("each charset decodes", arguments: samples)
    func decodes(sample: Sample) {
        let decoded = CharsetDecoder.decode(sample.bytes, charset: sample.charset)
        #expect(decoded.text == sample.text)
        #expect(decoded.problems.isEmpty)
        #expect(CharsetDecoder.isSupported(sample.charset))
    }

    @Test("labels are case-insensitive and may be quoted or carry an RFC 2231 language")
    func labels() {
        #expect(CharsetDecoder.decode([0xF0, 0xD2], charset: "\"koi8-R\"").text == "Пр")
        #expect(CharsetDecoder.decode([0xF0, 0xD2], charset: "KOI8-R*ru").text == "Пр")
    }

    @Test("Latin-1 labels read as windows-1252, as browsers and mail clients do")
    func latin1IsWindows1252() {
        #expect(CharsetDecoder.decode([0x80, 0x20, 0x35], charset: "iso-8859-1").text == "€ 5")
    }

    @Test("Shift_JIS mail is read with Microsoft's extensions")
    func shiftJISExtensions() {
        #expect(CharsetDecoder.decode([0x87, 0x40], charset: "shift_jis").text == "①")
    }

    @Test("bytes that do not decode become U+FFFD and are counted")
    func replacement() {
        let utf8 = CharsetDecoder.decode([0x61, 0xFF, 0x62, 0xC3], charset: "utf-8")
        #expect(utf8.text == "a\u{FFFD}b\u{FFFD}")
        #expect(utf8.problems == ["2 invalid UTF-8 sequences became U+FFFD"])
        let japanese = CharsetDecoder.decode([0x93, 0xFA, 0xFF, 0x96, 0x7B], charset: "shift_jis")
        #expect(japanese.text == "日\u{FFFD}本")
        #expect(japanese.problems.first?.contains("1 byte could not be decoded as CP932") == true)
    }

    @Test("an unknown charset is named and the text read as UTF-8")
    func unknown() {
        let decoded = CharsetDecoder.decode(Array("plain".utf8), charset: "x-klingon")
        #expect(decoded.text == "plain")
        #expect(decoded.problems.first?.contains("X-KLINGON") == true)
        #expect(!CharsetDecoder.isSupported("x-klingon"))
        #expect(CharsetDecoder.decode([0x41], charset: "no/such charset").problems == ["unknown charset 'no/such charset': read as UTF-8"])
    }

    @Test("undeclared 8-bit text falls back to windows-1252 and says so")
    func undeclared() {
        #expect(CharsetDecoder.decode(Array("ok ✓".utf8), charset: nil) == .init(text: "ok ✓", charset: "UTF-8", problems: []))
        let fallback = CharsetDecoder.decode([0x63, 0x61, 0x66, 0xE9], charset: nil)
        #expect(fallback.text == "café")
        #expect(fallback.charset == "windows-1252")
        #expect(fallback.problems == ["8-bit text although no charset was declared: read as windows-1252"])
    }

    @Test("a long input crosses iconv's buffer many times without losing a character")
    func longInput() {
        var bytes: [UInt8] = []
        for index in 0..<50_000 { bytes += index % 2 == 0 ? [0x93, 0xFA] : [0x96, 0x7B] }
        let decoded = CharsetDecoder.decode(bytes, charset: "shift_jis")
        #expect(decoded.text.count == 50_000)
        #expect(decoded.text.hasPrefix("日本日本"))
        #expect(decoded.problems.isEmpty)
    }
}
