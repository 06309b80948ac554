import ActionLinksTestSupport
import Foundation
import Testing

/// `actionlinks users import` and `export` against a running server (in process: the command is
/// what is tested), with the file `firebase auth:export --format=json` writes.
@Suite("actionlinks users", .timeLimit(.minutes(5)))
struct UsersCommandTests {
    /// Firebase's scrypt example (github.com/firebase/scrypt, README): the project's hash
    /// parameters, and a user's salt and hash for the password `user1password`.
    static let hashParameters = [
        "--hash-key", "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==",
        "--salt-separator", "Bw==", "--rounds", "8", "--mem-cost", "14",
    ]

    static var exported: [String: Any] {
        [
            "users": [
                [
                    "localId": "imported-1", "email": "ada@example.com", "emailVerified": true,
                    "passwordHash": "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
                    "salt": "42xEC+ixf3L2lw==", "displayName": "Ada", "createdAt": "1700000000000", "lastSignedInAt": "1700000500000",
                    "customAttributes": "{\"role\":\"admin\"}",
                    "providerUserInfo": [["providerId": "google.com", "rawId": "g-123", "email": "ada@example.com", "displayName": "Ada"]],
                ],
                ["localId": "imported-2", "email": "bob@example.com", "disabled": true],
            ]
        ]
    }

    func users(_ arguments: [String], server: String, token: String = "owner") async throws -> CommandResult {
        try await Command.run(["users"] + arguments + ["--server", server, "--admin-token", token], environment: ["PATH": "/usr/bin:/bin"])
    }

    func file(_ object: Any) throws -> String {
        let path = TestProject.temporaryDirectory("users").appendingPathExtension("json").path
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("a Firebase export imports with its password hashes (the password signs in), and exports back in the same format")
    func importAndExport() async throws {
        try await TestApp.live { app in
            let input = try file(Self.exported)
            defer { try? FileManager.default.removeItem(atPath: input) }

            let imported = try await users(["import", input] + Self.hashParameters, server: app.base)
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.stdout.contains("imported 2 of 2 users"))

            let signIn = try await app.api("signInWithPassword", ["email": "ada@example.com", "password": "user1password"])
            #expect(signIn.status == 200 && signIn.json["localId"] as? String == "imported-1", "\(signIn.text)")
            let wrong = try await app.api("signInWithPassword", ["email": "ada@example.com", "password": "user1Password"])
            #expect(wrong.status == 400)

            let output = TestProject.temporaryDirectory("export").appendingPathExtension("json").path
            defer { try? FileManager.default.removeItem(atPath: output) }
            let exported = try await users(["export", output], server: app.base)
            #expect(exported.status == 0 && exported.stdout.contains("exported 2 users"), "\(exported.stderr)")
            let mode = try FileManager.default.attributesOfItem(atPath: output)[.posixPermissions] as? Int
            #expect(mode == 0o600, "the file holds password hashes")
            let document = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output))) as? [String: Any])
            let list = try #require(document["users"] as? [[String: Any]])
            let ada = try #require(list.first { $0["localId"] as? String == "imported-1" })
            let bob = try #require(list.first { $0["localId"] as? String == "imported-2" })
            #expect(ada["email"] as? String == "ada@example.com" && ada["emailVerified"] as? Bool == true)
            #expect(ada["createdAt"] as? String == "1700000000000" && ada["customAttributes"] as? String == "{\"role\":\"admin\"}")
            #expect(ada["lastSignedInAt"] is String && ada["lastLoginAt"] == nil, "the file's name for the last sign-in")
            // The password was rehashed at sign-in: the server's own scrypt now.
            #expect((ada["passwordHash"] as? String)?.hasPrefix("$scrypt$") == true)
            let providers = try #require(ada["providerUserInfo"] as? [[String: Any]])
            #expect(providers.map { $0["providerId"] as? String } == ["google.com"], "password is a field of the user, not a provider")
            #expect(providers.first?["rawId"] as? String == "g-123")
            #expect(bob["disabled"] as? Bool == true && bob["passwordHash"] == nil)

            // The export reads back: into a second server, the rehashed password still signs in.
            try await TestApp.live { second in
                let again = try await users(["import", output], server: second.base)
                #expect(again.status == 0 && again.stdout.contains("imported 2 of 2 users"), "\(again.stderr)")
                let signIn = try await second.api("signInWithPassword", ["email": "ada@example.com", "password": "user1password"])
                #expect(signIn.status == 200 && signIn.json["localId"] as? String == "imported-1", "\(signIn.text)")
            }
        }
    }

    @Test("refusals: Firebase hashes without the parameters, a file that is not an export, users the server refuses, a bad token")
    func refusals() async throws {
        try await TestApp.live { app in
            let input = try file(Self.exported)
            defer { try? FileManager.default.removeItem(atPath: input) }
            let withoutKey = try await users(["import", input], server: app.base)
            #expect(withoutKey.status == 64 && withoutKey.stderr.contains("--hash-key"), "\(withoutKey.stderr)")

            let notAnExport = try file(["accounts": []])
            defer { try? FileManager.default.removeItem(atPath: notAnExport) }
            let garbage = try await users(["import", notAnExport], server: app.base)
            #expect(garbage.status == 1 && garbage.stderr.contains("expected the JSON that `firebase auth:export` writes"))

            let mixed = try file([
                "users": [["localId": "fine", "email": "fine@example.com"], ["localId": "bad", "email": "not an address"]]
            ])
            defer { try? FileManager.default.removeItem(atPath: mixed) }
            let partly = try await users(["import", mixed], server: app.base)
            #expect(partly.status == 1, "one user was refused")
            #expect(partly.stderr.contains("refused: bad (not an address)"), "\(partly.stderr)")
            #expect(partly.stdout.contains("imported 1 of 2 users"))
            let lookup = try await app.api("lookup", ["localId": ["fine", "bad"]], admin: true)
            #expect((lookup.json["users"] as? [[String: Any]])?.compactMap { $0["localId"] as? String } == ["fine"])

            let badToken = try await users(["export", "/dev/null"], server: app.base, token: "wrong")
            #expect(badToken.status == 1 && badToken.stderr.contains("the server refused"), "\(badToken.stderr)")
        }
    }
}
