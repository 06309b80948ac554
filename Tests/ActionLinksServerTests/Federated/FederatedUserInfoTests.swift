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

/// Federated sign-in against a second real provider, django-oidc-provider, whose ID tokens carry
/// only `iss sub aud exp iat auth_time nonce at_hash` (the profile is at its `/userinfo`) and whose
/// token endpoint reads HTTP Basic credentials without form-decoding them (its client's secret has
/// `+ / =`). Each sign-in goes through `/__/auth/handler` and the provider's own login form.
@Suite(
    "Federated sign-in with a provider that serves the profile at /userinfo", .timeLimit(.minutes(5)),
    .enabled(if: DjangoOIDCProvider.enabled, "DJANGO_OIDC_PROVIDER_URL is not set (scripts/test.sh sets it)"))
struct FederatedUserInfoTests {
    typealias App = FederatedApp

    /// `oidc.django` (trusted for corp.example), `oidc.django-other` (trusted for nothing), and
    /// `oidc.django-basic` / `oidc.django-post`, which name their token endpoint method.
    static func providers() throws -> String {
        let issuer = try DjangoOIDCProvider.url()
        func entry(_ id: String, _ extra: String) -> String {
            """
              - id: \(id)
                issuer: \(issuer)
                clientId: \(DjangoOIDCProvider.clientID)
                clientSecret: "\(DjangoOIDCProvider.clientSecret)"
                timeout: 2m
            \(extra)
            """
        }
        return [
            entry("oidc.django", "    trustedEmailDomains: [corp.example]"), entry("oidc.django-other", ""),
            entry("oidc.django-basic", "    tokenEndpointAuthMethod: client_secret_basic"),
            entry("oidc.django-post", "    tokenEndpointAuthMethod: client_secret_post\n    trustedEmailDomains: [corp.example]"),
        ].joined(separator: "\n") + "\n"
    }

    static func test<Value: Sendable>(
        store: String = "sqlite", _ body: @Sendable (any HTTPTarget) async throws -> Value
    ) async throws -> Value {
        try await App.test(store: store, moreProviders: try providers(), body)
    }

    /// An iOS round trip with `provider` as `username` (the handler, the provider's login form, the
    /// handler again), then `signInWithIdp` with the link the app gets.
    static func signIn(_ client: any HTTPTarget, provider: String, username: String) async throws -> (
        status: Int, json: [String: Any]
    ) {
        let session = App.session()
        let start = try await client.request("GET", App.iOSHandlerPath(provider: provider, sessionHash: session.hash))
        let authorize = try #require(start.header("Location"), "the handler answered \(start.status): \(start.text)")
        #expect(authorize.hasPrefix(try DjangoOIDCProvider.url() + "/authorize?"), "\(authorize)")
        let back = try await DjangoOIDCProvider.logIn(at: authorize, username: username)
        #expect(back.hasPrefix("https://links.test.example/__/auth/handler?"), "\(back)")
        let returned = try await client.request("GET", Browser.pathAndQuery(back), headers: ["Cookie": Browser.cookie(start) ?? ""])
        let appURL = try #require(returned.header("Location"), "the handler answered \(returned.status)")
        let link = try #require(App.link(in: appURL).link, "\(appURL)")
        return try await App.signInWithIdp(
            client,
            ["requestUri": link, "sessionId": session.secret, "returnSecureToken": true, "returnIdpCredential": true])
    }

    static func rawUserInfo(_ json: [String: Any]) throws -> [String: Any] {
        let raw = try #require(json["rawUserInfo"] as? String, "\(json)")
        return try #require(try JSONSerialization.jsonObject(with: Data(raw.utf8)) as? [String: Any])
    }

    @Test(
        "the profile comes from /userinfo (OIDC Core 5.3), and the secret with + / = gets through by client_secret_post after Basic is refused",
        arguments: FederatedApp.stores)
    func profileFromUserInfo(store: String) async throws {
        try await Self.test(store: store) { client in
            let (status, json) = try await Self.signIn(client, provider: "oidc.django", username: "ada")
            #expect(status == 200, "\(json)")
            #expect(json["providerId"] as? String == "oidc.django" && json["isNewUser"] as? Bool == true)
            #expect(json["email"] as? String == "ada@corp.example" && json["emailVerified"] as? Bool == true, "\(json)")
            #expect(json["displayName"] as? String == "Ada Lovelace" && json["fullName"] as? String == "Ada Lovelace")
            let raw = try Self.rawUserInfo(json)
            // The ID token's own claims and the userinfo answer's, together.
            #expect(raw["at_hash"] is String && raw["auth_time"] != nil && raw["nonce"] is String, "\(raw)")
            #expect(raw["email"] as? String == "ada@corp.example" && raw["given_name"] as? String == "Ada", "\(raw)")
            #expect(raw["sub"] as? String == json["federatedId"] as? String)
            // The ID token as the provider sent it has no profile: the server fetched it.
            let idToken = try #require(json["oauthIdToken"] as? String)
            let payload = try IdpSpecTests.payload(idToken)
            #expect(payload["email"] == nil && payload["name"] == nil, "\(payload)")
            let user = try await IdpSpecTests.lookup(client, json["idToken"] as? String ?? "")
            #expect(user["email"] as? String == "ada@corp.example" && user["displayName"] as? String == "Ada Lovelace", "\(user)")
        }
    }

    @Test("with the address from /userinfo, a trusted provider takes over an unverified password account")
    func trustedTakeover() async throws {
        try await Self.test { client in
            let (localID, _, _) = try await App.passwordUser(client, email: "ada@corp.example")
            let (status, json) = try await Self.signIn(client, provider: "oidc.django", username: "ada")
            #expect(status == 200 && json["localId"] as? String == localID && json["isNewUser"] == nil, "\(json)")
            #expect(json["emailVerified"] as? Bool == true)
            #expect(try await App.providers(client, idToken: json["idToken"] as? String ?? "") == ["oidc.django"])
        }
    }

    @Test("with the address from /userinfo, a provider that does not vouch for it gets needConfirmation")
    func needConfirmation() async throws {
        try await Self.test { client in
            let (localID, _, _) = try await App.passwordUser(client, email: "grace@corp.example")
            let (status, json) = try await Self.signIn(client, provider: "oidc.django-other", username: "grace")
            #expect(status == 200 && json["needConfirmation"] as? Bool == true, "\(json)")
            #expect(json["email"] as? String == "grace@corp.example" && json["idToken"] == nil && json["localId"] as? String != localID)
            #expect(json["pendingToken"] is String)
        }
    }

    @Test("tokenEndpointAuthMethod: client_secret_post is used at once; client_secret_basic is kept to, and this provider refuses it")
    func configuredMethod() async throws {
        try await Self.test { client in
            let (status, json) = try await Self.signIn(client, provider: "oidc.django-post", username: "grace")
            #expect(status == 200 && json["email"] as? String == "grace@corp.example", "\(json)")
            let (refused, answer) = try await Self.signIn(client, provider: "oidc.django-basic", username: "grace")
            #expect(refused == 400, "\(answer)")
            #expect(App.errorMessage(answer).hasPrefix("INVALID_IDP_RESPONSE") && App.errorMessage(answer).contains("invalid_client"))
        }
    }

    @Test("an app's own id_token and access_token (postBody): the profile comes from /userinfo with that access token")
    func appCredential() async throws {
        let nonce = "n-" + UUID().uuidString
        let (idToken, accessToken) = try await DjangoOIDCProvider.tokens(username: "ada", nonce: nonce)
        try await Self.test { client in
            let post = [("providerId", "oidc.django"), ("id_token", idToken), ("access_token", accessToken), ("nonce", nonce)]
            let (status, json) = try await App.signInWithIdp(
                client,
                [
                    "requestUri": "https://links.test.example/__/auth/handler", "returnSecureToken": true,
                    "postBody": post.map { "\($0.0)=\(PercentEncoding.encodeComponent($0.1))" }.joined(separator: "&"),
                ])
            #expect(status == 200 && json["email"] as? String == "ada@corp.example", "\(json)")
            #expect(json["displayName"] as? String == "Ada Lovelace" && json["emailVerified"] as? Bool == true)
            // Without the access token there is nothing to complete the token with: the same user
            // (the same subject), but no address in the answer.
            let bare = [("providerId", "oidc.django"), ("id_token", idToken), ("nonce", nonce)]
            let (_, without) = try await App.signInWithIdp(
                client,
                [
                    "requestUri": "https://links.test.example/__/auth/handler", "returnSecureToken": true,
                    "postBody": bare.map { "\($0.0)=\(PercentEncoding.encodeComponent($0.1))" }.joined(separator: "&"),
                ])
            #expect(without["email"] == nil && without["localId"] as? String == json["localId"] as? String, "\(without)")
        }
    }
}
