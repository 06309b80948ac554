import ActionLinks
import Testing

@testable import ActionLinksEmail

@Suite("Sign-in code lines", .timeLimit(.minutes(5)))
struct SignInCodeFinderTests {
    static let link = "https://links.example.com/__/auth/action?mode=signIn&oobCode=abc&apiKey=k"

    @Test("in text: a line of digit groups, with the line before it; isolates and spaces around it dropped")
    func text() {
        let found = SignInCodeFinder.codes(
            inText: "Hello\n\n\(Self.link)\n\nSigning in on another device? Type this code:\n\u{2066}123 456\u{2069}\n\nBye\n", part: "1",
            contentType: "text/plain")
        #expect(
            found == [
                FoundSignInCode(
                    code: "123456", shown: "123 456", part: "1", contentType: "text/plain", line: 6,
                    sentence: "Signing in on another device? Type this code:")
            ])
        for (shown, code) in [("1234 5678", "12345678"), ("123 456 7890", "1234567890"), ("654321", "654321")] {
            #expect(SignInCodeFinder.codes(inText: "x\n  \(shown)  \n", part: nil, contentType: "text/plain").map(\.code) == [code])
        }
        for line in ["12345", "123 456 and more", "12 34", "1 23456", "12345678901", "123  456", "１２３ ４５６", "2024-01-01"] {
            #expect(SignInCodeFinder.codes(inText: "x\n\(line)\n", part: nil, contentType: "text/plain").isEmpty, "\(line)")
        }
    }

    @Test("in HTML: an element's text of digit groups, entities decoded, with the text before it; styles and titles are not read")
    func html() {
        let html = """
            <!doctype html><html><head><title>123 456</title><style>p { margin: 0 }</style></head><body>
            <p>Signing in on another device? Type this code &amp; nothing else:</p>
            <p style="font-size: 1.75em"><span dir="ltr">&#x2066;987&nbsp;654&#8297;</span></p>
            </body></html>
            """
        let found = SignInCodeFinder.codes(inHTML: html, part: "2", contentType: "text/html")
        #expect(found.count == 1)
        #expect(found.first?.code == "987654" && found.first?.shown == "987 654" && found.first?.line == 3, "\(found)")
        #expect(found.first?.sentence == "Signing in on another device? Type this code & nothing else:")
    }

    @Test("an email is searched only when it has a sign-in link")
    func onlySignInMails() {
        let signIn = EmailInspection(Array("Type this code:\n123 456\n\(Self.link)\n".utf8), format: .text)
        #expect(signIn.signInCodes.map(\.code) == ["123456"])
        let reset = EmailInspection(
            Array("Order 123 456\n\(Self.link.replacing("signIn", with: "resetPassword"))\n".utf8), format: .text)
        #expect(reset.signInCodes.isEmpty)
    }
}
