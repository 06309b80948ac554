import Foundation

/// An error as Firebase's Identity Toolkit reports it: an HTTP status and a code name such as
/// `INVALID_OOB_CODE`, optionally followed by `" : "` and a detail. Clients (the SDKs and
/// firebase-admin) read the code name before the `" : "`.
public struct FirebaseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The HTTP status.
    public let status: Int
    /// The code name, such as `INVALID_OOB_CODE`.
    public let code: String
    /// What went wrong and what to do, for people.
    public let detail: String?

    /// An error with a status, a code name and an optional detail.
    public init(_ status: Int, _ code: String, _ detail: String? = nil) {
        self.status = status
        self.code = code
        self.detail = detail
    }

    /// `CODE : detail`, Firebase's `message`.
    public var message: String { detail.map { code + " : " + $0 } ?? code }
    /// The message.
    public var description: String { message }

    /// Firebase's error body.
    public var body: Data {
        let object: [String: Any] = [
            "error": [
                "code": status, "message": message,
                "errors": [["message": message, "domain": "global", "reason": status == 403 ? "forbidden" : "invalid"]],
            ]
        ]
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
    }

    static func invalidArgument(_ detail: String) -> FirebaseError { FirebaseError(400, "INVALID_ARGUMENT", detail) }
    static let invalidCode = FirebaseError(
        400, "INVALID_OOB_CODE", "The action code is invalid. This can happen if the code is malformed, expired, or has already been used.")
    static let expiredCode = FirebaseError(400, "EXPIRED_OOB_CODE", "The action code has expired.")
    static let missingCode = FirebaseError(400, "MISSING_OOB_CODE")
    static let missingEmail = FirebaseError(400, "MISSING_EMAIL")
    static let invalidEmail = FirebaseError(400, "INVALID_EMAIL")
    static let emailNotFound = FirebaseError(400, "EMAIL_NOT_FOUND", "There is no user record corresponding to this identifier.")
    static let userNotFound = FirebaseError(400, "USER_NOT_FOUND")
    static let emailExists = FirebaseError(400, "EMAIL_EXISTS", "The email address is already in use by another account.")
    static let invalidIDToken = FirebaseError(400, "INVALID_ID_TOKEN", "The user's credential is no longer valid. The user must sign in again.")
    static let insufficientPermission = FirebaseError(
        403, "INSUFFICIENT_PERMISSION", "This operation needs the admin credential (Authorization: Bearer <admin token>).")
    static let tooManyAttempts = FirebaseError(429, "TOO_MANY_ATTEMPTS_TRY_LATER", "Too many requests; try again later.")
    static let unavailable = FirebaseError(503, "UNAVAILABLE", "The store cannot be reached; try again shortly.")
}
