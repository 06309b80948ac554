import ActionLinks
import ActionLinksChildProcess
import ActionLinksSMTPTestSupport
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
        // It takes the message only with -t, and writes it whole (a file that appears is complete).
        try """
        #!/bin/sh
        here="$(dirname "$0")"
        [ "$1" = "-t" ] || exit 3
        cat > "$here/message.part" && mv "$here/message.part" "$here/message.eml"
        """.write(to: script, atomically: true, encoding: .utf8)
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
            try await Eventually.wait(for: "sendmail to write the message") { FileManager.default.fileExists(atPath: file.path) }
            let read = try await Self.read(file)
            #expect(read["to"] == "pia@example.com")
            #expect(read["from"] == "Example App <noreply@example.com>")
            #expect(read["subject"] == "Reset your password for Example App")
            #expect(read["type"] == "multipart/alternative" && read["defects"] == "0")
            let listing = try await app.request("GET", "/emulator/v1/projects/\(TestProject.id)/oobCodes")
            let link = try #require((listing.json["oobCodes"] as? [[String: Any]])?.first?["oobLink"] as? String)
            #expect(read["text"]?.contains(link) == true, "the text part carries the link")
            #expect(
                read["html"]?.contains(link.replacingOccurrences(of: "&", with: "&amp;")) == true, "the HTML part carries the escaped link")
        }
    }

    /// What Python's email package (policy.default) reads from the message in `file`: its
    /// addresses, subject, content type, number of defects, and decoded parts.
    static func read(_ file: URL) async throws -> [String: String] {
        let script = """
            import email, email.policy, json, sys
            m = email.message_from_bytes(open(sys.argv[1], "rb").read(), policy=email.policy.default)
            parts = {p.get_content_subtype(): p.get_content() for p in m.walk() if p.get_content_maintype() == "text"}
            defects = len(m.defects) + sum(len(p.defects) for p in m.walk())
            print(json.dumps({"to": str(m["to"]), "from": str(m["from"]), "subject": str(m["subject"]),
                "type": m.get_content_type(), "defects": str(defects), "text": parts.get("plain", ""), "html": parts.get("html", "")}))
            """
        let reply = try await Command.run(program: URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, file.path])
        guard reply.status == 0 else { throw TestSupportError("python could not read \(file.path): \(reply.stderr)") }
        return try JSONDecoder().decode([String: String].self, from: Data(reply.stdout.utf8))
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
        cat > "$here/message.part" && mv "$here/message.part" "$here/message.eml"
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
            #expect(try await Self.read(folder.appendingPathComponent("message.eml"))["to"] == "rue@example.com")
            #expect(try await app.request("GET", "/healthz", body: nil, headers: [:]).status == 200)
        }
    }

    @Test("webhook: a failed delivery is retried, and the code it carries stays valid")
    func webhookRetries() async throws {
        let folder = TestProject.temporaryDirectory("actionlinks-webhook")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let received = folder.appendingPathComponent("received.jsonl")
        let receiver = ChildProcess()
        receiver.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let portFile = folder.appendingPathComponent("port")
        receiver.arguments = ["python3", "-c", Self.receiver, "2", received.path, portFile.path]
        receiver.standardOutput = .nullDevice
        receiver.standardError = .nullDevice
        try receiver.run()
        defer { receiver.kill(SIGKILL) }
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
            let id = try #require(body["id"] as? String)
            #expect(id.count == 32 && id.allSatisfy(\.isHexDigit), "the outbox's ID, for a relay to drop a repeat: \(id)")
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
