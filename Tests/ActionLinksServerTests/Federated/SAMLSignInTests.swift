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

/// SAML sign-in end to end against a real IdP (pysaml2, see ``SAMLIdP``): the handler's
/// AuthnRequest, the IdP's login form and signed response posted back to the handler, and
/// `signInWithIdp` as the SDKs send it, on both stores.
@Suite("SAML sign-in", .timeLimit(.minutes(5)))
struct SAMLSignInTests {
    typealias App = SAMLApp
    typealias Federated = FederatedApp

    /// The payload of one of this server's ID tokens.
    static func payload(_ idToken: String) throws -> [String: Any] {
        let part = try #require(idToken.split(separator: ".").dropFirst().first)
        let data = try #require(Base64URL.decode(part))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func json(_ text: Any?) throws -> [String: Any] {
        let data = Data(try #require(text as? String).utf8)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("iOS: AuthnRequest, the IdP's signed response through the handler, signInWithIdp with the link", arguments: Federated.stores)
    func iOS(store: String) async throws {
        let user = try await SAMLIdP.user(
            nameID: "Ada.Lovelace@corp.example", attributes: ["displayName": ["Ada Lovelace"], "groups": ["staff", "admins"]])
        try await App.test(store: store) { client in
            let session = Federated.session()
            let trip = try await App.iOSTrip(client, provider: "saml.corp", user: user, sessionHash: session.hash)
            #expect(trip.start.status == 302)
            let redirect = try #require(trip.start.header("Location"))
            #expect(redirect.hasPrefix(try SAMLIdP.url() + "/sso?SAMLRequest="))
            let (request, relayState) = try App.authnRequest(in: redirect)
            #expect(request.contains("<saml:Issuer>https://links.test.example</saml:Issuer>"))
            #expect(request.contains(#"AssertionConsumerServiceURL="https://links.test.example/__/auth/handler""#))
            #expect(request.contains(#"Destination="\#(try SAMLIdP.url())/sso""#))
            #expect(relayState.count == 43)
            let post = try #require(trip.post)
            #expect(post.action == "https://links.test.example/__/auth/handler" && post.relayState == relayState)
            let appURL = try #require(trip.appURL, "\(String(describing: trip.returned))")
            #expect(appURL.hasPrefix(Federated.clientIDScheme + "://firebaseauth/link?deep_link_id="))
            #expect(Federated.link(in: appURL).inner["eventId"] == "QWERTYUIOP")

            let (status, json) = try await App.signIn(client, trip: trip, secret: session.secret)
            #expect(status == 200, "\(json)")
            #expect(json["providerId"] as? String == "saml.corp" && json["federatedId"] as? String == "Ada.Lovelace@corp.example")
            #expect(json["email"] as? String == "Ada.Lovelace@corp.example" && json["emailVerified"] as? Bool == true)
            #expect(json["isNewUser"] as? Bool == true && json["oauthIdToken"] == nil)
            let raw = try Self.json(json["rawUserInfo"])
            #expect(raw["groups"] as? [String] == ["staff", "admins"])
            #expect(raw["urn:oid:2.16.840.1.113730.3.1.241"] as? String == "Ada Lovelace", "\(raw)")
            let payload = try Self.payload(try #require(json["idToken"] as? String))
            let firebase = try #require(payload["firebase"] as? [String: Any])
            #expect(firebase["sign_in_provider"] as? String == "saml.corp")
            #expect((firebase["identities"] as? [String: [String]])?["saml.corp"] == ["Ada.Lovelace@corp.example"])
            #expect((firebase["sign_in_attributes"] as? [String: Any])?["groups"] as? [String] == ["staff", "admins"])
            #expect(payload["email"] as? String == "ada.lovelace@corp.example")

            // A refreshed ID token of the session keeps the sign-in's attributes.
            let (_, refreshed) = try await Federated.post(
                client, "/v1/token?key=demo-api-key",
                ["grant_type": "refresh_token", "refresh_token": json["refreshToken"] as? String ?? ""])
            let again = try Self.payload(try #require(refreshed["id_token"] as? String, "\(refreshed)"))
            #expect(
                ((again["firebase"] as? [String: Any])?["sign_in_attributes"] as? [String: Any])?["groups"] as? [String] == [
                    "staff", "admins",
                ])

            // The link works once.
            let (replayed, replayedJSON) = try await App.signIn(client, trip: trip, secret: session.secret)
            #expect(replayed == 400 && Federated.errorMessage(replayedJSON).hasPrefix("INVALID_IDP_RESPONSE"), "\(replayedJSON)")

            // The next sign-in finds the same account.
            let second = Federated.session()
            let trip2 = try await App.iOSTrip(client, provider: "saml.corp", user: user, sessionHash: second.hash)
            let (status2, json2) = try await App.signIn(client, trip: trip2, secret: second.secret)
            #expect(status2 == 200 && json2["localId"] as? String == json["localId"] as? String && json2["isNewUser"] == nil, "\(json2)")
        }
    }

    @Test("the IdP signing the response, or both the response and the assertion, signs in too", arguments: ["saml.response", "saml.both"])
    func signingModes(provider: String) async throws {
        let user = try await SAMLIdP.user(nameID: "bo@corp.example")
        try await App.test { client in
            let session = Federated.session()
            let trip = try await App.iOSTrip(client, provider: provider, user: user, sessionHash: session.hash)
            let (status, json) = try await App.signIn(client, trip: trip, secret: session.secret)
            #expect(status == 200 && json["providerId"] as? String == provider, "\(json)")
            // Not trusted for corp.example: the address is kept, unverified.
            #expect(json["email"] as? String == "bo@corp.example" && json["emailVerified"] as? Bool == false)
        }
    }

    @Test("createAuthUri, then signInWithIdp with the SAMLResponse in postBody (as the SDKs send the IdP's POST) and the sessionId")
    func authURIAndPostBody() async throws {
        let user = try await SAMLIdP.user(nameID: "cy@corp.example", attributes: ["mail": ["cy@corp.example"]])
        try await App.test { client in
            let (status, json) = try await Federated.post(
                client, "/v1/accounts:createAuthUri?key=demo-api-key",
                ["providerId": "saml.corp", "continueUri": "https://app.example.com/"])
            #expect(status == 200, "\(json)")
            let authURI = try #require(json["authUri"] as? String)
            let sessionID = try #require(json["sessionId"] as? String)
            #expect(authURI.hasPrefix(try SAMLIdP.url() + "/sso?SAMLRequest="))
            let post = try await SAMLIdP.logIn(at: authURI, user: user)
            // No cookie: createAuthUri's browser never visited this server before the IdP.
            let returned = try await App.postToHandler(client, post, cookie: nil)
            let location = try #require(returned.header("Location"))
            #expect(location.hasPrefix("https://app.example.com/?SAMLResponse="))
            #expect(
                Browser.query(location)["SAMLResponse"] == post.samlResponse && Browser.query(location)["RelayState"] == post.relayState)
            let (signedIn, answer) = try await Federated.signInWithIdp(
                client,
                [
                    "requestUri": "https://links.test.example/__/auth/handler", "postBody": post.body, "sessionId": sessionID,
                    "returnSecureToken": true,
                ])
            #expect(signedIn == 200 && answer["email"] as? String == "cy@corp.example", "\(answer)")
            let (other, otherJSON) = try await Federated.signInWithIdp(
                client, ["requestUri": "https://app.example.com/", "postBody": post.body, "sessionId": sessionID])
            #expect(other == 400 && Federated.errorMessage(otherJSON).hasPrefix("INVALID_IDP_RESPONSE"))
        }
    }

    @Test("a web page: the handler checks the response itself and the page gets a one-time custom token")
    func webPage() async throws {
        let user = try await SAMLIdP.user(nameID: "dee@corp.example")
        try await App.test { client in
            let start = try await client.request(
                "GET",
                "/__/auth/handler?apiKey=demo-api-key&providerId=saml.corp&authType=signInViaRedirect&redirectUrl="
                    + PercentEncoding.encodeComponent("https://app.example.com/signed-in"))
            #expect(start.status == 302)
            let post = try await SAMLIdP.logIn(at: try #require(start.header("Location")), user: user)
            let returned = try await App.postToHandler(client, post, cookie: Browser.cookie(start))
            let location = try #require(returned.header("Location"))
            #expect(location.hasPrefix("https://app.example.com/signed-in#customToken="), "\(location)")
            let token = String(location.split(separator: "=", maxSplits: 1)[1])
            let (status, json) = try await Federated.post(client, "/v1/accounts:signInWithCustomToken?key=demo-api-key", ["token": token])
            #expect(status == 200 && json["idToken"] is String, "\(json)")
        }
    }

    @Test("a NameID that is not an address: the user's ID at the IdP, no email")
    func persistentNameID() async throws {
        let nameID = "pers-" + UUID().uuidString
        let user = try await SAMLIdP.user(nameID: nameID, format: "persistent")
        try await App.test { client in
            let session = Federated.session()
            let trip = try await App.iOSTrip(client, provider: "saml.corp", user: user, sessionHash: session.hash)
            let (status, json) = try await App.signIn(client, trip: trip, secret: session.secret)
            #expect(status == 200 && json["federatedId"] as? String == nameID && json["email"] == nil, "\(json)")
        }
    }

    @Test("a disabled provider answers the app operation-not-allowed; createAuthUri OPERATION_NOT_ALLOWED")
    func disabled() async throws {
        try await App.test { client in
            let session = Federated.session()
            let start = try await client.request("GET", Federated.iOSHandlerPath(provider: "saml.off", sessionHash: session.hash))
            let location = try #require(start.header("Location"))
            #expect(Federated.link(in: location).inner["firebaseError"]?.contains("auth/operation-not-allowed") == true, "\(location)")
            let (status, json) = try await Federated.post(
                client, "/v1/accounts:createAuthUri?key=demo-api-key",
                ["providerId": "saml.off", "continueUri": "https://app.example.com/"])
            #expect(status == 400 && Federated.errorMessage(json).hasPrefix("OPERATION_NOT_ALLOWED"))
        }
    }
}
