/// Who makes a call, as the HTTP layer resolved it once, for the services: nothing of HTTP in it.
struct Caller: Sendable {
    /// The admin credential (Firebase's privileged request), or a client with the API key.
    var isAdmin: Bool
    /// The tenant the request's path names (`/projects/<p>/tenants/<t>/...`), if any.
    var pathTenant: String?
    /// The client's IP address (rate limits, and who consumed a code).
    var clientAddress: String?
    /// `X-Firebase-Locale`: the language of the links and mail a call sends.
    var locale: String?
    /// The API key a client called with (`nil` for the admin): the key the links it asks for carry.
    var apiKey: String?

    /// Who consumed a code, for the store.
    var consumer: String { "api " + (clientAddress ?? "?") }

    /// The tenant of the call: the path's, else the body's, else the ID token's (two that differ
    /// are `TENANT_ID_MISMATCH`), checked by `tenants`.
    func tenant(body bodyTenant: String?, token tokenTenant: String? = nil, tenants: TenantDirectory) async throws(ActionError)
        -> TenantPolicy
    {
        try await tenants.policy(for: tenantID(body: bodyTenant, token: tokenTenant))
    }

    /// The ID of the call's tenant ("" for the project): the path's, else the body's, else the ID
    /// token's; two that differ are `TENANT_ID_MISMATCH`.
    func tenantID(body bodyTenant: String?, token tokenTenant: String? = nil) throws(ActionError) -> String {
        let given = [pathTenant, bodyTenant, tokenTenant].compactMap { $0?.isEmpty == false ? $0 : nil }
        if let first = given.first, given.contains(where: { $0 != first }) { throw ActionError(.tenantIDMismatch) }
        return given.first ?? ""
    }
}
