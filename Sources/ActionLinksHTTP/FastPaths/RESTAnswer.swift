import ActionLinksDomain
import Foundation
import HTTPTypes
import Logging
import NIOCore

/// What a fast path of the REST API answers: the route's JSON answer, or the refusal the route
/// would answer (its status, headers and body, as ``ActionError`` makes them for the router), each
/// with the headers of the route's answers: `Content-Length` as Hummingbird adds it and
/// `Vary: Origin` as ``APICORSMiddleware`` adds it, `Date` last.
package enum RESTAnswer: Sendable {
    case ok(Data)
    case refused(ActionError)

    /// The refusal `error`, logged as ``ActionError/response(from:context:)`` logs the router's: a
    /// failure of this server with its cause.
    static func refusal(_ error: ActionError, route: String, logger: Logger) -> RESTAnswer {
        if let cause = error.cause, error.status.kind == .serverError {
            logger.error(
                "POST \(route) answered \(error.code.rawValue)", metadata: ["detail": "\(error.detail ?? "")", "cause": "\(cause)"])
        }
        return .refused(error)
    }

    var status: Int {
        switch self {
        case .ok: 200
        case .refused(let refusal): Int(refusal.status.code)
        }
    }

    /// A JSON answer whole, from ``cachedHead``; a refusal goes out as parts (its head varies:
    /// `Retry-After`).
    var encoded: ByteBuffer? {
        guard case .ok(let json) = self else { return nil }
        return Self.encoded(json, date: HTTPDate.now)
    }

    /// The head before `Date`, and the body.
    var parts: (head: HTTPResponse, body: ByteBuffer?) {
        switch self {
        case .ok(let json):
            return (Self.head(length: json.count), ByteBuffer(bytes: json))
        case .refused(let refusal):
            let body = refusal.body
            var fields = refusal.headers
            fields[.contentLength] = String(body.count)
            fields[.vary] = "Origin"
            return (HTTPResponse(status: refusal.status, headerFields: fields), ByteBuffer(bytes: body))
        }
    }

    /// A JSON answer's head, as the route's headers, Hummingbird (`Content-Length`) and
    /// ``APICORSMiddleware`` (`Vary: Origin`) make it, before `Date`.
    static func head(length: Int) -> HTTPResponse {
        var fields = RESTAPIResponse.headers
        fields[.contentLength] = String(length)
        fields[.vary] = "Origin"
        return HTTPResponse(status: .ok, headerFields: fields)
    }

    /// ``head(length:)`` with the length and `Date` left out, encoded once.
    static let cachedHead = CachedHead(status: .ok, beforeLength: RESTAPIResponse.headers, afterLength: [.vary: "Origin"])

    /// The whole JSON answer, ``head(length:)`` with `Date` added, from ``cachedHead``.
    static func encoded(_ json: Data, date: String) -> ByteBuffer {
        cachedHead.encode(json: json, date: date)
    }
}
