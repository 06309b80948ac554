import ActionLinks
import Testing

@testable import ActionLinksEmail

@Suite("Link rewriters", .timeLimit(.minutes(5)))
struct LinkRewriterTests {
    static let signIn =
        "https://links.example.com/__/auth/action?mode=signIn&oobCode=C0de&apiKey=K&continueUrl=https%3A%2F%2Fapp.example.com%2Fwelcome%23done"

    @Test("Outlook Safe Links: the target is the url parameter")
    func safeLinks() {
        let wrapped =
            "https://nam12.safelinks.protection.outlook.com/?url=" + PercentEncoding.encodeComponent(Self.signIn)
            + "&data=05%7C02&sdata=x%3D&reserved=0"
        let unwrapped = RewriterUnwrapping(wrapped)
        #expect(unwrapped.layers.map(\.kind) == [.safeLinks])
        #expect(unwrapped.layers.first?.innerParameter == "url")
        #expect(unwrapped.target == Self.signIn)
        #expect(unwrapped.problems.isEmpty)
    }

    @Test("Proofpoint v2: '-' stands for '%' and '_' for '/'")
    func proofpointV2() {
        let wrapped =
            "https://urldefense.proofpoint.com/v2/url?u=https-3A__links.example.com_-5F-5F_auth_action-3Fmode-3DsignIn-26oobCode-3DC0de-26apiKey-3DK-26continueUrl-3Dhttps-253A-252F-252Fapp.example.com-252Fwelcome-2523done&d=DwMFaQ&c=x&r=y&m=z&s=w&e="
        let unwrapped = RewriterUnwrapping(wrapped)
        #expect(unwrapped.layers.map(\.kind) == [.proofpointV2])
        #expect(unwrapped.target == Self.signIn)
    }

    @Test("Proofpoint v1: a percent-encoded u parameter")
    func proofpointV1() {
        let wrapped = "https://urldefense.proofpoint.com/v1/url?u=" + PercentEncoding.encodeComponent(Self.signIn) + "&k=abc"
        #expect(RewriterUnwrapping(wrapped).target == Self.signIn)
    }

    @Test(
        "Proofpoint v3: '*' takes the next replaced character, '**X' a run whose length X gives",
        arguments: [
            (
                "https://urldefense.com/v3/__https://links.example.com/__/auth/action?mode=signIn&oobCode=C0de&apiKey=K&continueUrl=https*3A*2F*2Fapp.example.com*2Fwelcome*23done__;JSUlJSU!!Fx1Tr4ZsQ!aBcD$",
                signIn
            ),
            ("https://urldefense.com/v3/__http://www.example.com__;!!foo!bar$", "http://www.example.com"),
            ("https://urldefense.com/v3/__https://example.com/*newsletter__;Iw!!foo!bar$", "https://example.com/#newsletter"),
            (
                "https://urldefense.com/v3/__http://example.com/?=*7B*7D**Aa1!b2@c3**D__;JSVbXSMjIyMj!!foo!bar$",
                "http://example.com/?=%7B%7D[]a1!b2@c3#####"
            ),
            (
                "https://urldefense.com/v3/__http://www.example.com/**_*test__;IyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMj!!foo!bar$",
                "http://www.example.com/" + String(repeating: "#", count: 66) + "test"
            ),
        ])
    func proofpointV3(wrapped: String, target: String) {
        let unwrapped = RewriterUnwrapping(wrapped)
        #expect(unwrapped.layers.map(\.kind) == [.proofpointV3])
        #expect(unwrapped.target == target)
        #expect(unwrapped.problems.isEmpty)
    }

    @Test("a malformed Proofpoint v3 link is named, not guessed")
    func proofpointV3Malformed() {
        let tooFew = RewriterUnwrapping("https://urldefense.com/v3/__https://x.example.com/*a*b__;JQ!!foo!bar$")
        #expect(tooFew.target == nil)
        #expect(tooFew.problems == ["the Proofpoint v3 link has more '*' than replacement characters"])
        #expect(
            RewriterUnwrapping("https://urldefense.com/v3/__https://x.example.com/").problems == [
                "the Proofpoint v3 link has no '__;' after the URL"
            ])
        #expect(RewriterUnwrapping("https://urldefense.com/v3/__https://x.example.com/**?__;JQ!!$").target == nil)
    }

    @Test("Google's redirect and Amazon SES click tracking carry the target; so does a generic ?url= redirect")
    func readableTrackers() {
        let google = RewriterUnwrapping(
            "https://www.google.com/url?q=" + PercentEncoding.encodeComponent(Self.signIn) + "&sa=D&source=hangouts")
        #expect(google.layers.map(\.kind) == [.googleRedirect])
        #expect(google.target == Self.signIn)

        let ses = RewriterUnwrapping(
            "https://abc.r.us-east-1.awstrack.me/L0/" + PercentEncoding.encodeComponent(Self.signIn) + "/1/0100-000000/sig=361")
        #expect(ses.layers.map(\.kind) == [.amazonSES])
        #expect(ses.target == Self.signIn)

        let generic = RewriterUnwrapping("https://click.example.net/track?id=7&url=" + PercentEncoding.encodeComponent(Self.signIn))
        #expect(generic.layers.map(\.kind) == [.redirect])
        #expect(generic.layers.first?.innerParameter == "url")
        #expect(generic.target == Self.signIn)
    }

    @Test("opaque trackers: SendGrid, Mailgun, Mandrill, Mailchimp, Mimecast hide the target")
    func opaqueTrackers() {
        let cases: [(String, RewriterLayer.Kind)] = [
            ("https://u123.ct.sendgrid.net/ls/click?upn=u001.abc-2Bdef", .sendGrid),
            ("https://url9934.example.com/ls/click?upn=u001.abc", .sendGrid),
            ("http://email.mg.example.com/c/eJwlzEEKwyAQBdC7", .mailgun),
            ("https://mandrillapp.com/track/click/30000001/links.example.com?p=eyJzIjoi", .mandrill),
            ("https://example.us1.list-manage.com/track/click?u=1&id=2&e=3", .mailchimp),
            ("https://protect-eu.mimecast.com/s/AbCdEf?domain=links.example.com", .mimecast),
            ("https://url.uk.m.mimecastprotect.com/s/AbCdEf?domain=links.example.com", .mimecast),
        ]
        for (url, kind) in cases {
            let unwrapped = RewriterUnwrapping(url)
            #expect(unwrapped.layers.map(\.kind) == [kind], "\(url)")
            #expect(unwrapped.target == nil, "\(url)")
            #expect(unwrapped.layers.first?.isOpaque == true)
        }
        #expect(RewriterUnwrapping(cases[5].0).layers.first?.note.contains("links.example.com") == true)
        // SendGrid's own unsubscribe page is not click tracking.
        #expect(RewriterUnwrapping("https://u123.ct.sendgrid.net/asm/unsubscribe/?user_id=1").layers.isEmpty)
    }

    @Test("rewriters nest: Safe Links around Proofpoint around a Google redirect")
    func nested() {
        let google = "https://www.google.com/url?q=" + PercentEncoding.encodeComponent(Self.signIn)
        let proofpoint = "https://urldefense.proofpoint.com/v1/url?u=" + PercentEncoding.encodeComponent(google) + "&k=x"
        let safe = "https://eur02.safelinks.protection.outlook.com/?url=" + PercentEncoding.encodeComponent(proofpoint) + "&reserved=0"
        let unwrapped = RewriterUnwrapping(safe)
        #expect(unwrapped.layers.map(\.kind) == [.safeLinks, .proofpointV1, .googleRedirect])
        #expect(unwrapped.layers.map(\.url) == [safe, proofpoint, google])
        #expect(unwrapped.target == Self.signIn)
    }

    @Test("action links, Firebase wrappers and ordinary URLs are left alone")
    func leftAlone() {
        for url in [
            Self.signIn,
            "https://links.example.com/__/auth/links?link=" + PercentEncoding.encodeComponent(Self.signIn),
            "https://demo.page.link/?link=" + PercentEncoding.encodeComponent(Self.signIn),
            "https://www.example.com/help?ref=https://x.example.com/",
            "not a url", "mailto:someone@example.com",
        ] {
            let unwrapped = RewriterUnwrapping(url)
            #expect(unwrapped.layers.isEmpty, "\(url)")
            #expect(unwrapped.target == url)
        }
    }

    @Test("a rewriter whose target parameter is missing or does not decode is named")
    func brokenParameter() {
        #expect(
            RewriterUnwrapping("https://nam12.safelinks.protection.outlook.com/?data=x").problems == [
                "Outlook Safe Links link without its 'url' parameter"
            ])
        #expect(
            RewriterUnwrapping("https://nam12.safelinks.protection.outlook.com/?url=%FF").problems == [
                "the 'url' parameter of the Outlook Safe Links link does not percent-decode to UTF-8"
            ])
    }

    @Test("unwrapping stops at the depth limit")
    func depth() {
        var url = Self.signIn
        for _ in 0..<12 { url = "https://www.google.com/url?q=" + PercentEncoding.encodeComponent(url) }
        let unwrapped = RewriterUnwrapping(url)
        #expect(unwrapped.layers.count == RewriterUnwrapping.maximumDepth)
        #expect(unwrapped.problems == ["more than \(RewriterUnwrapping.maximumDepth) rewriters: stopped unwrapping"])
    }
}
