import ActionLinks
import ActionLinksTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// What an attacker might try against federated sign-in, each refused: states replayed, forged or
/// carried to another browser, a stolen `link` without the app's session secret, swapped codes,
/// forged or misdirected ID tokens, and requests naming apps or pages that are not registered.
@Suite("Federated sign-in refuses attacks", .timeLimit(.minutes(5)))
struct FederatedAttackTests {
    typealias App = FederatedApp

    /// The handler's refusal: an error page, never a redirect.
    static func isErrorPage(_ response: HTTPReply) -> Bool {
        response.status == 400 && response.header("Location") == nil
            && response.header("Content-Type") == "text/html; charset=utf-8" && response.text.contains("<html")
    }

    @Test("a replayed state, a foreign state, a missing cookie and another browser's cookie get the error page", arguments: App.stores)
    func stateAndCookie(store: String) async throws {
        let sub = try await App.subject(["email": "pat@example.com"])
        try await App.test(store: store) { client in
            // The victim's flow, up to the provider's answer.
            let session = App.session()
            let start = try await client.request("GET", App.iOSHandlerPath(provider: "oidc.mock", sessionHash: session.hash))
            let cookie = try #require(Browser.cookie(start))
            let back = Browser.pathAndQuery(try await OIDCProviderMock.logIn(at: start.header("Location") ?? "", sub: sub))

            #expect(Self.isErrorPage(try await client.request("GET", back)), "no cookie")
            let attacker = try await client.request("GET", App.iOSHandlerPath(provider: "oidc.mock", sessionHash: session.hash))
            let otherCookie = try #require(Browser.cookie(attacker))
            #expect(Self.isErrorPage(try await client.request("GET", back, headers: ["Cookie": otherCookie])), "another browser")
            let forged = back.replacingOccurrences(of: "state=", with: "state=forged")
            #expect(Self.isErrorPage(try await client.request("GET", forged, headers: ["Cookie": cookie])), "a foreign state")
            let answered = try await client.request("GET", back, headers: ["Cookie": cookie])
            #expect(answered.header("Location")?.hasPrefix(App.clientIDScheme + "://") == true, "the victim's own answer")
            #expect(Self.isErrorPage(try await client.request("GET", back, headers: ["Cookie": cookie])), "replayed")
        }
    }

    @Test("an answer from another issuer (RFC 9207 iss) and a flow past its ten minutes get the error page")
    func issuerAndExpiry() async throws {
        let sub = try await App.subject(["email": "quinn@example.com"])
        let clock = ManualClock()
        try await App.test(clock: clock) { client in
            let start = try await client.request("GET", App.iOSHandlerPath(provider: "oidc.mock", sessionHash: App.session().hash))
            let cookie = try #require(Browser.cookie(start))
            let back = Browser.pathAndQuery(try await OIDCProviderMock.logIn(at: start.header("Location") ?? "", sub: sub))
            let mixedUp = back + "&iss=" + PercentEncoding.encodeComponent("https://evil.example")
            #expect(Self.isErrorPage(try await client.request("GET", mixedUp, headers: ["Cookie": cookie])))
            let late = try await client.request("GET", App.iOSHandlerPath(provider: "oidc.mock", sessionHash: App.session().hash))
            let lateBack = Browser.pathAndQuery(try await OIDCProviderMock.logIn(at: late.header("Location") ?? "", sub: sub))
            clock.advance(seconds: 601)
            let expired = try await client.request("GET", lateBack, headers: ["Cookie": Browser.cookie(late) ?? ""])
            #expect(Self.isErrorPage(expired))
        }
    }

    @Test(
        "a stolen link with the wrong sessionId, or with another code, is INVALID_IDP_RESPONSE; the app's own sessionId still works once",
        arguments: App.stores)
    func sessionAndCode(store: String) async throws {
        let sub = try await App.subject(["email": "rae@example.com"])
        try await App.test(store: store) { client in
            let session = App.session()
            let trip = try await App.iOSTrip(client, provider: "oidc.mock", sub: sub, sessionHash: session.hash)
            let link = try #require(App.link(in: trip.appURL ?? "").link)
            let (wrong, wrongJSON) = try await App.signInWithIdp(client, ["requestUri": link, "sessionId": "ABCDEFGHIJ"])
            #expect(wrong == 400 && App.errorMessage(wrongJSON).hasPrefix("INVALID_IDP_RESPONSE"), "\(wrongJSON)")
            let (missing, missingJSON) = try await App.signInWithIdp(client, ["requestUri": link])
            #expect(missing == 400 && App.errorMessage(missingJSON).hasPrefix("INVALID_IDP_RESPONSE"))
            // The code in the link swapped for another (one the attacker got for their own account).
            let code = try #require(Browser.query(link)["code"])
            let swapped = link.replacingOccurrences(of: "code=" + code, with: "code=attacker-code")
            let (swap, swapJSON) = try await App.signInWithIdp(client, ["requestUri": swapped, "sessionId": session.secret])
            #expect(swap == 400 && App.errorMessage(swapJSON).hasPrefix("INVALID_IDP_RESPONSE"), "\(swapJSON)")
            let (right, rightJSON) = try await App.signInWithIdp(client, ["requestUri": link, "sessionId": session.secret])
            #expect(right == 200 && rightJSON["idToken"] is String, "\(rightJSON)")
        }
    }

    @Test(
        "ID tokens given as credentials: a good one signs in; tampered, expired, for another audience, with the wrong nonce, or unsigned (alg none, HS256) are refused"
    )
    func idTokens() async throws {
        let sub = try await App.subject(["email": "sam@example.com", "email_verified": true])
        let clock = ManualClock()
        try await App.test(clock: clock) { client in
            func credential(_ token: String, nonce: String? = "n-1") async throws -> (Int, String, [String: Any]) {
                var postBody = "providerId=oidc.mock&id_token=\(token)"
                if let nonce { postBody += "&nonce=\(nonce)" }
                let (status, json) = try await App.signInWithIdp(client, ["requestUri": "http://localhost", "postBody": postBody])
                return (status, App.errorMessage(json), json)
            }
            let token = try await OIDCProviderMock.idToken(sub: sub, clientID: "actionlinks-oidc", nonce: "n-1")
            let parts = token.split(separator: ".").map(String.init)

            let payloadData = try #require(Base64URL.decode(parts[1]))
            var payload = try #require(try JSONSerialization.jsonObject(with: payloadData) as? [String: Any])
            payload["sub"] = "someone-else"
            let tampered = parts[0] + "." + Base64URL.encode(try JSONSerialization.data(withJSONObject: payload)) + "." + parts[2]
            let tamperedAnswer = try await credential(tampered)
            #expect(tamperedAnswer.1.hasPrefix("INVALID_IDP_RESPONSE"), "tampered: \(tamperedAnswer.2)")
            let none = Base64URL.encode(Data(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + parts[1] + "."
            let noneAnswer = try await credential(none)
            #expect(noneAnswer.1.hasPrefix("INVALID_IDP_RESPONSE"), "none: \(noneAnswer.2)")
            let hmac = Base64URL.encode(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "." + parts[1] + "." + parts[2]
            let hmacAnswer = try await credential(hmac)
            #expect(hmacAnswer.1.hasPrefix("INVALID_IDP_RESPONSE"), "hmac: \(hmacAnswer.2)")
            #expect(try await credential(token, nonce: "n-2").1.hasPrefix("MISSING_OR_INVALID_NONCE"))
            #expect(try await credential(token, nonce: nil).1.hasPrefix("MISSING_OR_INVALID_NONCE"))
            let foreign = try await OIDCProviderMock.idToken(sub: sub, clientID: "another-client", nonce: "n-1")
            #expect(try await credential(foreign).1.hasPrefix("INVALID_IDP_RESPONSE"))
            // The Yahoo client's token is not the generic provider's either.
            let yahoo = try await OIDCProviderMock.idToken(sub: sub, clientID: "actionlinks-yahoo", nonce: "n-1")
            #expect(try await credential(yahoo).1.hasPrefix("INVALID_IDP_RESPONSE"))

            let (status, _, json) = try await credential(token)
            #expect(status == 200 && json["federatedId"] as? String == sub && json["idToken"] is String, "\(json)")
            clock.advance(seconds: 2 * 3600)
            let (late, message, _) = try await credential(token)
            #expect(late == 400 && message.contains("expired"), "\(message)")
        }
    }

    @Test(
        "requests that name no registered app get the error page, never a redirect: unknown bundle, client ID or app ID of no app, another app's pair, wrong API key, no session, bad parameters"
    )
    func unregisteredApps() async throws {
        try await App.test { client in
            let hash = App.session().hash
            let paths = [
                App.iOSHandlerPath(provider: "oidc.mock", sessionHash: hash, bundleID: "com.attacker.app"),
                App.iOSHandlerPath(provider: "oidc.mock", sessionHash: hash, clientID: "999-evil.apps.googleusercontent.com"),
                App.iOSHandlerPath(provider: "oidc.mock", sessionHash: hash, apiKey: "another-key"),
                App.iOSHandlerPath(provider: "oidc.mock", sessionHash: "not-a-hash"),
                App.iOSHandlerPath(provider: "oidc.mock", sessionHash: hash, extra: [("customParameters", "{\"prompt\":1}")]),
                App.iOSHandlerPath(provider: "oidc.mock", sessionHash: hash, extra: [("tid", "no-such-tenant")]),
                App.iOSHandlerPath(provider: "oidc.mock", sessionHash: hash, eventID: "<script>"),
                App.iOSHandlerPath(provider: "oidc.mock", sessionHash: hash, extra: [("apiKey", "demo-api-key")]),
                "/__/auth/handler?apiKey=demo-api-key&providerId=oidc.mock&authType=signInWithRedirect&ibi=com.example.app&eventId=E"
                    + "&sessionId=\(hash)&appId=1:1234567890:ios:ffff",
                "/__/auth/handler?apiKey=demo-api-key&providerId=oidc.mock&authType=signInWithRedirect",
                "/__/auth/handler?apiKey=demo-api-key&providerId=oidc.mock&authType=signInViaRedirect&redirectUrl="
                    + PercentEncoding.encodeComponent("javascript:alert(1)"),
                "/__/auth/handler",
            ]
            for path in paths {
                let response = try await client.request("GET", path)
                #expect(Self.isErrorPage(response), "\(path): \(response.status) \(response.header("Location") ?? "")")
            }
            // The provider's error without a state (oidc-provider-mock's "deny" sends none).
            let denied = try await client.request("GET", "/__/auth/handler?error=access_denied")
            #expect(Self.isErrorPage(denied))
        }
    }

    @Test("the user denying at the provider: the app hears auth/user-cancelled through its callback")
    func denied() async throws {
        try await App.test { client in
            let start = try await client.request("GET", App.iOSHandlerPath(provider: "oidc.mock", sessionHash: App.session().hash))
            let state = try #require(Browser.query(start.header("Location") ?? "")["state"])
            let answer = try await client.request(
                "GET", "/__/auth/handler?error=access_denied&state=\(PercentEncoding.encodeComponent(state))",
                headers: ["Cookie": Browser.cookie(start) ?? ""])
            let location = try #require(answer.header("Location"))
            let (link, inner) = App.link(in: location)
            #expect(link == nil && inner["firebaseError"]?.contains("auth/user-cancelled") == true && inner["eventId"] == "QWERTYUIOP")
        }
    }
}
