import ActionLinks
import Foundation

/// Anything a test sends HTTP requests to: the application in process or on a socket (``TestApp``),
/// the binary (``TestServer``), or a live server at an origin (``HTTPOrigin``: the identity
/// providers and stand-ins). Each has one primitive, ``request(_:_:body:headers:)``; the helpers
/// are written once on top of it. What no client can send (races, raw bytes, slow clients) goes
/// through ``RawHTTP`` instead.
public protocol HTTPTarget: Sendable {
    /// Sends one request; redirects are never followed and no cookie is kept.
    func request(_ method: String, _ path: String, body: Data?, headers: [String: String]) async throws -> HTTPReply
}

extension HTTPTarget {
    /// Sends one request with no body, or with no extra header.
    public func request(_ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:]) async throws -> HTTPReply {
        try await request(method, path, body: body, headers: headers)
    }

    /// Sends `fields` as a JSON body (`Content-Type: application/json` unless `headers` says otherwise).
    public func request(_ method: String, _ path: String, json fields: [String: Any], headers: [String: String] = [:]) async throws
        -> HTTPReply
    {
        var all = ["Content-Type": "application/json"]
        for (name, value) in headers { all[name] = value }
        return try await request(method, path, body: try JSONSerialization.data(withJSONObject: fields), headers: all)
    }

    /// POSTs `fields` as JSON to any path (with `headers`).
    public func post(_ path: String, _ fields: [String: Any], headers: [String: String] = [:]) async throws -> HTTPReply {
        try await request("POST", path, json: fields, headers: headers)
    }

    /// POSTs `fields`, in this order, as an `application/x-www-form-urlencoded` body (with `headers`).
    public func post(_ path: String, form fields: [(String, String)], headers: [String: String] = [:]) async throws -> HTTPReply {
        var all = ["Content-Type": "application/x-www-form-urlencoded"]
        for (name, value) in headers { all[name] = value }
        return try await request("POST", path, body: Data(HTMLForm.encode(pairs: fields).utf8), headers: all)
    }
}

/// A live server at `base` (an origin, with or without a path prefix), through the one loopback
/// session (``LoopbackHTTP``): the identity providers the federated tests sign in with, and stand-ins.
public struct HTTPOrigin: HTTPTarget {
    /// What every path is appended to.
    public let base: String

    public init(_ base: String) { self.base = base }

    /// No origin: paths are absolute URLs (a redirect's `Location`, wherever it points).
    public static let anywhere = HTTPOrigin("")

    public func request(_ method: String, _ path: String, body: Data?, headers: [String: String]) async throws -> HTTPReply {
        try await LoopbackHTTP.request(url: base + path, method, body: body, headers: headers)
    }
}
