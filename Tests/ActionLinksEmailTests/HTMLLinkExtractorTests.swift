import Testing

@testable import ActionLinksEmail

@Suite("HTML links through libxml2", .timeLimit(.minutes(5)))
struct HTMLLinkExtractorTests {
    @Test("broken HTML: unclosed tags, a stray </html>, unquoted attributes, entities, a wrapped href")
    func brokenHTML() throws {
        let html = String(decoding: try Fixtures.bytes("broken.html"), as: UTF8.self)
        let links = HTMLLinkExtractor.links(in: html)
        #expect(links.map(\.origin) == [.anchor, .anchor, .anchor, .htmlText])
        #expect(
            links[0].url == "https://links.example.com/__/auth/action?mode=verifyEmail&oobCode=Br0kEn1HtMl2Qx3&apiKey=AIzaSyFixtureKey000")
        #expect(links[0].text == "Verify now")
        #expect(links[0].line == 4)
        // After the stray </html>, links are still found.
        #expect(links[1].url == "https://links.example.com/__/auth/action?mode=signIn&amp;oobCode=Amp1&amp;apiKey=K")
        #expect(links[2].url == "https://links.example.com/__/auth/action?mode=resetPassword&oobCode=Wr4ppEd5&apiKey=K")
        #expect(links[2].notes == ["the link contains tabs or line breaks, which browsers remove before following it"])
        #expect(links[3].url == "https://www.example.com/help")
        #expect(links[3].text == nil)
    }

    @Test("a bulletproof button: the Outlook VML href, the image link's alt text, and an image map")
    func bulletproofButton() throws {
        let html = String(decoding: try Fixtures.bytes("postmark-bulletproof.html"), as: UTF8.self)
        let links = HTMLLinkExtractor.links(in: html)
        #expect(links.map(\.origin) == [.outlookConditional, .anchor, .area])
        #expect(links[0].url == links[1].url)
        #expect(links[0].url.hasPrefix("https://links.example.com/__/auth/links?link=https://links.example.com/__/auth/action?apiKey%3D"))
        #expect(links[1].text == "Open the app")
        #expect(links[2].text == "Help centre")
    }

    @Test("text in scripts, styles and titles is not searched; text outside links is")
    func hiddenText() {
        let links = HTMLLinkExtractor.links(
            in: """
                <title>https://title.example.com/</title><style>a{background:url(https://style.example.com/x.png)}</style>
                <script>var u = "https://script.example.com/";</script>
                <p>copy: https://text.example.com/a?b=c.</p><a href="https://a.example.com/">https://a.example.com/</a>
                """)
        #expect(links.map(\.url) == ["https://text.example.com/a?b=c", "https://a.example.com/"])
        #expect(links.map(\.line) == [3, 3])
    }

    @Test("the document's own charset declaration does not re-decode text that is already UTF-8")
    func ignoresMetaCharset() {
        let links = HTMLLinkExtractor.links(in: "<meta charset=\"koi8-r\"><a href=\"https://x.example.com/\">Войти в Example</a>")
        #expect(links.first?.text == "Войти в Example")
    }

    @Test("links without an href, empty hrefs and control-only hrefs are not links")
    func notLinks() {
        #expect(HTMLLinkExtractor.links(in: "<a name=top>x</a><a href=\"\">y</a><a href=\"\u{1}\u{2}\">z</a><area alt=q>").isEmpty)
        #expect(HTMLLinkExtractor.links(in: "").isEmpty)
    }

    @Test("deep nesting and a huge link text stay bounded")
    func bounded() {
        let deep = String(repeating: "<div>", count: 20_000) + "<a href=\"https://deep.example.com/\">deep</a>"
        #expect(HTMLLinkExtractor.links(in: deep).map(\.url) == ["https://deep.example.com/"])
        let long = "<a href=\"https://long.example.com/\">" + String(repeating: "word ", count: 10_000) + "</a>"
        let text = HTMLLinkExtractor.links(in: long).first?.text
        #expect(text?.hasSuffix("…") == true)
        #expect((text?.count ?? 0) <= HTMLLinkExtractor.maximumTextLength + 1)
    }
}

@Suite("URLs in plain text", .timeLimit(.minutes(5)))
struct TextLinkFinderTests {
    @Test(
        "where a URL ends",
        arguments: [
            ("see https://a.example.com/x.", ["https://a.example.com/x"]),
            ("(https://a.example.com/wiki/Foo_(bar)) and", ["https://a.example.com/wiki/Foo_(bar)"]),
            ("[https://a.example.com/x]", ["https://a.example.com/x"]),
            ("\"https://a.example.com/q?x=1\",", ["https://a.example.com/q?x=1"]),
            ("HTTPS://A.EXAMPLE.COM/ and http://b.example.com", ["HTTPS://A.EXAMPLE.COM/", "http://b.example.com"]),
            ("リンクhttps://a.example.com/resetからどうぞ", ["https://a.example.com/reset"]),
            ("xhttps://a.example.com/ https:// alone", []),
            (
                "<https://a.example.com/__/auth/action?mode=signIn\n   &oobCode=A>",
                ["https://a.example.com/__/auth/action?mode=signIn&oobCode=A"]
            ),
            ("<https://a.example.com/x\n\nnext paragraph https://b.example.com/>", ["https://a.example.com/x", "https://b.example.com/"]),
        ])
    func boundaries(text: String, expected: [String]) {
        #expect(TextLinkFinder.links(in: text).map(\.url) == expected)
    }

    @Test("line numbers count from the first line given")
    func lines() {
        let links = TextLinkFinder.links(in: "one\ntwo https://a.example.com/\n\nfour https://b.example.com/", firstLine: 10)
        #expect(links.map(\.line) == [11, 13])
        #expect(links.allSatisfy { $0.origin == .plainText && $0.text == nil })
    }
}
