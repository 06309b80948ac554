import ActionLinksSMTPTestSupport
import Foundation
import Testing

@testable import ActionLinksSMTP

@Suite(.timeLimit(.minutes(5)))
struct MailComposerTests {
    /// A sign-in link as the server mails it: a URL with `=` and `&` and a 43-character base64url code.
    static let link =
        "https://links.example.com/__/auth/action?mode=signIn&oobCode=Zx9-_aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2uV3wX4yZ&apiKey=k&lang=en"
    static let text = """
        Hello,

        Follow this link to sign in:
        \(link)
        .a line that starts with a dot
        .
        trailing spaces and a tab  \t
        = signs = everywhere ==
        \(String(repeating: "0123456789", count: 200))
        Thanks,
        — the ActionLinks team

        """
    static let html = """
        <html><body><p>Hello,</p>
        <p><a href="\(link)">Sign in</a></p>
        .<p>dot first</p>
        <p>\(String(repeating: "long ", count: 400))</p>
        </body></html>
        """

    static func mail(text: String = text, html: String = html, subject: String = "Sign in to ActionLinks") -> OutgoingMail {
        OutgoingMail(
            from: MailAddress("noreply@Links.Example.com", displayName: "ActionLinks"), to: MailAddress("user@example.org"),
            subject: subject, text: text, html: html, date: Date(timeIntervalSince1970: 1_751_360_703),
            extraHeaders: [MailHeader("X-ActionLinks-Mode", "signIn")])
    }

    @Test func theMessageIsSevenBitWithShortLinesAndCRLF() throws {
        let bytes = try MailComposer.compose(Self.mail(subject: HeaderFieldTests.subjects[1])).bytes
        #expect(bytes.allSatisfy { $0 < 0x80 && $0 != 0 })
        let message = String(decoding: bytes, as: UTF8.self)
        #expect(message.hasSuffix("\r\n"))
        #expect(!message.replacingOccurrences(of: "\r\n", with: "").contains("\n"), "every line end is CRLF")
        #expect(!message.replacingOccurrences(of: "\r\n", with: "").contains("\r"))
        let lines = message.components(separatedBy: "\r\n")
        #expect(lines.allSatisfy { $0.utf8.count <= 998 })
        #expect(lines.allSatisfy { $0.utf8.count <= 78 }, "\(lines.filter { $0.utf8.count > 78 })")
    }

    @Test func headersAreThere() throws {
        let composed = try MailComposer.compose(Self.mail())
        let message = String(decoding: composed.bytes, as: UTF8.self)
        #expect(MIMEDecoding.header("Date", of: message) == "Tue, 01 Jul 2025 09:05:03 +0000")
        #expect(MIMEDecoding.header("From", of: message) == "ActionLinks <noreply@Links.Example.com>")
        #expect(MIMEDecoding.header("To", of: message) == "user@example.org")
        #expect(MIMEDecoding.header("MIME-Version", of: message) == "1.0")
        #expect(MIMEDecoding.header("Auto-Submitted", of: message) == "auto-generated")
        #expect(MIMEDecoding.header("X-ActionLinks-Mode", of: message) == "signIn")
        #expect(MIMEDecoding.header("Message-ID", of: message) == "<\(composed.messageID)>")
        #expect(composed.messageID.hasSuffix("@links.example.com"))
        #expect(composed.messageID.count == 32 + "@links.example.com".count)
        #expect(try MailComposer.compose(Self.mail()).messageID != composed.messageID, "random")
    }

    @Test func aGivenMessageIDIsKept() throws {
        var mail = Self.mail()
        mail.messageID = "<abc.123@example.net>"
        #expect(try MailComposer.compose(mail).messageID == "abc.123@example.net")
        mail.messageID = "no at sign"
        #expect(throws: SMTPError.self) { try MailComposer.compose(mail) }
    }

    @Test func asciiPartsAreQuotedPrintableAndDecodeToTheOriginals() throws {
        let message = String(decoding: try MailComposer.compose(Self.mail()).bytes, as: UTF8.self)
        let parts = MIMEDecoding.parts(of: message)
        try #require(parts.count == 2)
        #expect(parts[0].headers.first { $0.name == "content-type" }?.value == "text/plain; charset=UTF-8")
        #expect(parts[1].headers.first { $0.name == "content-type" }?.value == "text/html; charset=UTF-8")
        for part in parts {
            #expect(part.headers.first { $0.name == "content-transfer-encoding" }?.value == "quoted-printable")
            for line in part.body.components(separatedBy: "\r\n") {
                #expect(line.count <= 76, "\(line)")
                #expect(!line.hasSuffix(" ") && !line.hasSuffix("\t"), "trailing whitespace must be encoded: \(line)")
            }
        }
        #expect(MIMEDecoding.decodedText(parts[0]) == Self.text)
        #expect(MIMEDecoding.decodedText(parts[1]) == Self.html)
        #expect(parts[0].body.contains("=3D"), "= is escaped")
        #expect(parts[0].body.contains("\r\n.a line that starts with a dot"), "the dot is SMTP's to escape (dot-stuffing)")
    }

    @Test func partsInOtherScriptsAreBase64() throws {
        let russian = String(repeating: "Нажмите на ссылку, чтобы войти в приложение.\n", count: 20) + Self.link
        let message = String(decoding: try MailComposer.compose(Self.mail(text: russian, html: "<p>\(russian)</p>")).bytes, as: UTF8.self)
        let parts = MIMEDecoding.parts(of: message)
        try #require(parts.count == 2)
        for part in parts {
            #expect(part.headers.first { $0.name == "content-transfer-encoding" }?.value == "base64")
            #expect(part.body.components(separatedBy: "\r\n").allSatisfy { $0.count <= 76 })
            #expect(part.body.components(separatedBy: "\r\n").dropLast().allSatisfy { $0.count == 76 })
        }
        #expect(MIMEDecoding.decodedText(parts[0]) == russian)
        #expect(MIMEDecoding.decodedText(parts[1]) == "<p>\(russian)</p>")
    }

    @Test func theBoundaryAppearsOnlyAsDelimiters() throws {
        let message = String(decoding: try MailComposer.compose(Self.mail()).bytes, as: UTF8.self)
        let contentType = try #require(MIMEDecoding.header("Content-Type", of: message))
        let boundary = try #require(contentType.split(separator: "\"").dropFirst().first)
        // The header's mention, two part delimiters and the closing one.
        #expect(message.components(separatedBy: boundary).count - 1 == 4)
        #expect(message.hasSuffix("--\(boundary)--\r\n"))
    }

    @Test(arguments: [
        ("", ""), ("a", "a"), ("a b", "a b"), ("a \n", "a=20\r\n"), ("a\t", "a=09"), ("=", "=3D"), ("é", "=C3=A9"),
        ("x\r\ny\rz\n", "x\r\ny\r\nz\r\n"),
    ])
    func quotedPrintableEncodes(text: String, expected: String) {
        #expect(TransferEncoding.quotedPrintable(TransferEncoding.canonicalLines(text)) == expected)
    }

    @Test(arguments: [75, 76, 77, 150, 2000])
    func quotedPrintableSoftBreaksRoundTrip(length: Int) throws {
        for filler in ["a", "=", "é", " "] {
            let text = String(repeating: filler, count: length) + "\nend \n"
            let encoded = TransferEncoding.quotedPrintable(TransferEncoding.canonicalLines(text))
            #expect(encoded.components(separatedBy: "\r\n").allSatisfy { $0.count <= 76 })
            let decoded = try #require(MIMEDecoding.decodeQuotedPrintable(encoded))
            #expect(String(decoding: decoded, as: UTF8.self) == text.replacingOccurrences(of: "\n", with: "\r\n"))
        }
    }

    @Test func datesAreRFC5322InUTC() {
        #expect(MailComposer.rfc5322Date(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 +0000")
        #expect(MailComposer.rfc5322Date(Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 +0000")
        #expect(MailComposer.rfc5322Date(Date(timeIntervalSince1970: 4_102_444_799)) == "Thu, 31 Dec 2099 23:59:59 +0000")
        #expect(MailComposer.rfc5322Date(Date(timeIntervalSince1970: -1)) == "Wed, 31 Dec 1969 23:59:59 +0000")
    }

    @Test func addressesAreParsedAndTheirDomainFound() {
        #expect(MailAddress(parsing: "Example App <noreply@Example.com>") == MailAddress("noreply@Example.com", displayName: "Example App"))
        #expect(MailAddress(parsing: #""Example, Inc." <a@b.example>"#) == MailAddress("a@b.example", displayName: "Example, Inc."))
        #expect(MailAddress(parsing: " <a@b.example> ") == MailAddress("a@b.example"))
        #expect(MailAddress(parsing: "a@b.example") == MailAddress("a@b.example"))
        #expect(MailAddress(parsing: "not an address") == nil)
        #expect(MailAddress("noreply@Links.Example.COM").domain == "links.example.com")
        #expect(MailAddress.domain(of: "a@b@c.example") == "c.example")
        #expect(MailAddress.domain(of: "nobody") == nil)
        #expect(MailAddress.domain(of: "nobody@") == nil)
    }

    @Test(arguments: [
        "user@example.org\r\nBcc: x@y.example", "user name@example.org", "<user@example.org>", "user", "пользователь@example.org",
    ])
    func unsafeAddressesAreRefused(address: String) {
        var mail = Self.mail()
        mail.to = MailAddress(address)
        #expect {
            try MailComposer.compose(mail)
        } throws: { error in
            (error as? SMTPError)?.code == .invalidMessage && (error as? SMTPError)?.isPermanent == true
        }
    }

    @Test(arguments: ["Subject", "content-type", "X Bad", "X-Colon:", ""])
    func extraHeadersCannotReplaceOrBreakTheComposedOnes(name: String) {
        var mail = Self.mail()
        mail.extraHeaders = [MailHeader(name, "value")]
        #expect(throws: SMTPError.self) { try MailComposer.compose(mail) }
    }

    @Test func extraHeaderValuesCannotInjectHeaders() throws {
        var mail = Self.mail()
        mail.extraHeaders = [MailHeader("X-Note", "fine\r\nBcc: victim@example.org")]
        let message = String(decoding: try MailComposer.compose(mail).bytes, as: UTF8.self)
        #expect(MIMEDecoding.header("Bcc", of: message) == nil)
        #expect(
            MIMEDecoding.decodeHeaderValue(try #require(MIMEDecoding.header("X-Note", of: message))) == "fine\r\nBcc: victim@example.org")
    }
}
