import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

extension FirebaseSpecs.SetAccountInfoSpecTests {
    @Test("should update phoneNumber if specified")
    func phoneNumber() async throws {
        try await TestApp.router { app in
            let user = try await app.phoneUser()
            try await app.updateAccount(localId: user.localId, ["phoneNumber": "+15555550123"])
            #expect(try await app.accountInfo(idToken: user.idToken)["phoneNumber"] as? String == "+15555550123")
        }
    }

    @Test("should noop when setting phoneNumber to the same as before")
    func samePhoneNumber() async throws {
        try await TestApp.router { app in
            let user = try await app.phoneUser()
            try await app.updateAccount(localId: user.localId, ["phoneNumber": Spec.phoneNumber])
            #expect(try await app.accountInfo(idToken: user.idToken)["phoneNumber"] as? String == Spec.phoneNumber)
        }
    }

    @Test("should disallow setting phone to same as an existing user")
    func phoneTaken() async throws {
        try await TestApp.router { app in
            _ = try await app.phoneUser()
            let user = try await app.registerAnonUser()
            let reply = try await app.api("update", ["localId": user.localId, "phoneNumber": Spec.phoneNumber], admin: true)
            #expect(reply.isError("PHONE_NUMBER_EXISTS"), "\(reply.text)")
        }
    }

    @Test("should error if phoneNumber is invalid")
    func invalidPhoneNumber() async throws {
        try await TestApp.router { app in
            let user = try await app.registerAnonUser()
            let reply = try await app.api("update", ["localId": user.localId, "phoneNumber": "555-555-0100"], admin: true)
            #expect(reply.status == 400 && reply.errorMessage == "INVALID_PHONE_NUMBER : Invalid format.", "\(reply.text)")
        }
    }

    @Test("should error if user is disabled when updating by idToken")
    func disabledByIDToken() async throws {
        try await TestApp.router { app in
            let user = try await app.registerAnonUser()
            try await app.updateAccount(localId: user.localId, ["disableUser": true])
            #expect(try await app.api("update", ["idToken": user.idToken, "displayName": "Foo"]).isError("USER_DISABLED"))
        }
    }

    @Test("should still update user despite user is disabled when authenticated")
    func disabledByAdmin() async throws {
        try await TestApp.router { app in
            let user = try await app.registerAnonUser()
            try await app.updateAccount(localId: user.localId, ["disableUser": true])
            try await app.updateAccount(localId: user.localId, ["displayName": "Foo"])
            try await app.updateAccount(localId: user.localId, ["disableUser": false])
        }
    }

    @Test("should invalidate old tokens after updating validSince or password")
    func revocation() async throws {
        let clock = ManualClock()
        try await TestApp.router(clock: clock) { app in
            let user = try await app.registerUser(email: "alice@example.com")
            clock.advance(seconds: 2)
            let second = try await app.api("update", ["idToken": user.idToken, "password": "notasecreteither"])
            let idToken2 = try #require(second.json["idToken"] as? String, "\(second.text)")
            #expect(try await app.lookupError(idToken: user.idToken) == "TOKEN_EXPIRED")
            #expect(try await app.lookupError(idToken: idToken2) == nil)
            clock.advance(seconds: 2)
            let third = try await app.api("update", ["idToken": idToken2, "validSince": "0"])
            let idToken3 = try #require(third.json["idToken"] as? String, "\(third.text)")
            #expect(try await app.lookupError(idToken: user.idToken) == "TOKEN_EXPIRED")
            #expect(try await app.lookupError(idToken: idToken2) == "TOKEN_EXPIRED")
            #expect(try await app.lookupError(idToken: idToken3) == nil)
        }
    }

    @Test("should delete password provider from user")
    func deletePasswordProvider() async throws {
        try await TestApp.router { app in
            let user = try await app.registerUser(email: "alice@example.com")
            let reply = try await app.api("update", ["idToken": user.idToken, "deleteProvider": ["password"]])
            let providers = (reply.json["providerUserInfo"] as? [[String: Any]] ?? []).compactMap { $0["providerId"] as? String }
            #expect(reply.status == 200 && !providers.contains("password"), "\(reply.text)")
            let methods = try await app.signInMethods("alice@example.com")
            #expect(!methods.contains("password") && !methods.contains("emailLink"))
        }
    }

    @Test("should delete phone provider from user")
    func deletePhoneProvider() async throws {
        try await TestApp.router { app in
            let user = try await app.phoneUser()
            let reply = try await app.api("update", ["idToken": user.idToken, "deleteProvider": ["phone"]])
            let providers = (reply.json["providerUserInfo"] as? [[String: Any]] ?? []).compactMap { $0["providerId"] as? String }
            #expect(reply.status == 200 && !providers.contains("phone"), "\(reply.text)")
        }
    }

    @Test("should delete google.com provider from user")
    func deleteGoogleProvider() async throws {
        try await TestApp.router { app in
            let user = try await app.signInWithFakeClaims("google.com", ["sub": "12345", "email": "bob@example.com"])
            let reply = try await app.api("update", ["idToken": user.idToken, "deleteProvider": ["google.com"]])
            let providers = (reply.json["providerUserInfo"] as? [[String: Any]] ?? []).compactMap { $0["providerId"] as? String }
            #expect(reply.status == 200 && !providers.contains("google.com"), "\(reply.text)")
            let methods = try await app.signInMethods("bob@example.com")
            #expect(!methods.contains("google.com") && !methods.contains("emailLink"))
        }
    }

    @Test("should update user by localId when authenticated")
    func adminUpdate() async throws {
        try await TestApp.router { app in
            let user = try await app.registerUser(email: "foo@example.com")
            let reply = try await app.api(
                "update",
                [
                    "localId": user.localId, "phoneNumber": Spec.phoneNumber, "displayName": "Alice",
                    "photoUrl": "http://localhost/alice.png", "emailVerified": true,
                ], admin: true)
            #expect(reply.status == 200 && reply.json["displayName"] as? String == "Alice", "\(reply.text)")
            #expect(reply.json["photoUrl"] as? String == "http://localhost/alice.png" && reply.json["emailVerified"] as? Bool == true)
        }
    }

    @Test("should error if authenticated request does not specify localId")
    func adminWithoutLocalID() async throws {
        try await TestApp.router { app async throws in
            #expect(try await app.api("update", ["emailVerified": true], admin: true).isError("MISSING_LOCAL_ID"))
        }
    }

    @Test("should update customAttributes and add them to ID Tokens")
    func customAttributes() async throws {
        try await TestApp.router { app in
            let user = try await app.registerUser(email: "foo@example.com")
            try await app.updateAccount(localId: user.localId, ["customAttributes": #"{"foo":"bar","baz":{"answer":42}}"#])
            let signedIn = try await app.signInWithEmailLink("foo@example.com")
            let payload = Spec.payload(signedIn.idToken)
            #expect(payload["foo"] as? String == "bar" && (payload["baz"] as? [String: Any])?["answer"] as? Int == 42, "\(payload)")
        }
    }

    @Test("should error if customAttributes are invalid")
    func invalidCustomAttributes() async throws {
        try await TestApp.router { app in
            let user = try await app.registerUser(email: "foo@example.com")
            let cases: [(String, String)] = [
                ("{definitely[not]json}", "INVALID_CLAIMS"), ("42", "INVALID_CLAIMS"), (#"["a", "b"]"#, "INVALID_CLAIMS"),
                (#"{"sub": "12345"}"#, "FORBIDDEN_CLAIM : sub"),
                (#"{"a":"\#(String(repeating: "x", count: 998))"}"#, "CLAIMS_TOO_LARGE"),
            ]
            for (claims, message) in cases {
                let reply = try await app.api("update", ["localId": user.localId, "customAttributes": claims], admin: true)
                #expect(reply.status == 400 && reply.errorMessage == message, "\(claims.prefix(20)): \(reply.text)")
            }
            // Exactly 1000 characters is allowed.
            let largest = #"{"a":"\#(String(repeating: "x", count: 992))"}"#
            #expect(largest.count == 1000)
            try await app.updateAccount(localId: user.localId, ["customAttributes": largest])
        }
    }
}
