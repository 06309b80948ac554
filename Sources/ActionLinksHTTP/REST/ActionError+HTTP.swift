import ActionLinksDomain
import Foundation
import HTTPTypes
import Hummingbird

// ActionError as the REST API answers it: the HTTP status of each code, Google's error body, and
// the answer's headers.

extension ActionError.Code {
    /// The HTTP status Firebase answers this code with (`INSUFFICIENT_PERMISSION` too is a plain
    /// 400, as the Auth emulator and Firebase answer it).
    public var status: HTTPResponse.Status {
        switch self {
        case .notFound: .notFound
        case .internalError: .internalServerError
        case .notImplemented: .notImplemented
        case .unavailable: .serviceUnavailable
        case .tooManyAttempts: .tooManyRequests
        case .invalidContentType: .unsupportedMediaType
        case .payloadTooLarge: .contentTooLarge
        case .permissionDenied: .forbidden
        case .unauthenticated: .unauthorized
        default: .badRequest
        }
    }

    /// The `status` of Google's error body: set for the classes Firebase names (a plain 400
    /// has none).
    var statusName: String? {
        switch self {
        case .invalidArgument, .invalidJSON, .invalidAPIKey: "INVALID_ARGUMENT"
        case .notFound: "NOT_FOUND"
        case .permissionDenied: "PERMISSION_DENIED"
        case .unauthenticated: "UNAUTHENTICATED"
        case .notImplemented: "NOT_IMPLEMENTED"
        case .unavailable: "UNAVAILABLE"
        case .internalError: "INTERNAL"
        case .tooManyAttempts: "RESOURCE_EXHAUSTED"
        default: nil
        }
    }

    /// The `reason` of the error body's `errors` item (Google's API front end answers an
    /// unknown key with `badRequest`).
    var reason: String {
        if self == .invalidAPIKey { return "badRequest" }
        return switch status {
        case .forbidden: "forbidden"
        case .notFound: "notFound"
        case .unauthorized: "authError"
        case .notImplemented: "unimplemented"
        default: "invalid"
        }
    }
}

extension ActionError {
    /// Firebase's error body; an unknown API key's always has its `ErrorInfo` (`API_KEY_INVALID`).
    public var body: Data {
        let item = ErrorBody.Detail.Item(message: message, reason: code.reason)
        var details: [ErrorBody.Detail.GoogleDetail]?
        let info =
            errorInfo ?? (code == .invalidAPIKey ? ErrorInfo(reason: "API_KEY_INVALID", metadata: ["service": ErrorInfo.service]) : nil)
        if let info {
            details = [
                .errorInfo(reason: info.reason, domain: "googleapis.com", metadata: info.metadata),
                .localizedMessage(locale: "en-US", message: message),
            ]
        }
        return IdentityToolkitJSON.encode(
            ErrorBody(
                error: .init(code: Int(code.status.code), message: message, errors: [item], status: code.statusName, details: details)))
    }
}

extension ActionError: HTTPResponseError {
    /// The HTTP status of the answer.
    public var status: HTTPResponse.Status { code.status }

    /// Firebase's error body, as the REST API answers.
    /// A failure of this server or of what it depends on is logged with its cause, which the
    /// answer never shows.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        if let cause, status.kind == .serverError {
            context.logger.error(
                "\(request.method) \(request.uri.path) answered \(code.rawValue)",
                metadata: ["detail": "\(detail ?? "")", "cause": "\(cause)"])
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The answer's headers: the REST API's, and for `UNAVAILABLE` (the store, or the password
    /// hash queue, busy for a moment) when to try again.
    var headers: HTTPFields {
        var headers = RESTAPIResponse.headers
        if code == .unavailable { headers[.retryAfter] = "1" }
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return headers
    }
}
