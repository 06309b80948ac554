import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Requests to a server on a loopback socket through URLSession, as an app or a browser would send
/// them: the one URLSession of the tests (``HTTPOrigin``, so also a live ``TestApp``, ``TestServer``
/// and the identity providers; a browser's cookies are a jar of the test's own on top of it).
enum LoopbackHTTP {
    /// No redirects followed and no cookies kept: a test sends exactly the cookies it means to.
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        // A hang guard only (each suite has its time limit): a request that waits behind a loaded
        // machine's work is slow, not failed.
        configuration.timeoutIntervalForRequest = 300
        return URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }()

    static func request(url text: String, _ method: String, body: Data?, headers: [String: String]) async throws -> HTTPReply {
        guard let url = URL(string: text) else { throw TestSupportError("not a URL: \(text)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw TestSupportError("not an HTTP response from \(url)") }
        var fields: [String: String] = [:]
        for (key, value) in http.allHeaderFields { fields["\(key)"] = "\(value)" }
        return HTTPReply(status: http.statusCode, headers: fields, body: data)
    }
}

/// Redirects are part of what the tests check, so they are never followed.
final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
