import ActionLinks
import Testing

@testable import ActionLinksEmail

@Suite("Whole emails", .timeLimit(.minutes(5)))
struct EmailInspectionTests {
    static let policy = try! ContinueURLPolicy(allow: ["https://app.example.com/"], defaultOrigin: "https://app.example.com")

    static func inspect(_ name: String, format: EmailInspection.Format? = nil) throws -> EmailInspection {
        EmailInspection(try Fixtures.bytes(name), format: format, policy: policy)
    }

    @Test("the format is recognised from the content, or from the file's extension")
    func detection() throws {
        #expect(EmailInspection.Format.detect(try Fixtures.bytes("multipart-alternative-ru.eml")) == .eml)
        #expect(EmailInspection.Format.detect(try Fixtures.bytes("iso-2022-jp-base64.eml")) == .eml)
        #expect(EmailInspection.Format.detect(try Fixtures.bytes("broken.html")) == .html)
        #expect(EmailInspection.Format.detect(Array("Hi,\nopen https://x.example.com/ to sign in.\n".utf8)) == .text)
        // A link is not a header, though it has a colon.
        #expect(EmailInspection.Format.detect(Array("https://links.example.com/__/auth/action?mode=signIn\n".utf8)) == .text)
        #expect(EmailInspection.Format.detect(Array("anything".utf8), fileExtension: "EML") == .eml)
        #expect(EmailInspection.Format.detect(Array("From x@example.com Sat Jan  3 01:05:34 1996\nSubject: y\n\nz".utf8)) == .eml)
    }

    struct SenderStyle: Sendable, CustomTestStringConvertible {
        let file: String
        let verdicts: [InspectedLink.Verdict]
        let rewriters: [RewriterLayer.Kind?]
        var testDescription: String { file }
    }

    static let senderStyles: [SenderStyle] = [
        SenderStyle(file: "firebase-default.html", verdicts: [.validActionLink], rewriters: [nil]),
        SenderStyle(
            file: "sendgrid-tracked.html", verdicts: [.hiddenByRewriter, .validActionLink, .notAnActionLink],
            rewriters: [.sendGrid, nil, nil]),
        SenderStyle(file: "mailgun-tracked.html", verdicts: [.hiddenByRewriter, .notAnActionLink], rewriters: [.mailgun, nil]),
        SenderStyle(file: "mandrill-tracked.html", verdicts: [.hiddenByRewriter], rewriters: [.mandrill]),
        SenderStyle(file: "ses-tracked.html", verdicts: [.validActionLink], rewriters: [.amazonSES]),
        SenderStyle(
            file: "postmark-bulletproof.html", verdicts: [.validActionLink, .validActionLink, .notAnActionLink], rewriters: [nil, nil, nil]),
    ]

    @Test("an HTML email from each major sender style", arguments: senderStyles)
    func senderStyle(style: SenderStyle) throws {
        let email = try Self.inspect(style.file)
        #expect(email.format == .html)
        #expect(email.links.map(\.verdict) == style.verdicts)
        #expect(email.links.map { $0.rewriting.layers.first?.kind } == style.rewriters)
        for link in email.links where link.verdict == .hiddenByRewriter {
            #expect(link.notes.contains { $0.contains("does not open the app") })
        }
    }

    @Test("the SES link's action is read through the tracker")
    func sesAction() throws {
        let link = try #require(try Self.inspect("ses-tracked.html").links.first)
        #expect(link.inspection.action?.mode == .verifyEmail)
        #expect(link.inspection.action?.languageCode == "en")
        #expect(link.found.text == "Verify my email address")
    }

    @Test("a Safe-Links-wrapped sign-in link in a quoted-printable message")
    func safeLinks() throws {
        let email = try Self.inspect("safelinks-signin.eml")
        #expect(email.problems.isEmpty)
        let link = try #require(email.links.first)
        #expect(email.links.count == 1)
        #expect(link.part == "1")
        #expect(link.contentType == "text/html")
        #expect(link.found.text == "Sign in to Example")
        #expect(link.rewriting.layers.map(\.kind) == [.safeLinks])
        #expect(link.inspection.action?.mode == .signIn)
        #expect(link.inspection.action?.oobCode == "Fx7kQ2mZ9pL4vB8nR1tY6wE3sD5aH0jC2gU7iO9qW4e")
        #expect(link.inspection.continueURLDecision == .allowed(url: "https://app.example.com/welcome"))
        #expect(link.verdict == .validActionLink)
        #expect(link.notes.contains { $0.hasPrefix("tapping it opens eur02.safelinks.protection.outlook.com") })
    }

    @Test("Proofpoint: v2 in the text part and v3 in the HTML part lead to the same action")
    func proofpoint() throws {
        let email = try Self.inspect("proofpoint.eml")
        #expect(email.links.map { $0.rewriting.layers.map(\.kind) } == [[.proofpointV2], [.proofpointV3]])
        #expect(email.links.map(\.part) == ["1", "2"])
        let actions = email.links.map(\.inspection.action)
        #expect(actions[0] != nil)
        #expect(actions[0] == actions[1])
        #expect(actions[0]?.continueURL == "https://app.example.com/welcome#done")
    }

    @Test("multipart/alternative with quoted-printable Russian: both parts give the same link")
    func russian() throws {
        let email = try Self.inspect("multipart-alternative-ru.eml")
        #expect(email.links.map(\.part) == ["1", "2"])
        #expect(email.links.map(\.found.origin) == [.plainText, .anchor])
        #expect(email.links.map(\.found.line) == [4, 3])
        #expect(email.links[1].found.text == "Подтвердить адрес")
        #expect(email.links.allSatisfy { $0.inspection.action?.oobCode == "Ru5sK2oI8rT1xY4vB7nM0qW3eR6tZ9uP2aS5dF8gH1j" })
        #expect(email.allActionLinksValid)
    }

    @Test("base64 ISO-2022-JP: the URL ends where the Japanese text begins")
    func japanese() throws {
        let email = try Self.inspect("iso-2022-jp-base64.eml")
        let link = try #require(email.links.first)
        #expect(email.links.count == 1)
        #expect(link.found.url.hasSuffix("&lang=ja"))
        #expect(link.inspection.action?.mode == .resetPassword)
        #expect(link.found.line == 3)
    }

    @Test("broken action links and refused continue URLs make the email fail; others do not")
    func invalid() throws {
        let email = try Self.inspect("invalid-links.html")
        #expect(email.links.map(\.verdict) == [.invalidActionLink, .invalidActionLink, .validActionLink])
        #expect(email.links[0].inspection.failure?.code == .unknownMode)
        #expect(!email.allActionLinksValid)
        let broken = try Self.inspect("broken.html")
        #expect(broken.links.map(\.verdict) == [.validActionLink, .invalidActionLink, .validActionLink, .notAnActionLink])
        #expect(broken.links[1].notes.contains { $0.contains("'&amp;'") })
        #expect(try Self.inspect("firebase-default.html").allActionLinksValid)
    }

    @Test("a message with no text part says so")
    func noText() {
        let email = EmailInspection(
            Array("Content-Type: image/png\nContent-Transfer-Encoding: base64\n\niVBORw0KGgo=\n".utf8), format: .eml)
        #expect(email.links.isEmpty)
        #expect(email.problems.map(\.message) == ["the message has no text or HTML part to look for links in"])
    }

    @Test("a 5 MB message with many parts and links is read completely, in reasonable time")
    func largeMessage() throws {
        let link = "https://links.example.com/__/auth/action?mode=signIn&oobCode=Big&apiKey=K"
        let paragraph = "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.</p>\n"
        var html = "<html><body>\n"
        var anchors = 0
        while html.utf8.count < 2_400_000 {
            html += paragraph
            if html.utf8.count % 20 == 0 || anchors * 4_000 < html.utf8.count {
                html += "<a href=\"\(link)&amp;lang=n\(anchors)\">Sign in \(anchors)</a>\n"
                anchors += 1
            }
        }
        html += "</body></html>\n"
        let qp = html.replacing("=", with: "=3D")
        let base64Lines = base64(Array(html.utf8))
        let message = """
            From: Example <noreply@example.com>
            Subject: big
            MIME-Version: 1.0
            Content-Type: multipart/mixed; boundary=big

            --big
            Content-Type: text/html; charset=utf-8
            Content-Transfer-Encoding: quoted-printable

            \(qp)
            --big
            Content-Type: text/html; charset=utf-8
            Content-Transfer-Encoding: base64

            \(base64Lines)
            --big--

            """
        let bytes = Array(message.utf8)
        #expect(bytes.count > 5_000_000)
        let clock = ContinuousClock()
        var email: EmailInspection?
        let elapsed = clock.measure { email = EmailInspection(bytes, policy: Self.policy) }
        let links = try #require(email).links
        #expect(links.count == anchors * 2)
        #expect(links.allSatisfy { $0.verdict == .validActionLink })
        #expect(links.last?.inspection.action?.languageCode == "n\(anchors - 1)")
        #expect(elapsed < .seconds(30), "took \(elapsed)")
    }

    /// Base64 in 76-character lines, as mail is written (the library only decodes).
    private func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var output: [UInt8] = []
        var column = 0
        var i = 0
        while i < bytes.count {
            let chunk = bytes[i..<min(i + 3, bytes.count)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for k in 0..<4 {
                output.append(k <= chunk.count ? alphabet[Int(value >> (18 - 6 * UInt32(k)) & 63)] : UInt8(ascii: "="))
            }
            i += 3
            column += 4
            if column == 76 {
                output.append(UInt8(ascii: "\n"))
                column = 0
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
