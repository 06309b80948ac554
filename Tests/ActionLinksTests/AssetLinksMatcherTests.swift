import ActionLinks
import Testing

private let fingerprint = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"
private let packageName = "com.example.app"
private let domain = "example.com"

private func list(
    components: String? = nil, relations: String = #"["delegate_permission/common.handle_all_urls"]"#,
    fingerprints: String = #"["\#(fingerprint)"]"#
) -> String {
    let extensions =
        components.map {
            #", "relation_extensions": {"delegate_permission/common.handle_all_urls": {"dynamic_app_link_components": \#($0)}}"#
        } ?? ""
    return
        #"[{"relation": \#(relations), "target": {"namespace": "android_app", "package_name": "\#(packageName)", "sha256_cert_fingerprints": \#(fingerprints)}\#(extensions)}]"#
}

private func evaluate(
    _ text: String, _ path: String, query: String? = nil, fragment: String? = nil,
    package: String = packageName, certificate: String = fingerprint
) throws -> AssetLinksVerdict {
    let matcher = AssetLinksMatcher(assetLinks: try AssetLinks(bytes: Array(text.utf8)))
    return matcher.evaluate(
        AssociatedURL(host: domain, path: path, query: query, fragment: fragment), packageName: package,
        certificateFingerprint: certificate, domain: domain)
}

@Suite("assetlinks matcher", .timeLimit(.minutes(5)))
struct AssetLinksMatcherTests {
    /// The dynamic rules example from Android's "Configure website associations and dynamic rules".
    static let androidExample = list(
        components:
            ##"[{"?": {"dl": "*"}}, {"#": "app"}, {"/": "/products/*"}, {"/": "/shoes", "?": {"in_app": "true"}}, {"/": "*", "exclude": true}]"##
    )

    @Test(
        arguments: [
            ("/anything", "dl=abc", nil, AssetLinksVerdict.Outcome.handled, 0 as Int?),
            ("/anything", nil, "app", .handled, 1),
            ("/products/123", nil, nil, .handled, 2),
            ("/shoes", "in_app=true", nil, .handled, 3),
            ("/shoes", "in_app=false", nil, .excluded, 4),
            ("/about", nil, nil, .excluded, 4),
        ] as [(String, String?, String?, AssetLinksVerdict.Outcome, Int?)])
    func androidDocumentationExample(
        path: String, query: String?, fragment: String?, outcome: AssetLinksVerdict.Outcome, component: Int?
    ) throws {
        let verdict = try evaluate(Self.androidExample, path, query: query, fragment: fragment)
        #expect(verdict.outcome == outcome)
        #expect(verdict.statement == 0)
        #expect(verdict.component == component)
    }

    @Test(arguments: [
        ("in_app=true&dl=abc", true), ("lang=en&in_app=true&tz=pst&dl=abc", true), ("lang=en&tz=pst&dl=abc", false),
    ])
    func queryDictionaryNeedsEveryEntryInAnyOrder(query: String, matches: Bool) throws {
        let text = list(components: #"[{"?": {"dl": "*", "in_app": "true"}}]"#)
        #expect((try evaluate(text, "/", query: query).outcome == .handled) == matches)
    }

    @Test func noMatchingRuleMeansExcluded() throws {
        let verdict = try evaluate(list(components: #"[{"/": "/path1"}, {"/": "/path2"}]"#), "/path3")
        #expect(verdict.outcome == .excluded)
        #expect(verdict.component == nil)
        #expect(verdict.misses.map(\.component) == [0, 1])
        #expect(verdict.misses[0].reason == "path \"/path3\" does not match \"/path1\"")
    }

    @Test func orderDecides() throws {
        #expect(try evaluate(list(components: #"[{"/": "*", "exclude": true}, {"/": "/path1"}]"#), "/path1").outcome == .excluded)
        #expect(try evaluate(list(components: #"[{"/": "/path1"}, {"/": "*", "exclude": true}]"#), "/path1").outcome == .handled)
    }

    @Test func starStopsAtTheNextPatternCharacterAsAndroidDocuments() throws {
        let text = list(components: #"[{"/": "/a*/b"}, {"/": "/x*z"}, {"/": "/?*"}]"#)
        #expect(try evaluate(text, "/a/x/b").component == 2, "* stops at the first '/', so the first rule fails")
        #expect(try evaluate(text, "/ab/b").component == 0)
        #expect(try evaluate(text, "/xyyz").component == 1)
    }

    @Test func matchingIsCaseSensitiveAndDecoded() throws {
        let text = list(components: #"[{"/": "/Products/*"}, {"/": "/café", "?": {"q": "a b"}}]"#)
        #expect(try evaluate(text, "/products/1").outcome == .excluded)
        #expect(try evaluate(text, "/caf%C3%A9", query: "q=a+b").component == 1)
        #expect(try evaluate(text, "/caf%C3%A9", query: "q=a%20b").component == 1)
    }

    @Test func withoutDynamicRulesTheManifestDecides() throws {
        let verdict = try evaluate(list(), "/anything")
        #expect(verdict.outcome == .handled)
        #expect(verdict.component == nil)
        #expect(verdict.summary.contains("manifest"))
    }

    @Test func malformedDynamicRulesAreDiscarded() throws {
        let verdict = try evaluate(list(components: #"[{"/": "/only", "?": {"n": 1}}]"#), "/elsewhere")
        #expect(verdict.outcome == .handled)
        #expect(verdict.summary.contains("discarded"))
    }

    @Test(arguments: [
        fingerprint, fingerprint.lowercased(), fingerprint.replacing(":", with: ""), fingerprint.lowercased().replacing(":", with: ""),
    ])
    func callerFingerprintIsNormalised(certificate: String) throws {
        #expect(try evaluate(list(), "/", certificate: certificate).outcome == .handled)
    }

    @Test func unlistedCertificateOrOtherPackageIsNotAuthorized() throws {
        let other = "00:" + fingerprint.dropFirst(3)
        let wrongCertificate = try evaluate(list(), "/", certificate: other)
        #expect(wrongCertificate.outcome == .notAuthorized)
        #expect(wrongCertificate.misses.first?.reason == "does not list certificate \(other)")
        #expect(try evaluate(list(), "/", package: "com.example.other").outcome == .notAuthorized)
    }

    @Test func lowercaseFingerprintInTheFileDoesNotAuthorize() throws {
        let verdict = try evaluate(list(fingerprints: #"["\#(fingerprint.lowercased())"]"#), "/")
        #expect(verdict.outcome == .notAuthorized)
        #expect(verdict.misses.first?.reason.contains("lower case") == true)
    }

    @Test func handleAllURLsRelationIsRequired() throws {
        let verdict = try evaluate(list(relations: #"["delegate_permission/common.get_login_creds"]"#), "/")
        #expect(verdict.outcome == .notAuthorized)
        #expect(verdict.misses.first?.reason == "does not grant delegate_permission/common.handle_all_urls")
    }

    @Test func laterStatementCanAuthorizeAfterIncludesAndWebTargets() throws {
        let text = """
            [{"include": "https://example.com/more.json"},
             {"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "web", "site": "https://example.com"}},
             \(list().dropFirst().dropLast())]
            """
        let verdict = try evaluate(text, "/")
        #expect(verdict.outcome == .handled)
        #expect(verdict.statement == 2)
        #expect(verdict.misses.map(\.statement) == [0, 1])
        #expect(verdict.misses[0].reason.contains("not followed"))
    }

    @Test func otherHostsAreNotCovered() throws {
        let matcher = AssetLinksMatcher(assetLinks: try AssetLinks(bytes: Array(list().utf8)))
        let verdict = matcher.evaluate(
            AssociatedURL(host: "evil.example", path: "/"), packageName: packageName, certificateFingerprint: fingerprint, domain: domain)
        #expect(verdict.outcome == .notAuthorized)
    }
}
