import ActionLinksTestSupport
import Foundation
import Testing

/// The multi-factor settings of the admin API v2: a tenant's `mfaConfig` (create, `PATCH` with an
/// update mask, `GET`, list) as firebase-admin's `createTenant`/`updateTenant` send it and as its
/// `MultiFactorAuthServerConfig` requires it back, and the project's `mfa` (`GET /v2/projects/<p>/config`)
/// from the configuration file.
@Suite("mfaConfig and mfa in the admin API", .timeLimit(.minutes(5)))
struct MultiFactorConfigAPITests {
    /// The tenants' collection.
    static let tenants = "/identitytoolkit.googleapis.com/v2/projects/demo-actionlinks/tenants"
    /// The project's configuration.
    static let config = "/identitytoolkit.googleapis.com/v2/projects/demo-actionlinks/config"
    /// What firebase-admin's `updateTenant({multiFactorConfig: {state: 'ENABLED', factorIds: [],
    /// providerConfigs: [{state: 'ENABLED', totpProviderConfig: {adjacentIntervals: 5}}]}})` sends.
    static var enabled: [String: Any] {
        [
            "state": "ENABLED", "enabledProviders": [String](),
            "providerConfigs": [["state": "ENABLED", "totpProviderConfig": ["adjacentIntervals": 5]]],
        ]
    }

    /// `PATCH projects/<p>/tenants/<id>?updateMask=<mask>` as the admin.
    static func patch(_ app: TestApp, _ id: String, mask: String?, _ fields: [String: Any]) async throws -> HTTPReply {
        let query = mask.map { "?updateMask=\($0)" } ?? ""
        return try await app.request("PATCH", tenants + "/\(id)" + query, json: fields, headers: Spec.admin)
    }

    /// The reply's `mfaConfig` (or `key`), for comparing whole.
    static func mfa(_ reply: HTTPReply, _ key: String = "mfaConfig") -> NSDictionary? {
        (reply.json[key] as? [String: Any]).map { NSDictionary(dictionary: $0) }
    }

    @Test("create with mfaConfig; GET and the list show it back exactly")
    func createAndRead() async throws {
        try await TestApp.router { app in
            let created = try await app.post(Self.tenants, ["displayName": "mfa", "mfaConfig": Self.enabled], headers: Spec.admin)
            #expect(created.status == 200, "\(created.text)")
            #expect(Self.mfa(created) == NSDictionary(dictionary: Self.enabled), "\(created.text)")
            let id = try #require(created.json["tenantId"] as? String)
            let read = try await app.request("GET", Self.tenants + "/\(id)", headers: Spec.admin)
            #expect(Self.mfa(read) == NSDictionary(dictionary: Self.enabled), "\(read.text)")
            let list = try await app.request("GET", Self.tenants, headers: Spec.admin)
            let listed = (list.json["tenants"] as? [[String: Any]])?.first { $0["tenantId"] as? String == id }
            #expect((listed?["mfaConfig"] as? [String: Any]).map { NSDictionary(dictionary: $0) } == NSDictionary(dictionary: Self.enabled))
        }
    }

    @Test("a tenant without mfaConfig shows {state: DISABLED, enabledProviders: []}")
    func absent() async throws {
        try await TestApp.router { app in
            let created = try await app.post(Self.tenants, [:], headers: Spec.admin)
            #expect(Self.mfa(created) == ["state": "DISABLED", "enabledProviders": [String]()], "\(created.text)")
        }
    }

    @Test("totpProviderConfig without adjacentIntervals reads back as {} (no default filled in)")
    func noIntervals() async throws {
        try await TestApp.router { app in
            let config: [String: Any] = ["state": "DISABLED", "providerConfigs": [["state": "DISABLED", "totpProviderConfig": [:]]]]
            let id = try await app.registerTenant(["mfaConfig": config])
            let read = try await app.request("GET", Self.tenants + "/\(id)", headers: Spec.admin)
            #expect(read.status == 200, "\(read.text)")
            let mfa = try #require(read.json["mfaConfig"] as? [String: Any])
            #expect(mfa["state"] as? String == "DISABLED", "\(read.text)")
            let providers = try #require(mfa["providerConfigs"] as? [[String: Any]])
            #expect(providers.count == 1 && providers[0]["state"] as? String == "DISABLED")
            #expect((providers[0]["totpProviderConfig"] as? [String: Any])?.isEmpty == true, "\(read.text)")
        }
    }

    @Test("PATCH with firebase-admin's update mask: each masked field changes, the others stay")
    func patchWithMask() async throws {
        try await TestApp.router { app in
            let id = try await app.registerTenant(["displayName": "before"])
            let mask = "mfaConfig.state,mfaConfig.enabledProviders,mfaConfig.providerConfigs"
            let patched = try await Self.patch(app, id, mask: mask, ["mfaConfig": Self.enabled])
            #expect(patched.status == 200 && Self.mfa(patched) == NSDictionary(dictionary: Self.enabled), "\(patched.text)")
            #expect(patched.json["displayName"] as? String == "before")

            // Only the state: the TOTP provider stays.
            let state = try await Self.patch(app, id, mask: "mfaConfig.state", ["mfaConfig": ["state": "MANDATORY"]])
            let stateConfig = try #require(state.json["mfaConfig"] as? [String: Any], "\(state.text)")
            #expect(stateConfig["state"] as? String == "MANDATORY")
            #expect((stateConfig["providerConfigs"] as? [[String: Any]])?.first?["state"] as? String == "ENABLED")

            // Only the providers: a new adjacentIntervals, the state stays.
            let providers = try await Self.patch(
                app, id, mask: "mfaConfig.providerConfigs",
                ["mfaConfig": ["providerConfigs": [["state": "ENABLED", "totpProviderConfig": ["adjacentIntervals": 0]]]]])
            let read = try await app.request("GET", Self.tenants + "/\(id)", headers: Spec.admin)
            #expect(providers.status == 200 && Self.mfa(read) == Self.mfa(providers), "\(providers.text)")
            #expect(
                Self.mfa(read)
                    == NSDictionary(dictionary: [
                        "state": "MANDATORY", "enabledProviders": [String](),
                        "providerConfigs": [["state": "ENABLED", "totpProviderConfig": ["adjacentIntervals": 0]]],
                    ]), "\(read.text)")

            // A mask of other fields leaves it; the providers masked but not sent: none.
            let other = try await Self.patch(app, id, mask: "displayName", ["displayName": "after", "mfaConfig": ["state": "DISABLED"]])
            #expect(other.json["displayName"] as? String == "after" && Self.mfa(other) == Self.mfa(read), "\(other.text)")
            let cleared = try await Self.patch(app, id, mask: "mfaConfig.providerConfigs", [:])
            #expect(Self.mfa(cleared) == ["state": "MANDATORY", "enabledProviders": [String]()], "\(cleared.text)")

            // The whole mfaConfig: replaced.
            let whole = try await Self.patch(app, id, mask: "mfaConfig", ["mfaConfig": ["state": "ENABLED"]])
            #expect(Self.mfa(whole) == ["state": "ENABLED", "enabledProviders": [String]()], "\(whole.text)")
        }
    }

    @Test(
        "refusals: INVALID_ARGUMENT with a message naming the field, and nothing changes",
        arguments: [
            (#"{"state": "ON"}"#, "mfaConfig.state must be ENABLED, DISABLED or MANDATORY; got 'ON'"),
            (#"{"state": "STATE_UNSPECIFIED"}"#, "mfaConfig.state must be ENABLED, DISABLED or MANDATORY"),
            (#"{"enabledProviders": ["PHONE_SMS"]}"#, "PHONE_SMS is not available: this server has no SMS second factors"),
            (#"{"enabledProviders": ["EMAIL"]}"#, "mfaConfig.enabledProviders: unknown provider 'EMAIL'"),
            (
                #"{"providerConfigs": [{"state": "ENABLED", "totpProviderConfig": {}, "smsProviderConfig": {}}]}"#,
                "mfaConfig.providerConfigs[0] takes only state and totpProviderConfig; got 'smsProviderConfig'"
            ),
            (#"{"providerConfigs": [{"state": "ENABLED"}]}"#, "mfaConfig.providerConfigs[0].totpProviderConfig is required"),
            (#"{"providerConfigs": [{"totpProviderConfig": {}}]}"#, "mfaConfig.providerConfigs[0].state is required"),
            (
                #"{"providerConfigs": [{"state": "ENABLE", "totpProviderConfig": {}}]}"#,
                "mfaConfig.providerConfigs[0].state must be ENABLED, DISABLED or MANDATORY; got 'ENABLE'"
            ),
            (
                #"{"providerConfigs": [{"state": "ENABLED", "totpProviderConfig": {"adjacentIntervals": 11}}]}"#,
                "adjacentIntervals must be a whole number from 0 to 10"
            ),
            (
                #"{"providerConfigs": [{"state": "ENABLED", "totpProviderConfig": {"adjacentIntervals": -1}}]}"#,
                "adjacentIntervals must be a whole number from 0 to 10"
            ),
            (
                #"{"providerConfigs": [{"state": "ENABLED", "totpProviderConfig": {"adjacentIntervals": 2.5}}]}"#,
                "adjacentIntervals must be a whole number from 0 to 10"
            ),
            (
                #"{"providerConfigs": [{"state": "ENABLED", "totpProviderConfig": {"adjacentIntervals": "5"}}]}"#,
                "adjacentIntervals must be a whole number from 0 to 10"
            ),
            (
                #"{"providerConfigs": [{"state": "ENABLED", "totpProviderConfig": {"window": 5}}]}"#,
                "totpProviderConfig takes only adjacentIntervals; got 'window'"
            ),
            (
                #"{"providerConfigs": [{"state": "ENABLED", "totpProviderConfig": {}}, {"state": "ENABLED", "totpProviderConfig": {}}]}"#,
                "at most one entry"
            ),
        ])
    func refusals(json: String, message: String) async throws {
        try await TestApp.router { app in
            let config = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            let created = try await app.post(Self.tenants, ["mfaConfig": config], headers: Spec.admin)
            #expect(created.isError("INVALID_ARGUMENT") && created.errorMessage.contains(message), "\(created.text)")
            let list = try await app.request("GET", Self.tenants, headers: Spec.admin)
            #expect((list.json["tenants"] as? [Any] ?? []).isEmpty, "\(list.text)")

            let id = try await app.registerTenant(["mfaConfig": Self.enabled])
            let mask = "mfaConfig.state,mfaConfig.enabledProviders,mfaConfig.providerConfigs"
            let patched = try await Self.patch(app, id, mask: mask, ["mfaConfig": config])
            #expect(patched.isError("INVALID_ARGUMENT") && patched.errorMessage.contains(message), "\(patched.text)")
            let read = try await app.request("GET", Self.tenants + "/\(id)", headers: Spec.admin)
            #expect(Self.mfa(read) == NSDictionary(dictionary: Self.enabled), "\(read.text)")
        }
    }

    @Test("an empty enabledProviders list and PROVIDER_UNSPECIFIED are taken")
    func emptyProviders() async throws {
        try await TestApp.router { app in
            let reply = try await app.post(
                Self.tenants, ["mfaConfig": ["state": "ENABLED", "enabledProviders": ["PROVIDER_UNSPECIFIED"]]], headers: Spec.admin)
            #expect(reply.status == 200 && Self.mfa(reply) == ["state": "ENABLED", "enabledProviders": [String]()], "\(reply.text)")
        }
    }

    @Test("a configured tenant shows its mfa from the configuration, and refuses a change of it")
    func configuredTenant() async throws {
        let environment = [
            "ACTIONLINKS_TENANTS": "team-a", "ACTIONLINKS_MFA_STATE": "ENABLED", "ACTIONLINKS_MFA_TOTP_ADJACENT_INTERVALS": "2",
        ]
        try await TestApp.router(environment: environment) { app in
            let expected: [String: Any] = [
                "state": "ENABLED", "enabledProviders": [String](),
                "providerConfigs": [["state": "ENABLED", "totpProviderConfig": ["adjacentIntervals": 2]]],
            ]
            let read = try await app.request("GET", Self.tenants + "/team-a", headers: Spec.admin)
            #expect(Self.mfa(read) == NSDictionary(dictionary: expected), "\(read.text)")
            let patched = try await Self.patch(app, "team-a", mask: "mfaConfig.state", ["mfaConfig": ["state": "DISABLED"]])
            #expect(patched.isError("INVALID_ARGUMENT") && patched.text.contains("defined in the configuration"), "\(patched.text)")
        }
    }

    @Test("the project config shows mfa: {state: DISABLED} when the file sets none")
    func projectDefault() async throws {
        try await TestApp.router { app in
            let reply = try await app.request("GET", Self.config, headers: Spec.admin)
            #expect(reply.status == 200 && Self.mfa(reply, "mfa") == ["state": "DISABLED"], "\(reply.text)")
        }
    }

    @Test("the project config shows the file's mfa, with the TOTP provider's entry")
    func projectConfigured() async throws {
        let environment = [
            "ACTIONLINKS_MFA_STATE": "MANDATORY", "ACTIONLINKS_MFA_TOTP_STATE": "ENABLED", "ACTIONLINKS_MFA_TOTP_ADJACENT_INTERVALS": "3",
        ]
        try await TestApp.router(environment: environment) { app in
            let reply = try await app.request("GET", Self.config, headers: Spec.admin)
            let expected: [String: Any] = [
                "state": "MANDATORY", "providerConfigs": [["state": "ENABLED", "totpProviderConfig": ["adjacentIntervals": 3]]],
            ]
            #expect(reply.status == 200 && Self.mfa(reply, "mfa") == NSDictionary(dictionary: expected), "\(reply.text)")
        }
        try await TestApp.router(environment: ["ACTIONLINKS_MFA_TOTP_STATE": "DISABLED"]) { app in
            let reply = try await app.request("GET", Self.config, headers: Spec.admin)
            let expected: [String: Any] = ["state": "DISABLED", "providerConfigs": [["state": "DISABLED", "totpProviderConfig": [:]]]]
            #expect(Self.mfa(reply, "mfa") == NSDictionary(dictionary: expected), "\(reply.text)")
        }
    }

    @Test("a PATCH of the project's mfa is refused naming the file's mfa keys; other PATCHes keep their message")
    func projectPatchRefused() async throws {
        try await TestApp.router { app in
            let body = ["mfa": Self.enabled]
            let masked = try await app.request(
                "PATCH", Self.config + "?updateMask=mfa.state,mfa.providerConfigs", json: body, headers: Spec.admin)
            #expect(masked.status == 501 && masked.errorCode == "NOT_IMPLEMENTED", "\(masked.text)")
            #expect(masked.errorMessage.contains("mfa.state, mfa.totp.state, mfa.totp.adjacentIntervals"), "\(masked.text)")
            let unmasked = try await app.request("PATCH", Self.config, json: body, headers: Spec.admin)
            #expect(unmasked.status == 501 && unmasked.errorMessage.contains("mfa.totp.state"), "\(unmasked.text)")
            let other = try await app.request(
                "PATCH", Self.config + "?updateMask=signIn.allowDuplicateEmails", json: ["signIn": ["allowDuplicateEmails": true]],
                headers: Spec.admin)
            #expect(other.status == 501 && other.errorMessage.contains("users.oneAccountPerEmail"), "\(other.text)")
            #expect(!other.errorMessage.contains("mfa.state"), "\(other.text)")
        }
    }
}
