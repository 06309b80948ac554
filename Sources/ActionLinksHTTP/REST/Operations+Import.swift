import ActionLinks
import ActionLinksDomain
import Foundation

/// `accounts:batchCreate`: importing users (what `firebase-admin`'s `import_users` and
/// `actionlinks users import` call).
extension IdentityToolkitAPI {
    mutating func addImportOperations(_ services: LinkDomainServices) {
        let importer = UserImport(accounts: services.accountStore, signIn: services.signIn, store: services.store, clock: services.clock)

        add("batchCreate", legacy: "uploadAccount", requires: [.admin, .enabledTenant], body: BatchCreateRequest.self) {
            fields, call, tenant throws(ActionError) in
            let hashes = UserImport.HashParameters(
                algorithm: fields.hashAlgorithm, signerKey: fields.signerKey.flatMap(UserImport.base64),
                saltSeparator: fields.saltSeparator.flatMap(UserImport.base64) ?? [], rounds: fields.rounds.flatMap { Int($0.text) },
                memoryCost: fields.memoryCost.flatMap { Int($0.text) })
            let users = (fields.users ?? []).map { user in
                UserImport.User(
                    localID: user.localId, tenantID: user.tenantId, email: user.email, emailVerified: user.emailVerified?.value ?? false,
                    displayName: user.displayName, photoURL: user.photoUrl, phoneNumber: user.phoneNumber,
                    disabled: user.disabled?.value ?? false, customAttributes: user.customAttributes, passwordHash: user.passwordHash,
                    salt: user.salt, createdAt: user.createdAt.flatMap { Int64($0.text).map(Timestamp.init(milliseconds:)) },
                    lastLoginAt: user.lastLoginAt.flatMap { Int64($0.text).map(Timestamp.init(milliseconds:)) },
                    providers: (user.providerUserInfo ?? []).map { info -> FederatedIdentity? in
                        guard let provider = info.providerId, !provider.isEmpty, let raw = info.rawId, !raw.isEmpty else { return nil }
                        return FederatedIdentity(
                            providerID: provider, rawID: raw, email: info.email.flatMap(EmailAddress.canonical),
                            displayName: info.displayName,
                            photoURL: info.photoUrl)
                    }, rawPassword: user.rawPassword, secondFactors: (user.mfaInfo ?? []).map(\.entry))
            }
            let failures = try await importer.run(
                users: users, tenant: tenant, hashes: hashes, sanityCheck: fields.sanityCheck?.value ?? false,
                allowOverwrite: fields.allowOverwrite?.value ?? false)
            return BatchCreateResponse(error: failures)
        }
    }
}

/// `accounts:batchCreate`.
struct BatchCreateRequest: Decodable, Sendable, NamesTenant {
    struct User: Decodable, Sendable {
        struct Provider: Decodable, Sendable {
            var providerId: String?
            var rawId: String?
            var email: String?
            var displayName: String?
            var photoUrl: String?
        }
        var localId: String?
        var tenantId: String?
        var email: String?
        var emailVerified: LenientBool?
        var displayName: String?
        var photoUrl: String?
        var phoneNumber: String?
        var disabled: LenientBool?
        var customAttributes: String?
        var passwordHash: String?
        var rawPassword: String?
        var salt: String?
        var createdAt: LenientString?
        var lastLoginAt: LenientString?
        var providerUserInfo: [Provider]?
        /// Second factors: refused (``SecondFactorEntry/importRefusal(_:)``).
        var mfaInfo: [MFAEnrollmentField]?
    }
    var users: [User]?
    var hashAlgorithm: String?
    var signerKey: String?
    var saltSeparator: String?
    var rounds: LenientString?
    var memoryCost: LenientString?
    var sanityCheck: LenientBool?
    var allowOverwrite: LenientBool?
    var tenantId: String?
}

/// `accounts:batchCreate`'s answer: the users that were not imported (`error`, always present).
struct BatchCreateResponse: Encodable, Sendable {
    var kind = "identitytoolkit#UploadAccountResponse"
    var error: [UserImport.Failure]
}
