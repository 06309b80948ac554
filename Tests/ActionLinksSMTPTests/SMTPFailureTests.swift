import ActionLinksSMTPTestSupport
import Foundation
import Testing

@testable import ActionLinksSMTP

/// How each failure is classified: temporary (try again later) or permanent, with its step and reply code.
@Suite(.timeLimit(.minutes(5)))
struct SMTPFailureTests {
    static func envelope() throws -> SMTPEnvelope {
        try SMTPDeliveryTests.envelope(SMTPDeliveryTests.mail(subject: "Failure"))
    }

    /// Sends one message and returns the error it failed with.
    static func failure(of client: SMTPClient) async throws -> SMTPError {
        do {
            try await client.send(try envelope())
        } catch let error as SMTPError {
            return error
        }
        throw TestFailure("the message was sent")
    }

    @Test func aWrongPasswordIsAPermanent535AndNothingIsDelivered() async throws {
        let certificates = try await TestCertificates.shared.make()
        try await SMTPTestServer.with([
            "--cert", certificates.localhost.certificate, "--key", certificates.localhost.key, "--starttls-required", "--auth-required",
        ]) { server in
            let client = try SMTPClient(
                server: SMTPServer(
                    host: "localhost", port: server.port, credentials: .init(username: "mailer", password: "wrong-password-1234"),
                    trust: .certificateAuthorities(pemFile: certificates.localhost.certificate)))
            let error = try await Self.failure(of: client)
            await client.shutdown()
            #expect(error.code == .authenticationFailed)
            #expect(error.replyCode == 535)
            #expect(error.step == .authentication)
            #expect(error.isPermanent)
            #expect(error.message.contains("5.7.8"), "the enhanced status code is kept: \(error.message)")
            #expect(!"\(error)".contains("wrong-password-1234"))
            #expect(try server.messages().isEmpty)
            #expect(try server.events().filter { $0.event == "auth" }.map(\.success) == [false])
            #expect(try !server.events().contains { $0.event == "mail" })
        }
    }

    @Test func startTLSRequiredButNotOfferedSendsNothing() async throws {
        try await SMTPTestServer.with { server in
            let client = try SMTPClient(
                server: SMTPServer(host: "127.0.0.1", port: server.port, security: .startTLS, credentials: SMTPDeliveryTests.credentials))
            let error = try await Self.failure(of: client)
            await client.shutdown()
            #expect(error.code == .startTLSUnavailable)
            #expect(error.step == .startTLS)
            #expect(error.isPermanent)
            #expect(try server.messages().isEmpty)
            let events = try server.events().map(\.event)
            #expect(!events.contains("mail") && !events.contains("auth") && !events.contains("rcpt"), "\(events)")
        }
    }

    @Test func anUntrustedCertificateFailsTheHandshake() async throws {
        let certificates = try await TestCertificates.shared.make()
        try await SMTPTestServer.with(["--cert", certificates.localhost.certificate, "--key", certificates.localhost.key]) { server in
            // The system's roots: the self-signed certificate is not among them.
            let client = try SMTPClient(
                server: SMTPServer(host: "localhost", port: server.port, credentials: SMTPDeliveryTests.credentials))
            let error = try await Self.failure(of: client)
            await client.shutdown()
            #expect(error.code == .tlsFailed)
            #expect(error.step == .tlsHandshake)
            #expect(error.isPermanent)
            #expect(try !server.events().contains { ["tls", "auth", "mail"].contains($0.event) })
        }
    }

    @Test func aCertificateForAnotherHostFailsTheHandshake() async throws {
        let certificates = try await TestCertificates.shared.make()
        try await SMTPTestServer.with(["--tls", "--cert", certificates.otherHost.certificate, "--key", certificates.otherHost.key]) {
            server in
            let client = try SMTPClient(
                server: SMTPServer(
                    host: "localhost", port: server.port, security: .tls,
                    trust: .certificateAuthorities(pemFile: certificates.otherHost.certificate)))
            let error = try await Self.failure(of: client)
            await client.shutdown()
            #expect(error.code == .tlsFailed)
            #expect(error.step == .tlsHandshake)
            #expect(error.isPermanent)
            #expect(try server.messages().isEmpty)
        }
    }

    @Test(arguments: [
        (["--reply-code", "450"], 450, SMTPError.Step.recipient),
        (["--reply-code", "550"], 550, .recipient),
        (["--reply-code", "451", "--reply-at", "data"], 451, .endOfData),
        (["--reply-code", "554", "--reply-at", "data"], 554, .endOfData),
    ])
    func refusalsAreTemporaryOrPermanentByTheirCode(options: [String], code: Int, step: SMTPError.Step) async throws {
        try await SMTPTestServer.with(options) { server in
            let client = try SMTPClient(server: SMTPServer(host: "127.0.0.1", port: server.port, security: .none))
            let error = try await Self.failure(of: client)
            #expect(error.code == .rejected)
            #expect(error.replyCode == code)
            #expect(error.step == step)
            #expect(error.isPermanent == (code >= 500))
            #expect(error.message.contains("--reply-code"), "the server's reply text is kept: \(error.message)")
            // A failed connection is closed, never reused: the next message opens a new one.
            _ = try await Self.failure(of: client)
            await client.shutdown()
            #expect(try server.connections() == 2)
            #expect(try server.messages().isEmpty)
        }
    }

    @Test func aClosedPortIsATemporaryConnectionFailure() async throws {
        let client = try SMTPClient(server: SMTPServer(host: "127.0.0.1", port: try await closedPort(), security: .none))
        let error = try await Self.failure(of: client)
        await client.shutdown()
        #expect(error.code == .connectionFailed)
        #expect(error.step == .connect)
        #expect(!error.isPermanent)
    }

    @Test func aHostNameThatDoesNotResolveIsATemporaryConnectionFailure() async throws {
        let client = try SMTPClient(server: SMTPServer(host: "smtp.does-not-exist.invalid", port: 2525, security: .none))
        let error = try await Self.failure(of: client)
        await client.shutdown()
        #expect(error.code == .connectionFailed)
        #expect(!error.isPermanent)
    }

    @Test func aServerThatNeverGreetsTimesOut() async throws {
        let listener = try await SilentListener()
        let client = try SMTPClient(
            server: SMTPServer(host: "127.0.0.1", port: listener.port, security: .none, timeouts: SMTPTimeouts(greeting: .seconds(1))))
        let start = ContinuousClock.now
        let error = try await Self.failure(of: client)
        let elapsed = ContinuousClock.now - start
        await client.shutdown()
        await listener.close()
        #expect(error.code == .timedOut)
        #expect(error.step == .greeting)
        #expect(!error.isPermanent)
        #expect(elapsed >= .seconds(1), "it waited its timeout: \(elapsed)")
    }

    @Test func credentialsWithoutAMechanismTheClientSpeaks() async throws {
        try await SMTPTestServer.with(["--auth-plaintext", "--auth-mechanisms", "NONE"]) { server in
            let client = try SMTPClient(
                server: SMTPServer(host: "127.0.0.1", port: server.port, security: .none, credentials: SMTPDeliveryTests.credentials))
            let error = try await Self.failure(of: client)
            await client.shutdown()
            #expect(error.code == .authenticationUnavailable)
            #expect(error.isPermanent)
            #expect(try !server.events().contains { $0.event == "mail" })
        }
    }
}
