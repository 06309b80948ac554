import ActionLinksConfiguration

/// The project's tenants (`tenants`): only configured ones exist.
struct Tenants: Sendable {
    let ids: Set<String>

    /// The tenant a call names, checked: "" for the project itself; `INVALID_TENANT_ID` for an ID
    /// that cannot be one, `TENANT_NOT_FOUND` for one that is not configured.
    func resolve(_ id: String?) throws(ActionError) -> String {
        guard let id, !id.isEmpty else { return "" }
        guard ServiceSettings.isWellFormedTenantID(id) else {
            throw ActionError(.invalidTenantID, "a tenant ID is 1 to 64 letters, digits and hyphens")
        }
        guard ids.contains(id) else { throw ActionError(.tenantNotFound, "There is no tenant with this ID.") }
        return id
    }
}
