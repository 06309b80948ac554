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

extension IdpSpecTests {
    @Test("should link IDP to existing account by idToken")
    func linkByIDToken() async throws {
        try await App.test { client in
            let (localID, idToken, _) = try await App.passwordUser(client, email: "foo@example.com")
            let (status, json) = try await Self.fakeClaims(client, "google.com", ["sub": "123"], idToken: idToken)
            #expect(status == 200 && json["localId"] as? String == localID && json["isNewUser"] == nil && json["refreshToken"] is String)
            #expect(try await Self.signInMethods(client, "foo@example.com") == ["google.com", "password"])
        }
    }

    @Test("should copy IDP email to user-level email if not present (an anonymous user here: no SMS sign-in)")
    func copiesEmailWhenLinking() async throws {
        try await App.test { client in
            let (_, anonymous) = try await App.post(client, "/v1/accounts:signUp?key=demo-api-key", ["returnSecureToken": true])
            let (status, json) = try await Self.fakeClaims(
                client, "google.com", ["sub": "123", "email": "alice@example.com", "email_verified": true],
                idToken: anonymous["idToken"] as? String)
            #expect(status == 200, "\(json)")
            let user = try await Self.lookup(client, json["idToken"] as? String ?? "")
            #expect(user["email"] as? String == "alice@example.com" && user["emailVerified"] as? Bool == true)
        }
    }

    @Test("should error if user to be linked is disabled")
    func linkDisabled() async throws {
        try await App.test { client in
            let (localID, idToken, _) = try await App.passwordUser(client, email: "foo@example.com")
            _ = try await App.post(
                client, "/v1/projects/demo-actionlinks/accounts:update", ["localId": localID, "disableUser": true], headers: App.admin)
            let (status, json) = try await Self.fakeClaims(client, "google.com", ["sub": "123"], idToken: idToken)
            #expect(status == 400 && App.errorMessage(json).hasPrefix("USER_DISABLED"), "\(json)")
        }
    }

    @Test("should return error if IDP account is already linked to the same user")
    func alreadyLinkedSameUser() async throws {
        try await App.test { client in
            let (_, first) = try await Self.fakeClaims(client, "google.com", ["sub": "123"])
            let (status, json) = try await Self.fakeClaims(client, "google.com", ["sub": "123"], idToken: first["idToken"] as? String)
            #expect(status == 200 && json["errorMessage"] as? String == "FEDERATED_USER_ID_ALREADY_LINKED", "\(json)")
            #expect(json["localId"] == nil && json["refreshToken"] == nil && json["oauthIdToken"] is String)
        }
    }

    @Test("should return error if IDP account is already linked to another user")
    func alreadyLinkedOtherUser() async throws {
        try await App.test { client in
            _ = try await Self.fakeClaims(client, "google.com", ["sub": "123"])
            let (_, idToken, _) = try await App.passwordUser(client, email: "foo@example.com")
            let (status, json) = try await Self.fakeClaims(
                client, "google.com", ["sub": "123"], idToken: idToken, returnIdpCredential: false)
            #expect(status == 400 && App.errorMessage(json).hasPrefix("FEDERATED_USER_ID_ALREADY_LINKED"), "\(json)")
            #expect(try await Self.signInMethods(client, "foo@example.com") == ["password"])
        }
    }

    @Test("should return error if IDP account email already exists if NOT allowDuplicateEmail")
    func linkEmailExists() async throws {
        try await App.test { client in
            _ = try await App.passwordUser(client, email: "alice@example.com")
            let (_, anonymous) = try await App.post(client, "/v1/accounts:signUp?key=demo-api-key", ["returnSecureToken": true])
            let (status, json) = try await Self.fakeClaims(
                client, "google.com", ["sub": "123", "email": "alice@example.com"], idToken: anonymous["idToken"] as? String,
                returnIdpCredential: false)
            #expect(status == 400 && App.errorMessage(json).hasPrefix("EMAIL_EXISTS"), "\(json)")
        }
    }

    @Test("should allow linking IDP account with same email to same user")
    func linkSameEmail() async throws {
        try await App.test { client in
            let (localID, idToken, _) = try await App.passwordUser(client, email: "alice@example.com")
            let (status, json) = try await Self.fakeClaims(
                client, "google.com", ["sub": "123", "email": "alice@example.com", "email_verified": true], idToken: idToken)
            #expect(status == 200 && json["localId"] as? String == localID, "\(json)")
            #expect(try await Self.lookup(client, json["idToken"] as? String ?? "")["emailVerified"] as? Bool == true)
        }
    }

    @Test("should allow linking IDP account with same email if allowDuplicateEmail")
    func linkSameEmailDuplicatesAllowed() async throws {
        try await App.test(environment: ["ACTIONLINKS_USERS_ONE_ACCOUNT_PER_EMAIL": "false"]) { client in
            _ = try await App.passwordUser(client, email: "alice@example.com")
            let (_, anonymous) = try await App.post(client, "/v1/accounts:signUp?key=demo-api-key", ["returnSecureToken": true])
            let (status, json) = try await Self.fakeClaims(
                client, "google.com", ["sub": "123", "email": "alice@example.com"], idToken: anonymous["idToken"] as? String)
            #expect(status == 200 && json["localId"] as? String == anonymous["localId"] as? String, "\(json)")
        }
    }

    @Test("should error if auth is disabled")
    func authDisabled() async throws {
        try await App.test { client in
            let (_, tenant) = try await App.post(
                client, "/v2/projects/demo-actionlinks/tenants", ["displayName": "off", "disableAuth": true], headers: App.admin)
            let tenantID = try #require((tenant["name"] as? String)?.split(separator: "/").last.map(String.init), "\(tenant)")
            let (status, json) = try await Self.fakeClaims(client, "google.com", ["sub": "123"], tenantID: tenantID)
            #expect(status == 400 && App.errorMessage(json).contains("PROJECT_DISABLED"), "\(json)")
        }
    }

    @Test("should create a new account with tenantId")
    func tenant() async throws {
        try await App.test { client in
            let (status, json) = try await Self.fakeClaims(client, "google.com", ["sub": "123"], tenantID: "team-a")
            #expect(status == 200 && json["tenantId"] as? String == "team-a", "\(json)")
            let payload = try Self.payload(try #require(json["idToken"] as? String))
            #expect((payload["firebase"] as? [String: Any])?["tenant"] as? String == "team-a")
        }
    }

    @Test("a configured provider never takes an unsigned token, even on a development server")
    func configuredProviderVerifies() async throws {
        try await App.test { client in
            let (status, json) = try await App.signInWithIdp(
                client, ["requestUri": "http://localhost", "postBody": "providerId=oidc.mock&id_token=\(Self.fakeGoogleIDToken)"])
            #expect(status == 400 && App.errorMessage(json).hasPrefix("INVALID_IDP_RESPONSE"), "\(json)")
        }
    }

    @Test("in production, a provider that is not configured is OPERATION_NOT_ALLOWED: no token is taken on its word")
    func productionRefusesUnconfigured() async throws {
        let production = ["ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": String(repeating: "t", count: 40)]
        try await TestApp.router(environment: production) { app in
            let client = app
            let (status, json) = try await App.signInWithIdp(
                client, ["requestUri": "http://localhost", "postBody": "providerId=google.com&id_token=\(Self.fakeGoogleIDToken)"])
            #expect(status == 400 && App.errorMessage(json).hasPrefix("OPERATION_NOT_ALLOWED"), "\(json)")
        }
    }
}
