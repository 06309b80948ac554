import Testing

@testable import ActionLinksHeaders

/// The header parsers: what the red team sent, what the RFCs show, and random bytes, none of which
/// may trap.
@Suite("HTTP header parsers", .timeLimit(.minutes(5)))
struct HeaderParserTests {
    static let hostile: [String] = [
        "", ";", "en,;", ";q=1", ",,", "=", "q=", ";;;;", ",;,;", "\"", "\"\\", "a=\"b", "[", "[::1", "]:80", "::::", "1.2.3.4.5",
        String(decoding: [0xFF, 0xFE, 0x3B, 0x80], as: UTF8.self), String(repeating: ",", count: 100_000),
        String(repeating: "en-", count: 5000), String(repeating: "a;", count: 5000) + "q=1",
    ]

    @Test("Accept-Language: the red team's inputs parse to nothing, RFC examples to their ranges")
    func acceptLanguage() {
        for input in Self.hostile {
            #expect(AcceptLanguage.ranges(input).allSatisfy { (0...1).contains($0.quality) }, "\(input.prefix(20))")
        }
        #expect(
            AcceptLanguage.ranges(";").isEmpty && AcceptLanguage.ranges("en,;").map(\.tag) == ["en"]
                && AcceptLanguage.ranges(";q=1").isEmpty)
        let ranges = AcceptLanguage.ranges("da, en-GB;q=0.8, en;q=0.7, *;q=0.1, fr;q=0, de;q=2, ja;q=abc, zh-Hant-TW;Q=0.5")
        #expect(ranges.map(\.tag) == ["da", "en-GB", "en", "*", "zh-Hant-TW"])
        #expect(ranges.map(\.quality) == [1, 0.8, 0.7, 0.1, 0.5])
        let available = ["ru": "ru", "ja": "ja", "en": "en"]
        #expect(AcceptLanguage.best("de-DE, ja-JP;q=0.8, en;q=0.5") { available[String($0.prefix(2)).lowercased()] } == "ja")
        #expect(AcceptLanguage.best("xx, *;q=0.9") { available[$0] } == nil)
        #expect(AcceptLanguage.best("en;q=0.5, ru;q=0.5") { available[$0] } == "en", "the first of equals")
    }

    @Test("Authorization: case-insensitive scheme, credentials required")
    func authorization() {
        #expect(AuthorizationHeader("bearer owner")?.bearerToken == "owner")
        #expect(AuthorizationHeader("BEARER  owner ")?.bearerToken == "owner")
        #expect(AuthorizationHeader("Basic Og==")?.scheme == "basic" && AuthorizationHeader("Basic Og==")?.bearerToken == nil)
        for bad in ["Bearer", "Bearer ", " ", "", "Be/arer x", "Bearer \u{1}"] { #expect(AuthorizationHeader(bad) == nil, "\(bad)") }
    }

    @Test("Content-Type: type, subtype and parameters")
    func mediaType() {
        let type = MediaType("Application/JSON; charset=\"utf-8\"; junk; x=")
        #expect(type?.matches("application", "json") == true && type?.parameters == [.init(name: "charset", value: "utf-8")])
        for bad in ["", "json", "/json", "application/", "a b/c", "multipart/;;"] { #expect(MediaType(bad) == nil, "\(bad)") }
    }

    @Test("Forwarded and X-Forwarded-For: RFC 7239's examples, ports and brackets removed")
    func forwarded() {
        let elements = ForwardedHeader.elements([
            "for=192.0.2.60;proto=HTTP;by=203.0.113.43", "For=\"[2001:db8:cafe::17]:4711\", for=unknown, for=_hidden;host=x",
        ])
        #expect(elements.map(\.forAddress) == ["192.0.2.60", "2001:db8:cafe::17", "unknown", "_hidden"])
        #expect(elements[0].proto == "http" && elements[0].by == "203.0.113.43" && elements[3].host == "x")
        #expect(XForwardedFor.addresses(["203.0.113.1:8080, , [::1]:80", "10.0.0.1"]) == ["203.0.113.1", "::1", "10.0.0.1"])
        for input in Self.hostile {
            #expect(ForwardedHeader.elements([input]).count <= 64)
            #expect(XForwardedFor.addresses([input]).count <= 64)
        }
    }

    @Test("IP addresses: strict IPv4, every IPv6 form, mapped IPv4 as IPv4; CIDR blocks")
    func addresses() throws {
        for (text, canonical) in [
            ("127.0.0.1", "127.0.0.1"), ("::1", "::1"), ("::", "::"), ("2001:DB8::1", "2001:db8::1"), ("::ffff:10.1.2.3", "10.1.2.3"),
            ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"), ("64:ff9b::192.0.2.33", "64:ff9b::c000:221"), ("1:0:0:2:0:0:0:3", "1:0:0:2::3"),
        ] {
            #expect(IPAddress(text)?.description == canonical, "\(text)")
        }
        for bad in [
            "", "1.2.3", "1.2.3.4.5", "01.2.3.4", "256.1.1.1", "0x7f.0.0.1", "1::2::3", ":1:2", "1:2:3:4:5:6:7:8:9", "::1%eth0", "[::1]",
            "12345::",
        ] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
        let network = try #require(IPNetwork("10.1.2.3/8"))
        let inside = try #require(IPAddress("10.200.0.1")), outside = try #require(IPAddress("11.0.0.1")),
            v6 = try #require(IPAddress("::1"))
        #expect(network.description == "10.0.0.0/8" && network.contains(inside))
        #expect(!network.contains(outside) && !network.contains(v6))
        let loopback6 = try #require(IPNetwork("::1")), loopback4 = try #require(IPNetwork("127.0.0.0/8"))
        #expect(loopback6.contains(try #require(IPAddress("0:0::1"))))
        #expect(loopback4.contains(try #require(IPAddress("::ffff:127.0.0.9"))))
        for bad in ["10.0.0.0/33", "::/129", "10.0.0.0/", "/8", "10.0.0.0/-1", "10.0.0.0/08x"] { #expect(IPNetwork(bad) == nil, "\(bad)") }
    }

    @Test("Origin: serialised origins only")
    func origin() {
        #expect(OriginHeader.parse("HTTPS://App.Example.com")?.host == "app.example.com")
        #expect(OriginHeader.parse("http://[::1]:3000")?.port == 3000)
        for bad in ["null", "", "https://", "https://a/b", "https://a?b", "https://u@a", "https://a:99999", "https://[::1", "//a", "a"] {
            #expect(OriginHeader.parse(bad) == nil, "\(bad)")
        }
    }

    @Test("random bytes through every parser: no trap, invariants hold (20,000 inputs)")
    func randomBytes() {
        var generator = SplitMix64(seed: 0x5EED)
        let alphabet = Array(" ,;=\"\\[]:./-_*q0123456789abcdefABCDEF".utf8) + [0x00, 0x09, 0x7F, 0x80, 0xC3, 0xFF]
        for _ in 0..<20_000 {
            let count = Int(generator.next() % 48)
            let bytes = (0..<count).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            let text = String(decoding: bytes, as: UTF8.self)
            for range in AcceptLanguage.ranges(text) {
                #expect((0...1).contains(range.quality) && range.quality > 0 && AcceptLanguage.isLanguageRange(Array(range.tag.utf8)[...]))
            }
            _ = AuthorizationHeader(text)
            _ = MediaType(text)
            _ = ForwardedHeader.elements([text])
            _ = XForwardedFor.addresses([text])
            _ = OriginHeader.parse(text)
            if let address = IPAddress(text) { #expect(IPAddress(address.description) == address, "\(text) → \(address)") }
            if let network = IPNetwork(text) { #expect(network.contains(network.address)) }
        }
    }
}

/// A small seeded generator, so a failure repeats.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
