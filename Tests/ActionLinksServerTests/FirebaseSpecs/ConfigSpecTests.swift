import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

extension FirebaseSpecs {
    /// firebase-tools `src/emulator/auth/config.spec.ts` ("config management"), and the emulator's
    /// `/emulator/v1/projects/<p>/config` from `misc.spec.ts`. This server's project configuration is
    /// its configuration file (`users.oneAccountPerEmail`, `users.emailEnumerationProtection`): it is
    /// shown as Firebase shows it, and no request changes it, so the six cases that `PATCH` it
    /// ("updates the project level config", "does not update if the field does not exist on the update
    /// config", "performs a full update if the update mask is empty", "... with production defaults
    /// ...", "should return updated config fields", and the emulator's three `PATCH` cases) answer
    /// `NOT_IMPLEMENTED` here, and the two blocking-function cases ("should error when updating an
    /// invalid blocking function event", "should error if functionUri is invalid") do not apply.
    @Suite("config.spec.ts: config management", .timeLimit(.minutes(5)))
    struct ConfigSpecTests {
        static let config = "/identitytoolkit.googleapis.com/v2/projects/demo-actionlinks/config"

        @Test("should return the project level config")
        func projectConfig() async throws {
            try await TestApp.router { app in
                let reply = try await app.request("GET", Self.config, headers: Spec.admin)
                #expect(reply.status == 200, "\(reply.text)")
                #expect(reply.json["signIn"] as? [String: Bool] == ["allowDuplicateEmails": false])
                #expect((reply.json["blockingFunctions"] as? [String: Any])?.isEmpty == true)
                #expect(reply.json["emailPrivacyConfig"] as? [String: Bool] == ["enableImprovedEmailPrivacy": false])
            }
        }

        @Test("the project level config shows the configuration file's switches")
        func configuredSwitches() async throws {
            let environment = [
                "ACTIONLINKS_USERS_ONE_ACCOUNT_PER_EMAIL": "false", "ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "true",
            ]
            try await TestApp.router(environment: environment) { app in
                let reply = try await app.request("GET", Self.config, headers: Spec.admin)
                #expect(reply.json["signIn"] as? [String: Bool] == ["allowDuplicateEmails": true], "\(reply.text)")
                #expect(reply.json["emailPrivacyConfig"] as? [String: Bool] == ["enableImprovedEmailPrivacy": true])
                let emulator = try await app.request("GET", "/emulator/v1/projects/demo-actionlinks/config")
                #expect(emulator.json["signIn"] as? [String: Bool] == ["allowDuplicateEmails": true], "\(emulator.text)")
            }
        }

        @Test("should return config on GET /emulator/v1/projects/{PROJECT_ID}/config (misc.spec.ts)")
        func emulatorConfig() async throws {
            try await TestApp.router { app in
                let reply = try await app.request("GET", "/emulator/v1/projects/demo-actionlinks/config")
                #expect(reply.status == 200, "\(reply.text)")
                #expect(reply.json["signIn"] as? [String: Bool] == ["allowDuplicateEmails": false])
                #expect(reply.json["emailPrivacyConfig"] as? [String: Bool] == ["enableImprovedEmailPrivacy": false])
                #expect(reply.json["blockingFunctions"] == nil)
            }
        }

        @Test("updates the project level config (refused: the configuration file decides)")
        func patchRefused() async throws {
            try await TestApp.router { app in
                let body = Spec.json(["signIn": ["allowDuplicateEmails": true]])
                let headers = ["Authorization": "Bearer owner", "Content-Type": "application/json"]
                let v2 = try await app.request(
                    "PATCH", Self.config + "?updateMask=signIn.allowDuplicateEmails", body: body, headers: headers)
                #expect(v2.status == 501 && v2.errorCode == "NOT_IMPLEMENTED", "\(v2.text)")
                let emulator = try await app.request(
                    "PATCH", "/emulator/v1/projects/demo-actionlinks/config", body: body, headers: ["Content-Type": "application/json"])
                #expect(emulator.status == 501, "\(emulator.text)")
                let after = try await app.request("GET", Self.config, headers: Spec.admin)
                #expect(after.json["signIn"] as? [String: Bool] == ["allowDuplicateEmails": false])
            }
        }

        @Test("the project level config is the admin's (INSUFFICIENT_PERMISSION with the API key)")
        func adminOnly() async throws {
            try await TestApp.router { app in
                let reply = try await app.request("GET", Self.config + "?key=demo-api-key")
                #expect(reply.errorCode == "INSUFFICIENT_PERMISSION", "\(reply.text)")
            }
        }
    }
}
