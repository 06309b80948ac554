import ActionLinksTestSupport
import Foundation
import Testing

/// The container image (`bash scripts/image.sh`, named in `ACTIONLINKS_IMAGE`) booted from its file
/// system as a container runtime would boot it (``ContainerImage``), on a production configuration
/// given the way an operator gives it to a container: through ACTIONLINKS_ variables.
extension HeavyTests {
    @Suite("The container image", .serialized, .timeLimit(.minutes(20)))
    struct ImageTests {
        /// Where the server listens: as a platform that runs containers says it (Cloud Run, Knative),
        /// in `PORT`; the server then listens on every interface.
        static func listening(on port: Int) -> [String: String] { ["PORT": "\(port)"] }

        @Test("the image says what it runs, as whom, and what it is")
        func configuration() async throws {
            let image = try await ContainerImage.underTest()
            #expect(image.user == "65532:65532")
            #expect(image.workingDirectory == "/var/lib/actionlinks")
            #expect(
                image.entrypoint == [
                    "/usr/local/bin/actionlinks", "serve", "--config", "/etc/actionlinks/actionlinks.yaml", "--www",
                    "/usr/share/actionlinks/www",
                ])
            #expect(image.exposedPorts == ["8080/tcp"])
            #expect(image.environment["ACTIONLINKS_DATA_DIRECTORY"] == "/var/lib/actionlinks")
            #expect(image.environment["ACTIONLINKS_STORE"] == "sqlite:/var/lib/actionlinks/actionlinks.sqlite")
            #expect(image.environment["ACTIONLINKS_LOG_FORMAT"] == "json")
            #expect(image.labels["org.opencontainers.image.title"] == "ActionLinks")
            #expect(image.labels["org.opencontainers.image.licenses"] == "Apache-2.0")
            // An image of another commit is not the code under test: rebuild it.
            let head = try await Command.run(program: URL(fileURLWithPath: "/usr/bin/env"), ["git", "rev-parse", "HEAD"])
            let revision = head.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(head.status == 0 && revision.count == 40, "git rev-parse HEAD: \(head.stderr)")
            #expect(
                image.labels["org.opencontainers.image.revision"] == revision,
                "\(image.name) is of another commit than the repository's \(revision): run `bash scripts/image.sh` again")
            #expect(image.labels["org.opencontainers.image.source"]?.hasPrefix("https://") == true, "\(image.labels)")
            for label in ["description", "version", "created"] {
                #expect(image.labels["org.opencontainers.image.\(label)", default: ""].isEmpty == false, "\(label): \(image.labels)")
            }
        }

        @Test(
            "the entrypoint, as the image's user, on PORT, serves README's round trip in production, withholds links from the log mail backend, logs JSON lines and exits on SIGTERM within Cloud Run's 10 s"
        )
        func roundTrip() async throws {
            let image = try await ContainerImage.underTest()
            let port = try LoopbackPort.free()
            let adminToken = String((0..<40).map { _ in "0123456789abcdef".randomElement()! })
            var environment = image.environment
            for (key, value) in Self.listening(on: port) { environment[key] = value }
            environment["ACTIONLINKS_SERVER_DEVELOPMENT"] = "false"
            environment["ACTIONLINKS_SERVER_ADMIN_TOKEN"] = adminToken
            environment["ACTIONLINKS_LINK_DOMAINS"] = "http://localhost:\(port)"
            let linkOrigin = "http://localhost:\(port)"

            try await image.withContainerFileSystem { root in
                let server = try ChrootedEntrypoint(image: image, root: root, environment: environment)
                let origin = HTTPOrigin("http://127.0.0.1:\(port)")
                try await Eventually.wait(for: "the image's server to answer /healthz") {
                    guard server.process.isRunning else {
                        throw TestSupportError("the image's server exited (\(server.process.terminationStatus)):\n\(server.standardError)")
                    }
                    return (try? await origin.request("GET", "/healthz").status) == 200
                }

                let status = try String(contentsOfFile: "/proc/\(server.process.processIdentifier)/status", encoding: .utf8)
                let ids = status.split(separator: "\n").filter { $0.hasPrefix("Uid:") || $0.hasPrefix("Gid:") }
                #expect(ids == ["Uid:\t65532\t65532\t65532\t65532", "Gid:\t65532\t65532\t65532\t65532"], "\(ids)")

                // README's "A round trip with curl", with the production admin token.
                let admin = ["Authorization": "Bearer \(adminToken)"]
                let created = try await origin.post(
                    "/v1/projects/\(TestProject.id)/accounts", ["email": "ann@example.com", "password": "first-password"], headers: admin)
                #expect(created.status == 200, "\(created.text)")
                let sent = try await origin.post(
                    "/v1/accounts:sendOobCode",
                    [
                        "requestType": "PASSWORD_RESET", "email": "ann@example.com", "returnOobLink": true,
                        "continueUrl": "https://app.example.com/done",
                    ], headers: admin)
                let code = try #require(sent.json["oobCode"] as? String, "\(sent.text)")
                let link = try #require(sent.json["oobLink"] as? String, "\(sent.text)")
                #expect(link.hasPrefix("\(linkOrigin)/__/auth/action?mode=resetPassword&oobCode=\(code)&"), "\(link)")
                // The landing page comes from the image's www/.
                let page = try await origin.request("GET", String(link.dropFirst(linkOrigin.count)))
                #expect(page.status == 200 && page.text.contains("Choose a new password"), "\(page.status) \(page.text.prefix(300))")

                let reset = "/v1/accounts:resetPassword?key=\(TestProject.apiKey)"
                let inspected = try await origin.post(reset, ["oobCode": code])
                #expect(inspected.json["requestType"] as? String == "PASSWORD_RESET", "\(inspected.text)")
                #expect(inspected.json["email"] as? String == "ann@example.com", "\(inspected.text)")
                let applied = try await origin.post(reset, ["oobCode": code, "newPassword": "a new password"])
                #expect(applied.status == 200, "\(applied.text)")
                #expect(try await origin.post(reset, ["oobCode": code, "newPassword": "again"]).errorCode == "INVALID_OOB_CODE")
                let signedIn = try await origin.post(
                    "/v1/accounts:signInWithPassword?key=\(TestProject.apiKey)",
                    ["email": "ann@example.com", "password": "a new password", "returnSecureToken": true])
                #expect(signedIn.json["idToken"] is String, "the new password signs in: \(signedIn.text)")

                let mailed = try await origin.post(
                    "/v1/accounts:sendOobCode?key=\(TestProject.apiKey)", ["requestType": "PASSWORD_RESET", "email": "ann@example.com"])
                #expect(mailed.status == 200, "\(mailed.text)")
                // A production server's log backend prints the mail with its link withheld.
                try await Eventually.wait(for: "the log mail backend to print the mail") {
                    server.standardOutput.contains("--- mail to ann@example.com")
                }
                #expect(
                    server.standardOutput.contains("<link withheld>") && !server.standardOutput.contains("oobCode="),
                    "\(server.standardOutput)")

                let associations = [
                    ("/.well-known/apple-app-site-association", "ABCDE12345.com.example.app"),
                    ("/.well-known/assetlinks.json", "com.example.app"),
                ]
                for (path, app) in associations {
                    let file = try await origin.request("GET", path)
                    #expect(file.status == 200 && file.header("Content-Type") == "application/json", "\(path): \(file.status)")
                    #expect(file.text.contains(app), "\(path): \(file.text)")
                }

                // The database and the keys were written by the image's user, in the image's data directory.
                let database = try FileManager.default.attributesOfItem(atPath: root.path + "/var/lib/actionlinks/actionlinks.sqlite")
                #expect(database[.ownerAccountID] as? Int == 65532)

                // A runtime stops a container with SIGTERM and kills it when its deadline passes (Cloud
                // Run's is 10 s). Nothing is in flight, so the server stops at once; its own deadline for
                // what is (server.shutdownTimeout, 8 s) is ContainerContractTests'.
                let signalled = ContinuousClock.now
                server.process.terminate()
                try await Eventually.wait(for: "the image's server to exit after SIGTERM") { !server.process.isRunning }
                let shutdown = ContinuousClock.now - signalled
                #expect(server.process.terminationReason == .exit && server.process.terminationStatus == 0, "\(server.standardError)")
                print("image test: the server exited \(shutdown) after SIGTERM (a runtime such as Cloud Run kills it at 10 s)")
                #expect(shutdown < .seconds(10), "\(shutdown)")

                let lines = server.standardError.split(separator: "\n")
                #expect(!lines.isEmpty)
                for line in lines {
                    let entry = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
                    #expect(
                        entry?["severity"] is String && entry?["message"] is String && entry?["time"] is String,
                        "not one JSON object with severity, message and time: \(line)")
                }
            }
        }
    }
}
