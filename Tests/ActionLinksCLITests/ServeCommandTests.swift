import ActionLinks
import ActionLinksTestSupport
import Foundation
import Testing

/// `actionlinks generate` against a running server (in process: the command is what is tested).
@Suite("actionlinks generate", .timeLimit(.minutes(5)))
struct GenerateCommandTests {
    func run(_ arguments: [String]) async throws -> CommandResult {
        try await Command.run(["generate"] + arguments, environment: ["PATH": "/usr/bin:/bin"])
    }

    @Test("prints a link that works, as text or JSON; a refusal is exit 1 with the server's error")
    func generate() async throws {
        try await TestApp.live { app in
            try await app.createAccount(email: "rex@example.com")
            let text = try await run([
                "--server", app.base, "--admin-token", "owner", "--mode", "verifyEmail", "--email", "rex@example.com",
            ])
            #expect(text.status == 0, "\(text.stderr)")
            let link = try #require(ActionCodeLink.parse(text.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(link.mode == .verifyEmail)
            let json = try await run([
                "--server", app.base, "--admin-token", "owner", "--mode", "signIn", "--email", "sue@example.com", "--continue-url",
                "https://app.example.com/", "--json",
            ])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stderr)")
            #expect(
                object["mode"] as? String == "signIn" && (object["link"] as? String)?.contains(object["oobCode"] as? String ?? "?") == true)
            #expect(try await app.api("update", ["oobCode": link.oobCode]).json["emailVerified"] as? Bool == true)
            let refused = try await run([
                "--server", app.base, "--admin-token", "owner", "--mode", "resetPassword", "--email", "nobody@example.com",
            ])
            #expect(refused.status == 1 && refused.stderr.contains("EMAIL_NOT_FOUND"))
            let badToken = try await run([
                "--server", app.base, "--admin-token", "wrong", "--mode", "resetPassword", "--email", "rex@example.com",
            ])
            #expect(badToken.status == 1 && badToken.stderr.contains("invalid authentication credentials"), "\(badToken.stderr)")
            let usage = try await run([
                "--server", app.base, "--admin-token", "owner", "--mode", "frobnicate", "--email", "rex@example.com",
            ])
            #expect(usage.status == 64)
        }
    }
}

/// `actionlinks serve` as a process: how it refuses a bad configuration, and how it stops.
@Suite("actionlinks serve", .timeLimit(.minutes(5)))
struct ServeCommandTests {
    @Test("a bad configuration stops the server with the file, the key and what was expected")
    func badConfiguration() async throws {
        await #expect(throws: TestSupportError.self) {
            _ = try await TestServer(environment: ["ACTIONLINKS_SERVER_PORT": "eighty"])
        }
        let run = try await Command.run(["serve"], environment: ["ACTIONLINKS_PASSWORDS_MINIMUM_LENGTH": "2", "PATH": "/usr/bin:/bin"])
        #expect(run.status != 0)
        #expect(
            run.stderr.contains(
                "environment variable ACTIONLINKS_PASSWORDS_MINIMUM_LENGTH: passwords.minimumLength: expected a whole number from 6 to 128")
        )
    }

    @Test("SIGTERM: the server finishes, delivers queued mail and exits 0")
    func gracefulShutdown() async throws {
        let server = try await TestServer()
        try await server.createAccount(email: "uma@example.com")
        #expect(try await server.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "uma@example.com"]).status == 200)
        server.process.terminate()
        try await Eventually.wait(for: "the server to exit after SIGTERM") { !server.process.isRunning }
        #expect(server.process.terminationStatus == 0)
        #expect(server.standardOutput.contains("mail to uma@example.com"))
    }
}
