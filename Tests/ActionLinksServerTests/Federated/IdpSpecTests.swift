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

/// Firebase's Auth emulator spec for `accounts:signInWithIdp` (firebase-tools
/// `src/emulator/auth/idp.spec.ts`, "sign-in with credential"), case by case under the spec's
/// names, on a development server with providers that are not configured (whose unsigned ID
/// tokens a development server takes on their word, as the emulator does).
///
/// Where this server answers differently, on purpose, the case says so: trust is the provider's
/// own mail domain (google.com for gmail.com), not any `email_verified`; a `needConfirmation`
/// answer does not name the other account's `localId`; a verified account keeps its profile.
/// The SAML cases are in IdpSpecTests+SAML.swift. Not ported: multi-factor and blocking-function
/// cases (neither exists here).
@Suite("accounts:signInWithIdp (idp.spec.ts)", .timeLimit(.minutes(5)))
struct IdpSpecTests {
    typealias App = FederatedApp

    /// `FAKE_GOOGLE_ACCOUNT.idToken` of the spec's helpers: unsigned, example@gmail.com, verified.
    static let fakeGoogleIDToken =
        "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJpc3MiOiJhY2NvdW50cy5nb29nbGUuY29tIiwiYXpwIjoiMjI4NzQ2ODI4NDQtYjBzOHM3NWIzaWVkYjJtZDRobHMydm9xNnNsbGJzbTMuYXBwcy5nb29nbGV1c2VyY29udGVudC5jb20iLCJhdWQiOiIyMjg3NDY4Mjg0NC1iMHM4czc1YjNpZWRiMm1kNGhsczJ2b3E2c2xsYnNtMy5hcHBzLmdvb2dsZXVzZXJjb250ZW50LmNvbSIsInN1YiI6IjEyMzQ1Njc4OTAxMjM0NTY3ODkwMSIsImVtYWlsIjoiZXhhbXBsZUBnbWFpbC5jb20iLCJlbWFpbF92ZXJpZmllZCI6dHJ1ZSwiYXRfaGFzaCI6IjAwMDAwMDAwMDAwMDAwMDAwMDAwMDAiLCJpYXQiOjE1OTc4ODI2ODEsImV4cCI6MTU5Nzg4NjI4MX0."

    /// `REAL_GOOGLE_ACCOUNT.idToken` of the spec's helpers: a real Google token, long expired, its
    /// signature zeroed (oberynbaelish.331826@gmail.com, verified).
    static let realGoogleIDToken =
        "eyJhbGciOiJSUzI1NiIsImtpZCI6IjZiYzYzZTlmMThkNTYxYjM0ZjU2NjhmODhhZTI3ZDQ4ODc2ZDgwNzMiLCJ0eXAiOiJKV1QifQ.eyJpc3MiOiJhY2NvdW50cy5nb29nbGUuY29tIiwiYXpwIjoiMjI4NzQ2ODI4NDQtYjBzOHM3NWIzaWVkYjJtZDRobHMydm9xNnNsbGJzbTMuYXBwcy5nb29nbGV1c2VyY29udGVudC5jb20iLCJhdWQiOiIyMjg3NDY4Mjg0NC1iMHM4czc1YjNpZWRiMm1kNGhsczJ2b3E2c2xsYnNtMy5hcHBzLmdvb2dsZXVzZXJjb250ZW50LmNvbSIsInN1YiI6IjExNTExMzIzNjU2NjY4MzM5ODMwMSIsImVtYWlsIjoib2JlcnluYmFlbGlzaC4zMzE4MjZAZ21haWwuY29tIiwiZW1haWxfdmVyaWZpZWQiOnRydWUsImF0X2hhc2giOiJXNTlTOEs4Y3g0Y3hYYmh0YmFXYndBIiwiaWF0IjoxNTk3ODgyNjgxLCJleHAiOjE1OTc4ODYyODF9."
        + String(repeating: "0", count: 342)

    /// The `rawUserInfo` of an answer, as an object.
    static func rawUserInfo(_ json: [String: Any]) throws -> [String: Any] {
        let raw = try #require(json["rawUserInfo"] as? String, "\(json)")
        return try #require(try JSONSerialization.jsonObject(with: Data(raw.utf8)) as? [String: Any])
    }

    /// The spec's checks of a Google sign-in from a token with an address and no name or photo.
    static func expectGoogleSignUp(_ status: Int, _ json: [String: Any], rawID: String, email: String, idToken: String)
        throws
    {
        #expect(status == 200, "\(json)")
        #expect(json["isNewUser"] as? Bool == true && json["email"] as? String == email)
        #expect(json["emailVerified"] as? Bool == true && json["federatedId"] as? String == "https://accounts.google.com/" + rawID)
        #expect(json["oauthIdToken"] as? String == idToken && json["providerId"] as? String == "google.com")
        #expect(json["refreshToken"] is String && json["displayName"] == nil && json["photoUrl"] == nil)
        let raw = try rawUserInfo(json)
        #expect(raw["id"] as? String == rawID && raw["email"] as? String == email, "\(raw)")
        #expect(raw["verified_email"] as? Bool == true && raw["locale"] as? String == "en")
        #expect(raw["name"] == nil && raw["given_name"] == nil && raw["family_name"] == nil && raw["picture"] == nil)
        #expect(
            Set((raw["granted_scopes"] as? String ?? "").split(separator: " ").map(String.init)) == [
                "openid", "https://www.googleapis.com/auth/userinfo.profile", "https://www.googleapis.com/auth/userinfo.email",
            ])
        let payload = try payload(try #require(json["idToken"] as? String))
        let firebase = payload["firebase"] as? [String: Any]
        #expect(payload["provider_id"] == nil && firebase?["sign_in_provider"] as? String == "google.com")
        let identities = firebase?["identities"] as? [String: [String]]
        #expect(identities == ["google.com": [rawID], "email": [email]], "\(payload)")
    }

    /// The spec's `signInWithFakeClaims`: the claims as JSON in `postBody`.
    static func fakeClaims(
        _ client: any HTTPTarget, _ providerID: String, _ claims: [String: Any], idToken: String? = nil, tenantID: String? = nil,
        returnIdpCredential: Bool = true
    ) async throws -> (status: Int, json: [String: Any]) {
        let token = String(decoding: try JSONSerialization.data(withJSONObject: claims), as: UTF8.self)
        var body: [String: Any] = [
            "postBody": "providerId=\(PercentEncoding.encodeComponent(providerID))&id_token=\(PercentEncoding.encodeComponent(token))",
            "requestUri": "http://localhost", "returnIdpCredential": returnIdpCredential, "returnSecureToken": true,
        ]
        if let idToken { body["idToken"] = idToken }
        if let tenantID { body["tenantId"] = tenantID }
        return try await App.signInWithIdp(client, body)
    }

    /// The payload of one of this server's ID tokens.
    static func payload(_ idToken: String) throws -> [String: Any] {
        let part = try #require(idToken.split(separator: ".").dropFirst().first)
        let data = try #require(Base64URL.decode(part))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func lookup(_ client: any HTTPTarget, _ idToken: String) async throws -> [String: Any] {
        let (_, json) = try await App.post(client, "/v1/accounts:lookup?key=demo-api-key", ["idToken": idToken])
        return (json["users"] as? [[String: Any]])?.first ?? [:]
    }

    static func signInMethods(_ client: any HTTPTarget, _ email: String) async throws -> Set<String> {
        let (_, json) = try await App.post(
            client, "/v1/accounts:createAuthUri?key=demo-api-key", ["identifier": email, "continueUri": "https://app.example.com/"])
        return Set(json["signinMethods"] as? [String] ?? [])
    }

    @Test("should create new account with IDP from unsigned ID token")
    func unsignedIDToken() async throws {
        try await App.test { client in
            let (status, json) = try await App.signInWithIdp(
                client,
                [
                    "postBody": "providerId=google.com&id_token=\(Self.fakeGoogleIDToken)", "requestUri": "http://localhost",
                    "returnIdpCredential": true, "returnSecureToken": true,
                ])
            try Self.expectGoogleSignUp(
                status, json, rawID: "123456789012345678901", email: "example@gmail.com", idToken: Self.fakeGoogleIDToken)
        }
    }

    @Test("should create new account with IDP from production ID token")
    func productionIDToken() async throws {
        try await App.test { client in
            let (status, json) = try await App.signInWithIdp(
                client,
                [
                    "postBody": "providerId=google.com&id_token=\(Self.realGoogleIDToken)", "requestUri": "http://localhost",
                    "returnIdpCredential": true, "returnSecureToken": true,
                ])
            try Self.expectGoogleSignUp(
                status, json, rawID: "115113236566683398301", email: "oberynbaelish.331826@gmail.com", idToken: Self.realGoogleIDToken)
        }
    }

    @Test("should create new account with IDP from unencoded JSON claims")
    func jsonClaims() async throws {
        try await App.test { client in
            let claims: [String: Any] = [
                "sub": "123456789012345678901", "name": "Ada Lovelace", "given_name": "Ada", "family_name": "Lovelace",
                "picture": "http://localhost/fake-picture-url.png",
            ]
            let (status, json) = try await Self.fakeClaims(client, "google.com", claims)
            #expect(status == 200 && json["isNewUser"] as? Bool == true, "\(json)")
            #expect(json["displayName"] as? String == "Ada Lovelace" && json["fullName"] as? String == "Ada Lovelace")
            #expect(json["firstName"] as? String == "Ada" && json["lastName"] as? String == "Lovelace")
            #expect(json["photoUrl"] as? String == "http://localhost/fake-picture-url.png")
            #expect(json["federatedId"] as? String == "https://accounts.google.com/123456789012345678901")
            let raw = try Self.rawUserInfo(json)
            #expect(raw["id"] as? String == "123456789012345678901" && raw["name"] as? String == "Ada Lovelace", "\(raw)")
            #expect(raw["given_name"] as? String == "Ada" && raw["family_name"] as? String == "Lovelace")
            #expect(raw["picture"] as? String == "http://localhost/fake-picture-url.png")
            #expect(!(raw["granted_scopes"] as? String ?? "").contains("https://www.googleapis.com/auth/userinfo.email"))
            let payload = try Self.payload(try #require(json["idToken"] as? String))
            let firebase = payload["firebase"] as? [String: Any]
            #expect(firebase?["sign_in_provider"] as? String == "google.com" && payload["provider_id"] == nil)
            #expect((firebase?["identities"] as? [String: [String]])?["google.com"] == ["123456789012345678901"])
        }
    }

    @Test("should accept params (e.g. providerId, id_token) in requestUri")
    func paramsInRequestURI() async throws {
        try await App.test { client in
            let token = PercentEncoding.encodeComponent(#"{"sub":"123456789012345678901"}"#)
            let (status, json) = try await App.signInWithIdp(
                client, ["requestUri": "http://localhost?providerId=google.com&id_token=\(token)", "returnIdpCredential": true])
            #expect(status == 200 && json["providerId"] as? String == "google.com", "\(json)")
        }
    }

    @Test("should copy attributes to user on IDP sign-up")
    func copiesAttributes() async throws {
        try await App.test { client in
            let claims: [String: Any] = [
                "sub": "123456789012345678901", "screen_name": "turingcomplete", "name": "Alan Turing",
                "picture": "http://localhost/turing.png",
            ]
            let (_, json) = try await Self.fakeClaims(client, "google.com", claims)
            #expect(json["screenName"] as? String == "turingcomplete", "\(json)")
            let user = try await Self.lookup(client, json["idToken"] as? String ?? "")
            #expect(
                user["displayName"] as? String == "Alan Turing" && user["photoUrl"] as? String == "http://localhost/turing.png", "\(user)")
            #expect(user["screenName"] as? String == "turingcomplete", "\(user)")
        }
    }

    @Test(
        "should allow duplicate emails if set in project config; should sign-up new users without copying email when allowing duplicate emails; should allow multiple providers with same email when allowing duplicate emails"
    )
    func duplicateEmails() async throws {
        try await App.test(environment: ["ACTIONLINKS_USERS_ONE_ACCOUNT_PER_EMAIL": "false"]) { client in
            let (localID, _, _) = try await App.passwordUser(client, email: "alice@example.com")
            let (_, google) = try await Self.fakeClaims(client, "google.com", ["sub": "123", "email": "alice@example.com"])
            let (_, facebook) = try await Self.fakeClaims(client, "facebook.com", ["sub": "123", "email": "alice@example.com"])
            let ids = [localID, google["localId"] as? String ?? "", facebook["localId"] as? String ?? ""]
            #expect(Set(ids).count == 3, "\(google) \(facebook)")
            #expect(try await Self.lookup(client, google["idToken"] as? String ?? "")["email"] == nil)
        }
    }

    @Test("should sign in existing account if (providerId, sub) is the same")
    func sameProviderAndSub() async throws {
        try await App.test { client in
            let (_, first) = try await Self.fakeClaims(client, "google.com", ["sub": "123"])
            let (_, again) = try await Self.fakeClaims(client, "google.com", ["sub": "123"])
            let (_, otherSub) = try await Self.fakeClaims(client, "google.com", ["sub": "456"])
            let (_, otherProvider) = try await Self.fakeClaims(client, "facebook.com", ["sub": "123"])
            let id = first["localId"] as? String
            #expect(again["localId"] as? String == id && again["isNewUser"] == nil)
            #expect(otherSub["localId"] as? String != id && otherProvider["localId"] as? String != id)
        }
    }

    @Test("should error if user is disabled")
    func disabledUser() async throws {
        try await App.test { client in
            let (_, first) = try await Self.fakeClaims(client, "google.com", ["sub": "123"])
            _ = try await App.post(
                client, "/v1/projects/demo-actionlinks/accounts:update",
                ["localId": first["localId"] as? String ?? "", "disableUser": true],
                headers: App.admin)
            let (status, json) = try await Self.fakeClaims(client, "google.com", ["sub": "123"])
            #expect(status == 400 && App.errorMessage(json).hasPrefix("USER_DISABLED"), "\(json)")
        }
    }

    @Test("should add IDP as a sign-in method for email if available")
    func signInMethod() async throws {
        try await App.test { client in
            _ = try await Self.fakeClaims(client, "google.com", ["sub": "123", "email": "alice@example.com"])
            #expect(try await Self.signInMethods(client, "alice@example.com") == ["google.com"])
        }
    }

    @Test(
        "should unlink password and overwite profile attributes if user had unverified email (a gmail.com address: google.com vouches only for its own domain)"
    )
    func unlinksPassword() async throws {
        try await App.test { client in
            let (_, created) = try await App.post(
                client, "/v1/accounts:signUp?key=demo-api-key",
                ["email": "foo@gmail.com", "password": "notasecret", "displayName": "Foo", "returnSecureToken": true])
            let (status, json) = try await Self.fakeClaims(
                client, "google.com",
                ["sub": "123456789012345678901", "email": "foo@gmail.com", "email_verified": true, "picture": "http://localhost/idp.png"])
            #expect(status == 200 && json["localId"] as? String == created["localId"] as? String, "\(json)")
            #expect(try await Self.signInMethods(client, "foo@gmail.com") == ["google.com"])
            let user = try await Self.lookup(client, json["idToken"] as? String ?? "")
            #expect(user["emailVerified"] as? Bool == true && user["photoUrl"] as? String == "http://localhost/idp.png")
            #expect(user["displayName"] == nil)
        }
    }

    @Test("should not unlink password if email was already verified (and, here, the account keeps its own profile)")
    func keepsVerifiedPassword() async throws {
        try await App.test { client in
            _ = try await App.post(
                client, "/v1/projects/demo-actionlinks/accounts",
                ["email": "foo@gmail.com", "password": "notasecret", "displayName": "Foo", "emailVerified": true], headers: App.admin)
            let (status, json) = try await Self.fakeClaims(
                client, "google.com",
                ["sub": "123456789012345678901", "email": "foo@gmail.com", "email_verified": true, "picture": "http://localhost/idp.png"])
            #expect(status == 200, "\(json)")
            #expect(try await Self.signInMethods(client, "foo@gmail.com") == ["google.com", "password"])
            let user = try await Self.lookup(client, json["idToken"] as? String ?? "")
            #expect(user["displayName"] as? String == "Foo" && user["photoUrl"] as? String == "http://localhost/idp.png")
        }
    }

    @Test("should return needConfirmation if both account and IDP has unverified email (without the other account's localId)")
    func needConfirmation() async throws {
        try await App.test { client in
            let (localID, _, _) = try await App.passwordUser(client, email: "foo@example.com")
            let (status, json) = try await Self.fakeClaims(client, "facebook.com", ["sub": "123", "email": "foo@example.com"])
            #expect(status == 200 && json["needConfirmation"] as? Bool == true && json["idToken"] == nil, "\(json)")
            #expect(json["localId"] == nil && json["verifiedProvider"] as? [String] == [] && json["pendingToken"] is String)
            #expect(try await Self.signInMethods(client, "foo@example.com") == ["password"])
            _ = localID
        }
    }

    @Test("should error when requestUri is missing or invalid")
    func requestURI() async throws {
        try await App.test { client in
            let (missing, missingJSON) = try await App.signInWithIdp(client, ["postBody": "providerId=google.com"])
            #expect(missing == 400 && App.errorMessage(missingJSON).hasPrefix("MISSING_REQUEST_URI"))
            let (invalid, invalidJSON) = try await App.signInWithIdp(
                client, ["requestUri": "not-a-uri", "postBody": "providerId=google.com"])
            #expect(invalid == 400 && App.errorMessage(invalidJSON).hasPrefix("INVALID_REQUEST_URI"), "\(invalidJSON)")
        }
    }

    @Test("should error when missing providerId is missing")
    func missingProviderID() async throws {
        try await App.test { client in
            let (status, json) = try await App.signInWithIdp(client, ["requestUri": "http://localhost", "postBody": "id_token=x"])
            #expect(
                status == 400
                    && App.errorMessage(json).contains("INVALID_CREDENTIAL_OR_PROVIDER_ID : Invalid IdP response/credential:"))
        }
    }

    @Test("should error when sub is missing or not a string")
    func badSub() async throws {
        try await App.test { client in
            let (missing, missingJSON) = try await Self.fakeClaims(client, "google.com", ["email": "a@b.example"])
            #expect(missing == 400 && App.errorMessage(missingJSON).contains("INVALID_IDP_RESPONSE"))
            let (number, numberJSON) = try await Self.fakeClaims(client, "google.com", ["sub": 123])
            #expect(number == 400 && App.errorMessage(numberJSON).contains("INVALID_IDP_RESPONSE"))
        }
    }

    @Test("returnRefreshToken and pendingIdToken are refused as not implemented, before the assertion is read")
    func notImplemented() async throws {
        try await App.test { client in
            let assertion: [String: Any] = ["requestUri": "http://localhost", "postBody": "providerId=google.com"]
            for extra: [String: Any] in [["returnRefreshToken": true], ["pendingIdToken": "x"]] {
                let (status, json) = try await App.signInWithIdp(client, assertion.merging(extra) { $1 })
                #expect(status == 501 && App.errorMessage(json).hasPrefix("NOT_IMPLEMENTED"), "\(json)")
            }
        }
    }
}
