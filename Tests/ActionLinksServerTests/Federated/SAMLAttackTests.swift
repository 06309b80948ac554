import ActionLinks
import ActionLinksSAML
import ActionLinksTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// What an attacker might try against SAML sign-in, each refused, with responses the real IdP
/// signed (then altered where the attack alters them): tampered, unsigned, weakly signed, expired,
/// replayed, meant for another service provider, wrapped (XML signature wrapping), posted into
/// another browser's flow or unsolicited.
@Suite("SAML sign-in refuses attacks", .timeLimit(.minutes(5)))
struct SAMLAttackTests {
    typealias App = SAMLApp
    typealias Federated = FederatedApp

    /// `signInWithIdp`'s refusal detail for an iOS trip whose IdP post `change` altered.
    static func refusal(
        _ client: any HTTPTarget, provider: String = "saml.corp", user: (String, String),
        change: @Sendable (SAMLIdP.Post) throws -> SAMLIdP.Post = { $0 }
    ) async throws -> String {
        let session = Federated.session()
        let trip = try await App.iOSTrip(client, provider: provider, user: user, sessionHash: session.hash, change: change)
        let (status, json) = try await App.signIn(client, trip: trip, secret: session.secret)
        #expect(status == 400, "\(json)")
        let message = Federated.errorMessage(json)
        #expect(message.hasPrefix("INVALID_IDP_RESPONSE"), "\(json)")
        return message
    }

    /// The response's (only) assertion as text.
    static func assertion(in xml: String) throws -> String {
        let start = try #require(xml.range(of: "<ns1:Assertion "), "\(xml)")
        let end = try #require(xml.range(of: "</ns1:Assertion>"))
        return String(xml[start.lowerBound..<end.upperBound])
    }

    @Test("a response whose NameID or attributes were changed after signing is refused", arguments: Federated.stores)
    func tampered(store: String) async throws {
        let user = try await SAMLIdP.user(nameID: "eve@corp.example", attributes: ["groups": ["staff"]])
        try await App.test(store: store) { client in
            let nameID = try await Self.refusal(client, user: user) { post in
                post.with(xml: post.xml.replacingOccurrences(of: ">eve@corp.example<", with: ">ceo@corp.example<"))
            }
            #expect(nameID.contains("the assertion's signature does not verify"), "\(nameID)")
            let attribute = try await Self.refusal(client, user: user) { post in
                post.with(xml: post.xml.replacingOccurrences(of: ">staff<", with: ">admins<"))
            }
            #expect(attribute.contains("signature does not verify"), "\(attribute)")
            // The web page's flow, checked by the handler: an error in the fragment, no token.
            let start = try await client.request(
                "GET",
                "/__/auth/handler?apiKey=demo-api-key&providerId=saml.corp&authType=signInViaRedirect&redirectUrl="
                    + PercentEncoding.encodeComponent("https://app.example.com/signed-in"))
            let post = try await SAMLIdP.logIn(at: try #require(start.header("Location")), user: user)
            let forged = post.with(xml: post.xml.replacingOccurrences(of: ">eve@corp.example<", with: ">ceo@corp.example<"))
            let returned = try await App.postToHandler(client, forged, cookie: Browser.cookie(start))
            #expect(returned.header("Location") == "https://app.example.com/signed-in#error=auth%2Finvalid-idp-response")
        }
    }

    @Test("an unsigned response (the IdP set up to sign nothing) is refused")
    func unsigned() async throws {
        let user = try await SAMLIdP.user(nameID: "fay@corp.example")
        try await App.test { client in
            let message = try await Self.refusal(client, provider: "saml.unsigned", user: user)
            #expect(message.contains("neither the response nor its assertion is signed"), "\(message)")
        }
    }

    @Test("a response signed with RSA-SHA1 is refused")
    func sha1() async throws {
        let user = try await SAMLIdP.user(nameID: "gil@corp.example")
        try await App.test { client in
            let message = try await Self.refusal(client, provider: "saml.sha1", user: user)
            #expect(message.contains("RSA or ECDSA with SHA-256"), "\(message)")
        }
    }

    @Test("a response signed by a key other than the configured certificate's is refused; the KeyInfo it carries decides nothing")
    func otherKey() async throws {
        let user = try await SAMLIdP.user(nameID: "hal@corp.example")
        try await App.test { client in
            // saml.otherkey is configured with another certificate than the IdP's.
            let message = try await Self.refusal(client, provider: "saml.otherkey", user: user)
            #expect(message.contains("does not verify with the IdP's certificate"), "\(message)")
            // The certificate in the signature's KeyInfo swapped for another: still checked with the configured one.
            let other = try String(contentsOfFile: SAMLApp.otherCertificate.path, encoding: .utf8)
                .split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
            let session = Federated.session()
            let trip = try await App.iOSTrip(client, provider: "saml.corp", user: user, sessionHash: session.hash) { post in
                let xml = post.xml
                let start = try #require(xml.range(of: "X509Certificate>"))
                let end = try #require(xml.range(of: "</", range: start.upperBound..<xml.endIndex))
                return post.with(xml: xml.replacingCharacters(in: start.upperBound..<end.lowerBound, with: other))
            }
            let (status, json) = try await App.signIn(client, trip: trip, secret: session.secret)
            #expect(status == 200, "\(json)")
        }
    }

    @Test("an expired response (its NotOnOrAfter past, the flow still live) is refused")
    func expired() async throws {
        let user = try await SAMLIdP.user(nameID: "ida@corp.example")
        let clock = ManualClock()
        try await App.test(clock: clock) { client in
            let session = Federated.session()
            let trip = try await App.iOSTrip(client, provider: "saml.corp", user: user, sessionHash: session.hash)
            let xml = try #require(trip.post?.xml)
            let issued = try #require(
                xml.range(of: #"IssueInstant="[^"]+""#, options: .regularExpression).flatMap {
                    ISO8601DateFormatter().date(from: String(xml[$0].dropFirst(14).dropLast()))
                })
            // The IdP's assertions live five minutes; the flow ten. Seven minutes after the IdP issued it (past its five and the minute of skew):
            let target = Timestamp(milliseconds: Int64(issued.timeIntervalSince1970 * 1000)) + .seconds(7 * 60)
            clock.advance(seconds: max(0, (target - clock.now).components.seconds))
            let (status, json) = try await App.signIn(client, trip: trip, secret: session.secret)
            #expect(status == 400 && Federated.errorMessage(json).contains("the assertion has expired"), "\(json)")
        }
    }

    @Test("a replayed response is refused: posted again, presented again, or carried into a new flow", arguments: Federated.stores)
    func replayed(store: String) async throws {
        let user = try await SAMLIdP.user(nameID: "jo@corp.example")
        try await App.test(store: store) { client in
            let session = Federated.session()
            let trip = try await App.iOSTrip(client, provider: "saml.corp", user: user, sessionHash: session.hash)
            let post = try #require(trip.post)
            // Posted to the handler again: the flow has returned.
            #expect(try await App.postToHandler(client, post, cookie: trip.cookie).status == 400)
            let (status, _) = try await App.signIn(client, trip: trip, secret: session.secret)
            #expect(status == 200)
            let (again, againJSON) = try await App.signIn(client, trip: trip, secret: session.secret)
            #expect(again == 400 && Federated.errorMessage(againJSON).hasPrefix("INVALID_IDP_RESPONSE"))
            // The old response in a new flow (the attacker's own RelayState): it answers another request.
            let message = try await Self.refusal(client, user: user) { fresh in
                SAMLIdP.Post(action: fresh.action, samlResponse: post.samlResponse, relayState: fresh.relayState)
            }
            #expect(message.contains("answers another request"), "\(message)")
        }
    }

    @Test("an assertion ID is used once, until it expires", arguments: Federated.stores)
    func assertionLedger(store kind: String) async throws {
        let store = try await FederatedUnitTests.store(kind)
        let now: Timestamp = Timestamp(milliseconds: 1_800_000_000_000)
        #expect(try await store.useSAMLAssertion(key: "a", expiresAt: now + .seconds(60), now: now))
        #expect(try await store.useSAMLAssertion(key: "a", expiresAt: now + .seconds(60), now: now + .milliseconds(1)) == false)
        #expect(try await store.useSAMLAssertion(key: "b", expiresAt: now + .seconds(60), now: now + .milliseconds(2)))
        // Past its expiry the assertion is refused anyway, and its record goes.
        #expect(try await store.useSAMLAssertion(key: "a", expiresAt: now + .seconds(200), now: now + .milliseconds(60_000)))
    }

    @Test("a response the IdP made for another service provider (its audience) is refused")
    func wrongAudience() async throws {
        let user = try await SAMLIdP.user(nameID: "kim@corp.example")
        try await App.test { client in
            let session = Federated.session()
            let start = try await client.request("GET", Federated.iOSHandlerPath(provider: "saml.corp", sessionHash: session.hash))
            let (request, relayState) = try App.authnRequest(in: try #require(start.header("Location")))
            // The same request (ID, ACS URL) sent by another SP the IdP knows, https://other-sp.test.example.
            let other = request.replacingOccurrences(
                of: "<saml:Issuer>https://links.test.example</saml:Issuer>",
                with: "<saml:Issuer>https://other-sp.test.example</saml:Issuer>")
            #expect(other != request)
            let encoded = Data(SAMLRedirectBinding.deflate(Array(other.utf8))).base64EncodedString()
            let redirect =
                try SAMLIdP.url() + "/sso?SAMLRequest=" + PercentEncoding.encodeComponent(encoded) + "&RelayState="
                + PercentEncoding.encodeComponent(relayState)
            let post = try await SAMLIdP.logIn(at: redirect, user: user)
            #expect(post.xml.contains("<ns1:Audience>https://other-sp.test.example</ns1:Audience>"))
            let returned = try await App.postToHandler(client, post, cookie: Browser.cookie(start))
            let link = try #require(Federated.link(in: returned.header("Location") ?? "").link)
            let (status, json) = try await Federated.signInWithIdp(client, ["requestUri": link, "sessionId": session.secret])
            #expect(
                status == 400 && Federated.errorMessage(json).contains("another audience (https://other-sp.test.example)"),
                "\(json)")
        }
    }

    /// An attacker's assertion made from the signed one: another NameID and ID, no signature.
    @Sendable static func evil(_ signed: String) -> String {
        var evil = signed.replacingOccurrences(of: ">lee@corp.example<", with: ">ceo@corp.example<")
            .replacingOccurrences(of: #"ID="id-"#, with: #"ID="evil-"#)
        if let signature = evil.range(of: #"(?s)<ns2:Signature .*?</ns2:Signature>"#, options: .regularExpression) {
            evil.removeSubrange(signature)
        }
        return evil
    }

    @Test("XML signature wrapping: an unsigned assertion beside the signed one, or carrying its signature, is refused")
    func signatureWrapping() async throws {
        let user = try await SAMLIdP.user(nameID: "lee@corp.example")
        try await App.test { client in
            let beside = try await Self.refusal(client, user: user) { post in
                let signed = try Self.assertion(in: post.xml)
                return post.with(xml: post.xml.replacingOccurrences(of: signed, with: Self.evil(signed) + signed))
            }
            #expect(beside.contains("exactly one assertion"), "\(beside)")
            let hidden = try await Self.refusal(client, user: user) { post in
                let signed = try Self.assertion(in: post.xml)
                let wrapped = Self.evil(signed).replacingOccurrences(
                    of: "</ns1:Subject>", with: "</ns1:Subject><ns1:Advice>\(signed)</ns1:Advice>")
                return post.with(xml: post.xml.replacingOccurrences(of: signed, with: wrapped))
            }
            #expect(hidden.contains("exactly one assertion"), "\(hidden)")
            let carried = try await Self.refusal(client, user: user) { post in
                let signed = try Self.assertion(in: post.xml)
                let signature = try #require(signed.range(of: #"(?s)<ns2:Signature .*?</ns2:Signature>"#, options: .regularExpression))
                let resigned = Self.evil(signed).replacingOccurrences(of: "<ns1:Subject>", with: signed[signature] + "<ns1:Subject>")
                return post.with(xml: post.xml.replacingOccurrences(of: signed, with: resigned))
            }
            #expect(carried.contains("does not sign the assertion"), "\(carried)")
        }
    }

    @Test("the IdP's post without the browser's cookie, with another browser's, or without RelayState gets the error page")
    func bindingAndUnsolicited() async throws {
        let user = try await SAMLIdP.user(nameID: "max@corp.example")
        try await App.test { client in
            let start = try await client.request(
                "GET", Federated.iOSHandlerPath(provider: "saml.corp", sessionHash: Federated.session().hash))
            let post = try await SAMLIdP.logIn(at: try #require(start.header("Location")), user: user)
            #expect(FederatedAttackTests.isErrorPage(try await App.postToHandler(client, post, cookie: nil)), "no cookie")
            let other = try await client.request(
                "GET", Federated.iOSHandlerPath(provider: "saml.corp", sessionHash: Federated.session().hash))
            #expect(FederatedAttackTests.isErrorPage(try await App.postToHandler(client, post, cookie: Browser.cookie(other))), "another")
            var unsolicited = post
            unsolicited.relayState = nil
            #expect(FederatedAttackTests.isErrorPage(try await App.postToHandler(client, unsolicited, cookie: Browser.cookie(start))))
            // And signInWithIdp with a SAMLResponse but no RelayState (IdP-initiated) is refused too.
            let (status, json) = try await Federated.signInWithIdp(
                client,
                ["requestUri": "https://links.test.example/__/auth/handler", "postBody": unsolicited.body + "&providerId=saml.corp"])
            #expect(status == 400 && Federated.errorMessage(json).hasPrefix("INVALID_IDP_RESPONSE"), "\(json)")
            // The victim's own browser still completes.
            #expect(try await App.postToHandler(client, post, cookie: Browser.cookie(start)).status == 302)
        }
    }
}
