import ActionLinksDomain
import Foundation

/// An account as Firebase's API shows it (`accounts:lookup`, `accounts:batchGet`,
/// `accounts:query`): timestamps as the SDKs read them (`createdAt` and `lastLoginAt` as strings
/// of milliseconds, `validSince` as a string of seconds, `lastRefreshAt` in RFC 3339), and the
/// password hash redacted as Firebase production redacts it.
struct UserRecord: Encodable, Sendable {
    var localId: String
    var email: String?
    var emailVerified: Bool
    var displayName: String?
    var photoUrl: String?
    var phoneNumber: String?
    var disabled: Bool
    var createdAt: String
    var lastLoginAt: String?
    var lastRefreshAt: String?
    var passwordHash: String?
    var salt: String?
    var passwordUpdatedAt: Int64?
    var validSince: String
    var customAttributes: String?
    var providerUserInfo: [ProviderUserInfo]
    var tenantId: String?
    var initialEmail: String?
    var emailLinkSignin: Bool?
    var customAuth: Bool?
    var screenName: String?
    /// The second factors, without their secrets (absent for none).
    var mfaInfo: [MFAEnrollmentInfo]?

    /// What Firebase production shows instead of a password hash: "REDACTED" in base64.
    static let redactedHash = "UkVEQUNURUQ="

    /// The account; with `exportingHashes` (the admin's `accounts:batchGet`, as Firebase's
    /// download) its password hash as stored: an imported Firebase hash as base64 `passwordHash`
    /// and `salt`, this server's own as its PHC string.
    init(_ account: Account, exportingHashes: Bool = false) {
        localId = account.localID
        email = account.email
        emailVerified = account.emailVerified
        displayName = account.displayName
        photoUrl = account.photoURL
        phoneNumber = account.phoneNumber
        disabled = account.disabled
        createdAt = account.createdAt.description
        lastLoginAt = account.lastLoginAt?.description
        lastRefreshAt = account.lastRefreshAt.map(Self.rfc3339)
        if let stored = account.passwordHash {
            passwordHash = Self.redactedHash
            passwordUpdatedAt = account.passwordUpdatedAt?.milliseconds
            if exportingHashes {
                if let imported = ImportedPasswordHashes().parse(stored) {
                    passwordHash = Data(imported.hash).base64EncodedString()
                    salt = Data(imported.salt).base64EncodedString()
                } else {
                    passwordHash = stored
                }
            }
        }
        validSince = String(account.validSince)
        customAttributes = account.customAttributes
        providerUserInfo = ProviderUserInfo.entries(of: account)
        tenantId = account.tenantID.isEmpty ? nil : account.tenantID
        initialEmail = account.initialEmail
        emailLinkSignin = account.emailLinkSignin ? true : nil
        customAuth = account.customAuth ? true : nil
        screenName = account.screenName
        mfaInfo = MFAEnrollmentInfo.entries(of: account)
    }

    /// `2020-01-01T00:00:00.000Z` for a time in milliseconds.
    static func rfc3339(_ time: Timestamp) -> String {
        let date = time.date
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
        return formatter.string(from: date)
    }
}

/// A second factor as Firebase's API shows it (`mfaInfo[]`, `GoogleCloudIdentitytoolkitV1MfaEnrollment`):
/// its ID, name and enrolment time, and `totpInfo: {}`, the one key by which the SDKs know an
/// authenticator app (never `null`, never beside `phoneInfo`). Never its secret or last used step.
struct MFAEnrollmentInfo: Encodable, Sendable, Hashable {
    var mfaEnrollmentId: String
    var displayName: String?
    /// RFC 3339 in UTC with milliseconds (`2025-01-01T12:00:00.123Z`), as the SDKs parse it.
    var enrolledAt: String
    /// Always empty: its presence says TOTP.
    var totpInfo: [String: String] = [:]

    /// The factor's entry.
    init(_ factor: SecondFactor) {
        mfaEnrollmentId = factor.enrollmentID
        displayName = factor.displayName
        enrolledAt = UserRecord.rfc3339(factor.enrolledAt)
    }

    /// The account's factors' entries, oldest first; `nil` for none (Firebase leaves `mfaInfo` out).
    static func entries(of account: Account) -> [MFAEnrollmentInfo]? {
        account.secondFactors.isEmpty ? nil : account.secondFactors.map(MFAEnrollmentInfo.init)
    }
}

/// One way an account signs in, as `providerUserInfo` lists it: `password` (an address with a
/// password or an email link), `phone`, and each linked provider.
struct ProviderUserInfo: Encodable, Sendable, Hashable {
    var providerId: String
    var rawId: String
    var federatedId: String?
    var email: String?
    var displayName: String?
    var photoUrl: String?
    var phoneNumber: String?
    var screenName: String?

    static func entries(of account: Account) -> [ProviderUserInfo] {
        var entries: [ProviderUserInfo] = []
        if let email = account.email, account.passwordHash != nil || account.emailLinkSignin {
            entries.append(
                ProviderUserInfo(
                    providerId: "password", rawId: email, federatedId: email, email: email, displayName: account.displayName,
                    photoUrl: account.photoURL))
        }
        if let phone = account.phoneNumber {
            entries.append(ProviderUserInfo(providerId: "phone", rawId: phone, phoneNumber: phone))
        }
        for identity in account.federatedIdentities {
            entries.append(
                ProviderUserInfo(
                    providerId: identity.providerID, rawId: identity.rawID, federatedId: identity.rawID, email: identity.email,
                    displayName: identity.displayName, photoUrl: identity.photoURL, screenName: identity.screenName))
        }
        return entries
    }
}
