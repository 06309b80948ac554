import ActionLinksSMTPTestSupport
import Foundation
import Testing

@testable import ActionLinksSMTP

@Suite(.timeLimit(.minutes(5)))
struct HeaderFieldTests {
    static let subjects = [
        "Подтвердите свой адрес электронной почты для входа в приложение ActionLinks",
        "ActionLinks にサインインするためのリンクです。このメールに心当たりがない場合は無視してください",
        "رابط تسجيل الدخول إلى تطبيق ActionLinks الخاص بك، تجاهل هذه الرسالة إذا لم تطلبها",
        // Graphemes of several scalars: a family emoji (7 scalars, 25 bytes), flags, combining accents.
        String(repeating: "👨‍👩‍👧‍👦 🇺🇦 é̃ ", count: 12),
    ]

    static func composed(subject: String, fromName: String? = "ActionLinks") throws -> String {
        let mail = OutgoingMail(
            from: MailAddress("noreply@links.example.com", displayName: fromName), to: MailAddress("user@example.org"),
            subject: subject, text: "text", html: "<p>html</p>")
        return String(decoding: try MailComposer.compose(mail).bytes, as: UTF8.self)
    }

    @Test(arguments: subjects)
    func encodedWordsAreShortAndDecodeToTheSubject(subject: String) throws {
        let message = try Self.composed(subject: subject)
        let field = try #require(MIMEDecoding.headers(of: message).first { $0.name == "subject" })
        let words = MIMEDecoding.encodedWords(in: field.value)
        #expect(words.count > 1, "a long subject takes several words")
        for word in words {
            #expect(word.count <= 75, "RFC 2047 §2: \(word) has \(word.count) characters")
            let bytes = try #require(MIMEDecoding.decodeWordBytes(word))
            // Each word alone is whole UTF-8: no character is split between two words.
            #expect(String(validating: bytes, as: UTF8.self) != nil, "\(word) holds part of a character")
        }
        for line in field.raw.components(separatedBy: "\r\n") {
            #expect(line.count <= 78, "\(line) has \(line.count) characters")
        }
        #expect(MIMEDecoding.decodeHeaderValue(field.value) == subject)
    }

    @Test(arguments: subjects)
    func wordsEndBetweenGraphemes(subject: String) throws {
        let words = HeaderField.encodedWords(subject, after: "Subject: ".count)
        let pieces = try words.map { String(decoding: try #require(MIMEDecoding.decodeWordBytes($0)), as: UTF8.self) }
        // A grapheme split between two words would count as two characters.
        #expect(pieces.map(\.count).reduce(0, +) == subject.count)
        #expect(pieces.joined() == subject)
    }

    @Test func aGraphemeLongerThanAWordIsSplitBetweenItsScalars() throws {
        // 12 family emoji joined by ZWJ: one grapheme of 12 * 25 + 11 * 3 bytes, more than one word holds.
        let family = Array(repeating: "👨‍👩‍👧‍👦", count: 12).joined(separator: "\u{200D}")
        #expect(family.count == 1)
        let words = HeaderField.encodedWords(family, after: 9)
        #expect(words.count > 1)
        for word in words {
            #expect(word.count <= 75)
            let bytes = try #require(MIMEDecoding.decodeWordBytes(word))
            #expect(String(validating: bytes, as: UTF8.self) != nil)
        }
        #expect(try words.map { try #require(MIMEDecoding.decodeWordBytes($0)) }.joined().elementsEqual(family.utf8))
    }

    @Test func asciiSubjectsStayReadableAndFoldAtSpaces() throws {
        let subject = "Sign in to ActionLinks with this link, which works once and expires in one hour from now"
        let message = try Self.composed(subject: subject)
        let field = try #require(MIMEDecoding.headers(of: message).first { $0.name == "subject" })
        #expect(field.raw.contains("\r\n "), "folded")
        #expect(field.raw.components(separatedBy: "\r\n").allSatisfy { $0.count <= 78 })
        #expect(field.value == subject)
    }

    @Test func textThatLooksLikeAnEncodedWordIsEncoded() throws {
        let subject = "Literally =?UTF-8?B?SGk=?= here"
        let message = try Self.composed(subject: subject)
        let value = try #require(MIMEDecoding.header("Subject", of: message))
        #expect(value != subject)
        #expect(MIMEDecoding.decodeHeaderValue(value) == subject)
    }

    @Test func displayNamesAreBareQuotedOrEncoded() throws {
        #expect(
            MIMEDecoding.header("From", of: try Self.composed(subject: "x", fromName: "Example App"))
                == "Example App <noreply@links.example.com>")
        #expect(
            MIMEDecoding.header("From", of: try Self.composed(subject: "x", fromName: "Example, Inc. \"Links\""))
                == #""Example, Inc. \"Links\"" <noreply@links.example.com>"#)
        let encoded = try #require(MIMEDecoding.header("From", of: try Self.composed(subject: "x", fromName: "Ссылки ActionLinks")))
        #expect(encoded.hasSuffix(" <noreply@links.example.com>"))
        #expect(MIMEDecoding.decodeHeaderValue(String(encoded.dropLast(" <noreply@links.example.com>".count))) == "Ссылки ActionLinks")
        #expect(MIMEDecoding.header("From", of: try Self.composed(subject: "x", fromName: nil)) == "noreply@links.example.com")
    }

    @Test func foldingKeepsEveryCharacter() {
        let value = "a  b " + String(repeating: "word ", count: 30) + String(repeating: "x", count: 120)
        let folded = HeaderField.folded("X-Test", value)
        #expect(folded.replacingOccurrences(of: "\r\n", with: "") == "X-Test: " + value)
        #expect(folded.components(separatedBy: "\r\n").dropLast().allSatisfy { $0.count <= 78 })
        #expect(folded.components(separatedBy: "\r\n").allSatisfy { $0.contains { $0 != " " } }, "no line of only spaces")
    }
}
