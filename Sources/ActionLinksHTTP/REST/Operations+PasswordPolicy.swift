import ActionLinksDomain
import Foundation

/// `GET /v2/passwordPolicy?key=<API key>[&tenantId=<t>]`: the password policy of the project or of
/// a tenant in Google's shape (``PasswordPolicyResponse``), what the JS SDK's `validatePassword`
/// reads before sign-up and reset. Behind the API key check and CORS like every call; an unknown
/// tenant is `TENANT_NOT_FOUND` (a malformed one `INVALID_TENANT_ID`), as every call that names a
/// tenant answers here. Firebase's Auth emulator does not implement it (501).
extension IdentityToolkitAPI {
    mutating func addPasswordPolicyOperations() {
        add("passwordPolicy", on: .path, methods: [.get], requires: [.tenant], body: PasswordPolicyRequest.self) { _, _, tenant in
            PasswordPolicyResponse(tenant.passwords)
        }
    }
}

/// The call's tenant is the query's `tenantId` (the request body must be empty).
struct PasswordPolicyRequest: Decodable, Sendable, NamesTenant {
    var tenantId: String?

    func namedTenant(in call: RESTCall) -> String? { call.query["tenantId"] ?? tenantId }
}
