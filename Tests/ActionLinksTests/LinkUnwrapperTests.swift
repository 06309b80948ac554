import Testing

@testable import ActionLinks

@Suite("Unwrapping nested links", .timeLimit(.minutes(5)))
struct LinkUnwrapperTests {
    let action = "https://links.example.com/__/auth/action?mode=signIn&oobCode=C&apiKey=K"

    func wrap(_ link: String, in outer: String, parameter: String = "link") -> String {
        outer + "?" + parameter + "=" + PercentEncoding.encodeComponent(link)
    }

    @Test("reports every layer, outermost first, and what kind each is")
    func chain() {
        let inner = wrap(action, in: "https://links.example.com/__/auth/links")
        let outer = wrap(inner, in: "https://demo.page.link/")
        let (layers, result) = LinkUnwrapper.unwrap(outer)
        #expect(layers.map(\.url) == [outer, inner, action])
        #expect(layers.map(\.kind) == [.dynamicLinkWrapper, .mobileLinkWrapper, .target])
        #expect(layers.map(\.innerParameter) == ["link", "link", nil])
        #expect((try? result.get())?.string == action)
    }

    @Test("the JS SDK's order: deep_link_id → link beats everything")
    func deepLinkThenLink() {
        let deep = wrap(action, in: "https://x.example.com/d")
        let input =
            "com.example.ios://google/link?link=https%3A%2F%2Fother.example.com%2F&deep_link_id=" + PercentEncoding.encodeComponent(deep)
        let (layers, _) = LinkUnwrapper.unwrap(input)
        #expect(layers.map(\.url) == [input, deep, action])
        #expect(layers.map(\.innerParameter) == ["deep_link_id", "link", nil])
    }

    @Test("link → deep_link_id is followed when there is no deep_link_id at the top")
    func linkThenDeepLink() {
        let middle = wrap(action, in: "https://x.example.com/m", parameter: "deep_link_id")
        let input = wrap(middle, in: "https://y.example.com/o")
        #expect(LinkUnwrapper.unwrap(input).layers.map(\.url) == [input, middle, action])
        #expect(ActionCodeLink.parse(input)?.oobCode == "C")
    }

    @Test("empty link parameters count as absent, as in the JS SDK")
    func emptyParameters() {
        let input = action + "&link="
        #expect(LinkUnwrapper.unwrap(input).layers.count == 1)
        #expect(ActionCodeLink.parse(input)?.oobCode == "C")
    }

    @Test("stops at the depth limit with a clear failure")
    func depthLimit() {
        var link = action
        for _ in 0..<LinkUnwrapper.maximumDepth { link = wrap(link, in: "https://links.example.com/__/auth/links") }
        let (layers, result) = LinkUnwrapper.unwrap(link)
        #expect(layers.count == LinkUnwrapper.maximumDepth)
        guard case .failure(let failure) = result else {
            Issue.record("a link nested \(LinkUnwrapper.maximumDepth + 1) layers deep was unwrapped")
            return
        }
        #expect(failure.code == .tooDeep)
        #expect(ActionCodeLink.parse(link) == nil)

        var shallow = action
        for _ in 0..<(LinkUnwrapper.maximumDepth - 1) { shallow = wrap(shallow, in: "https://links.example.com/__/auth/links") }
        #expect(ActionCodeLink.parse(shallow)?.oobCode == "C")
    }

    @Test("a wrapper without a link, and an inner link that is not a URL")
    func brokenWrappers() {
        #expect(LinkInspection("https://links.example.com/__/auth/links?x=1").failure?.code == .wrapperWithoutLink)
        let bad = LinkInspection("https://links.example.com/__/auth/links?link=not%20a%20url")
        #expect(bad.failure?.code == .notAURL)
        #expect(bad.failure?.message.hasPrefix("layer 2") == true)
        #expect(bad.layers.map(\.url) == ["https://links.example.com/__/auth/links?link=not%20a%20url", "not a url"])
    }

    @Test("app.goo.gl is a Dynamic Links wrapper too; hosts compare case-insensitively")
    func googl() {
        let input = wrap(action, in: "https://Demo.App.Goo.Gl/x")
        #expect(LinkUnwrapper.unwrap(input).layers.first?.kind == .dynamicLinkWrapper)
        #expect(LinkInspection(input).warnings.contains { $0.contains("Dynamic Links shut down") })
    }
}

@Suite("Inspection and client verdicts", .timeLimit(.minutes(5)))
struct LinkInspectionTests {
    @Test("a missing apiKey is accepted by iOS only")
    func missingAPIKey() {
        let inspection = LinkInspection("https://links.example.com/__/auth/action?mode=verifyEmail&oobCode=C")
        let accepts = Dictionary(uniqueKeysWithValues: inspection.clients.map { ($0.client, $0.accepts) })
        #expect(accepts == [.js: false, .ios: true, .android: false])
        #expect(inspection.warnings.contains { $0.hasPrefix("Firebase JS SDK") && $0.contains("apiKey") })
        #expect(!inspection.warnings.contains { $0.hasPrefix("Firebase iOS SDK") })
    }

    @Test("repeated parameters, a foreign path and plain http are warned about")
    func warnings() {
        let inspection = LinkInspection("http://links.example.com/other?mode=signIn&oobCode=A&oobCode=B&apiKey=K")
        #expect(inspection.action?.oobCode == "B")
        #expect(inspection.warnings.contains { $0.hasPrefix("oobCode appears more than once") })
        #expect(inspection.warnings.contains { $0.contains("path is '/other'") })
        #expect(inspection.warnings.contains { $0.contains("not 'https:'") })
        #expect(inspection.warnings.contains { $0.hasPrefix("Firebase Android SDK reads oobCode as \"A\"") })
    }

    @Test("a well-formed link gets no warnings")
    func clean() {
        let link = ActionCodeLink(
            mode: .resetPassword, oobCode: "abc", apiKey: "K", continueURL: "https://app.example.com/x?a=1&b=2", languageCode: "ja")
        let domain = try! LinkDomain("links.example.com")
        #expect(LinkInspection(link.mobileLink(on: domain)).warnings == [])
        #expect(LinkInspection(link.webLink(on: domain)).clients.allSatisfy { $0.accepts })
    }

    @Test("with a policy, the continue URL is checked")
    func policy() throws {
        let policy = try ContinueURLPolicy(allow: ["app.example.com"])
        let allowed = LinkInspection(
            "https://l.example.com/__/auth/action?mode=signIn&oobCode=C&apiKey=K&continueUrl=https%3A%2F%2FAPP.example.com%2Fa%2F..%2Fb",
            policy: policy)
        #expect(allowed.continueURLDecision == .allowed(url: "https://app.example.com/b"))
        let rejected = LinkInspection(
            "https://l.example.com/__/auth/action?mode=signIn&oobCode=C&apiKey=K&continueUrl=https%3A%2F%2Fevil.com", policy: policy)
        #expect(rejected.continueURLDecision?.isAllowed == false)
        #expect(rejected.warnings.contains { $0.hasPrefix("continueUrl is not allowed") })
    }
}
