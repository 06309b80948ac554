import Testing

@testable import ActionLinks

@Suite("HTTP referrer restrictions of API keys", .timeLimit(.minutes(5)))
struct HTTPReferrerPatternTests {
    func expect(_ pattern: String, allows allowed: [String], refuses refused: [String], sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let entry = try HTTPReferrerPattern(pattern)
        for referrer in allowed { #expect(entry.matches(referrer), "\(pattern) should allow \(referrer)", sourceLocation: sourceLocation) }
        for referrer in refused {
            #expect(!entry.matches(referrer), "\(pattern) should refuse \(referrer)", sourceLocation: sourceLocation)
        }
    }

    @Test("Google's documented forms: one page, every page of a domain, its subdomains, a port, no path")
    func documentedForms() throws {
        try expect(
            "www.example.com/path", allows: ["https://www.example.com/path", "http://www.example.com/path?q=1#f"],
            refuses: [
                "https://www.example.com/path/", "https://www.example.com/pathx", "https://www.example.com/", "https://example.com/path",
            ])
        try expect(
            "example.com/*", allows: ["https://example.com/", "https://example.com", "http://example.com/a/b?c"],
            refuses: ["https://www.example.com/", "https://example.com.evil.net/", "https://evilexample.com/", "https://example.com:8443/"])
        try expect(
            "*.example.com/*", allows: ["https://www.example.com/", "https://a.b.example.com/x"],
            refuses: ["https://example.com/", "https://wwwexample.com/", "https://www.example.com.evil.net/", "https://.example.com/"])
        try expect(
            "www.example.com:8000/*", allows: ["https://www.example.com:8000/", "http://www.example.com:8000/x"],
            refuses: ["https://www.example.com/", "https://www.example.com:8001/"])
        try expect(
            "www.example.com", allows: ["https://www.example.com/", "https://www.example.com/any/page"],
            refuses: ["https://example.com/", "ftp://www.example.com/"])
        try expect(
            "https://app.example.com/app/*", allows: ["https://app.example.com/app/", "https://APP.Example.com:443/app/x"],
            refuses: ["http://app.example.com/app/", "https://app.example.com/ap", "https://app.example.com/"])
    }

    @Test("what a browser sends cross-origin (the origin and '/'), and what no browser would: no referrer, junk, credentials")
    func referrers() throws {
        let entry = try HTTPReferrerPattern("app.example.com/*")
        #expect(entry.matches("https://app.example.com/"))
        for referrer in [
            "", "app.example.com", "//app.example.com/", "https://user@app.example.com/", "https://app.example.com:x/", "<empty>",
        ] {
            #expect(!entry.matches(referrer), "\(referrer)")
        }
    }

    @Test("refused at start with what was expected: bare or misplaced wildcards, queries, other schemes, bad hosts and ports")
    func refusals() {
        let cases: [(String, String)] = [
            ("*", "'*' may stand only"),
            ("*/*", "'*' may stand only"),
            ("example.*.com/*", "'*' may stand only"),
            ("www.example.com/*/path", "'*' may stand only"),
            ("*.com/*", "at least two labels"),
            ("example.com/?q=1", "no query"),
            ("example.com/#top", "no query"),
            ("ftp://example.com/*", "http:// or https://"),
            ("example.com:0/*", "port"),
            ("example.com:99999/*", "port"),
            ("exa mple.com", "printable ASCII"),
            ("", "printable ASCII"),
            ("-bad-.example.com/*", "expected a host name"),
        ]
        for (text, message) in cases {
            #expect(throws: HTTPReferrerPatternError.self, "\(text)") { try HTTPReferrerPattern(text) }
            do {
                _ = try HTTPReferrerPattern(text)
            } catch {
                #expect(error.message.contains(message), "\(text): \(error)")
            }
        }
    }
}
