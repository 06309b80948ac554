import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

extension FirebaseSpecs.OobSpecTests {
    @Test("should generate OOB code for verify and change email")
    func verifyAndChangeEmail() async throws {
        try await TestApp.router { app in
            let user = try await app.registerUser(email: "alice@example.com")
            let sent = try await app.api(
                "sendOobCode",
                [
                    "email": "alice@example.com", "newEmail": "bob@example.com", "idToken": user.idToken,
                    "requestType": "VERIFY_AND_CHANGE_EMAIL",
                ])
            #expect(sent.status == 200 && sent.json["kind"] as? String == "identitytoolkit#GetOobConfirmationCodeResponse")
            #expect(sent.json["email"] as? String == "alice@example.com" && sent.json["oobCode"] == nil && sent.json["oobLink"] == nil)
            let oobs = try await app.inspectOobs()
            #expect(oobs.count == 1 && oobs.first?["email"] as? String == "alice@example.com")
            #expect(oobs.first?["requestType"] as? String == "VERIFY_AND_CHANGE_EMAIL")
            #expect(oobs.first?["newEmail"] as? String == "bob@example.com")
            let applied = try await app.api("update", ["oobCode": oobs.first?["oobCode"] as? String ?? ""])
            #expect(applied.status == 200 && applied.json["localId"] as? String == user.localId, "\(applied.text)")
            #expect(applied.json["email"] as? String == "bob@example.com" && applied.json["emailVerified"] as? Bool == true)
            // The change code is used up; what is left is the recoverEmail code for the old address
            // (Firebase production mails one after an email change; the emulator leaves none).
            let left = try await app.inspectOobs()
            #expect(left.count == 1 && left.first?["requestType"] as? String == "RECOVER_EMAIL")
            #expect(left.first?["email"] as? String == "alice@example.com")
        }
    }

    @Test("should error when trying to verify and change email without idToken or email or newEmail")
    func changeWithoutFields() async throws {
        try await TestApp.router { app in
            _ = try await app.registerUser(email: "alice@example.com")
            let noToken = try await app.api("sendOobCode", ["newEmail": "bob@example.com", "requestType": "VERIFY_AND_CHANGE_EMAIL"])
            #expect(noToken.isError("MISSING_ID_TOKEN"), "\(noToken.text)")
            let noNew = try await app.api("sendOobCode", ["email": "alice@example.com", "requestType": "VERIFY_AND_CHANGE_EMAIL"])
            #expect(noNew.isError("MISSING_NEW_EMAIL"), "\(noNew.text)")
            let adminNoEmail = try await app.api(
                "sendOobCode", ["newEmail": "bob@example.com", "returnOobLink": true, "requestType": "VERIFY_AND_CHANGE_EMAIL"],
                admin: true)
            #expect(adminNoEmail.isError("MISSING_EMAIL"), "\(adminNoEmail.text)")
            let adminNoNew = try await app.api(
                "sendOobCode", ["email": "alice@example.com", "returnOobLink": true, "requestType": "VERIFY_AND_CHANGE_EMAIL"],
                admin: true)
            #expect(adminNoNew.isError("MISSING_NEW_EMAIL"), "\(adminNoNew.text)")
            #expect(try await app.inspectOobs().isEmpty)
        }
    }

    @Test("should error when trying to verify and change email without idToken if not returnOobLink")
    func changeWithoutIDToken() async throws {
        try await TestApp.router { app in
            _ = try await app.registerUser(email: "alice@example.com")
            let reply = try await app.api(
                "sendOobCode", ["email": "alice@example.com", "newEmail": "bob@example.com", "requestType": "VERIFY_AND_CHANGE_EMAIL"])
            #expect(reply.isError("MISSING_ID_TOKEN"), "\(reply.text)")
            #expect(try await app.inspectOobs().isEmpty)
        }
    }

    @Test("should error when trying to verify and change email not associated with any user")
    func changeUnknownUser() async throws {
        try await TestApp.router { app in
            let reply = try await app.api(
                "sendOobCode",
                [
                    "email": "nosuchuser@example.com", "newEmail": "bob@example.com", "returnOobLink": true,
                    "requestType": "VERIFY_AND_CHANGE_EMAIL",
                ], admin: true)
            #expect(reply.isError("USER_NOT_FOUND"), "\(reply.text)")
            #expect(try await app.inspectOobs().isEmpty)
        }
    }

    @Test("should error if newEmail is already associated to another user")
    func changeToTakenEmail() async throws {
        try await TestApp.router { app in
            let user = try await app.registerUser(email: "alice@example.com")
            _ = try await app.registerUser(email: "bob@example.com")
            let client = try await app.api(
                "sendOobCode",
                [
                    "idToken": user.idToken, "email": "alice@example.com", "newEmail": "bob@example.com",
                    "requestType": "VERIFY_AND_CHANGE_EMAIL",
                ])
            #expect(client.isError("EMAIL_EXISTS"), "\(client.text)")
            let admin = try await app.api(
                "sendOobCode",
                [
                    "email": "alice@example.com", "newEmail": "bob@example.com", "returnOobLink": true,
                    "requestType": "VERIFY_AND_CHANGE_EMAIL",
                ], admin: true)
            #expect(admin.isError("EMAIL_EXISTS"), "\(admin.text)")
            #expect(try await app.inspectOobs().isEmpty)
        }
    }

    @Test("USER_NOT_FOUND for verification and email change, EMAIL_NOT_FOUND for a password reset, of an unknown address")
    func notFoundPerOperation() async throws {
        try await TestApp.router { app in
            let cases: [(String, [String: Any], String)] = [
                ("VERIFY_EMAIL", [:], "USER_NOT_FOUND"),
                ("VERIFY_AND_CHANGE_EMAIL", ["newEmail": "new@example.com"], "USER_NOT_FOUND"),
                ("PASSWORD_RESET", [:], "EMAIL_NOT_FOUND"),
            ]
            for (type, extra, expected) in cases {
                var fields: [String: Any] = ["requestType": type, "email": "nobody@example.com", "returnOobLink": true]
                for (key, value) in extra { fields[key] = value }
                let reply = try await app.api("sendOobCode", fields, admin: true)
                #expect(reply.isError(expected), "\(type): \(reply.text)")
            }
            let client = try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "nobody@example.com"])
            #expect(client.isError("EMAIL_NOT_FOUND"), "\(client.text)")
        }
    }
}
