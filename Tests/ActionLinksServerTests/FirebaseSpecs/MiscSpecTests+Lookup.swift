import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

extension FirebaseSpecs.MiscSpecTests {
    // MARK: accounts:lookup

    @Test("should return user by email when privileged")
    func lookupByEmail() async throws {
        try await TestApp.router { app in
            let user = try await app.registerUser(email: "alice@example.com")
            let reply = try await app.api("lookup", ["email": ["alice@example.com"]], admin: true)
            #expect(FirebaseSpecs.BatchSpecTests.ids(reply) == [user.localId], "\(reply.text)")
        }
    }

    @Test("should return user by email even when uppercased")
    func lookupByUppercaseEmail() async throws {
        try await TestApp.router { app in
            let user = try await app.registerUser(email: "alice@example.com")
            let reply = try await app.api("lookup", ["email": ["ALICE@EXAMPLE.COM"]], admin: true)
            #expect(FirebaseSpecs.BatchSpecTests.ids(reply) == [user.localId], "\(reply.text)")
            #expect((reply.json["users"] as? [[String: Any]])?.first?["email"] as? String == "alice@example.com")
        }
    }

    @Test("should return empty result when email is not found")
    func lookupUnknownEmail() async throws {
        try await TestApp.router { app in
            let reply = try await app.api("lookup", ["email": ["nosuchuser@example.com"]], admin: true)
            #expect(reply.status == 200 && reply.json["users"] == nil, "\(reply.text)")
        }
    }

    @Test("should return user by localId when privileged")
    func lookupByLocalID() async throws {
        try await TestApp.router { app in
            let user = try await app.registerAnonUser()
            #expect(
                FirebaseSpecs.BatchSpecTests.ids(try await app.api("lookup", ["localId": [user.localId]], admin: true)) == [user.localId])
        }
    }

    @Test("should deduplicate users")
    func lookupDeduplicates() async throws {
        try await TestApp.router { app in
            let user = try await app.registerAnonUser()
            let reply = try await app.api("lookup", ["localId": [user.localId, user.localId]], admin: true)
            #expect(FirebaseSpecs.BatchSpecTests.ids(reply) == [user.localId], "\(reply.text)")
        }
    }

    @Test("should return providerUserInfo for phone auth users")
    func lookupPhoneUser() async throws {
        try await TestApp.router { app in
            let user = try await app.phoneUser()
            let reply = try await app.api("lookup", ["localId": [user.localId]], admin: true)
            let providers = (reply.json["users"] as? [[String: Any]])?.first?["providerUserInfo"] as? [[String: String]]
            #expect(
                providers == [["phoneNumber": Spec.phoneNumber, "rawId": Spec.phoneNumber, "providerId": "phone"]], "\(reply.text)")
        }
    }

    @Test("should return empty result when localId is not found")
    func lookupUnknownLocalID() async throws {
        try await TestApp.router { app in
            let reply = try await app.api("lookup", ["localId": ["noSuchId"]], admin: true)
            #expect(reply.status == 200 && reply.json["users"] == nil, "\(reply.text)")
        }
    }

    @Test("should return user by tenantId in idToken")
    func lookupTenantFromToken() async throws {
        try await TestApp.router { app in
            let tenant = try await app.registerTenant(["disableAuth": false, "allowPasswordSignup": true])
            let user = try await app.registerUser(email: "alice@example.com", tenant: tenant)
            let reply = try await app.post(
                "/identitytoolkit.googleapis.com/v1/accounts:lookup?key=demo-api-key", ["idToken": user.idToken])
            #expect(FirebaseSpecs.BatchSpecTests.ids(reply) == [user.localId], "\(reply.text)")
        }
    }

    @Test("should error if auth is disabled (lookup)")
    func lookupAuthDisabled() async throws {
        try await TestApp.router { app in
            let tenant = try await app.registerTenant(["disableAuth": true])
            let reply = try await app.post(
                "/identitytoolkit.googleapis.com/v1/accounts:lookup", ["tenantId": tenant], headers: Spec.admin)
            #expect(reply.status == 400 && reply.errorMessage.contains("PROJECT_DISABLED"), "\(reply.text)")
            let client = try await app.api("lookup", [:], tenant: tenant)
            #expect(client.isError("PROJECT_DISABLED"), "\(client.text)")
        }
    }

    @Test("createdAt and lastLoginAt are strings of milliseconds, validSince of seconds")
    func timestampTypes() async throws {
        try await TestApp.router { app in
            let user = try await app.registerUser(email: "alice@example.com")
            let info = try await app.accountInfo(localId: user.localId)
            let created = try #require(info["createdAt"] as? String), login = try #require(info["lastLoginAt"] as? String)
            #expect(created.count == 13 && created.allSatisfy(\.isNumber) && login.count == 13 && login.allSatisfy(\.isNumber))
            #expect((info["validSince"] as? String).map { $0.count == 10 && $0.allSatisfy(\.isNumber) } == true, "\(info)")
        }
    }

    // MARK: accounts:query

    @Test("should return count of accounts when returnUserInfo is false")
    func queryCount() async throws {
        try await TestApp.router { app in
            _ = try await app.registerAnonUser()
            _ = try await app.registerAnonUser()
            let reply = try await app.api("query", ["returnUserInfo": false], admin: true)
            #expect(reply.json["recordsCount"] as? String == "2" && reply.json["userInfo"] == nil, "\(reply.text)")
        }
    }

    @Test("should return accounts when returnUserInfo is true")
    func queryAccounts() async throws {
        try await TestApp.router { app in
            let anonymous = try await app.registerAnonUser()
            let user = try await app.registerUser(email: "alice@example.com")
            let reply = try await app.api("query", [:], admin: true)
            let users = reply.json["userInfo"] as? [[String: Any]] ?? []
            #expect(reply.json["recordsCount"] as? String == "2" && users.count == 2, "\(reply.text)")
            let ids = users.compactMap { $0["localId"] as? String }
            #expect(ids == ids.sorted() && Set(ids) == [anonymous.localId, user.localId])
            #expect(users.first { $0["localId"] as? String == user.localId }?["email"] as? String == "alice@example.com")
        }
    }

    @Test("should error if auth is disabled (query)")
    func queryAuthDisabled() async throws {
        try await TestApp.router { app in
            let tenant = try await app.registerTenant(["disableAuth": true])
            #expect(try await app.api("query", ["tenantId": tenant], admin: true).isError("PROJECT_DISABLED"))
        }
    }

    @Test("a filter expression, or an order other than by user ID, is refused as not implemented")
    func queryNotImplemented() async throws {
        try await TestApp.router { app in
            _ = try await app.registerAnonUser()
            let filtered = try await app.api("query", ["expression": [["email": "alice@example.com"]]], admin: true)
            #expect(filtered.isError("NOT_IMPLEMENTED", status: 501) && filtered.json["userInfo"] == nil, "\(filtered.text)")
            let sorted = try await app.api("query", ["sortBy": "CREATED_AT"], admin: true)
            #expect(sorted.isError("NOT_IMPLEMENTED", status: 501), "\(sorted.text)")
            let byID = try await app.api("query", ["sortBy": "USER_ID", "order": "DESC", "expression": []], admin: true)
            #expect(byID.status == 200 && byID.json["recordsCount"] as? String == "1", "\(byID.text)")
        }
    }

    // MARK: emulator utility APIs

    @Test("should drop all accounts on DELETE /emulator/v1/projects/{PROJECT_ID}/accounts")
    func dropAccounts() async throws {
        try await TestApp.router { app in
            let user1 = try await app.registerUser(email: "alice@example.com")
            let user2 = try await app.registerUser(email: "bob@example.com", password: "notasecret2")
            #expect(try await app.request("DELETE", "/emulator/v1/projects/demo-actionlinks/accounts").status == 200)
            #expect(try await app.lookupError(idToken: user1.idToken) == "USER_NOT_FOUND")
            #expect(try await app.lookupError(idToken: user2.idToken) == "USER_NOT_FOUND")
        }
    }

    @Test("should drop all accounts on DELETE /emulator/v1/projects/{PROJECT_ID}/tenants/{TENANT_ID}/accounts")
    func dropTenantAccounts() async throws {
        try await TestApp.router { app in
            let tenant = try await app.registerTenant(["disableAuth": false, "allowPasswordSignup": true])
            let user1 = try await app.registerUser(email: "alice@example.com", tenant: tenant)
            let user2 = try await app.registerUser(email: "bob@example.com", password: "notasecret2", tenant: tenant)
            let outside = try await app.registerUser(email: "carol@example.com")
            #expect(try await app.request("DELETE", "/emulator/v1/projects/demo-actionlinks/tenants/\(tenant)/accounts").status == 200)
            #expect(try await app.lookupError(idToken: user1.idToken, tenant: tenant) == "USER_NOT_FOUND")
            #expect(try await app.lookupError(idToken: user2.idToken, tenant: tenant) == "USER_NOT_FOUND")
            #expect(try await app.lookupError(idToken: outside.idToken) == nil)
        }
    }

    @Test(
        "should throw an exception on project ID mismatch if singleProjectMode is ERROR (always here: PROJECT_NOT_FOUND; the NO_WARNING case answers the same)"
    )
    func otherProject() async throws {
        try await TestApp.router { app in
            let reply = try await app.request("GET", "/emulator/v1/projects/someproject/oobCodes")
            #expect(reply.status == 400 && reply.errorCode == "PROJECT_NOT_FOUND", "\(reply.text)")
            let path = try await app.post("/v1/projects/someproject/accounts:lookup", ["localId": ["x"]], headers: Spec.admin)
            #expect(path.errorCode == "PROJECT_NOT_FOUND", "\(path.text)")
        }
    }

    @Test("GET oobCodes lists only live codes; an email change's under the current address, with its newEmail")
    func liveCodes() async throws {
        let clock = ManualClock()
        try await TestApp.router(clock: clock) { app async throws in
            let user = try await app.registerUser(email: "alice@example.com")
            _ = try await app.api(
                "sendOobCode", ["idToken": user.idToken, "newEmail": "new@example.com", "requestType": "VERIFY_AND_CHANGE_EMAIL"])
            _ = try await app.createEmailSignInOob("bob@example.com")
            let listed = try await app.inspectOobs()
            #expect(listed.count == 2, "\(listed)")
            let change = listed.first { $0["requestType"] as? String == "VERIFY_AND_CHANGE_EMAIL" }
            #expect(change?["email"] as? String == "alice@example.com" && change?["newEmail"] as? String == "new@example.com")
            let changeLink = change?["oobLink"] as? String ?? ""
            let changeCode = change?["oobCode"] as? String ?? "-"
            #expect(changeLink.contains(changeCode))
            let signIn = try #require(listed.first { $0["requestType"] as? String == "EMAIL_SIGNIN" })
            #expect(
                try await app.api("signInWithEmailLink", ["email": "bob@example.com", "oobCode": signIn["oobCode"] as? String ?? ""])
                    .status
                    == 200)
            #expect(try await app.inspectOobs().map { $0["requestType"] as? String } == ["VERIFY_AND_CHANGE_EMAIL"])
            clock.advance(seconds: 73 * 3600)
            #expect(try await app.inspectOobs().isEmpty)
        }
    }

    @Test("DELETE oobCodes retires every listed code")
    func deleteCodes() async throws {
        try await TestApp.router { app async throws in
            let (code, _) = try await app.createEmailSignInOob("bob@example.com")
            #expect(try await app.request("DELETE", "/emulator/v1/projects/demo-actionlinks/oobCodes").status == 200)
            #expect(try await app.inspectOobs().isEmpty)
            #expect(
                try await app.api("signInWithEmailLink", ["email": "bob@example.com", "oobCode": code]).isError("INVALID_OOB_CODE"))
        }
    }

    @Test("the emulator endpoints are not served by a production server")
    func productionHasNoEmulatorEndpoints() async throws {
        let production = [
            "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": String(repeating: "t", count: 40),
        ]
        try await TestApp.router(environment: production) { app async throws in
            #expect(try await app.request("GET", "/emulator/v1/projects/demo-actionlinks/oobCodes").status == 404)
            #expect(try await app.request("DELETE", "/emulator/v1/projects/demo-actionlinks/accounts").status == 404)
        }
    }
}
