import Foundation

/// The one error the services and the HTTP edges speak: a code (Firebase's name for it, such as
/// `INVALID_OOB_CODE`), a detail for people, and the cause when another error led to it. The REST
/// API answers it as Firebase's error body (`ActionLinksHTTP/REST/ActionError+HTTP.swift`: its status, body
/// and headers); the pages turn its code into a localised page. Callers match ``code``, never the
/// text.
public struct ActionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, by Firebase's code name.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        case adminOnlyOperation = "ADMIN_ONLY_OPERATION"
        case claimsTooLarge = "CLAIMS_TOO_LARGE"
        case credentialMismatch = "CREDENTIAL_MISMATCH"
        case credentialTooOld = "CREDENTIAL_TOO_OLD_LOGIN_AGAIN"
        case duplicateEmail = "DUPLICATE_EMAIL"
        case duplicateLocalID = "DUPLICATE_LOCAL_ID"
        case duplicateMFAEnrollmentID = "DUPLICATE_MFA_ENROLLMENT_ID"
        case duplicateRawID = "DUPLICATE_RAW_ID"
        case dynamicLinkNotActivated = "DYNAMIC_LINK_NOT_ACTIVATED"
        case emailExists = "EMAIL_EXISTS"
        case emailNotFound = "EMAIL_NOT_FOUND"
        case expiredOOBCode = "EXPIRED_OOB_CODE"
        case federatedUserIDAlreadyLinked = "FEDERATED_USER_ID_ALREADY_LINKED"
        case forbiddenClaim = "FORBIDDEN_CLAIM"
        case insufficientPermission = "INSUFFICIENT_PERMISSION"
        case internalError = "INTERNAL_ERROR"
        case invalidAPIKey = "API key not valid. Please pass a valid API key."
        case invalidArgument = "INVALID_ARGUMENT"
        case invalidClaims = "INVALID_CLAIMS"
        case invalidContentType = "INVALID_CONTENT_TYPE"
        case invalidContinueURI = "INVALID_CONTINUE_URI"
        case invalidCredentialOrProviderID = "INVALID_CREDENTIAL_OR_PROVIDER_ID"
        case invalidCustomToken = "INVALID_CUSTOM_TOKEN"
        case invalidDuration = "INVALID_DURATION"
        case invalidEmail = "INVALID_EMAIL"
        case invalidGrantType = "INVALID_GRANT_TYPE"
        case invalidHashAlgorithm = "INVALID_HASH_ALGORITHM"
        case invalidHostingLinkDomain = "INVALID_HOSTING_LINK_DOMAIN"
        case invalidIdentifier = "INVALID_IDENTIFIER"
        case invalidIDPResponse = "INVALID_IDP_RESPONSE"
        case invalidIDToken = "INVALID_ID_TOKEN"
        case invalidJSON = "INVALID_JSON"
        case invalidLocalID = "INVALID_LOCAL_ID"
        case invalidLoginCredentials = "INVALID_LOGIN_CREDENTIALS"
        case invalidMFAPendingCredential = "INVALID_MFA_PENDING_CREDENTIAL"
        case invalidNewEmail = "INVALID_NEW_EMAIL"
        case invalidOOBCode = "INVALID_OOB_CODE"
        case invalidPassword = "INVALID_PASSWORD"
        case invalidPendingToken = "INVALID_PENDING_TOKEN"
        case invalidPhoneNumber = "INVALID_PHONE_NUMBER"
        case invalidRefreshToken = "INVALID_REFRESH_TOKEN"
        case invalidRequestType = "INVALID_REQ_TYPE"
        case invalidRequestURI = "INVALID_REQUEST_URI"
        case invalidSessionInfo = "INVALID_SESSION_INFO"
        case invalidSignInCode = "INVALID_SIGN_IN_CODE"
        case invalidTenantID = "INVALID_TENANT_ID"
        case invalidVerificationCode = "INVALID_CODE"
        case localIDListExceedsLimit = "LOCAL_ID_LIST_EXCEEDS_LIMIT"
        case mfaEnrollmentNotFound = "MFA_ENROLLMENT_NOT_FOUND"
        case missingContinueURI = "MISSING_CONTINUE_URI"
        case missingCredential = "MISSING_CREDENTIAL"
        case missingCustomToken = "MISSING_CUSTOM_TOKEN"
        case missingEmail = "MISSING_EMAIL"
        case missingGrantType = "MISSING_GRANT_TYPE"
        case missingIdentifier = "MISSING_IDENTIFIER"
        case missingIDToken = "MISSING_ID_TOKEN"
        case missingLocalID = "MISSING_LOCAL_ID"
        case missingMFAEnrollmentID = "MISSING_MFA_ENROLLMENT_ID"
        case missingMFAPendingCredential = "MISSING_MFA_PENDING_CREDENTIAL"
        case missingNewEmail = "MISSING_NEW_EMAIL"
        case missingOOBCode = "MISSING_OOB_CODE"
        case missingOrInvalidNonce = "MISSING_OR_INVALID_NONCE"
        case missingPassword = "MISSING_PASSWORD"
        case missingProviderID = "MISSING_PROVIDER_ID"
        case missingRawID = "MISSING_RAW_ID"
        case missingRefreshToken = "MISSING_REFRESH_TOKEN"
        case missingRequestType = "MISSING_REQ_TYPE"
        case missingRequestURI = "MISSING_REQUEST_URI"
        case missingSessionInfo = "MISSING_SESSION_INFO"
        case missingUserAccount = "MISSING_USER_ACCOUNT"
        case missingVerificationCode = "MISSING_CODE"
        case notFound = "NOT_FOUND"
        case notImplemented = "NOT_IMPLEMENTED"
        case operationNotAllowed = "OPERATION_NOT_ALLOWED"
        case passwordDoesNotMeetRequirements = "PASSWORD_DOES_NOT_MEET_REQUIREMENTS"
        case passwordLoginDisabled = "PASSWORD_LOGIN_DISABLED"
        case payloadTooLarge = "PAYLOAD_TOO_LARGE"
        case permissionDenied = "PERMISSION_DENIED"
        case phoneNumberExists = "PHONE_NUMBER_EXISTS"
        case projectDisabled = "PROJECT_DISABLED"
        case projectNotFound = "PROJECT_NOT_FOUND"
        case quotaExceeded = "QUOTA_EXCEEDED"
        case secondFactorLimitExceeded = "SECOND_FACTOR_LIMIT_EXCEEDED"
        case sessionExpired = "SESSION_EXPIRED"
        case tenantIDMismatch = "TENANT_ID_MISMATCH"
        case tenantNotFound = "TENANT_NOT_FOUND"
        case tokenExpired = "TOKEN_EXPIRED"
        case tooManyAttempts = "TOO_MANY_ATTEMPTS_TRY_LATER"
        case unauthenticated = "UNAUTHENTICATED"
        case unauthorizedDomain = "UNAUTHORIZED_DOMAIN"
        case unavailable = "UNAVAILABLE"
        case unexpectedParameter = "UNEXPECTED_PARAMETER"
        case unsupportedFirstFactor = "UNSUPPORTED_FIRST_FACTOR"
        case unverifiedEmail = "UNVERIFIED_EMAIL"
        case userDisabled = "USER_DISABLED"
        case userMismatch = "USER_MISMATCH"
        case userNotFound = "USER_NOT_FOUND"
        case weakPassword = "WEAK_PASSWORD"
    }

    /// What went wrong.
    public let code: Code
    /// What went wrong and what to do, for people (after `" : "` in Firebase's message).
    public let detail: String?
    /// The error that led to this one, for the log (never sent to a client).
    public let cause: (any Error)?
    /// The `google.rpc.ErrorInfo` of Google's API front end (a refused API key), if any.
    public let errorInfo: ErrorInfo?
    /// When to try again, in seconds (`Retry-After`), for a refusal that passes with time.
    public private(set) var retryAfter: Int?

    /// An error with a code, an optional detail and an optional cause.
    public init(_ code: Code, _ detail: String? = nil, cause: (any Error)? = nil, errorInfo: ErrorInfo? = nil) {
        self.code = code
        self.detail = detail
        self.cause = cause
        self.errorInfo = errorInfo
    }

    /// What Google's API front end adds to a refusal it makes itself (an API key that is unknown or
    /// whose application restriction the request does not satisfy): the body's `details` get a
    /// `google.rpc.ErrorInfo` with this reason, domain `googleapis.com` and this metadata, and a
    /// `google.rpc.LocalizedMessage` with the message.
    public struct ErrorInfo: Sendable, Hashable {
        /// `API_KEY_INVALID`, `API_KEY_IOS_APP_BLOCKED`, ...
        public var reason: String
        /// `service`, `consumer` (and `httpReferrer` for a referrer refusal).
        public var metadata: [String: String]

        /// The service every refusal here names.
        package static let service = "identitytoolkit.googleapis.com"

        /// Makes the value from each of its fields.
        package init(reason: String, metadata: [String: String]) {
            self.reason = reason
            self.metadata = metadata
        }
    }

    /// `CODE : detail`, Firebase's `message`; Google's own refusals (a missing key, bad
    /// credentials, an unknown method) carry the detail alone, their class being the `status`.
    public var message: String {
        switch code {
        case .permissionDenied, .unauthenticated, .notFound, .invalidAPIKey: detail ?? code.rawValue
        default: detail.map { code.rawValue + " : " + $0 } ?? code.rawValue
        }
    }
    /// The message.
    public var description: String { message }

    public static func == (lhs: ActionError, rhs: ActionError) -> Bool { lhs.code == rhs.code && lhs.detail == rhs.detail }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(detail)
    }

    package static func invalidArgument(_ detail: String) -> ActionError { ActionError(.invalidArgument, detail) }
    static let invalidCode = ActionError(
        .invalidOOBCode, "The action code is invalid. This can happen if the code is malformed, expired, or has already been used.")
    static let expiredCode = ActionError(.expiredOOBCode, "The action code has expired.")
    static let missingCode = ActionError(.missingOOBCode)
    static let missingEmail = ActionError(.missingEmail)
    static let invalidEmail = ActionError(.invalidEmail)
    static let emailNotFound = ActionError(.emailNotFound, "There is no user record corresponding to this identifier.")
    static let userNotFound = ActionError(.userNotFound)
    static let emailExists = ActionError(.emailExists, "The email address is already in use by another account.")
    static let invalidIDToken = ActionError(.invalidIDToken, "The user's credential is no longer valid. The user must sign in again.")
    static let userDisabled = ActionError(.userDisabled)
    package static func notImplemented(_ detail: String) -> ActionError { ActionError(.notImplemented, detail) }
    static let insufficientPermission = ActionError(
        .insufficientPermission, "This operation needs the admin credential (Authorization: Bearer <admin token>).")
    static let tooManyAttempts = ActionError(.tooManyAttempts, "Too many requests; try again later.")
    /// Every refusal of a sign-in code, whatever the reason (``SignInCodes/exchange(email:code:tenantID:clientAddress:)``).
    static let invalidSignInCode = ActionError(
        .invalidSignInCode,
        "The sign-in code is not valid: it may be mistyped, expired, already used or tried too often. Ask for a new sign-in link if it keeps failing."
    )

    /// This error, answered with `Retry-After: <seconds>` (at least 1).
    func retrying(after seconds: Int) -> ActionError {
        var error = self
        error.retryAfter = max(1, seconds)
        return error
    }
    static let unavailable = ActionError(.unavailable, "The store cannot be reached; try again shortly.")
}
