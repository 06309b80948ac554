import ActionLinks
import ActionLinksDomain
import Foundation
import Hummingbird

/// What Firebase's Auth emulator answers under `/emulator/v1/projects/<p>[/tenants/<t>]/`, for
/// test suites that reset and inspect it (a development server only; see ``EmulatorRoutes``).
struct EmulatorEndpoints: Sendable {
    let listing: IssuedLinkListing?
    let codes: any CodeStore
    let accounts: any AccountStore
    let keys: ServerKeys
    let tenants: TenantDirectory
    let store: StoreGateway
    let clock: any ServiceClock
    let projectID: String
    let configuration: ProjectSettingsResponse

    init(services: LinkDomainServices) {
        listing = services.listing
        codes = services.codes
        accounts = services.accountStore
        keys = services.keys
        tenants = services.tenants
        store = services.store
        clock = services.clock
        projectID = services.settings.project.id
        configuration = ProjectSettingsResponse(
            allowDuplicateEmails: !services.settings.users.oneAccountPerEmail,
            improvedEmailPrivacy: services.settings.users.emailEnumerationProtection, withBlockingFunctions: false)
    }

    /// The project's (or tenant's) ID, checked.
    private func tenant(_ context: ServerRequestContext) async throws(ActionError) -> String {
        guard context.parameters.get("project") == projectID else { throw ActionError(.projectNotFound) }
        return try await tenants.policy(for: context.parameters.get("tenant") ?? "").tenantID
    }

    /// `GET .../oobCodes`: the codes this process issued that still work, oldest first; an email
    /// change's under the current address, with its `newEmail`.
    func codes(_ context: ServerRequestContext) async throws -> Response {
        let tenantID = try await tenant(context)
        var live: [OobCodeListing.Entry] = []
        for entry in listing?.all(tenantID: tenantID) ?? [] {
            let state = try await store.call { try await self.codes.lookup(hashes: self.keys.codeHashes(entry.code), now: self.clock.now) }
            guard case .live = state else { continue }
            live.append(
                .init(
                    email: entry.email, newEmail: entry.newEmail, oobCode: entry.code, oobLink: entry.link,
                    requestType: entry.mode.requestType))
        }
        return RESTAPIResponse.json(IdentityToolkitJSON.encode(OobCodeListing(oobCodes: live)))
    }

    /// `DELETE .../oobCodes`: retires every code the listing holds and forgets them.
    func deleteCodes(_ context: ServerRequestContext) async throws -> Response {
        let tenantID = try await tenant(context)
        let removed = listing?.removeAll(tenantID: tenantID) ?? []
        for email in Set(removed.map(\.email) + removed.compactMap(\.newEmail)) {
            try await store.call { try await self.codes.retireCodes(tenantID: tenantID, email: email, now: self.clock.now) }
        }
        return RESTAPIResponse.json(Data("{}".utf8))
    }

    /// `GET .../config`: the switches the emulator lets tests flip, as this server's
    /// configuration sets them (`PATCH` is refused: only the configuration changes them).
    func config(_ context: ServerRequestContext) async throws -> Response {
        guard context.parameters.get("project") == projectID else { throw ActionError(.projectNotFound) }
        return RESTAPIResponse.json(IdentityToolkitJSON.encode(configuration))
    }

    /// `DELETE .../accounts`: every account of the project (or tenant), with its sessions.
    func deleteAccounts(_ context: ServerRequestContext) async throws -> Response {
        let tenantID = try await tenant(context)
        try await store.call { try await self.accounts.deleteAllAccounts(tenantID: tenantID) }
        return RESTAPIResponse.json(Data("{}".utf8))
    }
}

/// `GET /emulator/v1/projects/<p>/oobCodes`'s answer.
struct OobCodeListing: Encodable, Sendable {
    struct Entry: Encodable, Sendable {
        var email: String
        var newEmail: String?
        var oobCode: String
        var oobLink: String
        var requestType: String
    }
    var oobCodes: [Entry]
}
