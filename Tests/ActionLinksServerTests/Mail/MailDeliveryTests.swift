import ActionLinks
import ActionLinksTestSupport
import Foundation
import Testing

/// The sendmail and webhook backends, each against a real receiving program.
@Suite("Mail delivery", .timeLimit(.minutes(5)))
struct MailDeliveryTests {
    @Test("sendmail: the whole MIME message goes to the command's standard input")
    func sendmail() async throws {
        let folder = TestProject.temporaryDirectory("actionlinks-sendmail")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let script = folder.appendingPathComponent("fake-sendmail")
        try "#!/bin/sh\n[ \"$1\" = \"-t\" ] || exit 3\ncat > \"$(dirname \"$0\")/message.eml\"\n".write(
            to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        try await TestApp.router(
            environment: [
                "ACTIONLINKS_MAIL_BACKEND": "sendmail", "ACTIONLINKS_MAIL_SENDMAIL_COMMAND": script.path + " -t -i",
                "ACTIONLINKS_MAIL_FROM": "Example App <noreply@example.com>",
            ], mail: .configuredBackend
        ) { app in
            try await app.createAccount(email: "pia@example.com")
            #expect(try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "pia@example.com"]).status == 200)
            let file = folder.appendingPathComponent("message.eml")
            var message = ""
            try await Eventually.wait(for: "sendmail to write the message") {
                message = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
                return !message.isEmpty
            }
            #expect(message.contains("To: pia@example.com\r\n"))
            #expect(message.contains("From: Example App <noreply@example.com>\r\n"))
            #expect(message.contains("Subject: Reset your password for Example App\r\n"))
            #expect(message.contains("Content-Type: multipart/alternative; boundary="))
            let parts = message.components(separatedBy: "Content-Transfer-Encoding: base64\r\n\r\n").dropFirst().map {
                String(
                    decoding: Data(base64Encoded: $0.components(separatedBy: "\r\n--")[0].replacingOccurrences(of: "\r\n", with: ""))
                        ?? Data(),
                    as: UTF8.self)
            }
            #expect(parts.count == 2)
            let listing = try await app.request("GET", "/emulator/v1/projects/\(TestProject.id)/oobCodes")
            let link = try #require((listing.json["oobCodes"] as? [[String: Any]])?.first?["oobLink"] as? String)
            #expect(parts.first?.contains(link) == true, "the text part carries the link")
            #expect(
                parts.last?.contains(link.replacingOccurrences(of: "&", with: "&amp;")) == true, "the HTML part carries the escaped link")
        }
    }

    @Test("sendmail: a command that fails without reading the message is retried, its error output logged; the server serves on")
    func sendmailFailure() async throws {
        let folder = TestProject.temporaryDirectory("actionlinks-sendmail")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let script = folder.appendingPathComponent("flaky-sendmail")
        // The first run exits at once (its standard input never read), the second takes the message.
        try """
        #!/bin/sh
        here="$(dirname "$0")"
        if [ ! -e "$here/failed-once" ]; then
            touch "$here/failed-once"
            echo "sendmail: queue is full" >&2
            exit 75
        fi
        cat > "$here/message.eml"
        """.write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        try await TestApp.router(
            environment: ["ACTIONLINKS_MAIL_BACKEND": "sendmail", "ACTIONLINKS_MAIL_SENDMAIL_COMMAND": script.path],
            mail: .configuredBackend
        ) { app in
            try await app.createAccount(email: "rue@example.com")
            #expect(try await app.api("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "rue@example.com"]).status == 200)
            try await Eventually.wait(for: "the second attempt's delivery") { app.logs.text.contains("mail delivered") }
            #expect(app.logs.text.contains("mail delivery failed") && app.logs.text.contains("exited with 75: sendmail: queue is full"))
            #expect(app.logs.text.contains("mail delivered") && app.logs.text.contains("attempt=2"))
            let message = (try? String(contentsOf: folder.appendingPathComponent("message.eml"), encoding: .utf8)) ?? ""
            #expect(message.contains("To: rue@example.com\r\n"))
            #expect(try await app.request("GET", "/healthz", body: nil, headers: [:]).status == 200)
        }
    }

    @Test("webhook: a failed delivery is retried, and the code it carries stays valid")
    func webhookRetries() async throws {
        let folder = TestProject.temporaryDirectory("actionlinks-webhook")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let received = folder.appendingPathComponent("received.jsonl")
        let receiver = Process()
        receiver.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let portFile = folder.appendingPathComponent("port")
        receiver.arguments = ["python3", "-c", Self.receiver, "2", received.path, portFile.path]
        receiver.standardOutput = FileHandle.nullDevice
        receiver.standardError = FileHandle.nullDevice
        try receiver.run()
        defer { kill(receiver.processIdentifier, SIGKILL) }
        var port: Int?
        try await Eventually.wait(for: "the webhook receiver to start") {
            port = (try? String(contentsOf: portFile, encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            return port != nil
        }
        let receiverPort = try #require(port, "the receiver did not start")

        try await TestApp.router(
            environment: [
                "ACTIONLINKS_MAIL_BACKEND": "webhook", "ACTIONLINKS_MAIL_WEBHOOK_URL": "http://127.0.0.1:\(receiverPort)/send",
                "ACTIONLINKS_MAIL_WEBHOOK_TOKEN": "relay-secret",
            ], mail: .configuredBackend
        ) { app in
            try await app.createAccount(email: "quinn@example.com")
            #expect(
                try await app.api("sendOobCode", ["requestType": "VERIFY_EMAIL", "email": "quinn@example.com"], admin: true).status == 200)
            var lines: [String] = []
            try await Eventually.wait(for: "the webhook to receive the message") {
                lines = ((try? String(contentsOf: received, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
                return !lines.isEmpty
            }
            let body = try #require(lines.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
            #expect(body["to"] as? String == "quinn@example.com" && body["mode"] as? String == "verifyEmail")
            #expect(body["authorization"] as? String == "Bearer relay-secret")
            let text = try #require(body["text"] as? String)
            let linkLine = try #require(text.split(separator: "\n").first { $0.hasPrefix("https://links.test.example/") })
            let code = try #require(ActionCodeLink.parse(String(linkLine))?.oobCode)
            // The mailer logs the delivery once the receiver has answered.
            try await Eventually.wait(for: "the mailer to log the delivery") { app.logs.text.contains("mail delivered") }
            #expect(app.logs.text.contains("attempt=2") && app.logs.text.contains("mail delivery failed"))
            #expect(app.logs.text.contains("mail delivered"))
            #expect(!app.logs.text.contains(code), "logs never contain a code")
            #expect(try await app.api("update", ["oobCode": code]).json["emailVerified"] as? Bool == true)
        }
    }

    /// Answers 500 to the first N POSTs, then records each body (with its Authorization header) and answers 204;
    /// writes its port to the file named by its third argument.
    static let receiver = """
        import http.server, json, sys
        failures, path = int(sys.argv[1]), sys.argv[2]
        seen = [0]
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args): pass
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                seen[0] += 1
                if seen[0] <= failures:
                    self.send_response(500); self.end_headers(); return
                body["authorization"] = self.headers.get("Authorization")
                with open(path, "a") as f: f.write(json.dumps(body) + "\\n")
                self.send_response(204); self.end_headers()
        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        with open(sys.argv[3], "w") as f: f.write(str(server.server_port))
        server.serve_forever()
        """
}
