import ActionLinksDomain
import Foundation

/// A second factor as a request gives it (`accounts:update`'s `mfa.enrollments[]`,
/// `accounts:batchCreate`'s `users[].mfaInfo[]`): its ID, its name, and which kind of factor it is
/// by the key it has (`phoneInfo`, `totpInfo`), as Firebase's clients tell them apart.
struct MFAEnrollmentField: Decodable, Sendable {
    var mfaEnrollmentId: String?
    var displayName: String?
    /// Whether the entry has `phoneInfo` (any value, even `null`).
    var hasPhoneInfo: Bool

    enum CodingKeys: String, CodingKey {
        case mfaEnrollmentId, displayName, phoneInfo
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mfaEnrollmentId = try container.decodeIfPresent(String.self, forKey: .mfaEnrollmentId)
        displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
        hasPhoneInfo = container.contains(.phoneInfo)
    }

    /// The entry as the services take it.
    var entry: SecondFactorEntry { SecondFactorEntry(enrollmentID: mfaEnrollmentId, displayName: displayName, isPhone: hasPhoneInfo) }
}

/// `accounts:update`'s `mfa`: the factors the account keeps (none when `enrollments` is absent or
/// empty, which is what `firebase-admin`'s `updateUser({multiFactor: {enrolledFactors: null}})` sends).
struct MFAUpdateField: Decodable, Sendable {
    var enrollments: [MFAEnrollmentField]?
}
