import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

extension FirebaseSpecs {
    /// firebase-tools `src/emulator/auth/rest.spec.ts` ("REST API mapping" and "authentication"),
    /// every case, and the rest of the REST surface SDKs rely on: the legacy v3 names, `kind` fields,
    /// ignored fields. Where this server answers differently on purpose, the case says why: `/` is the
    /// link domain's site, CORS reflects only allowed origins (loopback on a development server),
    /// and the spec's other project (`project-id`) is this server's own.
    @Suite("rest.spec.ts: REST API mapping and authentication", .timeLimit(.minutes(5)))
    struct RestSpecTests {
        static let signUp = "/identitytoolkit.googleapis.com/v1/accounts:signUp"
        static let legacy = "/www.googleapis.com/identitytoolkit/v3/relyingparty/"

        // MARK: REST API mapping

        @Test("should respond to status checks (the link domain's own: / is its site, /healthz its status)")
        func statusChecks() async throws {
            try await TestApp.router { app async throws in
                // `/` is the link domain's home page here, not the emulator's JSON status.
                #expect(try await app.request("GET", "/").status == 200)
                #expect(try await app.request("GET", "/healthz").status == 200)
            }
        }

        @Test("should allow cross-origin requests (from an allowed origin: loopback on a development server)")
        func crossOrigin() async throws {
            try await TestApp.router { app in
                let headers = [
                    "Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "Authorization,X-Client-Version,X-Whatever-Header",
                    "Access-Control-Request-Private-Network": "true",
                ]
                let reply = try await app.request("OPTIONS", Self.signUp + "?key=demo-api-key", headers: headers)
                #expect(reply.status == 204)
                #expect(reply.header("Access-Control-Allow-Origin") == "http://localhost:5173")
                let allowed = Set(
                    (reply.header("Access-Control-Allow-Headers") ?? "").split(separator: ",").map {
                        $0.trimmingCharacters(in: .whitespaces).lowercased()
                    })
                #expect(allowed.isSuperset(of: ["authorization", "x-client-version", "x-whatever-header"]), "\(reply.headers)")
                #expect(reply.header("Access-Control-Allow-Private-Network") == "true")
                // The answer itself carries the origin too.
                let answer = try await app.api("signUp", [:], headers: ["Origin": "http://127.0.0.1:3000"])
                #expect(answer.status == 200 && answer.header("Access-Control-Allow-Origin") == "http://127.0.0.1:3000")
                // Any origin is reflected by the emulator; here a page of an unknown site gets no CORS
                // headers, so it cannot read the answers.
                var foreign = headers
                foreign["Origin"] = "https://example.com"
                let refused = try await app.request("OPTIONS", Self.signUp + "?key=demo-api-key", headers: foreign)
                #expect(
                    refused.header("Access-Control-Allow-Origin") == nil && refused.header("Access-Control-Allow-Private-Network") == nil)
            }
        }

        @Test("should handle integer values for enums")
        func integerEnums() async throws {
            try await TestApp.router { app in
                let reply = try await app.post(
                    "/identitytoolkit.googleapis.com/v1/accounts:sendOobCode",
                    ["email": "bob@example.com", "requestType": 6, "returnOobLink": true], headers: Spec.admin)
                #expect((reply.json["oobLink"] as? String ?? "").contains("mode=signIn"), "\(reply.text)")
                try await app.createAccount(email: "ann@example.com")
                let reset = try await app.api(
                    "sendOobCode", ["email": "ann@example.com", "requestType": 1, "returnOobLink": true], admin: true)
                #expect((reset.json["oobLink"] as? String ?? "").contains("mode=resetPassword"), "\(reset.text)")
            }
        }

        @Test("should handle integer values for enums (legacy API path)")
        func integerEnumsLegacy() async throws {
            try await TestApp.router { app in
                let reply = try await app.post(
                    Self.legacy + "getOobConfirmationCode", ["email": "bob@example.com", "requestType": 6, "returnOobLink": true],
                    headers: Spec.admin)
                #expect((reply.json["oobLink"] as? String ?? "").contains("mode=signIn"), "\(reply.text)")
            }
        }

        @Test("should convert numbers to strings for type:string fields")
        func numbersAsStrings() async throws {
            try await TestApp.router { app in
                let reply = try await app.post(
                    "/identitytoolkit.googleapis.com/v1/accounts:update", ["localId": "nosuch", "validSince": 1_611_780_718],
                    headers: Spec.admin)
                #expect(reply.isError("USER_NOT_FOUND"), "\(reply.text)")
            }
        }

        // MARK: authentication

        @Test("should throw 403 if API key is not provided")
        func noAPIKey() async throws {
            try await TestApp.router { app in
                let reply = try await app.post(Self.signUp, ["returnSecureToken": true])
                #expect(
                    reply.status == 403 && (reply.json["error"] as? [String: Any])?["status"] as? String == "PERMISSION_DENIED",
                    "\(reply.text)"
                )
            }
        }

        @Test("should accept API key as a query parameter")
        func keyInQuery() async throws {
            try await TestApp.router { app in
                let reply = try await app.post(Self.signUp + "?key=demo-api-key", [:])
                #expect(reply.status == 200 && reply.json["error"] == nil, "\(reply.text)")
            }
        }

        @Test("should accept API key in HTTP Header x-goog-api-key")
        func keyInHeader() async throws {
            try await TestApp.router { app in
                let reply = try await app.post(Self.signUp, [:], headers: ["x-goog-api-key": "demo-api-key"])
                #expect(reply.status == 200 && reply.json["error"] == nil, "\(reply.text)")
            }
        }

        @Test(
            "should accept API key as a query parameter (production: one of the project's keys, a restricted one only with its app's headers)"
        )
        func keyInQueryProduction() async throws {
            try await TestApp.router(config: try StrictUpstream.configFile()) { app in
                for key in [StrictUpstream.unrestrictedKey, StrictUpstream.iosKey, StrictUpstream.androidKey, StrictUpstream.webKey] {
                    let reply = try await app.post(Self.signUp + "?key=\(key)", [:], headers: StrictUpstream.headers(for: key))
                    #expect(reply.status == 200 && reply.json["error"] == nil, "\(key): \(reply.text)")
                    if key != StrictUpstream.unrestrictedKey {
                        #expect(try await app.post(Self.signUp + "?key=\(key)", [:]).status == 403, "\(key)")
                    }
                }
                #expect(try await app.post(Self.signUp + "?key=demo-api-key", [:]).status == 400)
            }
        }

        @Test("should accept API key in HTTP Header x-goog-api-key (production: a restricted one only with its app's headers)")
        func keyInHeaderProduction() async throws {
            try await TestApp.router(config: try StrictUpstream.configFile()) { app in
                let key = StrictUpstream.androidKey
                let reply = try await app.post(
                    Self.signUp, [:], headers: StrictUpstream.headers(for: key).merging(["x-goog-api-key": key]) { $1 })
                #expect(reply.status == 200 && reply.json["error"] == nil, "\(reply.text)")
                #expect(try await app.post(Self.signUp, [:], headers: ["x-goog-api-key": key]).status == 403)
            }
        }

        @Test("should ignore non-Bearer Authorization headers")
        func basicIgnored() async throws {
            try await TestApp.router { app in
                let bare = try await app.post(
                    Self.signUp, ["returnSecureToken": true], headers: ["Authorization": "Basic YWxhZGRpbjpvcGVuc2VzYW1l"])
                #expect(
                    bare.status == 403 && (bare.json["error"] as? [String: Any])?["status"] as? String == "PERMISSION_DENIED",
                    "\(bare.text)")
                // With the API key, a Basic header changes nothing: the call is a client's.
                let client = try await app.post(
                    Self.signUp + "?key=demo-api-key", ["returnSecureToken": true],
                    headers: ["Authorization": "Basic YWxhZGRpbjpvcGVuc2VzYW1l"]
                )
                #expect(client.status == 200 && client.json["idToken"] is String, "\(client.text)")
            }
        }

        @Test("should treat Bearer owner as authenticated to project")
        func bearerOwner() async throws {
            try await TestApp.router { app in
                let reply = try await app.post(Self.signUp, ["targetProjectId": "example2"], headers: Spec.admin)
                #expect(reply.status == 200 && reply.json["error"] == nil && reply.json["idToken"] == nil, "\(reply.text)")
            }
        }

        @Test("should ignore casing of Bearer / owner in Authorization header")
        func bearerCasing() async throws {
            try await TestApp.router { app in
                for header in ["bEArEr OWNER", "bearer owner", "BEARER Owner"] {
                    let reply = try await app.post(Self.signUp, ["targetProjectId": "example2"], headers: ["Authorization": header])
                    #expect(reply.status == 200 && reply.json["error"] == nil, "\(header): \(reply.text)")
                }
            }
        }

        @Test("should treat production service account as authenticated to project")
        func serviceAccountToken() async throws {
            try await TestApp.router { app in
                let reply = try await app.post(
                    Self.signUp, ["targetProjectId": "example2"],
                    headers: ["Authorization": "Bearer ya" + "29.AHES0ZZZZZ0fff" + "ff0XXXX0mmmm0wwwww0-LL_l-0bb0b0bbbbbb"])
                #expect(reply.status == 200 && reply.json["error"] == nil, "\(reply.text)")
            }
        }

        @Test("should deny requests with targetProjectId but without OAuth 2")
        func targetProjectWithoutOAuth() async throws {
            try await TestApp.router { app in
                let reply = try await app.post(Self.signUp + "?key=demo-api-key", ["targetProjectId": "example2"])
                #expect(
                    reply.errorMessage == "INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id.",
                    "\(reply.text)")
                // A plain 400, without a `status`, as the emulator and Firebase answer it.
                #expect(reply.status == 400 && (reply.json["error"] as? [String: Any])?["status"] == nil, "\(reply.text)")
                #expect((reply.json["error"] as? [String: Any])?["code"] as? Int == 400)
            }
        }

        @Test("should deny requests where tenant IDs do not match in the request body and path")
        func bodyAndPathTenants() async throws {
            try await TestApp.router { app in
                let reply = try await app.post(
                    "/identitytoolkit.googleapis.com/v1/projects/demo-actionlinks/tenants/tenant-id/accounts:delete",
                    ["localId": "local-id", "tenantId": "mismatching-tenant-id"], headers: Spec.admin)
                #expect(reply.isError("TENANT_ID_MISMATCH"), "\(reply.text)")
            }
        }

        @Test("should deny requests where tenant IDs do not match in the ID token and path")
        func tokenAndPathTenants() async throws {
            try await TestApp.router { app async throws in
                let tenant = try await app.registerTenant(["disableAuth": false, "allowPasswordSignup": true])
                let user = try await app.registerUser(email: "alice@example.com", tenant: tenant)
                let reply = try await app.post(
                    "/identitytoolkit.googleapis.com/v1/projects/demo-actionlinks/tenants/not-matching-tenant-id/accounts:lookup",
                    ["idToken": user.idToken], headers: Spec.admin)
                #expect(reply.isError("TENANT_ID_MISMATCH"), "\(reply.text)")
                let client = try await app.api("lookup", ["idToken": user.idToken, "tenantId": "not-matching-tenant-id"])
                #expect(client.isError("TENANT_ID_MISMATCH"), "\(client.text)")
            }
        }

        @Test("should deny requests where tenant IDs do not match in the ID token and request body")
        func tokenAndBodyTenants() async throws {
            try await TestApp.router { app async throws in
                let tenant = try await app.registerTenant(["disableAuth": false, "allowPasswordSignup": true])
                let user = try await app.registerUser(email: "alice@example.com", tenant: tenant)
                let reply = try await app.post(
                    "/identitytoolkit.googleapis.com/v1/projects/demo-actionlinks/accounts:lookup",
                    ["idToken": user.idToken, "tenantId": "not-matching-tenant-id"], headers: Spec.admin)
                #expect(reply.isError("TENANT_ID_MISMATCH"), "\(reply.text)")
            }
        }

        // MARK: the rest of the surface

        @Test("with an ID token and no tenant in the path or body, the tenant is the token's")
        func tenantFromToken() async throws {
            try await TestApp.router { app async throws in
                let tenant = try await app.registerEnabledTenant()
                let user = try await app.registerUser(email: "alice@example.com", tenant: tenant)
                let info = try await app.accountInfo(idToken: user.idToken)
                #expect(info["localId"] as? String == user.localId && info["tenantId"] as? String == tenant)
                let renamed = try await app.api("update", ["idToken": user.idToken, "displayName": "Alice"])
                #expect(renamed.status == 200, "\(renamed.text)")
                #expect(try await app.api("update", ["idToken": user.idToken, "displayName": "A"], tenant: tenant).status == 200)
            }
        }

        @Test("INVALID_ID_TOKEN for a token that is not one, MISSING_ID_TOKEN for none")
        func invalidVersusMissingIDToken() async throws {
            try await TestApp.router { app async throws in
                #expect(try await app.api("lookup", ["idToken": "not.a.token"]).isError("INVALID_ID_TOKEN"))
                #expect(try await app.api("lookup", [:]).isError("MISSING_ID_TOKEN"))
                #expect(try await app.api("delete", ["idToken": "garbage"]).isError("INVALID_ID_TOKEN"))
                #expect(try await app.api("delete", [:]).isError("MISSING_ID_TOKEN"))
            }
        }

        @Test("unknown fields are ignored (the iOS SDK's clientType, reCAPTCHA fields, returnSecureToken)")
        func unknownFields() async throws {
            try await TestApp.router { app in
                let reply = try await app.api(
                    "signUp",
                    [
                        "email": "alice@example.com", "password": Spec.password, "clientType": "CLIENT_TYPE_IOS", "returnSecureToken": true,
                        "recaptchaVersion": "RECAPTCHA_ENTERPRISE", "somethingNew": ["nested": [1, 2]],
                    ])
                #expect(reply.status == 200, "\(reply.text)")
            }
        }

        @Test("every legacy v3 name reaches its operation on a development server")
        func legacyNames() async throws {
            try await TestApp.router { app in
                let expected: [(String, String?)] = [
                    ("getOobConfirmationCode", "MISSING_REQ_TYPE"), ("resetPassword", "MISSING_OOB_CODE"),
                    ("setAccountInfo", "INVALID_REQ_TYPE"), ("emailLinkSignin", "MISSING_EMAIL"), ("getAccountInfo", "MISSING_ID_TOKEN"),
                    ("signupNewUser", nil), ("verifyPassword", "MISSING_EMAIL"), ("deleteAccount", "MISSING_ID_TOKEN"),
                    ("verifyCustomToken", "MISSING_CUSTOM_TOKEN"), ("verifyAssertion", "MISSING_REQUEST_URI"),
                    ("createAuthUri", "MISSING_IDENTIFIER"),
                ]
                for (name, code) in expected {
                    let reply = try await app.post(Self.legacy + name + "?key=demo-api-key", [:])
                    if let code {
                        #expect(reply.isError(code), "\(name): \(reply.text)")
                    } else {
                        #expect(
                            reply.status == 200 && reply.json["kind"] as? String == "identitytoolkit#SignupNewUserResponse", "\(reply.text)"
                        )
                    }
                }
                let config = try await app.request("GET", Self.legacy + "getProjectConfig?key=demo-api-key")
                #expect(config.status == 200 && config.json["projectId"] is String, "\(config.text)")
                #expect((config.json["authorizedDomains"] as? [String] ?? []).contains("localhost"))
            }
        }

        @Test("the legacy v3 names are 404 on a production server")
        func legacyNamesInProduction() async throws {
            let production = [
                "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": String(repeating: "t", count: 40),
            ]
            try await TestApp.router(environment: production) { app in
                let names = [
                    "getOobConfirmationCode", "resetPassword", "setAccountInfo", "emailLinkSignin", "getAccountInfo", "signupNewUser",
                    "verifyPassword", "deleteAccount", "verifyCustomToken", "verifyAssertion", "createAuthUri", "getProjectConfig",
                ]
                for name in names {
                    let reply = try await app.post(Self.legacy + name + "?key=demo-api-key", [:])
                    #expect(reply.status == 404, "\(name): \(reply.status) \(reply.text)")
                }
            }
        }

        @Test("every answer names its kind, as Firebase's do")
        func kinds() async throws {
            try await TestApp.router { app in
                let user = try await app.registerUser(email: "alice@example.com")
                let cases: [(HTTPReply, String)] = [
                    (
                        try await app.api("signInWithPassword", ["email": "alice@example.com", "password": Spec.password]),
                        "VerifyPasswordResponse"
                    ),
                    (try await app.api("lookup", ["idToken": user.idToken]), "GetAccountInfoResponse"),
                    (try await app.api("update", ["idToken": user.idToken, "displayName": "A"]), "SetAccountInfoResponse"),
                    (
                        try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "alice@example.com"]),
                        "GetOobConfirmationCodeResponse"
                    ),
                    (
                        try await app.api("createAuthUri", ["identifier": "alice@example.com", "continueUri": "http://example.com/"]),
                        "CreateAuthUriResponse"
                    ),
                    (try await app.api("delete", ["idToken": user.idToken]), "DeleteAccountResponse"),
                ]
                for (reply, kind) in cases {
                    #expect(reply.json["kind"] as? String == "identitytoolkit#" + kind, "\(reply.text)")
                }
            }
        }
    }
}
