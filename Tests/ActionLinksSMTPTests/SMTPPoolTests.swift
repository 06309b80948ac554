import ActionLinksSMTPTestSupport
import Foundation
import Testing

@testable import ActionLinksSMTP

/// The connection pool: reuse with RSET, the limit on open connections, idle expiry and shutdown.
@Suite(.timeLimit(.minutes(5)))
struct SMTPPoolTests {
    static func client(_ server: SMTPTestServer, maximumConnections: Int = 2, maximumIdleTime: Duration = .seconds(30)) throws -> SMTPClient
    {
        try SMTPClient(
            server: SMTPServer(host: "127.0.0.1", port: server.port, security: .none), maximumConnections: maximumConnections,
            maximumIdleTime: maximumIdleTime)
    }

    @Test func consecutiveMessagesShareOneConnection() async throws {
        try await SMTPTestServer.with { server in
            let client = try Self.client(server)
            try await client.send(try SMTPFailureTests.envelope())
            try await client.send(try SMTPFailureTests.envelope())
            let messages = try server.messages()
            #expect(messages.count == 2)
            #expect(Set(messages.map(\.peer)).count == 1)
            #expect(try server.connections() == 1)
            #expect(try server.events().map(\.event) == ["connect", "mail", "rcpt", "rset", "mail", "rcpt"])
            await client.shutdown()
        }
    }

    @Test(arguments: [1, 2, 3])
    func concurrentSendsOpenAtMostThePoolSize(maximumConnections: Int) async throws {
        try await SMTPTestServer.with { server in
            let client = try Self.client(server, maximumConnections: maximumConnections)
            let envelope = try SMTPFailureTests.envelope()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { try await client.send(envelope) } }
                try await group.waitForAll()
            }
            await client.shutdown()
            #expect(try server.messages().count == 8)
            #expect(try server.connections() <= maximumConnections)
            #expect(try server.mostConcurrentConnections() <= maximumConnections)
        }
    }

    @Test func idleConnectionsAreQuitAfterTheirIdleTime() async throws {
        try await SMTPTestServer.with { server in
            let client = try Self.client(server, maximumIdleTime: .milliseconds(200))
            try await client.send(try SMTPFailureTests.envelope())
            try await waitUntil("the idle connection to be quit") {
                try server.events().map(\.event).suffix(2) == ["quit", "disconnect"]
            }
            try await client.send(try SMTPFailureTests.envelope())
            #expect(try server.connections() == 2)
            await client.shutdown()
        }
    }

    @Test func aConnectionTheServerClosedWhileIdleIsReplaced() async throws {
        // aiosmtpd's idle timeout also runs while a new connection is greeted and says EHLO (and
        // negotiates TLS): on a loaded machine 2 s (a CI run) and 6 s (load average 15) closed the
        // replacement before it was ready.
        try await SMTPTestServer.with(["--timeout", "15"]) { server in
            let client = try Self.client(server)
            try await client.send(try SMTPFailureTests.envelope())
            try await waitUntil("the server to close the idle connection") { try server.events().last?.event == "disconnect" }
            try await client.send(try SMTPFailureTests.envelope())
            #expect(try server.messages().count == 2)
            #expect(try server.connections() == 2)
            await client.shutdown()
        }
    }

    @Test func shutdownQuitsAndRefusesLaterSends() async throws {
        try await SMTPTestServer.with { server in
            let client = try Self.client(server)
            try await client.send(try SMTPFailureTests.envelope())
            await client.shutdown()
            try await waitUntil("the connection to be quit") { try server.events().map(\.event).suffix(2) == ["quit", "disconnect"] }
            await #expect {
                try await client.send(try SMTPFailureTests.envelope())
            } throws: { error in
                (error as? SMTPError)?.code == .shutDown
            }
            #expect(try server.connections() == 1)
        }
    }

    @Test func sendsWaitingForAConnectionCanBeCancelled() async throws {
        let listener = try await SilentListener()
        let client = try SMTPClient(
            server: SMTPServer(host: "127.0.0.1", port: listener.port, security: .none, timeouts: SMTPTimeouts(greeting: .seconds(120))),
            maximumConnections: 1)
        let envelope = try SMTPFailureTests.envelope()
        // The first send holds the only connection, waiting for a greeting that never comes.
        let holder = Task { try await client.send(envelope) }
        try await waitUntil("the first send to connect") { listener.accepted == 1 }
        let waiter = Task { try await client.send(envelope) }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        holder.cancel()
        await #expect(throws: (any Error).self) { try await holder.value }
        await client.shutdown()
        await listener.close()
    }
}
