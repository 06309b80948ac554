import Testing

@testable import ActionLinks

@Suite("The strict URL splitter", .timeLimit(.minutes(5)))
struct URLPartsTests {
    @Test("splits every component without copying")
    func components() throws {
        let url = try URLParts("HTTPS://user:pw@Links.Example.com:8443/a/b%20c?x=1&y=%3D#frag/?")
        #expect(url.scheme == "HTTPS")
        #expect(url.userinfo == "user:pw")
        #expect(url.host == "Links.Example.com")
        #expect(url.port == "8443")
        #expect(url.path == "/a/b%20c")
        #expect(url.query == "x=1&y=%3D")
        #expect(url.fragment == "frag/?")
    }

    @Test("an empty query and an absent query differ; so do fragments")
    func emptyVersusAbsent() throws {
        let empty = try URLParts("https://a.example.com/?#")
        #expect(empty.query == "" && empty.fragment == "")
        let none = try URLParts("https://a.example.com")
        #expect(none.query == nil && none.fragment == nil && none.path == "")
    }

    @Test("URLs without an authority and IPv6 literals")
    func otherShapes() throws {
        let mail = try URLParts("mailto:someone@example.com")
        #expect(mail.host == nil && mail.path == "someone@example.com")
        let v6 = try URLParts("http://[::1]:8080/x")
        #expect(v6.host == "[::1]" && v6.port == "8080")
        let app = try URLParts("com.example.app://callback/path?x")
        #expect(app.scheme == "com.example.app" && app.host == "callback" && app.path == "/path")
    }

    @Test("query items split at '&' and the first '='; names and values stay encoded")
    func queryItems() throws {
        let url = try URLParts("https://a.example.com/?a=1&&b&c=x=y&%64=%41")
        var items: [String] = []
        url.forEachQueryItem { name, value in items.append("\(name)|\(value.map(String.init) ?? "nil")") }
        #expect(items == ["a|1", "b|nil", "c|x=y", "%64|%41"])
        #expect(url.queryValue(named: "d") == "A")
        #expect(url.queryValue(named: "c") == "x=y")
        #expect(url.queryValue(named: "zz") == nil)
    }

    @Test(
        "rejects what browsers would repair or read differently",
        arguments: [
            ("", URLSplitError.Code.empty),
            ("https://a.example.com/a b", .controlCharacter),
            ("https://a.example.com/\tb", .controlCharacter),
            ("https://a.example.com/\nb", .controlCharacter),
            (" https://a.example.com/", .controlCharacter),
            ("https://a.example.com\\@evil.com/", .backslash),
            ("https://a.example.com/é", .nonASCII),
            ("https://exämple.com/", .nonASCII),
            ("https://a.example.com/%zz", .malformedPercentEscape),
            ("https://a.example.com/%2", .malformedPercentEscape),
            ("//evil.com/", .missingScheme),
            ("/path", .missingScheme),
            ("1http://a.example.com", .missingScheme),
            ("http:evil.com", .missingAuthority),
            ("https:/evil.com", .missingAuthority),
            ("https:///evil.com", .emptyHost),
            ("https://a@b@evil.com/", .invalidCharacter),
            ("https://a.example.com:80x/", .invalidPort),
            ("https://[::1/", .invalidHost),
            ("https://[zz::1]/", .invalidHost),
            ("https://a.example.com/<script>", .invalidCharacter),
            ("https://a.example.com/?q=\"", .invalidCharacter),
            ("https://a.example.com/#a#b", .invalidCharacter),
            ("https://a{b}.example.com/", .invalidHost),
            ("https://user@a{b}.example.com/", .invalidHost),
        ])
    func rejections(input: String, code: URLSplitError.Code) {
        #expect(throws: URLSplitError.self) { try URLParts(input) }
        do {
            _ = try URLParts(input)
        } catch {
            #expect(error.code == code, "\(input): \(error.message)")
            #expect(!error.message.isEmpty)
        }
    }

    @Test("an error says where the problem is")
    func offsets() {
        do {
            _ = try URLParts("https://a.example.com/a b")
            Issue.record("a space was accepted")
        } catch {
            #expect(error.offset == 23)
            #expect(error.message.contains("offset 23"))
        }
    }

    @Test("refuses inputs over the length limit")
    func tooLong() {
        let long = "https://a.example.com/?" + String(repeating: "a", count: URLParts.maximumLength)
        #expect(throws: URLSplitError.self) { try URLParts(long) }
    }
}
