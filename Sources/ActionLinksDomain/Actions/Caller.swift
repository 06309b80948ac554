/// Who makes a call, as the HTTP layer resolved it once, for the services: nothing of HTTP in it.
package struct Caller: Sendable {
    /// The admin credential (Firebase's privileged request), or a client with the API key.
    package var isAdmin: Bool
    /// The tenant the request's path names (`/projects/<p>/tenants/<t>/...`), if any.
    package var pathTenant: String?
    /// The client's IP address (rate limits, and who consumed a code).
    package var clientAddress: String?
    /// `X-Firebase-Locale`: the language of the links and mail a call sends.
    package var locale: String?
    /// The API key a client called with (`nil` for the admin): the key the links it asks for carry.
    var apiKey: String?

    /// Who consumed a code, for the store.
    package var consumer: String { "api " + (clientAddress ?? "?") }

    /// The tenant of the call: the path's, else the body's, else the ID token's (two that differ
    /// are `TENANT_ID_MISMATCH`), checked by `tenants`.
    package func tenant(body bodyTenant: String?, token tokenTenant: String? = nil, tenants: TenantDirectory) async throws(ActionError)
        -> TenantPolicy
    {
        try await tenants.policy(for: tenantID(body: bodyTenant, token: tokenTenant))
    }

    /// The ID of the call's tenant ("" for the project): the path's, else the body's, else the ID
    /// token's; two that differ are `TENANT_ID_MISMATCH`.
    package func tenantID(body bodyTenant: String?, token tokenTenant: String? = nil) throws(ActionError) -> String {
        let given = [pathTenant, bodyTenant, tokenTenant].compactMap { $0?.isEmpty == false ? $0 : nil }
        if let first = given.first, given.contains(where: { $0 != first }) { throw ActionError(.tenantIDMismatch) }
        return given.first ?? ""
    }

    /// Makes the value from each of its fields.
    package init(isAdmin: Bool, pathTenant: String? = nil, clientAddress: String? = nil, locale: String? = nil, apiKey: String? = nil) {
        self.isAdmin = isAdmin
        self.pathTenant = pathTenant
        self.clientAddress = clientAddress
        self.locale = locale
        self.apiKey = apiKey
    }
}
