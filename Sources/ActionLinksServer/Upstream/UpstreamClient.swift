import ActionLinksConfiguration
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The Identity Toolkit of the project this server fronts (`upstream`), over async-http-client:
/// every call about a code carries the link's API key and tenant, connects within 3 seconds and is
/// answered within 10. Nothing about a code is kept here; logs never see a code or a password.
final class UpstreamClient: Service, Sendable {
    /// Why a call did not get an answer from upstream's accounts, or upstream's refusal.
    enum Failure: Error, Sendable {
        /// Firebase's error code (`EXPIRED_OOB_CODE`) and the detail after ` : `, if any.
        case refused(code: String, detail: String?)
        /// Upstream could not be reached: nothing was sent, so nothing was changed.
        case unreachable
        /// The request went out and no answer came back in time: upstream may have applied it.
        case noAnswer
    }

    /// What upstream says about a code (`accounts:resetPassword` with only the code, or the answer
    /// of applying it).
    struct CodeAnswer: Decodable, Sendable {
        var requestType: String?
        var email: String?
        var newEmail: String?
    }

    static let connectTimeout = TimeAmount.seconds(3)
    static let answerTimeout = TimeAmount.seconds(10)

    let settings: UpstreamSettings
    let client: HTTPClient

    init(settings: UpstreamSettings) {
        self.settings = settings
        let configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: Self.connectTimeout, read: Self.answerTimeout))
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }

    /// Closes the client's connections when the server stops.
    func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }

    /// The code's mode and address, without consuming it (what the JS SDK's `checkActionCode` asks).
    func check(code: String, apiKey: String, tenantID: String?) async throws(Failure) -> CodeAnswer {
        try await call("accounts:resetPassword", ["oobCode": code, "tenantId": tenantID], apiKey: apiKey)
    }

    /// Sets a new password with a reset code.
    func resetPassword(code: String, newPassword: String, apiKey: String, tenantID: String?) async throws(Failure) -> CodeAnswer {
        try await call("accounts:resetPassword", ["oobCode": code, "newPassword": newPassword, "tenantId": tenantID], apiKey: apiKey)
    }

    /// Applies a verify, recover or verify-and-change code (`accounts:update` with the code).
    func apply(code: String, apiKey: String, tenantID: String?) async throws(Failure) -> CodeAnswer {
        try await call("accounts:update", ["oobCode": code, "tenantId": tenantID], apiKey: apiKey)
    }

    private func call<Answer: Decodable>(_ operation: String, _ fields: [String: String?], apiKey: String) async throws(Failure)
        -> Answer
    {
        var request = HTTPClientRequest(url: settings.identityToolkitURL + "/v1/" + operation)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "X-Goog-Api-Key", value: apiKey)
        let body = (try? JSONSerialization.data(withJSONObject: fields.compactMapValues { $0 }, options: [.sortedKeys])) ?? Data()
        request.body = .bytes(ByteBuffer(bytes: body))
        let status: UInt
        let data: Data
        do {
            let response = try await client.execute(request, timeout: Self.answerTimeout)
            status = response.status.code
            data = Data(buffer: try await response.body.collect(upTo: 1 << 20))
        } catch {
            throw Self.isConnectFailure(error) ? .unreachable : .noAnswer
        }
        if status == 200, let answer = try? JSONDecoder().decode(Answer.self, from: data) { return answer }
        guard let body = try? JSONDecoder().decode(FirebaseErrorBody.self, from: data) else {
            // A gateway's page, or a 5xx without Firebase's body: upstream is not answering for its accounts.
            throw status >= 500 ? .noAnswer : .refused(code: "UNKNOWN", detail: nil)
        }
        let parts = body.error.message.components(separatedBy: " : ")
        throw .refused(code: parts[0], detail: parts.count > 1 ? parts.dropFirst().joined(separator: " : ") : nil)
    }

    /// Whether `error` means the connection was never made (so the request was never sent).
    static func isConnectFailure(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError, error == .connectTimeout { return true }
        if error is NIOConnectionError { return true }
        if let error = error as? ChannelError, case .connectTimeout = error { return true }
        if let error = error as? IOError { return error.errnoCode == ECONNREFUSED }
        return false
    }

    private struct FirebaseErrorBody: Decodable {
        struct Inner: Decodable { var message: String }
        var error: Inner
    }
}
