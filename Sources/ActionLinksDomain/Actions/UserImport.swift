import ActionLinks
import Foundation

/// Imports users as Firebase's `accounts:batchCreate` does (what `firebase-admin`'s
/// `import_users` and `actionlinks users import` call): up to 1000 at once, each checked on its
/// own (a refused user is reported by its index, the others are imported), passwords kept as
/// Firebase's scrypt hashes (``ImportedPasswordHashes``) until their next sign-in.
package struct UserImport: Sendable {
    let accounts: any AccountStore
    let signIn: SignInService
    let store: StoreGateway
    let clock: any ServiceClock

    /// The project-wide parameters of the hashes in a request.
    package struct HashParameters: Sendable {
        var algorithm: String?
        var signerKey: [UInt8]?
        var saltSeparator: [UInt8]
        var rounds: Int?
        var memoryCost: Int?

        /// Makes the value from each of its fields.
        package init(
            algorithm: String? = nil, signerKey: [UInt8]? = nil, saltSeparator: [UInt8], rounds: Int? = nil, memoryCost: Int? = nil
        ) {
            self.algorithm = algorithm
            self.signerKey = signerKey
            self.saltSeparator = saltSeparator
            self.rounds = rounds
            self.memoryCost = memoryCost
        }
    }

    /// One user as a request gives it.
    package struct User: Sendable {
        var localID: String?
        var tenantID: String?
        var email: String?
        var emailVerified: Bool
        var displayName: String?
        var photoURL: String?
        var phoneNumber: String?
        var disabled: Bool
        var customAttributes: String?
        var passwordHash: String?
        var salt: String?
        var createdAt: Timestamp?
        var lastLoginAt: Timestamp?
        var providers: [FederatedIdentity?]
        /// A password in plain text (Identity Toolkit's input-only `rawPassword`), used when no
        /// hash is given.
        var rawPassword: String? = nil
        /// Why the user's `rawPassword` was refused (the password policy), if it was.
        var passwordRefusal: String? = nil
        /// Its second factors (`mfaInfo`): a user with any is refused (``SecondFactorEntry/importRefusal(_:)``).
        var secondFactors: [SecondFactorEntry] = []

        /// Makes the value from each of its fields.
        package init(
            localID: String? = nil, tenantID: String? = nil, email: String? = nil, emailVerified: Bool, displayName: String? = nil,
            photoURL: String? = nil, phoneNumber: String? = nil, disabled: Bool, customAttributes: String? = nil,
            passwordHash: String? = nil, salt: String? = nil, createdAt: Timestamp? = nil, lastLoginAt: Timestamp? = nil,
            providers: [FederatedIdentity?], rawPassword: String? = nil, passwordRefusal: String? = nil,
            secondFactors: [SecondFactorEntry] = []
        ) {
            self.localID = localID
            self.tenantID = tenantID
            self.email = email
            self.emailVerified = emailVerified
            self.displayName = displayName
            self.photoURL = photoURL
            self.phoneNumber = phoneNumber
            self.disabled = disabled
            self.customAttributes = customAttributes
            self.passwordHash = passwordHash
            self.salt = salt
            self.createdAt = createdAt
            self.lastLoginAt = lastLoginAt
            self.providers = providers
            self.rawPassword = rawPassword
            self.passwordRefusal = passwordRefusal
            self.secondFactors = secondFactors
        }
    }

    /// A user that was not imported.
    package struct Failure: Encodable, Sendable, Equatable {
        var index: Int
        var message: String
    }

    /// Imports `users` into `tenant`; returns the refused ones.
    package func run(
        users given: [User], tenant: TenantPolicy, hashes: HashParameters, sanityCheck: Bool, allowOverwrite: Bool
    ) async throws(ActionError) -> [Failure] {
        guard !given.isEmpty else { throw ActionError(.missingUserAccount) }
        guard given.count <= 1000 else { throw ActionError.invalidArgument("at most 1000 users are imported at once") }
        if let algorithm = hashes.algorithm, algorithm != "SCRYPT" {
            throw ActionError(
                .invalidHashAlgorithm,
                "\(algorithm.prefix(40)) is not supported; export from Firebase gives SCRYPT (Firebase's scrypt) hashes")
        }
        // A plain-text password is hashed as a sign-up's would be, after the tenant's password
        // policy; one the policy refuses refuses its user only.
        var users = given
        for index in users.indices where users[index].passwordHash?.isEmpty ?? true {
            guard let raw = users[index].rawPassword else { continue }
            do throws(ActionError) {
                try tenant.passwords.check(raw)
                users[index].passwordHash = try await signIn.hashed(raw)
            } catch {
                users[index].passwordRefusal = error.message
            }
        }
        let tenantID = tenant.tenantID
        if users.contains(where: { $0.passwordHash.map(Self.isFirebaseHash) ?? false }) {
            guard hashes.algorithm == "SCRYPT", let key = hashes.signerKey, !key.isEmpty, let rounds = hashes.rounds,
                (1...8).contains(rounds),
                let memory = hashes.memoryCost, (1...14).contains(memory)
            else {
                throw ActionError.invalidArgument(
                    "Firebase scrypt hashes need hashAlgorithm SCRYPT with signerKey, rounds (1-8) and memoryCost (1-14)")
            }
        }
        // Checks across the request, before anything is written.
        var seenIDs: Set<String> = []
        var seenEmails: Set<String> = []
        var seenIdentities: Set<String> = []
        for user in users {
            let id = user.localID ?? ""
            if !allowOverwrite, !seenIDs.insert(id).inserted { throw ActionError(.duplicateLocalID, id) }
            if sanityCheck, let email = user.email.flatMap(EmailAddress.canonical), !seenEmails.insert(email).inserted {
                throw ActionError(.duplicateEmail, email)
            }
            for case let identity? in user.providers where sanityCheck {
                if !seenIdentities.insert(identity.providerID + "\u{1F}" + identity.rawID).inserted {
                    throw ActionError(.duplicateRawID, "Provider id(\(identity.providerID)), Raw id(\(identity.rawID))")
                }
            }
        }
        let now = clock.now
        var prepared: [(index: Int, account: Account)] = []
        var failures: [Failure] = []
        for (index, user) in users.enumerated() {
            switch Self.account(from: user, tenantID: tenantID, hashes: hashes, now: now) {
            case .success(let account): prepared.append((index, account))
            case .failure(let failure): failures.append(Failure(index: index, message: failure.message))
            }
        }
        let ready = prepared
        let refused = try await store.call {
            try await self.accounts.transaction(tenantID: tenantID, now: now) { tx -> [Failure] in
                try tx.prefetch(
                    ready.flatMap { entry -> [AccountKey] in
                        var keys: [AccountKey] = [.id(entry.account.localID)]
                        if let email = entry.account.email { keys.append(.email(email)) }
                        if let phone = entry.account.phoneNumber { keys.append(.phoneNumber(phone)) }
                        keys += entry.account.federatedIdentities.map { .federated(providerID: $0.providerID, rawID: $0.rawID) }
                        return keys
                    })
                var refused: [Failure] = []
                for (index, account) in ready {
                    let existing = try tx.account(id: account.localID)
                    if existing != nil, !allowOverwrite {
                        refused.append(Failure(index: index, message: "localId belongs to an existing account - can not overwrite."))
                        continue
                    }
                    if let email = account.email, let owner = try tx.account(email: email), owner.localID != account.localID {
                        refused.append(Failure(index: index, message: "email exists in other account in database"))
                        continue
                    }
                    if let phone = account.phoneNumber, let owner = try tx.account(phoneNumber: phone), owner.localID != account.localID {
                        refused.append(Failure(index: index, message: "phone number exists in other account in database"))
                        continue
                    }
                    var clash = false
                    for identity in account.federatedIdentities {
                        if let owner = try tx.account(providerID: identity.providerID, rawID: identity.rawID),
                            owner.localID != account.localID
                        {
                            clash = true
                        }
                    }
                    if clash {
                        refused.append(Failure(index: index, message: "raw id exists in other account in database"))
                        continue
                    }
                    if existing != nil { try tx.update(account) } else { try tx.insert(account) }
                }
                return refused
            }
        }
        return (failures + refused).sorted { $0.index < $1.index }
    }

    struct Refusal: Error {
        var message: String
    }

    /// The account a user becomes, or why it cannot.
    static func account(from user: User, tenantID: String, hashes: HashParameters, now: Timestamp) -> Result<Account, Refusal> {
        guard let localID = user.localID, !localID.isEmpty else { return .failure(Refusal(message: "localId is missing")) }
        guard localID.utf8.count <= 128 else { return .failure(Refusal(message: "localId is longer than 128 characters")) }
        if let tenant = user.tenantID, tenant != tenantID {
            return .failure(Refusal(message: "Tenant id in userInfo does not match the tenant id in request."))
        }
        if let refusal = user.passwordRefusal { return .failure(Refusal(message: refusal)) }
        if let refusal = SecondFactorEntry.importRefusal(user.secondFactors) { return .failure(Refusal(message: refusal)) }
        var account = Account(
            localID: localID, tenantID: tenantID, emailVerified: user.emailVerified, displayName: user.displayName, photoURL: user.photoURL,
            disabled: user.disabled, createdAt: user.createdAt ?? now, lastLoginAt: user.lastLoginAt, validSince: now.seconds)
        if let email = user.email {
            guard let canonical = EmailAddress.canonical(email) else { return .failure(Refusal(message: "email is invalid")) }
            account.email = canonical
        }
        if let phone = user.phoneNumber {
            guard PhoneNumber.isValid(phone) else { return .failure(Refusal(message: "phone number format is invalid")) }
            account.phoneNumber = phone
        }
        if let claims = user.customAttributes, claims != "{}" {
            do throws(ActionError) {
                try AccountService.checkCustomAttributes(claims)
            } catch {
                switch error.code {
                case .claimsTooLarge: return .failure(Refusal(message: "Custom claims provided are too large."))
                case .forbiddenClaim: return .failure(Refusal(message: "Custom claims provided include a reserved claim."))
                default: return .failure(Refusal(message: "Invalid custom claims provided."))
                }
            }
            account.customAttributes = claims
        }
        for identity in user.providers {
            guard let identity else { return .failure(Refusal(message: "federatedId or (providerId & rawId) is required")) }
            // Firebase lists the address and the phone as providers too; they are the account's own fields here.
            if identity.providerID == "password" || identity.providerID == "phone" { continue }
            account.federatedIdentities.removeAll { $0.providerID == identity.providerID }
            account.federatedIdentities.append(identity)
        }
        if let hash = user.passwordHash, !hash.isEmpty {
            if hash.hasPrefix("$scrypt$") {
                // This server's own hash (from `actionlinks users export`), kept as it is if its
                // cost is within what a sign-in may run (PasswordHasher.Ceiling).
                if let refusal = PasswordHasher.refusal(stored: hash) { return .failure(Refusal(message: "passwordHash: \(refusal)")) }
                account.passwordHash = hash
            } else {
                guard let decodedHash = Self.base64(hash), let salt = Self.base64(user.salt ?? "") else {
                    return .failure(Refusal(message: "passwordHash and salt must be base64 (standard or URL-safe)"))
                }
                let imported = ImportedPasswordHashes.Hash(
                    salt: salt, hash: decodedHash, signerKey: hashes.signerKey ?? [], saltSeparator: hashes.saltSeparator,
                    rounds: hashes.rounds ?? 0, memoryCost: hashes.memoryCost ?? 0)
                guard imported.hasValidParameters else { return .failure(Refusal(message: "the hash parameters are not valid")) }
                account.passwordHash = imported.stored
            }
            account.passwordUpdatedAt = now
        }
        return .success(account)
    }

    /// Whether a `passwordHash` is Firebase's (not this server's own PHC string).
    static func isFirebaseHash(_ hash: String) -> Bool { !hash.isEmpty && !hash.hasPrefix("$scrypt$") }

    /// Base64, standard or URL-safe, with or without padding.
    package static func base64(_ text: String) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map(Array.init)
    }

    /// Makes the value from each of its fields.
    package init(accounts: any AccountStore, signIn: SignInService, store: StoreGateway, clock: any ServiceClock) {
        self.accounts = accounts
        self.signIn = signIn
        self.store = store
        self.clock = clock
    }
}
