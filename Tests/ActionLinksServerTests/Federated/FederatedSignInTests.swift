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

/// Federated sign-in end to end against a real OpenID provider (oidc-provider-mock): the iOS SDK's
/// round trip through `/__/auth/handler`, `accounts:signInWithIdp`, `createAuthUri` and web pages,
/// on both stores.
@Suite("Federated sign-in against a real provider", .timeLimit(.minutes(5)))
struct FederatedSignInTests {
    typealias App = FederatedApp

    @Test(
        "the iOS round trip with the Yahoo preset: handler, login form, back to the app's client-ID scheme, signInWithIdp",
        arguments: FederatedApp.stores)
    func iOSRoundTrip(store: String) async throws {
        let sub = try await App.subject(["email": "Ann@Yahoo.com", "email_verified": true, "name": "Ann Example"])
        try await App.test(store: store) { client in
            let session = App.session()
            let trip = try await App.iOSTrip(client, provider: "yahoo.com", sub: sub, sessionHash: session.hash)
            #expect(trip.start.status == 302, "\(trip.start.text)")
            let authorize = Browser.query(try #require(trip.start.header("Location")))
            #expect(
                authorize["client_id"] == "actionlinks-yahoo" && authorize["redirect_uri"] == "https://links.test.example/__/auth/handler")
            #expect(authorize["scope"] == "openid email profile" && authorize["nonce"]?.isEmpty == false && authorize["state"] != nil)
            let cookie = try #require(trip.cookie)
            #expect(cookie.hasPrefix("actionlinks_federated=") && trip.start.header("Set-Cookie")?.contains("HttpOnly") == true)
            let appURL = try #require(trip.appURL)
            #expect(appURL.hasPrefix(App.clientIDScheme + "://firebaseauth/link?deep_link_id="))
            let (link, inner) = App.link(in: appURL)
            #expect(inner["authType"] == "signInWithRedirect" && inner["eventId"] == "QWERTYUIOP")
            #expect(Browser.query(appURL)["deep_link_id"]?.hasPrefix("https://links.test.example/__/auth/callback?") == true)
            let requestURI = try #require(link)
            #expect(requestURI == trip.providerReturn)

            let (status, json) = try await App.signInWithIdp(
                client,
                [
                    "requestUri": requestURI, "sessionId": session.secret, "postBody": "providerId=yahoo.com", "returnSecureToken": true,
                    "returnIdpCredential": true,
                ])
            #expect(status == 200, "\(json)")
            #expect(json["providerId"] as? String == "yahoo.com" && json["federatedId"] as? String == sub)
            #expect(json["email"] as? String == "ann@yahoo.com" && json["emailVerified"] as? Bool == true)
            #expect(json["isNewUser"] as? Bool == true && json["needConfirmation"] == nil && json["expiresIn"] as? String == "3600")
            #expect(json["idToken"] is String && json["refreshToken"] is String && json["oauthAccessToken"] is String)
            #expect(json["oauthIdToken"] is String && json["displayName"] as? String == "Ann Example")
            let raw = try #require(json["rawUserInfo"] as? String)
            let profile = try JSONSerialization.jsonObject(with: Data(raw.utf8)) as? [String: Any]
            #expect(profile?["sub"] as? String == sub)
            #expect(try await App.providers(client, idToken: json["idToken"] as! String) == ["yahoo.com"])

            // The same answer twice: the flow was consumed.
            let (again, refused) = try await App.signInWithIdp(client, ["requestUri": requestURI, "sessionId": session.secret])
            #expect(again == 400 && App.errorMessage(refused).hasPrefix("INVALID_IDP_RESPONSE"), "\(refused)")
        }
    }

    @Test(
        "a generic oidc. provider through the emulator handler and the v3 verifyAssertion, returning to the app-ID scheme; the same (provider, sub) signs the same user in",
        arguments: FederatedApp.stores)
    func genericProviderSignsInAgain(store: String) async throws {
        let sub = try await App.subject(["email": "dora@example.com", "email_verified": false])
        try await App.test(store: store) { client in
            var users: [String] = []
            for round in 0..<2 {
                let session = App.session()
                let trip = try await App.iOSTrip(
                    client, provider: "oidc.mock", sub: sub, sessionHash: session.hash, appID: true, path: "/emulator/auth/handler")
                let appURL = try #require(trip.appURL, "\(trip.start.status) \(trip.start.text)")
                #expect(appURL.hasPrefix(App.appIDScheme + "://firebaseauth/link?deep_link_id="))
                let (status, json) = try await App.signInWithIdp(
                    client, ["requestUri": App.link(in: appURL).link ?? "", "sessionId": session.secret, "returnSecureToken": true],
                    path: "/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyAssertion?key=demo-api-key")
                #expect(status == 200, "\(json)")
                #expect((json["isNewUser"] as? Bool) == (round == 0 ? true : nil))
                #expect(json["emailVerified"] as? Bool == false && json["providerId"] as? String == "oidc.mock")
                users.append(try #require(json["localId"] as? String))
            }
            #expect(users[0] == users[1])
        }
    }

    @Test("a tenant's flow (tid) signs in to the tenant, and the answer may come back as a form_post")
    func tenantAndFormPost() async throws {
        let sub = try await App.subject(["email": "pia@example.com", "email_verified": true])
        try await App.test { client in
            let session = App.session()
            let start = try await client.request(
                "GET", App.iOSHandlerPath(provider: "oidc.mock", sessionHash: session.hash, extra: [("tid", "team-a")]))
            let back = try await OIDCProviderMock.logIn(at: start.header("Location") ?? "", sub: sub)
            let query = String(back.split(separator: "?", maxSplits: 1)[1])
            let posted = try await client.request(
                "POST", "/__/auth/handler", body: Data(query.utf8),
                headers: ["Cookie": Browser.cookie(start) ?? "", "Content-Type": "application/x-www-form-urlencoded"])
            let link = try #require(App.link(in: posted.header("Location") ?? "").link, "\(posted.status)")
            #expect(link == "https://links.test.example/__/auth/handler?" + query)
            let (other, otherJSON) = try await App.signInWithIdp(client, ["requestUri": link, "sessionId": session.secret])
            #expect(other == 400 && App.errorMessage(otherJSON).hasPrefix("TENANT_ID_MISMATCH"), "\(otherJSON)")
            let (status, json) = try await App.signInWithIdp(
                client, ["requestUri": link, "sessionId": session.secret, "tenantId": "team-a"])
            #expect(status == 200 && json["tenantId"] as? String == "team-a", "\(json)")
        }
    }

    // MARK: - Account rules

    @Test(
        "a trusted provider (Yahoo for yahoo.com, email_verified) takes over an unverified account: same user, password and untrusted links removed, sessions revoked",
        arguments: FederatedApp.stores)
    func trustedTakeover(store: String) async throws {
        let email = "eve-\(UUID().uuidString.prefix(8).lowercased())@yahoo.com"
        let squatter = try await App.subject(["email": email, "email_verified": false])
        let owner = try await App.subject(["email": email, "email_verified": true, "name": "The Owner"])
        try await App.test(store: store) { client in
            let (localID, idToken, refreshToken) = try await App.passwordUser(client, email: email)
            // The squatter also links an untrusted provider identity to the account.
            let session = App.session()
            let trip = try await App.iOSTrip(client, provider: "oidc.mock", sub: squatter, sessionHash: session.hash)
            let (linked, linkJSON) = try await App.signInWithIdp(
                client, ["requestUri": App.link(in: trip.appURL ?? "").link ?? "", "sessionId": session.secret, "idToken": idToken])
            #expect(linked == 200 && linkJSON["localId"] as? String == localID, "\(linkJSON)")

            let second = App.session()
            let takeover = try await App.iOSTrip(client, provider: "yahoo.com", sub: owner, sessionHash: second.hash)
            let (status, json) = try await App.signInWithIdp(
                client, ["requestUri": App.link(in: takeover.appURL ?? "").link ?? "", "sessionId": second.secret])
            #expect(status == 200 && json["localId"] as? String == localID && json["isNewUser"] == nil, "\(json)")
            #expect(json["emailVerified"] as? Bool == true)
            let newToken = try #require(json["idToken"] as? String)
            #expect(try await App.providers(client, idToken: newToken) == ["yahoo.com"])
            let (passwordStatus, _) = try await App.post(
                client, "/v1/accounts:signInWithPassword?key=demo-api-key", ["email": email, "password": "a good password"])
            #expect(passwordStatus == 400)
            let (refreshStatus, refreshJSON) = try await App.post(
                client, "/v1/token?key=demo-api-key", ["grant_type": "refresh_token", "refresh_token": refreshToken])
            #expect(refreshStatus == 400 && App.errorMessage(refreshJSON).hasPrefix("TOKEN_EXPIRED"), "\(refreshJSON)")
        }
    }

    @Test("a trusted provider signs in a verified account and keeps its password")
    func trustedKeepsVerifiedPassword() async throws {
        let email = "fay-\(UUID().uuidString.prefix(8).lowercased())@yahoo.com"
        let sub = try await App.subject(["email": email, "email_verified": true])
        try await App.test { client in
            let (_, created) = try await App.post(
                client, "/v1/projects/demo-actionlinks/accounts", ["email": email, "password": "a good password", "emailVerified": true],
                headers: App.admin)
            let session = App.session()
            let trip = try await App.iOSTrip(client, provider: "yahoo.com", sub: sub, sessionHash: session.hash)
            let (status, json) = try await App.signInWithIdp(
                client, ["requestUri": App.link(in: trip.appURL ?? "").link ?? "", "sessionId": session.secret])
            #expect(status == 200 && json["localId"] as? String == created["localId"] as? String, "\(json)")
            let (passwordStatus, _) = try await App.post(
                client, "/v1/accounts:signInWithPassword?key=demo-api-key", ["email": email, "password": "a good password"])
            #expect(passwordStatus == 200)
            #expect(try await App.providers(client, idToken: json["idToken"] as? String ?? "") == ["password", "yahoo.com"])
        }
    }

    @Test("a provider trusted by configuration (oidc.mock for corp.example) takes over too")
    func configuredTrust() async throws {
        let email = "gus-\(UUID().uuidString.prefix(8).lowercased())@corp.example"
        let sub = try await App.subject(["email": email, "email_verified": true])
        try await App.test { client in
            let (localID, _, _) = try await App.passwordUser(client, email: email)
            let session = App.session()
            let trip = try await App.iOSTrip(client, provider: "oidc.mock", sub: sub, sessionHash: session.hash)
            let (status, json) = try await App.signInWithIdp(
                client, ["requestUri": App.link(in: trip.appURL ?? "").link ?? "", "sessionId": session.secret])
            #expect(status == 200 && json["localId"] as? String == localID, "\(json)")
        }
    }

    @Test(
        "an untrusted provider gets needConfirmation with a pendingToken and the provider's tokens; the app signs in the old way and links with the pending token",
        arguments: FederatedApp.stores)
    func untrustedNeedsConfirmation(store: String) async throws {
        let email = "hal-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let sub = try await App.subject(["email": email, "email_verified": true])
        try await App.test(store: store) { client in
            let (localID, _, _) = try await App.passwordUser(client, email: email)
            let session = App.session()
            let trip = try await App.iOSTrip(client, provider: "oidc.mock", sub: sub, sessionHash: session.hash)
            let (status, json) = try await App.signInWithIdp(
                client,
                ["requestUri": App.link(in: trip.appURL ?? "").link ?? "", "sessionId": session.secret, "returnIdpCredential": true])
            #expect(status == 200 && json["needConfirmation"] as? Bool == true, "\(json)")
            #expect(json["email"] as? String == email && json["idToken"] == nil && json["refreshToken"] == nil && json["localId"] == nil)
            #expect(json["oauthIdToken"] is String && json["oauthAccessToken"] is String && json["verifiedProvider"] as? [String] == [])
            let pendingToken = try #require(json["pendingToken"] as? String)

            let (_, signedIn) = try await App.post(
                client, "/v1/accounts:signInWithPassword?key=demo-api-key", ["email": email, "password": "a good password"])
            let idToken = try #require(signedIn["idToken"] as? String)
            // As iOS sends it: the pending token with the credential rebuilt from the answer.
            let (linked, linkJSON) = try await App.signInWithIdp(
                client,
                [
                    "requestUri": "http://localhost", "pendingToken": pendingToken, "idToken": idToken,
                    "postBody": "providerId=oidc.mock&id_token=\(json["oauthIdToken"] as? String ?? "")", "returnSecureToken": true,
                ])
            #expect(linked == 200 && linkJSON["localId"] as? String == localID, "\(linkJSON)")
            #expect(try await App.providers(client, idToken: linkJSON["idToken"] as? String ?? "") == ["oidc.mock", "password"])
            // As JS sends it: the pending token alone signs the linked user in.
            let (again, againJSON) = try await App.signInWithIdp(client, ["requestUri": "http://localhost", "pendingToken": pendingToken])
            #expect(again == 200 && againJSON["localId"] as? String == localID, "\(againJSON)")
        }
    }

    @Test("without email_verified, even Yahoo for a yahoo.com address is not trusted")
    func missingEmailVerifiedIsUnverified() async throws {
        let email = "ida-\(UUID().uuidString.prefix(8).lowercased())@yahoo.com"
        let sub = try await App.subject(["email": email])
        try await App.test { client in
            _ = try await App.passwordUser(client, email: email)
            let session = App.session()
            let trip = try await App.iOSTrip(client, provider: "yahoo.com", sub: sub, sessionHash: session.hash)
            let (status, json) = try await App.signInWithIdp(
                client, ["requestUri": App.link(in: trip.appURL ?? "").link ?? "", "sessionId": session.secret])
            #expect(status == 200 && json["needConfirmation"] as? Bool == true && json["idToken"] == nil, "\(json)")
        }
    }

    @Test("users.oneAccountPerEmail false: a provider's sign-in makes its own account, without the address")
    func duplicateEmailsAllowed() async throws {
        let email = "jo-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let sub = try await App.subject(["email": email, "email_verified": true])
        try await App.test(environment: ["ACTIONLINKS_USERS_ONE_ACCOUNT_PER_EMAIL": "false"]) { client in
            let (localID, _, _) = try await App.passwordUser(client, email: email)
            let session = App.session()
            let trip = try await App.iOSTrip(client, provider: "oidc.mock", sub: sub, sessionHash: session.hash)
            let (status, json) = try await App.signInWithIdp(
                client, ["requestUri": App.link(in: trip.appURL ?? "").link ?? "", "sessionId": session.secret])
            #expect(status == 200 && json["isNewUser"] as? Bool == true && json["localId"] as? String != localID, "\(json)")
            let (_, lookup) = try await App.post(
                client, "/v1/accounts:lookup?key=demo-api-key", ["idToken": json["idToken"] as? String ?? ""])
            #expect(((lookup["users"] as? [[String: Any]])?.first?["email"]) == nil)
        }
    }

    @Test("users.selfServiceSignUp false: a first federated sign-in is refused; reauthentication of an unknown identity is USER_NOT_FOUND")
    func noSelfServiceSignUp() async throws {
        let sub = try await App.subject(["email": "kim@example.com"])
        try await App.test(environment: ["ACTIONLINKS_USERS_SELF_SERVICE_SIGN_UP": "false"]) { client in
            var session = App.session()
            var trip = try await App.iOSTrip(client, provider: "oidc.mock", sub: sub, sessionHash: session.hash)
            let (status, json) = try await App.signInWithIdp(
                client, ["requestUri": App.link(in: trip.appURL ?? "").link ?? "", "sessionId": session.secret])
            #expect(status == 400 && App.errorMessage(json).hasPrefix("ADMIN_ONLY_OPERATION"), "\(json)")
            session = App.session()
            trip = try await App.iOSTrip(client, provider: "oidc.mock", sub: sub, sessionHash: session.hash)
            let (reauth, reauthJSON) = try await App.signInWithIdp(
                client, ["requestUri": App.link(in: trip.appURL ?? "").link ?? "", "sessionId": session.secret, "autoCreate": false])
            #expect(reauth == 400 && App.errorMessage(reauthJSON).hasPrefix("USER_NOT_FOUND"), "\(reauthJSON)")
        }
    }

    @Test(
        "linking: an identity linked elsewhere is FEDERATED_USER_ID_ALREADY_LINKED (200 with errorMessage when asked), an address of another account EMAIL_EXISTS"
    )
    func linkRefusals() async throws {
        let email = "lou-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let sub = try await App.subject(["email": email, "email_verified": true])
        try await App.test { client in
            let session = App.session()
            let trip = try await App.iOSTrip(client, provider: "oidc.mock", sub: sub, sessionHash: session.hash)
            let (_, first) = try await App.signInWithIdp(
                client, ["requestUri": App.link(in: trip.appURL ?? "").link ?? "", "sessionId": session.secret])
            let oauthIDToken = try #require(first["oauthIdToken"] as? String)
            let (_, anonymous) = try await App.post(client, "/v1/accounts:signUp?key=demo-api-key", ["returnSecureToken": true])
            let anonymousToken = try #require(anonymous["idToken"] as? String)
            // The provider's own id_token (nonce: the flow's, which the app does not know) cannot be
            // replayed as a credential; the pending token from the refusal can.
            let body: [String: Any] = [
                "requestUri": "http://localhost", "idToken": anonymousToken, "postBody": "providerId=oidc.mock&id_token=\(oauthIDToken)",
            ]
            let (nonceStatus, nonceJSON) = try await App.signInWithIdp(client, body)
            #expect(nonceStatus == 400 && App.errorMessage(nonceJSON).hasPrefix("MISSING_OR_INVALID_NONCE"), "\(nonceJSON)")

            let other = App.session()
            let again = try await App.iOSTrip(client, provider: "oidc.mock", sub: sub, sessionHash: other.hash)
            let link = App.link(in: again.appURL ?? "").link ?? ""
            let (status, json) = try await App.signInWithIdp(
                client, ["requestUri": link, "sessionId": other.secret, "idToken": anonymousToken, "returnIdpCredential": true])
            #expect(status == 200 && json["errorMessage"] as? String == "FEDERATED_USER_ID_ALREADY_LINKED", "\(json)")
            #expect(json["localId"] == nil && json["idToken"] == nil && json["oauthIdToken"] is String)
            let pendingToken = try #require(json["pendingToken"] as? String)
            let (plain, plainJSON) = try await App.signInWithIdp(
                client, ["requestUri": "http://localhost", "pendingToken": pendingToken, "idToken": anonymousToken])
            #expect(plain == 400 && App.errorMessage(plainJSON).hasPrefix("FEDERATED_USER_ID_ALREADY_LINKED"), "\(plainJSON)")

            // Another identity with the first user's address, linked to the anonymous user.
            let otherSub = try await App.subject(["email": email, "email_verified": true])
            let third = App.session()
            let trip3 = try await App.iOSTrip(client, provider: "yahoo.com", sub: otherSub, sessionHash: third.hash)
            let (exists, existsJSON) = try await App.signInWithIdp(
                client, ["requestUri": App.link(in: trip3.appURL ?? "").link ?? "", "sessionId": third.secret, "idToken": anonymousToken])
            #expect(exists == 400 && App.errorMessage(existsJSON).hasPrefix("EMAIL_EXISTS"), "\(existsJSON)")
        }
    }

    @Test("a disabled provider: the registered app hears auth/operation-not-allowed through its callback")
    func disabledProvider() async throws {
        try await App.test { client in
            let response = try await client.request("GET", App.iOSHandlerPath(provider: "oidc.off", sessionHash: App.session().hash))
            let location = try #require(response.header("Location"), "\(response.status)")
            #expect(location.hasPrefix(App.clientIDScheme + "://firebaseauth/link?deep_link_id="))
            let (link, inner) = App.link(in: location)
            #expect(link == nil && inner["authType"] == "signInWithRedirect" && inner["eventId"] == "QWERTYUIOP")
            let error = try JSONSerialization.jsonObject(with: Data((inner["firebaseError"] ?? "").utf8)) as? [String: String]
            #expect(error?["code"] == "auth/operation-not-allowed", "\(inner)")
            // An unknown provider too.
            let unknown = try await client.request("GET", App.iOSHandlerPath(provider: "oidc.nobody", sessionHash: App.session().hash))
            #expect(unknown.header("Location")?.hasPrefix(App.clientIDScheme + "://") == true)
        }
    }

    // MARK: - Other clients

    @Test(
        "createAuthUri with a providerId: the client's continueUri gets the provider's answer, and signInWithIdp completes it with the same sessionId",
        arguments: FederatedApp.stores)
    func createAuthURI(store: String) async throws {
        let sub = try await App.subject(["email": "max@example.com", "email_verified": true])
        try await App.test(store: store) { client in
            let (status, json) = try await App.post(
                client, "/v1/accounts:createAuthUri?key=demo-api-key",
                ["providerId": "oidc.mock", "continueUri": "https://app.example.com/back", "customParameter": ["prompt": "login"]])
            #expect(status == 200, "\(json)")
            let authURI = try #require(json["authUri"] as? String)
            let sessionID = try #require(json["sessionId"] as? String)
            #expect(authURI.hasPrefix(try OIDCProviderMock.url()) && Browser.query(authURI)["prompt"] == "login")
            #expect(json["providerId"] as? String == "oidc.mock")
            let back = try await OIDCProviderMock.logIn(at: authURI, sub: sub)
            let relayed = try await client.request("GET", Browser.pathAndQuery(back))
            let continued = try #require(relayed.header("Location"))
            #expect(continued.hasPrefix("https://app.example.com/back?code="))
            let (wrong, wrongJSON) = try await App.signInWithIdp(client, ["requestUri": continued, "sessionId": "someone-else"])
            #expect(wrong == 400 && App.errorMessage(wrongJSON).hasPrefix("INVALID_IDP_RESPONSE"))
            let (signed, signedJSON) = try await App.signInWithIdp(client, ["requestUri": continued, "sessionId": sessionID])
            #expect(signed == 200 && signedJSON["isNewUser"] as? Bool == true, "\(signedJSON)")

            let (refused, refusedJSON) = try await App.post(
                client, "/v1/accounts:createAuthUri?key=demo-api-key", ["providerId": "oidc.mock", "continueUri": "https://evil.example/"])
            #expect(refused == 400 && App.errorMessage(refusedJSON).hasPrefix("UNAUTHORIZED_DOMAIN"))
            let (off, offJSON) = try await App.post(
                client, "/v1/accounts:createAuthUri?key=demo-api-key",
                ["providerId": "oidc.off", "continueUri": "https://app.example.com/"])
            #expect(off == 400 && App.errorMessage(offJSON).hasPrefix("OPERATION_NOT_ALLOWED"))
        }
    }

    @Test("a web page without Firebase's iframe: the allow-listed redirectUrl gets a one-time custom token in the fragment")
    func webPage() async throws {
        let sub = try await App.subject(["email": "ned@example.com", "email_verified": true])
        try await App.test { client in
            let start = try await client.request(
                "GET",
                "/__/auth/handler?apiKey=demo-api-key&providerId=oidc.mock&authType=signInViaRedirect&redirectUrl="
                    + PercentEncoding.encodeComponent("https://app.example.com/signed-in"))
            #expect(start.status == 302)
            let back = try await OIDCProviderMock.logIn(at: start.header("Location") ?? "", sub: sub)
            let returned = try await client.request("GET", Browser.pathAndQuery(back), headers: ["Cookie": Browser.cookie(start) ?? ""])
            let location = try #require(returned.header("Location"))
            #expect(location.hasPrefix("https://app.example.com/signed-in#customToken="), "\(location)")
            let token = String(location.split(separator: "=", maxSplits: 1)[1])
            let (status, json) = try await App.post(client, "/v1/accounts:signInWithCustomToken?key=demo-api-key", ["token": token])
            #expect(status == 200 && json["idToken"] is String, "\(json)")
            let (again, _) = try await App.post(client, "/v1/accounts:signInWithCustomToken?key=demo-api-key", ["token": token])
            #expect(again == 400)

            let refused = try await client.request(
                "GET",
                "/__/auth/handler?apiKey=demo-api-key&providerId=oidc.mock&authType=signInViaRedirect&redirectUrl="
                    + PercentEncoding.encodeComponent("https://evil.example/"))
            #expect(refused.status == 400 && refused.header("Location") == nil)
        }
    }
}
