import ActionLinks
import ActionLinksTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// idp.spec.ts's SAML cases, on a development server with `saml.saml` not configured: the emulator's
/// way (an unsigned `id_token` for the subject, the `SAMLResponse` as JSON taken on its word).
extension IdpSpecTests {
    /// The spec's `postBody`: `providerId=saml.saml&id_token=<FAKE_GOOGLE_ACCOUNT.idToken>` and, when
    /// given, `&SAMLResponse=<JSON.stringify(samlResponse)>` (not encoded, as the spec writes it).
    static func samlSignIn(_ client: any HTTPTarget, samlResponse: [String: Any]?) async throws -> (
        status: Int, json: [String: Any]
    ) {
        var postBody = "providerId=saml.saml&id_token=\(fakeGoogleIDToken)"
        if let samlResponse {
            postBody += "&SAMLResponse=" + String(decoding: try JSONSerialization.data(withJSONObject: samlResponse), as: UTF8.self)
        }
        return try await App.signInWithIdp(
            client, ["postBody": postBody, "requestUri": "http://localhost", "returnIdpCredential": true, "returnSecureToken": true])
    }

    @Test("should error if SAMLResponse is missing assertion")
    func samlMissingAssertion() async throws {
        try await App.test { client in
            let (status, json) = try await Self.samlSignIn(client, samlResponse: [:])
            #expect(status == 400 && App.errorMessage(json).contains("INVALID_IDP_RESPONSE"), "\(json)")
        }
    }

    @Test("should error if SAMLResponse is missing assertion.subject")
    func samlMissingSubject() async throws {
        try await App.test { client in
            let (status, json) = try await Self.samlSignIn(client, samlResponse: ["assertion": [:]])
            #expect(status == 400 && App.errorMessage(json).contains("INVALID_IDP_RESPONSE"), "\(json)")
        }
    }

    @Test("should error if SAMLResponse is missing assertion.subject.nameId")
    func samlMissingNameID() async throws {
        try await App.test { client in
            let (status, json) = try await Self.samlSignIn(client, samlResponse: ["assertion": ["subject": [:]]])
            #expect(status == 400 && App.errorMessage(json).contains("INVALID_IDP_RESPONSE"), "\(json)")
        }
    }

    @Test("should create an account for generic SAML providers")
    func samlCreatesAccount() async throws {
        try await App.test { client in
            let (status, json) = try await Self.samlSignIn(client, samlResponse: nil)
            #expect(status == 200, "\(json)")
            #expect(json["isNewUser"] as? Bool == true && json["email"] as? String == "example@gmail.com")
            #expect(json["emailVerified"] as? Bool == true && json["federatedId"] as? String == "123456789012345678901")
            #expect(json["oauthIdToken"] as? String == Self.fakeGoogleIDToken && json["providerId"] as? String == "saml.saml")
            #expect(json["refreshToken"] is String)
            // The ID Token used above does NOT contain name or photo, so the account created won't have those attributes either.
            #expect(json["displayName"] == nil && json["photoUrl"] == nil)
            let payload = try Self.payload(try #require(json["idToken"] as? String))
            #expect(payload["provider_id"] == nil)
            let firebase = payload["firebase"] as? [String: Any]
            #expect(
                firebase?["identities"] as? [String: [String]] == ["saml.saml": ["123456789012345678901"], "email": ["example@gmail.com"]])
            #expect(firebase?["sign_in_provider"] as? String == "saml.saml")
        }
    }

    @Test("should include fields in SAMLResponse for SAML providers")
    func samlFields() async throws {
        try await App.test { client in
            let otherEmail = "otherEmail@gmail.com"
            let attributeStatements = ["name": "Jane Doe", "mail": "otherOtherEmail@gmail.com"]
            let (status, json) = try await Self.samlSignIn(
                client, samlResponse: ["assertion": ["subject": ["nameId": otherEmail], "attributeStatements": attributeStatements]])
            #expect(status == 200, "\(json)")
            #expect(json["email"] as? String == otherEmail)
            let rawUserInfo = try JSONSerialization.jsonObject(with: Data((json["rawUserInfo"] as? String ?? "").utf8)) as? [String: String]
            #expect(rawUserInfo == attributeStatements)
            let payload = try Self.payload(try #require(json["idToken"] as? String))
            #expect((payload["firebase"] as? [String: Any])?["sign_in_attributes"] as? [String: String] == attributeStatements)
        }
    }
}
