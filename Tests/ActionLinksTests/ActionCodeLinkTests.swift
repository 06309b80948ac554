import Testing

@testable import ActionLinks

@Suite("Building and parsing action links", .timeLimit(.minutes(5)))
struct ActionCodeLinkTests {
    let domain = try! LinkDomain("links.example.com")

    /// Pieces that break naive encoders: delimiters of every layer, escapes, spaces, non-ASCII.
    static let pieces = [
        "a", "Z", "0", "-", "_", ".", "~", "&", "=", "#", "%", "+", " ", "?", "/", ":", "@", "!", "$", "'", "(", ")",
        "*", ",", ";", "é", "日本", "🙂", "مرحبا", "%2F", "%25", "%3D", "%26", "&amp;", "\\", "\"", "<", ">", "|", "{", "}",
        "^", "`", "[", "]", "\t", "\n", "link=", "deep_link_id=", "?mode=signIn&oobCode=EVIL",
    ]

    static func randomText(_ rng: inout SplitMix64, maxPieces: Int) -> String {
        (0..<Int.random(in: 1...maxPieces, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
    }

    static func randomLink(_ rng: inout SplitMix64) -> ActionCodeLink {
        let codeAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let code = String((0..<43).map { _ in codeAlphabet.randomElement(using: &rng)! })
        let prefixes = ["", "https://app.example.com/", "https://shop.example.com/cart?", "/done?x=", "com.example.app://cb/"]
        let continueURL =
            Bool.random(using: &rng)
            ? prefixes.randomElement(using: &rng)! + randomText(&rng, maxPieces: 12) : nil
        return ActionCodeLink(
            mode: ActionCodeLink.Mode.allCases.randomElement(using: &rng)!,
            oobCode: Bool.random(using: &rng) ? code : randomText(&rng, maxPieces: 4),
            apiKey: Int.random(in: 0..<4, using: &rng) == 0 ? nil : "AIza" + randomText(&rng, maxPieces: 3),
            continueURL: continueURL,
            languageCode: Bool.random(using: &rng) ? ["en", "ru", "ja", "ar", "pt-BR", "zh-Hant-TW"].randomElement(using: &rng)! : nil,
            tenantID: Bool.random(using: &rng) ? "tenant-" + randomText(&rng, maxPieces: 2) : nil)
    }

    /// The six action fields, absent and empty values left out, as an SDK reading would hold them.
    static func fields(_ link: ActionCodeLink, includingAPIKey: Bool = true) -> [String: String] {
        var fields = ["mode": link.mode.rawValue, "oobCode": link.oobCode]
        if includingAPIKey, let apiKey = link.apiKey { fields["apiKey"] = apiKey }
        if let continueURL = link.continueURL { fields["continueUrl"] = continueURL }
        if let lang = link.languageCode { fields["lang"] = lang }
        if let tenant = link.tenantID { fields["tenantId"] = tenant }
        return fields
    }

    static func actionFields(_ reading: ClientReading, includingAPIKey: Bool = true) -> [String: String] {
        var names = ["mode", "oobCode", "continueUrl", "lang", "tenantId"]
        if includingAPIKey { names.append("apiKey") }
        return reading.fields.filter { names.contains($0.key) && !$0.value.isEmpty }
    }

    @Test("a built link parses back to the same fields, by us and by each SDK's rules", arguments: [1, 2, 3, 4] as [UInt64])
    func roundTrip(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<400 {
            let link = Self.randomLink(&rng)
            let web = link.webLink(on: domain)
            let mobile = link.mobileLink(on: domain)
            #expect(ActionCodeLink.parse(web) == link, "web link \(web) (seed \(seed))")
            #expect(ActionCodeLink.parse(mobile) == link, "mobile link \(mobile) (seed \(seed))")
            #expect(Self.actionFields(.javaScript(web)) == Self.fields(link), "JS reading of \(web)")
            #expect(Self.actionFields(.javaScript(mobile)) == Self.fields(link), "JS reading of \(mobile)")
            #expect(
                Self.actionFields(.iOS(mobile), includingAPIKey: false) == Self.fields(link, includingAPIKey: false),
                "iOS reading of \(mobile)")
            #expect(Self.actionFields(.android(mobile)) == Self.fields(link), "Android reading of \(mobile)")
        }
    }

    @Test("the mobile link's inner link starts with apiKey and escapes only %, & and =")
    func mobileShape() throws {
        let link = ActionCodeLink(
            mode: .signIn, oobCode: "ZZ9", apiKey: "K", continueURL: "https://shop.example.com/cart?id=7&ref=mail", languageCode: "ar")
        let mobile = link.mobileLink(on: domain)
        #expect(
            mobile.hasPrefix(
                "https://links.example.com/__/auth/links?link=https://links.example.com/__/auth/action?apiKey%3DK%26mode%3DsignIn%26oobCode%3DZZ9%26"
            ))
        #expect(mobile.hasSuffix("%26lang%3Dar"))
        #expect(
            link.webLink(on: domain)
                == "https://links.example.com/__/auth/action?mode=signIn&oobCode=ZZ9&apiKey=K&continueUrl=https%3A%2F%2Fshop.example.com%2Fcart%3Fid%3D7%26ref%3Dmail&lang=ar"
        )
    }

    @Test("why the mobile shape exists: the iOS rules misread a web link whose continue URL has '&'")
    func iOSMisreadsWebLinks() {
        let link = ActionCodeLink(mode: .signIn, oobCode: "C", apiKey: "K", continueURL: "https://x.example.com/?a=1&b=2")
        let reading = ClientReading.iOS(link.webLink(on: domain))
        #expect(reading.fields["continueUrl"] == "https://x.example.com/?a=1")
        #expect(reading.fields["b"] == "2")
        #expect(ClientReading.iOS(link.mobileLink(on: domain)).fields["continueUrl"] == "https://x.example.com/?a=1&b=2")
    }

    @Test("the JS rules keep only the text before a second '=' in a value")
    func javaScriptSplitsOnEveryEquals() {
        let reading = ClientReading.javaScript(
            "https://a.example.com/__/auth/action?mode=signIn&oobCode=C&apiKey=K&continueUrl=https://x/?a=b")
        #expect(reading.fields["continueUrl"] == "https://x/?a")
    }

    @Test("the Android rules read '+' as a space and keep the first of repeated parameters")
    func androidPlusAndFirstWins() {
        let reading = ClientReading.android("https://a.example.com/__/auth/action?mode=signIn&oobCode=ab+cd&oobCode=zz&apiKey=K")
        #expect(reading.fields["oobCode"] == "ab cd")
        #expect(ActionCodeLink.parse("https://a.example.com/__/auth/action?mode=signIn&oobCode=ab+cd&oobCode=zz&apiKey=K")?.oobCode == "zz")
    }

    @Test("parameter names written with escapes still count, values are decoded once")
    func escapedNames() {
        let link = ActionCodeLink.parse("https://a.example.com/__/auth/action?%6Dode=verifyEmail&oobCode=a%252Fb")
        #expect(link?.mode == .verifyEmail)
        #expect(link?.oobCode == "a%2Fb")
    }

    @Test("escapes that decode to invalid UTF-8 make the link not an action link")
    func invalidUTF8() {
        #expect(ActionCodeLink.parse("https://a.example.com/__/auth/action?mode=signIn&oobCode=%FF%FE") == nil)
        #expect(LinkInspection("https://a.example.com/__/auth/action?mode=signIn&oobCode=%FF%FE").failure?.code == .undecodableParameter)
    }

    @Test("modes map to and from REST request types")
    func requestTypes() {
        for mode in ActionCodeLink.Mode.allCases {
            #expect(ActionCodeLink.Mode(requestType: mode.requestType) == mode)
        }
        #expect(ActionCodeLink.Mode.signIn.requestType == "EMAIL_SIGNIN")
        #expect(ActionCodeLink.Mode(requestType: "email_signin") == nil)
    }

    @Test(
        "link domains are checked",
        arguments: [
            ("links.example.com", true), ("Links.Example.COM", true), ("localhost:8080", true), ("a.example.com:443", true),
            ("https://links.example.com", true), ("http://links.example.com", false), ("http://localhost:8080", true),
            ("http://dev.localhost", true), ("ftp://links.example.com", false), ("links.example.com/path", false), ("", false),
            ("-bad.example.com", false), ("127.0.0.1", false), ("10.0.0.1:8080", false), ("http://127.0.0.1:8080", false),
            ("1.example.com", true), ("links.example.com1", true),
            ("links..example.com", false), ("links.example.com:0", false), ("links.example.com:99999", false), ("exa mple.com", false),
        ])
    func linkDomains(text: String, valid: Bool) {
        #expect(((try? LinkDomain(text)) != nil) == valid)
    }

    @Test("a link domain with a port keeps it, the default port is dropped")
    func linkDomainPort() throws {
        #expect(try LinkDomain("Localhost:8080").description == "localhost:8080")
        #expect(try LinkDomain("links.example.com:443").description == "links.example.com")
        let link = ActionCodeLink(mode: .verifyEmail, oobCode: "C")
        #expect(link.webLink(on: try LinkDomain("localhost:8080")) == "https://localhost:8080/__/auth/action?mode=verifyEmail&oobCode=C")
        #expect(try LinkDomain("http://localhost:80").origin == "http://localhost")
        let development = try LinkDomain("http://localhost:8080")
        #expect(link.webLink(on: development) == "http://localhost:8080/__/auth/action?mode=verifyEmail&oobCode=C")
        #expect(
            link.mobileLink(on: development).hasPrefix("http://localhost:8080/__/auth/links?link=http://localhost:8080/__/auth/action?"))
    }
}
