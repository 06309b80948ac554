import Foundation
import HTTPTypes
import Hummingbird

/// The one error the services and the HTTP edges speak: a code (Firebase's name for it, such as
/// `INVALID_OOB_CODE`), a detail for people, and the cause when another error led to it. The REST
/// API answers it as Firebase's error body (``HTTPResponseError``); the pages turn its code into a
/// localised page. Callers match ``code``, never the text.
public struct ActionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, by Firebase's code name.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        case adminOnlyOperation = "ADMIN_ONLY_OPERATION"
        case emailExists = "EMAIL_EXISTS"
        case emailNotFound = "EMAIL_NOT_FOUND"
        case expiredOOBCode = "EXPIRED_OOB_CODE"
        case insufficientPermission = "INSUFFICIENT_PERMISSION"
        case internalError = "INTERNAL_ERROR"
        case invalidAPIKey = "API key not valid. Please pass a valid API key."
        case invalidArgument = "INVALID_ARGUMENT"
        case invalidContentType = "INVALID_CONTENT_TYPE"
        case invalidContinueURI = "INVALID_CONTINUE_URI"
        case invalidEmail = "INVALID_EMAIL"
        case invalidHostingLinkDomain = "INVALID_HOSTING_LINK_DOMAIN"
        case invalidIDToken = "INVALID_ID_TOKEN"
        case invalidJSON = "INVALID_JSON"
        case invalidLocalID = "INVALID_LOCAL_ID"
        case invalidNewEmail = "INVALID_NEW_EMAIL"
        case invalidOOBCode = "INVALID_OOB_CODE"
        case invalidRequestType = "INVALID_REQ_TYPE"
        case invalidTenantID = "INVALID_TENANT_ID"
        case missingContinueURI = "MISSING_CONTINUE_URI"
        case missingEmail = "MISSING_EMAIL"
        case missingIDToken = "MISSING_ID_TOKEN"
        case missingNewEmail = "MISSING_NEW_EMAIL"
        case missingOOBCode = "MISSING_OOB_CODE"
        case missingPassword = "MISSING_PASSWORD"
        case missingRequestType = "MISSING_REQ_TYPE"
        case notFound = "NOT_FOUND"
        case payloadTooLarge = "PAYLOAD_TOO_LARGE"
        case permissionDenied = "PERMISSION_DENIED"
        case projectNotFound = "PROJECT_NOT_FOUND"
        case tenantIDMismatch = "TENANT_ID_MISMATCH"
        case tenantNotFound = "TENANT_NOT_FOUND"
        case tokenExpired = "TOKEN_EXPIRED"
        case tooManyAttempts = "TOO_MANY_ATTEMPTS_TRY_LATER"
        case unauthenticated = "UNAUTHENTICATED"
        case unauthorizedDomain = "UNAUTHORIZED_DOMAIN"
        case unavailable = "UNAVAILABLE"
        case userNotFound = "USER_NOT_FOUND"
        case weakPassword = "WEAK_PASSWORD"

        /// The HTTP status Firebase answers this code with.
        public var status: HTTPResponse.Status {
            switch self {
            case .notFound: .notFound
            case .internalError: .internalServerError
            case .unavailable: .serviceUnavailable
            case .tooManyAttempts: .tooManyRequests
            case .invalidContentType: .unsupportedMediaType
            case .payloadTooLarge: .contentTooLarge
            case .permissionDenied, .insufficientPermission: .forbidden
            case .unauthenticated: .unauthorized
            default: .badRequest
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// What went wrong and what to do, for people (after `" : "` in Firebase's message).
    public let detail: String?
    /// The error that led to this one, for the log (never sent to a client).
    public let cause: (any Error)?

    /// An error with a code, an optional detail and an optional cause.
    public init(_ code: Code, _ detail: String? = nil, cause: (any Error)? = nil) {
        self.code = code
        self.detail = detail
        self.cause = cause
    }

    /// `CODE : detail`, Firebase's `message`.
    public var message: String { detail.map { code.rawValue + " : " + $0 } ?? code.rawValue }
    /// The message.
    public var description: String { message }

    public static func == (lhs: ActionError, rhs: ActionError) -> Bool { lhs.code == rhs.code && lhs.detail == rhs.detail }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(detail)
    }

    /// Firebase's error body.
    public var body: Data {
        let status = Int(code.status.code)
        let item = ErrorBody.Detail.Item(message: message, reason: status == 403 ? "forbidden" : "invalid")
        return IdentityToolkitJSON.encode(ErrorBody(error: .init(code: status, message: message, errors: [item])))
    }

    static func invalidArgument(_ detail: String) -> ActionError { ActionError(.invalidArgument, detail) }
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
    static let insufficientPermission = ActionError(
        .insufficientPermission, "This operation needs the admin credential (Authorization: Bearer <admin token>).")
    static let tooManyAttempts = ActionError(.tooManyAttempts, "Too many requests; try again later.")
    static let unavailable = ActionError(.unavailable, "The store cannot be reached; try again shortly.")
}

extension ActionError: HTTPResponseError {
    /// The HTTP status of the answer.
    public var status: HTTPResponse.Status { code.status }

    /// Firebase's error body, as the REST API answers.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: status, headers: RESTAPI.headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
