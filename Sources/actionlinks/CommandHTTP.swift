import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// The commands' HTTP requests (`generate`, `users`, `check`), over AsyncHTTPClient like the
/// server's own. Not URLSession: on Linux that is FoundationNetworking over libcurl, which a static
/// build links with everything libcurl needs, 11 MB of the container image (docs/IMAGE.md).
enum CommandHTTP {
    /// What came back: the status, the header fields by lowercased name (a repeated field's values
    /// joined with ", "), and the body.
    struct Answer: Sendable {
        let status: Int
        let headers: [String: String]
        let body: Data
    }

    /// Sends `request` and reads its answer, at most `maximumBytes` of body. `timeout` bounds
    /// connecting, the wait for the answer's head, and each wait for more of its body.
    ///
    /// Each exchange has a client of its own rather than `HTTPClient.shared`: the shared client
    /// follows redirects, which `check` must not, and keeps trying a refused connection until the
    /// deadline, where a command should say at once that the server cannot be reached.
    static func exchange(
        _ request: HTTPClientRequest, timeout: TimeAmount, followingRedirects: Bool, upTo maximumBytes: Int
    ) async throws -> Answer {
        var configuration = HTTPClient.Configuration(
            // URLSession's limit, which these commands had.
            redirectConfiguration: followingRedirects ? .follow(max: 20, allowCycles: false) : .disallow,
            timeout: .init(connect: timeout, read: timeout))
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        let answer: Answer
        do {
            let response = try await client.execute(request, timeout: timeout)
            let body = try await response.body.collect(upTo: maximumBytes)
            var headers: [String: String] = [:]
            for field in response.headers {
                let name = field.name.lowercased()
                headers[name] = headers[name].map { $0 + ", " + field.value } ?? field.value
            }
            answer = Answer(status: Int(response.status.code), headers: headers, body: Data(body.readableBytesView))
        } catch {
            try? await client.shutdown()
            throw error
        }
        try? await client.shutdown()
        return answer
    }

    /// Why a request got no answer, in a few words.
    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as HTTPClientError
        where [.connectTimeout, .readTimeout, .writeTimeout, .tlsHandshakeTimeout, .deadlineExceeded].contains(error):
            return "timed out"
        case ChannelError.connectTimeout:
            return "timed out"
        case let error as NIOConnectionError:
            if error.connectionErrors.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil {
                return "the host name does not resolve"
            }
            let timedOut = error.connectionErrors.allSatisfy {
                if case ChannelError.connectTimeout = $0.error { true } else { false }
            }
            return timedOut && !error.connectionErrors.isEmpty ? "timed out" : "cannot connect to the host"
        // An IP address is connected to directly, so its failure is the socket's own.
        case let error as IOError where [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH].contains(error.errnoCode):
            return "cannot connect to the host"
        case let error as IOError where error.errnoCode == ETIMEDOUT:
            return "timed out"
        case is NIOSSLError, is NIOSSLExtraError:
            // BoringSSL's reasons (CERTIFICATE_VERIFY_FAILED), without the source file and line that
            // the error's own text adds to each.
            let reasons = "\(error)".matches(of: #/OPENSSL_internal:(\w+)/#).map { String($0.1) }
            return "TLS failed: " + (reasons.isEmpty ? "\(error)" : reasons.joined(separator: ", "))
        case let error as NIOTooManyBytesError:
            return error.maxBytes.map { "the answer is longer than \($0) bytes" } ?? "the answer is too long"
        default:
            return "\(error)"
        }
    }

    /// Whether `error` is a failed TLS handshake (a certificate not trusted, expired or for another name).
    static func isTLSFailure(_ error: any Error) -> Bool { error is NIOSSLError || error is NIOSSLExtraError }
}
