/// A second factor as an admin request gives it (an `mfa.enrollments` entry of `accounts:update`,
/// an `mfaInfo` entry of `accounts:batchCreate`): it can name a factor the account has, never make
/// one. A TOTP factor is its shared secret, which only its user's enrolment creates and no export
/// carries; this server has no SMS, so no phone factors.
package struct SecondFactorEntry: Sendable, Hashable {
    /// The factor it names (`mfaEnrollmentId`).
    package var enrollmentID: String?
    /// The name to give that factor (`displayName`); `nil` keeps the factor's own.
    package var displayName: String?
    /// Whether it is a phone factor (it has `phoneInfo`).
    package var isPhone: Bool

    /// Makes the value from each of its fields.
    package init(enrollmentID: String?, displayName: String?, isPhone: Bool) {
        self.enrollmentID = enrollmentID
        self.displayName = displayName
        self.isPhone = isPhone
    }

    /// Checks an admin's `mfa.enrollments` before the account is read: no phone factor, an ID on
    /// every entry, no ID twice (`DUPLICATE_MFA_ENROLLMENT_ID`).
    static func check(_ entries: [SecondFactorEntry]) throws(ActionError) {
        var seen: Set<String> = []
        for entry in entries {
            if entry.isPhone {
                throw ActionError.invalidArgument("phone second factors (phoneInfo) are not supported: this server sends no SMS")
            }
            guard let id = entry.enrollmentID, !id.isEmpty else {
                throw ActionError.invalidArgument(
                    "a TOTP factor is enrolled by its user; an entry without mfaEnrollmentId would be a new factor, without a secret")
            }
            guard seen.insert(id).inserted else { throw ActionError(.duplicateMFAEnrollmentID, id) }
        }
    }

    /// The factors of `factors` that `entries` name (checked by ``check(_:)``), oldest first as
    /// they were, each with its entry's `displayName` when it has one; none for no entries. An
    /// entry that names none of them is refused: there is no secret to make a factor from.
    static func kept(_ factors: [SecondFactor], naming entries: [SecondFactorEntry]) throws(ActionError) -> [SecondFactor] {
        var named: [String: SecondFactorEntry] = [:]
        for entry in entries {
            guard let id = entry.enrollmentID, factors.contains(where: { $0.enrollmentID == id }) else {
                throw ActionError.invalidArgument(
                    "a TOTP factor is enrolled by its user; mfaEnrollmentId \(entry.enrollmentID ?? "") is not one of the account's factors"
                )
            }
            named[id] = entry
        }
        return factors.compactMap { factor in
            guard let entry = named[factor.enrollmentID] else { return nil }
            var kept = factor
            if let name = entry.displayName { kept.displayName = name }
            return kept
        }
    }

    /// Why a user with these `mfaInfo` entries is not imported (`nil` for none): phone factors are
    /// not supported, and a TOTP factor's secret is nowhere in an export.
    static func importRefusal(_ entries: [SecondFactorEntry]) -> String? {
        if entries.contains(where: \.isPhone) {
            return "mfaInfo: phone second factors are not supported (this server sends no SMS)"
        }
        if !entries.isEmpty {
            return "mfaInfo: a TOTP second factor cannot be imported (no export carries its secret); its user enrolls it again"
        }
        return nil
    }
}
