import ActionLinks
import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import Foundation
import Testing

/// The helpers of Firebase's Auth emulator specs (firebase-tools
/// `src/emulator/auth/testing/helpers.ts`), on a ``TestApp``: the spec suites (ActionLinksServerTests'
/// `FirebaseSpecs/`) read like the specs they port. Clients call `/v1/accounts:*` with the API key,
/// the admin `/v1/projects/demo-actionlinks[/tenants/<t>]/accounts:*` with `Bearer owner`.
public enum Spec {
    /// `TEST_PHONE_NUMBER`.
    public static let phoneNumber = "+15555550100"
    /// `DISPLAY_NAME`.
    public static let displayName = "Example User"
    /// `PHOTO_URL`.
    public static let photoURL = "http://fakephotourl.test"
    /// The spec's password; the shipped policy wants 8 characters, and it has 10.
    public static let password = "notasecret"
    /// The admin's header.
    public static let admin = ["Authorization": "Bearer owner"]
    /// The payload of an ID token (or any JWT), decoded.
    public static func payload(_ jwt: String) -> [String: Any] {
        part(jwt, 1)
    }

    /// The header of a JWT, decoded.
    public static func header(_ jwt: String) -> [String: Any] {
        part(jwt, 0)
    }

    private static func part(_ jwt: String, _ index: Int) -> [String: Any] {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count > index, let data = Data(base64URL: String(parts[index])) else { return [:] }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }

    /// `firebase.sign_in_provider` of an ID token.
    public static func signInProvider(_ idToken: String) -> String? {
        (payload(idToken)["firebase"] as? [String: Any])?["sign_in_provider"] as? String
    }

    /// An unsigned JWT (`alg: none`), as the specs make custom tokens with jsonwebtoken.
    public static func unsignedJWT(_ payload: [String: Any]) -> String {
        func encode(_ object: [String: Any]) -> String {
            ((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()).base64URLEncodedString()
        }
        return encode(["alg": "none", "typ": "JWT"]) + "." + encode(payload) + "."
    }

    /// A custom token as the specs make them: unsigned, for Firebase Auth's audience.
    public static func customToken(_ claims: [String: Any]) -> String {
        var payload = claims
        let now = Int(Date().timeIntervalSince1970)
        payload["aud"] = "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"
        payload["iss"] = "fake-service-account@example.com"
        payload["sub"] = "fake-service-account@example.com"
        payload["iat"] = now
        payload["exp"] = now + 3600
        return unsignedJWT(payload)
    }

    /// A JSON body.
    public static func json(_ object: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
    }
}

/// One signed-in user of a spec.
public struct SpecUser: Sendable {
    public var localId: String
    public var idToken: String
    public var refreshToken: String
    public var email: String?
}

extension TestApp {
    /// `registerUser`: a client signs up with an address and a password.
    public func registerUser(
        email: String, password: String = Spec.password, displayName: String? = nil, tenant: String? = nil
    ) async throws -> SpecUser {
        var fields: [String: Any] = ["email": email, "password": password]
        if let displayName { fields["displayName"] = displayName }
        return try signedIn(try await api("signUp", fields, tenant: tenant), "signUp")
    }

    /// `registerAnonUser`: a client signs in anonymously.
    public func registerAnonUser(tenant: String? = nil) async throws -> SpecUser {
        try signedIn(try await api("signUp", ["returnSecureToken": true], tenant: tenant), "anonymous signUp")
    }

    /// `signInWithEmailLink`: the admin has a sign-in code returned, and a client signs in with it
    /// (linking it to `idToken`'s user when given).
    public func signInWithEmailLink(_ email: String, idToken: String? = nil, tenant: String? = nil) async throws -> SpecUser {
        let code = try await createEmailSignInOob(email, tenant: tenant).oobCode
        var fields: [String: Any] = ["email": email, "oobCode": code]
        if let idToken { fields["idToken"] = idToken }
        return try signedIn(try await api("signInWithEmailLink", fields, tenant: tenant), "signInWithEmailLink")
    }

    /// `signInWithPassword`.
    public func signInWithPassword(_ email: String, _ password: String = Spec.password, tenant: String? = nil) async throws -> SpecUser {
        try signedIn(try await api("signInWithPassword", ["email": email, "password": password], tenant: tenant), "signInWithPassword")
    }

    /// A user with a phone number the admin set, signed in with a custom token (this server has no
    /// SMS sign-in; the specs' `signInWithPhoneNumber` makes such a user).
    public func phoneUser(_ phoneNumber: String = Spec.phoneNumber, tenant: String? = nil) async throws -> SpecUser {
        let created = try await api("create", ["phoneNumber": phoneNumber], admin: true, tenant: tenant)
        let localId = try #require(created.json["localId"] as? String, "\(created.text)")
        var claims: [String: Any] = ["uid": localId]
        if let tenant { claims["tenant_id"] = tenant }
        let reply = try await api("signInWithCustomToken", ["token": Spec.customToken(claims)], tenant: tenant)
        var user = try signedIn(reply, "signInWithCustomToken")
        user.localId = localId
        return user
    }

    /// `signInWithFakeClaims`: a federated sign-in with the provider's claims as JSON, which a
    /// development server takes on their word from a provider it has not configured, as the emulator does.
    public func signInWithFakeClaims(_ providerID: String, _ claims: [String: Any], tenant: String? = nil) async throws -> SpecUser {
        var all: [String: Any] = ["iss": "example.com", "aud": "example.com", "exp": 1_597_974_008, "iat": 1_597_970_408]
        for (key, value) in claims { all[key] = value }
        let token = String(decoding: Spec.json(all), as: UTF8.self)
        let postBody = "providerId=\(HTMLForm.encode(component: providerID))&id_token=\(HTMLForm.encode(component: token))"
        let reply = try await api(
            "signInWithIdp",
            ["postBody": postBody, "requestUri": "http://localhost", "returnIdpCredential": true, "returnSecureToken": true],
            tenant: tenant)
        return try signedIn(reply, "signInWithIdp")
    }

    private func signedIn(_ reply: HTTPReply, _ what: String) throws -> SpecUser {
        guard reply.status == 200, let idToken = reply.json["idToken"] as? String else {
            throw TestSupportError("\(what) failed: \(reply.status) \(reply.text)")
        }
        let payload = Spec.payload(idToken)
        return SpecUser(
            localId: reply.json["localId"] as? String ?? payload["user_id"] as? String ?? "", idToken: idToken,
            refreshToken: reply.json["refreshToken"] as? String ?? "", email: reply.json["email"] as? String)
    }

    /// `createEmailSignInOob`: the admin has an email sign-in code returned.
    public func createEmailSignInOob(_ email: String, tenant: String? = nil) async throws -> (oobCode: String, oobLink: String) {
        let reply = try await api(
            "sendOobCode", ["email": email, "requestType": "EMAIL_SIGNIN", "returnOobLink": true], admin: true, tenant: tenant)
        guard reply.status == 200, let code = reply.json["oobCode"] as? String, let link = reply.json["oobLink"] as? String else {
            throw TestSupportError("sendOobCode failed: \(reply.status) \(reply.text)")
        }
        return (code, link)
    }

    /// `getAccountInfoByIdToken`: the user's own lookup.
    public func accountInfo(idToken: String, tenant: String? = nil) async throws -> [String: Any] {
        let reply = try await api("lookup", ["idToken": idToken], tenant: tenant)
        let users = reply.json["users"] as? [[String: Any]] ?? []
        guard reply.status == 200, users.count == 1 else { throw TestSupportError("lookup failed: \(reply.status) \(reply.text)") }
        return users[0]
    }

    /// `getAccountInfoByLocalId`: the admin's lookup.
    public func accountInfo(localId: String, tenant: String? = nil) async throws -> [String: Any] {
        let reply = try await api("lookup", ["localId": [localId]], admin: true, tenant: tenant)
        let users = reply.json["users"] as? [[String: Any]] ?? []
        guard reply.status == 200, users.count == 1 else { throw TestSupportError("lookup failed: \(reply.status) \(reply.text)") }
        return users[0]
    }

    /// The error code a client's lookup with `idToken` answers (`expectUserNotExistsForIdToken`
    /// expects `USER_NOT_FOUND`, `expectIdTokenExpired` `TOKEN_EXPIRED`), `nil` when it works.
    public func lookupError(idToken: String, tenant: String? = nil) async throws -> String? {
        let reply = try await api("lookup", ["idToken": idToken], tenant: tenant)
        return reply.status == 200 ? nil : reply.errorCode
    }

    /// `inspectOobs`: the live codes, as the emulator lists them.
    public func inspectOobs(tenant: String? = nil) async throws -> [[String: Any]] {
        let path = "/emulator/v1/projects/\(TestProject.id)" + (tenant.map { "/tenants/\($0)" } ?? "") + "/oobCodes"
        let reply = try await request("GET", path)
        guard reply.status == 200 else { throw TestSupportError("oobCodes failed: \(reply.status) \(reply.text)") }
        return reply.json["oobCodes"] as? [[String: Any]] ?? []
    }

    /// `getSigninMethods`: `createAuthUri`'s `signinMethods` for an address.
    public func signInMethods(_ email: String, tenant: String? = nil) async throws -> [String] {
        let reply = try await api("createAuthUri", ["continueUri": "http://example.com/", "identifier": email], tenant: tenant)
        return reply.json["signinMethods"] as? [String] ?? []
    }

    /// `updateAccountByLocalId`: the admin's `accounts:update`.
    @discardableResult
    public func updateAccount(localId: String, _ fields: [String: Any], tenant: String? = nil) async throws -> HTTPReply {
        var all = fields
        all["localId"] = localId
        let reply = try await api("update", all, admin: true, tenant: tenant)
        guard reply.status == 200 else { throw TestSupportError("update failed: \(reply.status) \(reply.text)") }
        return reply
    }

    /// `registerTenant`: the admin creates a tenant (Firebase's defaults: every switch off unless given).
    public func registerTenant(_ fields: [String: Any]) async throws -> String {
        let reply = try await post("/v2/projects/\(TestProject.id)/tenants", fields, headers: Spec.admin)
        guard reply.status == 200, let id = reply.json["tenantId"] as? String else {
            throw TestSupportError("tenant creation failed: \(reply.status) \(reply.text)")
        }
        return id
    }

    /// A tenant with every sign-in method on, as the specs make them for tenant cases.
    public func registerEnabledTenant() async throws -> String {
        try await registerTenant([
            "disableAuth": false, "allowPasswordSignup": true, "enableEmailLinkSignin": true, "enableAnonymousUser": true,
        ])
    }
}

extension HTTPReply {
    /// The whole error message (`CODE : detail`).
    public var errorMessage: String { ((json["error"] as? [String: Any])?["message"] as? String) ?? "" }

    /// Whether this is a 400 whose error code is `code`.
    public func isError(_ code: String, status: Int = 400) -> Bool { self.status == status && errorCode == code }
}
