import Testing

@testable import ActionLinks

/// `ActionCodeLink.parse` reads links on bytes (``LinkParser``); ``LinkInspection`` reads them through
/// ``LinkUnwrapper`` with every layer recorded. Both must give the same answer for every input.
@Suite("Parsing on bytes: the link rules (docs/LINK-RULES.md) at the edges", .timeLimit(.minutes(5)))
struct LinkParserTests {
    static let action = "https://a.example.com/__/auth/action?"

    /// The answer the explaining path gives, which the fast path must equal.
    static func inspected(_ input: String) -> ActionCodeLink? { LinkInspection(input).action }

    @Test("the last of repeated parameters wins, for every field")
    func lastDuplicateWins() throws {
        let link = try #require(
            ActionCodeLink.parse(
                Self.action
                    + "mode=resetPassword&oobCode=A&apiKey=K1&continueUrl=https%3A%2F%2Fx%2F1&lang=en&tenantId=t1"
                    + "&mode=signIn&oobCode=B&apiKey=K2&continueUrl=https%3A%2F%2Fx%2F2&lang=ru&tenantId=t2"))
        #expect(
            link
                == ActionCodeLink(
                    mode: .signIn, oobCode: "B", apiKey: "K2", continueURL: "https://x/2", languageCode: "ru", tenantID: "t2"))
        // The last occurrence wins even when it is empty or has no `=`.
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=C&apiKey=K&apiKey=")?.apiKey == nil)
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=C&apiKey=K&apiKey")?.apiKey == nil)
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=C&oobCode=") == nil)
        // An undecodable earlier value does not matter once a later one replaces it.
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=%FF&oobCode=C")?.oobCode == "C")
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=C&oobCode=%FF") == nil)
    }

    @Test(
        "a malformed escape anywhere makes it not an action link",
        arguments: [
            "mode=signIn&oobCode=C&apiKey=K%", "mode=signIn&oobCode=C&apiKey=K%4", "mode=signIn&oobCode=C%zz&apiKey=K",
            "mode=signIn&oobCode=C&apiKey=K&x=%zz", "mode=signIn&oobCode=C&apiKey=K&%", "mode=signIn%&oobCode=C",
            "mode=signIn&oobCode=C&apiKey=K%G0", "mode=signIn&oobCode=C&apiKey=K%0G", "mode=signIn&oobCode=C&apiKey=K%%41",
        ])
    func malformedEscapes(query: String) {
        #expect(ActionCodeLink.parse(Self.action + query) == nil)
        #expect(Self.inspected(Self.action + query) == nil)
    }

    @Test("escapes at the very end, in the name and across every byte position decode")
    func escapesEverywhere() throws {
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=C&apiKey=K%41")?.apiKey == "KA")
        #expect(ActionCodeLink.parse(Self.action + "%6D%6F%64%65=signIn&%6FobCode=C")?.mode == .signIn)
        #expect(ActionCodeLink.parse(Self.action + "mode=sign%49n&oobCode=C")?.mode == .signIn)
        #expect(ActionCodeLink.parse(Self.action + "mode=sign%69n&oobCode=C") == nil, "modes are case-sensitive after decoding")
        for offset in 0..<20 {
            let prefix = String(repeating: "x", count: offset)
            let link = try #require(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=\(prefix)%2F\(prefix)%25%3d"))
            #expect(link.oobCode == prefix + "/" + prefix + "%=")
        }
    }

    @Test("empty values and items without '=' count as absent for optional fields")
    func emptyValues() throws {
        let link = try #require(ActionCodeLink.parse(Self.action + "mode=verifyEmail&oobCode=C&apiKey=&continueUrl&lang=&tenantId="))
        #expect(link == ActionCodeLink(mode: .verifyEmail, oobCode: "C"))
        #expect(ActionCodeLink.parse(Self.action + "mode=&oobCode=C") == nil)
        #expect(ActionCodeLink.parse(Self.action + "mode&oobCode=C") == nil)
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode") == nil)
        #expect(ActionCodeLink.parse(Self.action + "&&=&mode=signIn&&oobCode=C&=x&") == ActionCodeLink(mode: .signIn, oobCode: "C"))
        // A value keeps everything after the first '='.
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=C=D==")?.oobCode == "C=D==")
    }

    @Test("';' is not a separator and '+' stays '+'")
    func semicolonAndPlus() throws {
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn;oobCode=C") == nil)
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=a;b+c&apiKey=K;x")?.oobCode == "a;b+c")
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=a;b+c&apiKey=K;x")?.apiKey == "K;x")
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=C&continueUrl=a+b%2Bc")?.continueURL == "a+b+c")
    }

    @Test("the fragment is ignored, even when it looks like parameters")
    func fragments() {
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=C#&oobCode=D&mode=resetPassword")?.oobCode == "C")
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn#&oobCode=D") == nil)
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=C#a#b") == nil, "a second '#' is not a URL")
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=C#%zz") == nil)
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=C#") == ActionCodeLink(mode: .signIn, oobCode: "C"))
    }

    @Test("very long queries: thousands of other items, and the length limit")
    func longQueries() throws {
        let filler = (0..<2_000).map { "p\($0)=v\($0)%20" }.joined(separator: "&")
        let link = Self.action + filler + "&mode=signIn&oobCode=C&" + filler
        #expect(link.utf8.count < URLParts.maximumLength)
        #expect(ActionCodeLink.parse(link) == ActionCodeLink(mode: .signIn, oobCode: "C"))
        let longCode = String(repeating: "c", count: 60_000)
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=" + longCode)?.oobCode == longCode)
        let tooLong = Self.action + "mode=signIn&oobCode=C&x=" + String(repeating: "y", count: URLParts.maximumLength)
        #expect(ActionCodeLink.parse(tooLong) == nil)
        // A mobile link whose inner link is nearly as long as the limit.
        let inner = ActionCodeLink(mode: .signIn, oobCode: String(repeating: "k", count: 30_000), apiKey: "K")
        let mobile = inner.mobileLink(on: try LinkDomain("links.example.com"))
        #expect(ActionCodeLink.parse(mobile) == inner)
    }

    @Test("non-ASCII: raw bytes are not a URL, escaped UTF-8 decodes, escaped non-UTF-8 refuses")
    func nonASCII() {
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=é") == nil)
        #expect(ActionCodeLink.parse("https://ä.example.com/__/auth/action?mode=signIn&oobCode=C") == nil)
        #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=%C3%A9%F0%9F%99%82")?.oobCode == "é🙂")
        #expect(
            ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=C&continueUrl=https%3A%2F%2Fx%2F%E6%97%A5")?.continueURL
                == "https://x/日")
        for bad in ["%C3", "%C3%28", "%ED%A0%80", "%F4%90%80%80", "%C0%AF", "%E0%80%AF", "%FF"] {
            #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=C&lang=\(bad)") == nil, "\(bad)")
            // Where nobody reads it, an undecodable value is harmless.
            #expect(ActionCodeLink.parse(Self.action + "mode=signIn&oobCode=C&other=\(bad)") != nil, "\(bad)")
        }
    }

    @Test("nested links: an undecodable link counts as absent, the depth limit holds")
    func nesting() throws {
        let inner = Self.action + "mode=signIn&oobCode=C"
        #expect(ActionCodeLink.parse("https://x.example.com/?link=%FF&mode=signIn&oobCode=OUT")?.oobCode == "OUT")
        #expect(ActionCodeLink.parse("https://x.example.com/?link=not%20a%20url&mode=signIn&oobCode=OUT") == nil)
        #expect(
            ActionCodeLink.parse("https://x.example.com/?deep_link_id=%FF&link=" + PercentEncoding.encodeComponent(inner))?.oobCode == "C")
        var wrapped = inner
        for depth in 2...(LinkUnwrapper.maximumDepth + 1) {
            wrapped = "https://w.page.link/?link=" + PercentEncoding.encodeComponent(wrapped)
            let parsed = ActionCodeLink.parse(wrapped)
            #expect((parsed != nil) == (depth <= LinkUnwrapper.maximumDepth), "depth \(depth)")
            #expect(parsed == Self.inspected(wrapped))
        }
        #expect(ActionCodeLink.parse("https://w.page.link/?apn=x") == nil, "a wrapper without a link")
        #expect(ActionCodeLink.parse("https://w.page.link/?link=&mode=signIn&oobCode=C") == nil)
    }

    /// Links and what is near them: built links, then bytes inserted, deleted and replaced.
    static func mutations(seed: UInt64, count: Int) -> [String] {
        var rng = SplitMix64(seed: seed)
        let domain = try! LinkDomain("links.example.com")
        let bits = [
            "%", "%2", "%25", "%3D", "%26", "%FF", "%C3%A9", "&", "=", "#", "?", "/", ";", "+", " ", "é", "link=", "deep_link_id=",
            "mode=signIn", "oobCode=", "apiKey=", "&lang=ar", "https://w.page.link/?link=", "/__/auth/links", "x", "0",
        ]
        var inputs: [String] = []
        for _ in 0..<count {
            let link = ActionCodeLinkTests.randomLink(&rng)
            var bytes: [UInt8]
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: bytes = Array(link.webLink(on: domain).utf8)
            case 1: bytes = Array(link.mobileLink(on: domain).utf8)
            case 2: bytes = Array(("https://d.page.link/?link=" + PercentEncoding.encodeComponent(link.webLink(on: domain))).utf8)
            default:
                bytes = Array(("app://cb?deep_link_id=" + PercentEncoding.encodeComponent(link.mobileLink(on: domain)) + "&x=1").utf8)
            }
            for _ in 0..<Int.random(in: 0...3, using: &rng) where !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: bytes.insert(contentsOf: bits.randomElement(using: &rng)!.utf8, at: at)
                case 1: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...4, using: &rng)))
                default: bytes[at] = bits.randomElement(using: &rng)!.utf8.first!
                }
            }
            inputs.append(String(decoding: bytes, as: UTF8.self))
        }
        return inputs
    }

    @Test("parse equals the explaining path's reading on 8,000 mutated links", arguments: [11, 12, 13, 14] as [UInt64])
    func agreesWithInspection(seed: UInt64) {
        var accepted = 0
        for input in Self.mutations(seed: seed, count: 2_000) {
            let parsed = ActionCodeLink.parse(input)
            #expect(parsed == Self.inspected(input), "\(input) (seed \(seed))")
            if parsed != nil { accepted += 1 }
        }
        #expect(accepted > 200, "the mutations should leave many links readable")
    }
}

@Suite("Percent-decoding on bytes", .timeLimit(.minutes(5)))
struct PercentDecodingTests {
    @Test("the word-at-a-time decoder equals the plain one for escapes at every offset")
    func wordAtATime() {
        var rng = SplitMix64(seed: 99)
        let alphabet = Array("abcXYZ019-._~!$'()*+,;:@/?".utf8)
        let escapes = ["%25", "%41", "%2f", "%C3%A9", "%E6%97%A5", "%F0%9F%99%82", "%FF", "%C3", "%", "%4", "%zz", "%%"]
        for _ in 0..<5_000 {
            var text = ""
            for _ in 0..<Int.random(in: 0...12, using: &rng) {
                if Int.random(in: 0..<3, using: &rng) == 0 {
                    text += escapes.randomElement(using: &rng)!
                } else {
                    text += String(
                        repeating: String(UnicodeScalar(alphabet.randomElement(using: &rng)!)), count: Int.random(in: 1...11, using: &rng))
                }
            }
            let expected = PercentEncoding.decode(text[...])
            var copy = text
            let decoded = copy.withUTF8 { PercentEncoding.decode($0) }
            #expect(decoded == expected, "\(text)")
        }
    }
}
