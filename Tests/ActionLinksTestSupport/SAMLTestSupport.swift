import ActionLinks
import ActionLinksConfiguration
import ActionLinksSAML
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores

/// The SAML identity provider the SAML tests sign in with: pysaml2's IdP (Tests/SAMLIdP/idp.py),
/// which `scripts/test.sh` starts on a loopback port and names in `SAML_IDP_URL`. The service
/// providers it knows are registered in scripts/saml-idp.sh.
public enum SAMLIdP {
    public static let variable = "SAML_IDP_URL"

    /// `http://127.0.0.1:<port>`.
    public static func url() throws -> String {
        try MissingTestService.url(variable, starting: "the IdP", script: "saml-idp.sh", folder: "/tmp/idp")
    }

    /// The IdP's entity ID.
    public static func entityID() throws -> String { try url() + "/metadata" }

    /// The IdP, through the tests' one loopback session.
    public static func origin() throws -> HTTPOrigin { HTTPOrigin(try url()) }

    /// The IdP's signing certificate, as PEM, from its metadata.
    public static func certificate() async throws -> String {
        let metadata = try await HTTPOrigin.anywhere.request("GET", try entityID()).text
        let start = try #require(metadata.range(of: "X509Certificate>"))
        let end = try #require(metadata.range(of: "</", range: start.upperBound..<metadata.endIndex))
        let body = metadata[start.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        return "-----BEGIN CERTIFICATE-----\n" + body + "\n-----END CERTIFICATE-----\n"
    }

    /// A new user at the IdP (a fresh one per test: the IdP is shared): its user name and password.
    public static func user(nameID: String, format: String = "email", attributes: [String: [String]] = [:]) async throws -> (String, String)
    {
        let name = "user-" + UUID().uuidString.lowercased()
        let password = UUID().uuidString
        let fields: [String: Any] = ["password": password, "nameId": nameID, "nameIdFormat": format, "attributes": attributes]
        let reply = try await origin().request(
            "PUT", "/users/" + name, body: try JSONSerialization.data(withJSONObject: fields), headers: ["Content-Type": "application/json"]
        )
        #expect(reply.status == 204)
        return (name, password)
    }

    /// What the IdP's page posts to the service provider (HTTP-POST binding).
    public struct Post: Sendable {
        public var action: String
        public var samlResponse: String
        public var relayState: String?

        public init(action: String, samlResponse: String, relayState: String?) {
            self.action = action
            self.samlResponse = samlResponse
            self.relayState = relayState
        }

        /// The form body as a browser sends it.
        public var body: String {
            var fields = [("SAMLResponse", samlResponse)]
            if let relayState { fields.append(("RelayState", relayState)) }
            return HTMLForm.encode(pairs: fields)
        }

        /// The response's XML.
        public var xml: String { String(decoding: Data(base64Encoded: samlResponse) ?? Data(), as: UTF8.self) }

        /// The same post with the response's XML changed.
        public func with(xml: String) -> Post {
            Post(action: action, samlResponse: Data(xml.utf8).base64EncodedString(), relayState: relayState)
        }
    }

    /// Takes the browser to `redirect` (the IdP's single sign-on URL with the AuthnRequest), signs
    /// in with the IdP's login form, and returns the form the IdP's page posts back.
    public static func logIn(at redirect: String, user: (String, String)) async throws -> Post {
        let page = try await HTTPOrigin.anywhere.request("GET", redirect)
        let html = page.text
        #expect(page.status == 200, "\(html)")
        let key = try #require(field("request", in: html), "\(html)")
        let answer = try await origin().post("/login", form: [("request", key), ("username", user.0), ("password", user.1)])
        let form = answer.text
        #expect(answer.status == 200, "\(form)")
        let action = try #require(form.range(of: #"action="[^"]+""#, options: .regularExpression).map { form[$0].dropFirst(8).dropLast() })
        return Post(
            action: unescape(String(action)), samlResponse: try #require(field("SAMLResponse", in: form), "\(form)"),
            relayState: field("RelayState", in: form))
    }

    /// The value of the form field `name` in an HTML page.
    public static func field(_ name: String, in html: String) -> String? {
        guard let range = html.range(of: #"name="\#(name)" value="[^"]*""#, options: .regularExpression) else { return nil }
        let text = html[range]
        guard let start = text.range(of: #"value=""#) else { return nil }
        return unescape(String(text[start.upperBound...].dropLast()))
    }

    public static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#x27;", with: "'")
            .replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }
}

/// A server configured for SAML sign-in against the test IdP: `saml.corp` (the assertion signed,
/// trusted for corp.example), `saml.response` and `saml.both` (the response, or both, signed),
/// `saml.unsigned` (the IdP signs nothing), `saml.sha1` (RSA-SHA1), `saml.otherkey` (configured
/// with another certificate than the IdP's), `saml.off` (disabled); an iOS app, an Android app and a
/// tenant as in ``FederatedApp``.
public enum SAMLApp {
    public typealias Federated = FederatedApp

    /// A certificate of a key the IdP does not have.
    public static let otherCertificate = Repository.root.appendingPathComponent("Tests/ActionLinksSAMLTests/Fixtures/other-cert.pem")

    public static func configuration(idp: String, certificate: URL, data: URL, store: String) -> String {
        func provider(_ id: String, sp: String?, _ extra: [String] = [], certificate other: URL? = nil) -> String {
            var lines = [
                "  - id: \(id)", "    idpEntityId: \(idp)/metadata", "    ssoUrl: \(idp)/sso",
                "    idpCertificateFiles: [\((other ?? certificate).path)]",
            ]
            if let sp { lines.append("    spEntityId: \(sp)") }
            return (lines + extra.map { "    " + $0 }).joined(separator: "\n")
        }
        let providers = [
            provider("saml.corp", sp: nil, ["trustedEmailDomains: [corp.example]"]),
            provider("saml.response", sp: "https://links.test.example/saml/response"),
            provider("saml.both", sp: "https://links.test.example/saml/both"),
            provider("saml.unsigned", sp: "https://links.test.example/saml/unsigned"),
            provider("saml.sha1", sp: "https://links.test.example/saml/sha1"),
            provider("saml.otherkey", sp: nil, certificate: otherCertificate),
            provider("saml.off", sp: nil, ["enabled: false"]),
        ]
        return Federated.configurationBeforeProviders(data: data, store: store) + "providers:\n" + providers.joined(separator: "\n")
            + "\n"
    }

    /// Runs `body` against the application on a fresh SQLite file or PostgreSQL database.
    public static func test<Value: Sendable>(
        store kind: String = "sqlite", clock: any ServiceClock = SystemServiceClock(),
        _ body: @Sendable (RouterClient) async throws -> Value
    ) async throws -> Value {
        let idp = try SAMLIdP.url()
        return try await Federated.run(label: "saml", store: kind, clock: clock, body) { data, store in
            let certificate = data.appendingPathComponent("idp.pem")
            try await SAMLIdP.certificate().write(to: certificate, atomically: true, encoding: .utf8)
            return configuration(idp: idp, certificate: certificate, data: data, store: store)
        }
    }

    /// The AuthnRequest in a redirect to the IdP (its XML) and the RelayState.
    public static func authnRequest(in redirect: String) throws -> (xml: String, relayState: String) {
        let query = Browser.query(redirect)
        let encoded = try #require(query["SAMLRequest"])
        let xml = String(decoding: try #require(SAMLRedirectBinding.decode(encoded)), as: UTF8.self)
        return (xml, try #require(query["RelayState"]))
    }

    /// One iOS-shaped round trip up to the app: the handler, the IdP's login, the IdP's post to the
    /// handler (with the browser's cookie). `change` alters the IdP's post before it arrives.
    public struct Trip: Sendable {
        public var start: HTTPReply
        public var cookie: String?
        public var post: SAMLIdP.Post?
        public var returned: HTTPReply?
        public var appURL: String? { returned?.header("Location") }
    }

    public static func iOSTrip(
        _ client: any HTTPTarget, provider: String, user: (String, String), sessionHash: String,
        change: @Sendable (SAMLIdP.Post) throws -> SAMLIdP.Post = { $0 }
    ) async throws -> Trip {
        let start = try await client.request("GET", Federated.iOSHandlerPath(provider: provider, sessionHash: sessionHash))
        var trip = Trip(start: start, cookie: Browser.cookie(start))
        guard start.status == 302, let redirect = start.header("Location"), redirect.hasPrefix(try SAMLIdP.url()) else { return trip }
        let post = try change(try await SAMLIdP.logIn(at: redirect, user: user))
        trip.post = post
        trip.returned = try await postToHandler(client, post, cookie: trip.cookie)
        return trip
    }

    /// The browser posting the IdP's form to the handler.
    public static func postToHandler(_ client: any HTTPTarget, _ post: SAMLIdP.Post, cookie: String?) async throws -> HTTPReply {
        var headers = ["Content-Type": "application/x-www-form-urlencoded"]
        if let cookie { headers["Cookie"] = cookie }
        return try await client.request("POST", Browser.pathAndQuery(post.action), body: Data(post.body.utf8), headers: headers)
    }

    /// The signed-in iOS app's `signInWithIdp` with the link it was given.
    public static func signIn(_ client: any HTTPTarget, trip: Trip, secret: String) async throws -> (
        status: Int, json: [String: Any]
    ) {
        let link = try #require(Federated.link(in: trip.appURL ?? "").link, "\(trip.appURL ?? "no app URL")")
        return try await Federated.signInWithIdp(
            client, ["requestUri": link, "sessionId": secret, "returnSecureToken": true, "returnIdpCredential": true])
    }
}
