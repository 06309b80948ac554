import Testing

@testable import ActionLinksEmail

@Suite("MIME messages", .timeLimit(.minutes(5)))
struct MIMEMessageTests {
    @Test("multipart/alternative with quoted-printable Russian: KOI8-R text and UTF-8 HTML, encoded-word headers")
    func russianAlternative() throws {
        let message = MIMEMessage(try Fixtures.bytes("multipart-alternative-ru.eml"))
        #expect(message.problems.isEmpty, "\(message.problems)")
        #expect(message.headers["Subject"] == "Подтвердите адрес электронной почты")
        #expect(message.headers["From"] == "Команда Example <noreply@example.com>")
        #expect(message.parts.map(\.path) == ["", "1", "2"])
        #expect(message.parts.map(\.contentType) == ["multipart/alternative", "text/plain", "text/html"])
        let text = try #require(message.parts[1].text).replacing("\r\n", with: "\n")
        #expect(message.parts[1].charset == "koi8-r")
        #expect(text.hasPrefix("Здравствуйте!\n\nПодтвердите адрес"))
        #expect(text.contains("&lang=ru\n"))
        #expect(message.parts[2].text?.contains("<a href=\"https://links.example.com/__/auth/action?mode=verifyEmail&amp;") == true)
        // Part 1's body starts after its two header lines and the blank line.
        #expect(message.parts[1].bodyLine == 16)
    }

    @Test("base64 ISO-2022-JP: the Japanese text and subject decode")
    func japaneseBase64() throws {
        let message = MIMEMessage(try Fixtures.bytes("iso-2022-jp-base64.eml"))
        #expect(message.problems.isEmpty, "\(message.problems)")
        #expect(message.headers["Subject"] == "パスワードの再設定")
        #expect(message.parts.count == 1)
        let part = message.parts[0]
        #expect(part.path == "1")
        #expect(part.charset == "ISO-2022-JP")
        #expect(part.text?.contains("からパスワードを再設定してください。") == true)
    }

    @Test("malformed MIME: everything readable is read, everything else is named")
    func malformed() throws {
        let message = MIMEMessage(try Fixtures.bytes("malformed.eml"))
        #expect(message.parts.map(\.path) == ["", "1", "2", "3", "4", "5"])
        #expect(message.parts[1].text?.contains("oobCode=Mal1") == true)
        #expect(message.parts[3].text?.contains("oobCode=Mal2") == true)
        #expect(message.parts[4].contentType == "text/plain")
        #expect(message.parts[5].text == nil)
        let problems = message.problems.map(\.description)
        #expect(problems.contains("part 1: iconv cannot decode 'X-KLINGON' here: read as UTF-8"))
        #expect(problems.contains("part 2: unknown Content-Transfer-Encoding 'x-uuencode': the part is read as it stands"))
        #expect(problems.contains("part 3: 6 characters outside the base64 alphabet skipped"))
        #expect(problems.contains("part 4: multipart/alternative without a boundary parameter: read as text/plain"))
        #expect(problems.contains("header line 3 is not a 'Name: value' field; skipped"))
        #expect(problems.contains("the closing boundary '--outer--' is missing; the last part runs to the end"))
    }

    @Test("nested multiparts and an attached message are numbered as IMAP does")
    func nesting() {
        let message = MIMEMessage(
            Array(
                """
                Content-Type: multipart/mixed; boundary=a

                --a
                Content-Type: multipart/alternative; boundary=b

                --b
                Content-Type: text/plain

                plain
                --b
                Content-Type: text/html

                <p>html</p>
                --b--
                --a
                Content-Type: message/rfc822

                Subject: forwarded
                Content-Type: text/plain; charset=utf-8

                Forwarded: https://links.example.com/x
                --a--

                """.utf8))
        #expect(message.problems.isEmpty, "\(message.problems)")
        #expect(message.parts.map(\.path) == ["", "1", "1.1", "1.2", "2", "2.1"])
        #expect(
            message.parts.map(\.contentType) == [
                "multipart/mixed", "multipart/alternative", "text/plain", "text/html", "message/rfc822", "text/plain",
            ])
        #expect(message.parts[2].text == "plain")
        #expect(message.parts[5].text == "Forwarded: https://links.example.com/x")
        #expect(message.parts[5].headers["Subject"] == "forwarded")
    }

    @Test("no header block, no blank line, an mbox separator, and no boundary match: never a crash")
    func oddShapes() {
        #expect(MIMEMessage([]).parts.count == 1)
        #expect(MIMEMessage(Array("\nbody only".utf8)).parts.first?.text == "body only")
        #expect(MIMEMessage(Array("Subject: only headers".utf8)).parts.first?.text == "")
        let mbox = MIMEMessage(Array("From someone@example.com Sat Jan  3 01:05:34 1996\nSubject: x\n\nhello".utf8))
        #expect(mbox.headers["Subject"] == "x")
        #expect(mbox.parts.first?.text == "hello")
        let unmatched = MIMEMessage(Array("Content-Type: multipart/mixed; boundary=zz\n\nno parts at all".utf8))
        #expect(unmatched.problems.map(\.description) == ["no part starts with the boundary '--zz'"])
    }

    @Test("nesting deeper than the limit stops and says so")
    func depthLimit() {
        var text = ""
        for level in 0...(MIMEMessage.maximumDepth + 2) { text += "Content-Type: multipart/mixed; boundary=b\(level)\n\n--b\(level)\n" }
        let message = MIMEMessage(Array(text.utf8))
        #expect(message.problems.contains { $0.message.contains("nesting deeper than \(MIMEMessage.maximumDepth) levels") })
    }

    @Test("an HTML part without a charset parameter uses its <meta charset>")
    func htmlMetaCharset() {
        let body: [UInt8] =
            Array("Content-Type: text/html\n\n<meta charset=\"windows-1251\"><p>".utf8) + [0xCF, 0xF0, 0xE8] + Array("</p>".utf8)
        let message = MIMEMessage(body)
        #expect(message.parts.first?.charset == "windows-1251")
        #expect(message.parts.first?.text?.contains("При") == true)
    }
}
