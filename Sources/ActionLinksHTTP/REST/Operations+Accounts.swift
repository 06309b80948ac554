import ActionLinks
import ActionLinksDomain
import Foundation

/// Accounts: `accounts:lookup`, `accounts:update` (profile, password, address, an `oobCode`; the
/// admin's fields), `accounts:delete`, `accounts:batchDelete`, `accounts:batchGet`,
/// `accounts:query`, `accounts:createAuthUri`, and the project's configuration.
extension IdentityToolkitAPI {
    mutating func addAccountOperations(_ services: LinkDomainServices) {
        let accounts = services.accounts
        let updater = services.updater
        let settings = services.settings

        add("lookup", legacy: "getAccountInfo", requires: [.user], body: LookupRequest.self) { fields, call, acting throws(ActionError) in
            switch acting {
            case .admin(let tenant):
                // The admin's lookup ignores an ID token, but not its tenant (Firebase routes by it).
                let found = try await accounts.lookup(
                    ids: fields.localId?.values ?? [], emails: fields.email?.values ?? [], phoneNumbers: fields.phoneNumber?.values ?? [],
                    federated: (fields.federatedUserId ?? []).compactMap { entry in
                        guard let provider = entry.providerId, let raw = entry.rawId else { return nil }
                        return FederatedIdentity(providerID: provider, rawID: raw)
                    }, tenantID: tenant.tenantID)
                return LookupResponse(users: found.isEmpty ? nil : found.map { UserRecord($0) })
            case .user(let user):
                return LookupResponse(users: [UserRecord(user.account)])
            }
        }

        add("update", legacy: "setAccountInfo", requires: [.enabledTenant], body: UpdateRequest.self) {
            fields, call, tenant throws(ActionError) in
            let link = fields.linkProviderUserInfo.map {
                AccountUpdateRequest.LinkedIdentity(
                    providerID: $0.providerId, rawID: $0.rawId, email: $0.email, displayName: $0.displayName, photoURL: $0.photoUrl)
            }
            let request = AccountUpdateRequest(
                idToken: fields.idToken, oobCode: fields.oobCode, localID: fields.localId, bodyTenant: fields.tenantId, email: fields.email,
                password: fields.password, displayName: fields.displayName.value, photoURL: fields.photoUrl.value,
                deleteAttributes: fields.deleteAttribute ?? [], deleteProviders: fields.deleteProvider ?? [], linkIdentity: link,
                disableUser: fields.disableUser?.value, emailVerified: fields.emailVerified?.value, phoneNumber: fields.phoneNumber,
                customAttributes: fields.customAttributes, revokesSessions: fields.validSince != nil,
                validSince: fields.validSince.flatMap { Int64($0.text) },
                createdAt: fields.createdAt.flatMap { Int64($0.text).map(Timestamp.init(milliseconds:)) },
                lastLoginAt: fields.lastLoginAt.flatMap { Int64($0.text).map(Timestamp.init(milliseconds:)) },
                secondFactors: fields.mfa.map { ($0.enrollments ?? []).map(\.entry) })
            let done = try await updater.update(request, caller: call.caller, tenant: tenant)
            return UpdateResponse(account: done.account, newEmail: done.newEmail, tokens: done.tokens)
        }

        add("delete", legacy: "deleteAccount", requires: [.user], body: DeleteRequest.self) { fields, call, acting throws(ActionError) in
            switch acting {
            case .admin(let tenant): try await accounts.delete(localID: fields.localId, tenantID: tenant.tenantID)
            case .user(let user): try await accounts.deleteOwn(user, caller: call.caller)
            }
            return DeleteResponse()
        }

        add("batchDelete", requires: [.admin, .tenant], body: BatchDeleteRequest.self) { fields, call, tenant throws(ActionError) in
            let errors = try await accounts.batchDelete(
                localIDs: fields.localIds ?? [], force: fields.force?.value ?? false, tenantID: tenant.tenantID)
            return BatchDeleteResponse(errors: errors.isEmpty ? nil : errors)
        }

        // `GET ...:batchGet?maxResults=&nextPageToken=`, or the legacy `downloadAccount`'s POST
        // with the same fields in its body.
        add("batchGet", legacy: "downloadAccount", methods: [.get, .post], requires: [.admin, .enabledTenant], body: BatchGetRequest.self) {
            fields, call, tenant throws(ActionError) in
            let maximum = (call.query["maxResults"] ?? fields.maxResults?.text).flatMap { Int($0) }
            let token = call.query["nextPageToken"] ?? fields.nextPageToken
            let page = try await accounts.page(tenantID: tenant.tenantID, maximum: maximum, after: token)
            return DownloadAccountResponse(users: page.accounts.map { UserRecord($0, exportingHashes: true) }, nextPageToken: page.next)
        }

        let query: @Sendable (QueryRequest, RESTCall, TenantPolicy) async throws(ActionError) -> QueryResponse = {
            fields, call, tenant throws(ActionError) in
            let query = AccountService.Query(
                expression: fields.expression, sortBy: fields.sortBy, descending: fields.order == "DESC",
                returnUserInfo: fields.returnUserInfo?.value ?? true, limit: fields.limit.flatMap { Int($0.text) },
                offset: fields.offset.flatMap { Int($0.text) })
            let found = try await accounts.query(query, tenantID: tenant.tenantID)
            return QueryResponse(recordsCount: String(found.count), userInfo: found.accounts?.map { UserRecord($0) })
        }
        add("query", requires: [.admin, .enabledTenant], body: QueryRequest.self, query)
        add("queryAccounts", on: .project, requires: [.admin, .enabledTenant], body: QueryRequest.self, query)

        add("createAuthUri", legacy: "createAuthUri", requires: [.enabledTenant], body: CreateAuthURIRequest.self) {
            fields, call, tenant throws(ActionError) in
            let sessionID = fields.sessionId ?? Secrets.sessionID()
            if let providerID = fields.providerId, !providerID.isEmpty {
                let authURI = try await services.federated.authURI(
                    providerID: providerID, continueURI: fields.continueUri, sessionID: sessionID,
                    customParameters: fields.customParameter ?? [:], scopes: fields.oauthScope, tenantID: tenant.tenantID)
                return CreateAuthURIResponse(authUri: authURI, providerId: providerID, sessionId: sessionID)
            }
            guard let methods = try await accounts.methods(identifier: fields.identifier, continueURI: fields.continueUri, tenant: tenant)
            else { return CreateAuthURIResponse(sessionId: sessionID) }
            return CreateAuthURIResponse(
                registered: methods.registered, allProviders: methods.allProviders, sessionId: sessionID,
                signinMethods: methods.signInMethods)
        }

        // `GET /v1/projects`: its path names no tenant.
        add("projects", on: .path, legacy: "getProjectConfig", methods: [.get, .post], body: EmptyRequest.self) {
            _, call throws(ActionError) in
            return ProjectConfigResponse(projectId: settings.project.id, authorizedDomains: services.authorizedDomains)
        }
    }
}

/// A body with no fields the operation reads.
struct EmptyRequest: Decodable, Sendable {}

/// `accounts:lookup`: by ID token, or (admin) by IDs, addresses, phone numbers and provider identities.
struct LookupRequest: Decodable, Sendable, CarriesIDToken {
    struct FederatedID: Decodable, Sendable {
        var providerId: String?
        var rawId: String?
    }
    var idToken: String?
    var localId: OneOrMany?
    var email: OneOrMany?
    var phoneNumber: OneOrMany?
    var federatedUserId: [FederatedID]?
    var tenantId: String?

    /// The admin's lookup is routed by the ID token's tenant too (as Firebase's).
    static var adminCountsIDTokenTenant: Bool { true }
}

/// `accounts:lookup`'s answer (no `users` when none were found, as the Node.js Admin SDK expects).
struct LookupResponse: Encodable, Sendable {
    var kind = "identitytoolkit#GetAccountInfoResponse"
    var users: [UserRecord]?
}

/// A field that may be given, given as `null` (delete), or absent.
struct Nullable<Value: Decodable & Sendable>: Sendable {
    /// `nil`: absent; `.some(nil)`: null.
    var value: Value??

    init(_ value: Value?? = nil) { self.value = value }
}

/// `accounts:update`.
struct UpdateRequest: Decodable, Sendable, NamesTenant {
    struct LinkedProvider: Decodable, Sendable {
        var providerId: String?
        var rawId: String?
        var email: String?
        var displayName: String?
        var photoUrl: String?
    }
    var idToken: String?
    var oobCode: String?
    var localId: String?
    var email: String?
    var password: String?
    var displayName = Nullable<String>()
    var photoUrl = Nullable<String>()
    var deleteAttribute: [String]?
    var deleteProvider: [String]?
    var linkProviderUserInfo: LinkedProvider?
    var disableUser: LenientBool?
    var emailVerified: LenientBool?
    var phoneNumber: String?
    var customAttributes: String?
    var validSince: LenientString?
    var createdAt: LenientString?
    var lastLoginAt: LenientString?
    /// The admin's second factors to keep (absent: unchanged).
    var mfa: MFAUpdateField?
    var tenantId: String?

    enum CodingKeys: String, CodingKey {
        case idToken, oobCode, localId, email, password, displayName, photoUrl, deleteAttribute, deleteProvider, linkProviderUserInfo
        case disableUser, emailVerified, phoneNumber, customAttributes, validSince, createdAt, lastLoginAt, mfa, tenantId
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        idToken = try container.decodeIfPresent(String.self, forKey: .idToken)
        oobCode = try container.decodeIfPresent(String.self, forKey: .oobCode)
        localId = try container.decodeIfPresent(String.self, forKey: .localId)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        password = try container.decodeIfPresent(String.self, forKey: .password)
        for (key, keyPath) in [(CodingKeys.displayName, \UpdateRequest.displayName), (.photoUrl, \.photoUrl)] {
            if container.contains(key) {
                self[keyPath: keyPath] = Nullable(
                    try container.decodeNil(forKey: key) ? .some(nil) : try container.decode(String.self, forKey: key))
            }
        }
        deleteAttribute = try container.decodeIfPresent([String].self, forKey: .deleteAttribute)
        deleteProvider = try container.decodeIfPresent([String].self, forKey: .deleteProvider)
        linkProviderUserInfo = try container.decodeIfPresent(LinkedProvider.self, forKey: .linkProviderUserInfo)
        disableUser = try container.decodeIfPresent(LenientBool.self, forKey: .disableUser)
        emailVerified = try container.decodeIfPresent(LenientBool.self, forKey: .emailVerified)
        phoneNumber = try container.decodeIfPresent(String.self, forKey: .phoneNumber)
        customAttributes = try container.decodeIfPresent(String.self, forKey: .customAttributes)
        validSince = try container.decodeIfPresent(LenientString.self, forKey: .validSince)
        createdAt = try container.decodeIfPresent(LenientString.self, forKey: .createdAt)
        lastLoginAt = try container.decodeIfPresent(LenientString.self, forKey: .lastLoginAt)
        mfa = try container.decodeIfPresent(MFAUpdateField.self, forKey: .mfa)
        tenantId = try container.decodeIfPresent(String.self, forKey: .tenantId)
    }
}

/// `accounts:update`'s answer; a new password or address comes with the new session's tokens.
struct UpdateResponse: Encodable, Sendable {
    var kind = "identitytoolkit#SetAccountInfoResponse"
    var localId: String
    var email: String?
    var displayName: String?
    var photoUrl: String?
    var emailVerified: Bool
    var providerUserInfo: [ProviderUserInfo]
    var newEmail: String?
    var passwordHash: String?
    var idToken: String?
    var refreshToken: String?
    var expiresIn: String?

    init(account: Account, newEmail: String? = nil, tokens: SignedInUser.Tokens? = nil) {
        localId = account.localID
        email = account.email
        displayName = account.displayName
        photoUrl = account.photoURL
        emailVerified = account.emailVerified
        providerUserInfo = ProviderUserInfo.entries(of: account)
        self.newEmail = newEmail
        passwordHash = account.passwordHash == nil ? nil : UserRecord.redactedHash
        idToken = tokens?.idToken
        refreshToken = tokens?.refreshToken
        expiresIn = tokens?.expiresIn
    }
}

/// `accounts:delete`: the user's own (ID token) or the admin's (`localId`).
struct DeleteRequest: Decodable, Sendable, CarriesIDToken {
    var idToken: String?
    var localId: String?
    var tenantId: String?
}

/// `accounts:delete`'s answer.
struct DeleteResponse: Encodable, Sendable {
    var kind = "identitytoolkit#DeleteAccountResponse"
}

/// `accounts:batchDelete`.
struct BatchDeleteRequest: Decodable, Sendable, NamesTenant {
    var localIds: [String]?
    var force: LenientBool?
    var tenantId: String?
}

/// `accounts:batchDelete`'s answer: the accounts left alone.
struct BatchDeleteResponse: Encodable, Sendable {
    var errors: [AccountService.BatchDeleteError]?
}

/// `accounts:batchGet`'s fields in a body (the legacy `downloadAccount`).
struct BatchGetRequest: Decodable, Sendable, NamesTenant {
    var maxResults: LenientString?
    var nextPageToken: String?
    var tenantId: String?

    /// `GET ...:batchGet?tenantId=`: the query names it.
    func namedTenant(in call: RESTCall) -> String? { call.query["tenantId"] ?? tenantId }
}

/// `accounts:batchGet`'s answer (what `firebase-admin`'s `list_users` pages through).
struct DownloadAccountResponse: Encodable, Sendable {
    var kind = "identitytoolkit#DownloadAccountResponse"
    var users: [UserRecord]
    var nextPageToken: String?
}

/// `accounts:query`.
struct QueryRequest: Decodable, Sendable, NamesTenant {
    var returnUserInfo: LenientBool?
    var limit: LenientString?
    var offset: LenientString?
    var sortBy: String?
    var order: String?
    var expression: [ClaimValue]?
    var tenantId: String?
}

/// `accounts:query`'s answer.
struct QueryResponse: Encodable, Sendable {
    var recordsCount: String
    var userInfo: [UserRecord]?
}

/// `accounts:createAuthUri`.
struct CreateAuthURIRequest: Decodable, Sendable, NamesTenant {
    var identifier: String?
    var continueUri: String?
    var providerId: String?
    var sessionId: String?
    var customParameter: [String: String]?
    var oauthScope: String?
    var tenantId: String?
}

/// `accounts:createAuthUri`'s answer: how an address signs in (none of it with email-enumeration
/// protection), or where a provider's sign-in starts.
struct CreateAuthURIResponse: Encodable, Sendable {
    var kind = "identitytoolkit#CreateAuthUriResponse"
    var registered: Bool?
    var allProviders: [String]?
    var authUri: String?
    var providerId: String?
    var sessionId: String
    var signinMethods: [String]?
}

/// `GET /v1/projects` (`getProjectConfig`): the domains web sign-in may return to.
struct ProjectConfigResponse: Encodable, Sendable {
    var projectId: String
    var authorizedDomains: [String]
}
