import Testing

@testable import ActionLinksEmail

@Suite("Transfer encodings and headers", .timeLimit(.minutes(5)))
struct TransferEncodingTests {
    @Test("quoted-printable: escapes, soft line breaks (CRLF, LF, trailing spaces), malformed escapes kept")
    func quotedPrintable() {
        let input = "a=3Db=\r\nc=  \nd=E2=9C=93 =XZ end="
        let decoded = TransferEncoding.quotedPrintable.decode(ArraySlice(input.utf8))
        #expect(String(decoding: decoded.bytes, as: UTF8.self) == "a=bcd✓ =XZ end")
        #expect(decoded.problems == ["1 malformed quoted-printable escape kept as written"])
    }

    @Test("a link broken by quoted-printable soft line breaks is whole again")
    func qpBrokenLink() {
        let input = "https://links.example.com/__/auth/action?mode=3DsignIn&oobCode=3DAB=\r\nCD&apiKey=3DK"
        let decoded = TransferEncoding.quotedPrintable.decode(ArraySlice(input.utf8)).bytes
        #expect(String(decoding: decoded, as: UTF8.self) == "https://links.example.com/__/auth/action?mode=signIn&oobCode=ABCD&apiKey=K")
    }

    @Test("base64: line breaks ignored, stray characters counted, a truncated tail reported")
    func base64() {
        #expect(TransferEncoding.base64.decode(ArraySlice("aGVs\r\nbG8=\r\n".utf8)) == (Array("hello".utf8), []) as ([UInt8], [String]))
        let stray = TransferEncoding.base64.decode(ArraySlice("aGVs*bG8".utf8))
        #expect(stray.bytes == Array("hello".utf8))
        #expect(stray.problems == ["1 character outside the base64 alphabet skipped"])
        #expect(TransferEncoding.base64.decode(ArraySlice("aGVsb".utf8)).problems == ["the base64 data ends in the middle of a byte"])
    }

    @Test("the header names the encoding; unknown ones are kept as they stand and named")
    func header() {
        #expect(TransferEncoding(header: nil) == .identity)
        #expect(TransferEncoding(header: " Quoted-Printable ") == .quotedPrintable)
        #expect(TransferEncoding(header: "BASE64") == .base64)
        let unknown = TransferEncoding(header: "x-uuencode")
        #expect(unknown == .unknown("x-uuencode"))
        #expect(
            unknown.decode(ArraySlice("abc".utf8)).problems == [
                "unknown Content-Transfer-Encoding 'x-uuencode': the part is read as it stands"
            ])
    }

    @Test(
        "RFC 2047 encoded words",
        arguments: [
            ("=?UTF-8?B?0JrQvtC80LDQvdC00LA=?= Example", "Команда Example"),
            ("=?koi8-r?Q?=F0=D2=C9=D7=C5=D4?=", "Привет"),
            ("=?ISO-2022-JP?B?GyRCJVElOSVvITwlSRsoQg==?=", "パスワード"),
            // Whitespace between adjacent encoded words goes; elsewhere it stays.
            ("=?utf-8?q?a?= =?utf-8?q?b?= c =?utf-8?q?d_e?=", "ab c d e"),
            // A character split across two words (not allowed, but common) is joined before decoding.
            ("=?utf-8?B?0J/R?= =?utf-8?B?gA==?=", "Пр"),
            ("=?utf-8*en?Q?caf=C3=A9?=", "café"),
            ("not =?encoded", "not =?encoded"),
            ("=?utf-8?X?bad?=", "=?utf-8?X?bad?="),
        ])
    func encodedWords(input: String, expected: String) {
        #expect(EncodedWords.decode(input) == expected)
    }

    @Test("Content-Type parameters: quotes, comments, case, RFC 2231 continuations and charsets")
    func parameters() {
        let simple = HeaderValueWithParameters("Multipart/Alternative; boundary=\"==a b;c==\" (comment); CHARSET=utf-8")
        #expect(simple.value == "multipart/alternative")
        #expect(simple.parameters["boundary"] == "==a b;c==")
        #expect(simple.parameters["charset"] == "utf-8")
        let continued = HeaderValueWithParameters("attachment; filename*0*=utf-8''%D0%9F%D1; filename*1*=%80.txt; x=1")
        #expect(continued.value == "attachment")
        #expect(continued.parameters["filename"] == "Пр.txt")
        #expect(continued.parameters["x"] == "1")
    }

    @Test("headers unfold, keep their order, and survive junk lines")
    func headers() {
        var problems: [String] = []
        let block = "Subject: =?utf-8?q?Hello?=\r\n\tworld\r\nnot a header\r\nX-Empty:\r\n"
        let headers = MIMEHeaders.parse(ArraySlice(block.utf8), firstLine: 1, problems: &problems)
        #expect(headers.fields.map(\.name) == ["Subject", "X-Empty"])
        #expect(headers["subject"] == "Hello\tworld")
        #expect(headers["X-Empty"] == "")
        #expect(problems == ["header line 3 is not a 'Name: value' field; skipped"])
    }
}
