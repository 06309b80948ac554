import Foundation
import Testing

@testable import ActionLinksConfiguration

@Suite("The upstream section", .timeLimit(.minutes(5)))
struct UpstreamSettingsTests: ServiceSettingsSuite {
    static var prefix: String { "linkDomains: [links.example.com]\n" }

    /// A service-account file with `fields` changed (nil removes one), with `mode`.
    func accountFile(_ fields: [String: String?] = [:], mode: Int = 0o600) throws -> String {
        let key = Data((0..<600).map { _ in UInt8.random(in: 0...255) }).base64EncodedString(options: .lineLength64Characters)
        var object: [String: String] = [
            "type": "service_account", "project_id": "my-project", "private_key_id": "0123abcd",
            "private_key": "-----BEGIN PRIVATE KEY-----\n\(key)\n-----END PRIVATE KEY-----\n",
            "client_email": "sender@my-project.iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token",
        ]
        for (name, value) in fields { object[name] = value }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("actionlinks-sa-\(UUID().uuidString).json").path
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    @Test("absent: this server is the account store")
    func absent() throws {
        #expect(try parse("").upstream == nil)
    }

    @Test("the documented shape, with Google's URLs by default")
    func documentedShape() throws {
        let path = try accountFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let upstream = try #require(
            try parse(
                """
                upstream:
                  projectId: my-project
                  apiKeys: [AIzaSyA, AIzaSyB]
                  serviceAccountFile: \(path)
                  authDomain: my-project.firebaseapp.com

                """
            ).upstream)
        #expect(upstream.projectID == "my-project" && upstream.apiKeys == ["AIzaSyA", "AIzaSyB"])
        #expect(upstream.authDomain == "my-project.firebaseapp.com" && upstream.authDomainOrigin == "https://my-project.firebaseapp.com")
        #expect(upstream.identityToolkitURL == "https://identitytoolkit.googleapis.com")
        #expect(upstream.secureTokenURL == "https://securetoken.googleapis.com")
        #expect(upstream.connectTimeout == 3 && upstream.answerTimeout == 10, "the issue's deadlines by default")
        #expect(upstream.poolSize == 32, "32 exchanges in flight with each host by default")
        let account = try #require(upstream.serviceAccount)
        #expect(account.clientEmail == "sender@my-project.iam.gserviceaccount.com" && account.privateKeyID == "0123abcd")
        #expect(account.tokenURI == "https://oauth2.googleapis.com/token" && account.projectID == "my-project")
        #expect(upstream.accepts(apiKey: "AIzaSyB") && !upstream.accepts(apiKey: "AIzaSy") && !upstream.accepts(apiKey: "AIzaSyBB"))
    }

    @Test("every key from its environment variable, with loopback http URLs and a loopback auth domain over http")
    func environment() throws {
        let path = try accountFile(["token_uri": "http://127.0.0.1:9099/token"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let upstream = try #require(
            try parse(
                "",
                environment: [
                    "ACTIONLINKS_UPSTREAM_PROJECT_ID": "demo-upstream", "ACTIONLINKS_UPSTREAM_API_KEYS": "key-one,key-two",
                    "ACTIONLINKS_UPSTREAM_SERVICE_ACCOUNT_FILE": path, "ACTIONLINKS_UPSTREAM_AUTH_DOMAIN": "127.0.0.1:9099",
                    "ACTIONLINKS_UPSTREAM_IDENTITY_TOOLKIT_URL": "http://127.0.0.1:9099/",
                    "ACTIONLINKS_UPSTREAM_SECURE_TOKEN_URL": "http://localhost:9099",
                    "ACTIONLINKS_UPSTREAM_CONNECT_TIMEOUT": "5s", "ACTIONLINKS_UPSTREAM_ANSWER_TIMEOUT": "2m",
                    "ACTIONLINKS_UPSTREAM_POOL_SIZE": "4",
                ]
            ).upstream)
        #expect(upstream.connectTimeout == 5 && upstream.answerTimeout == 120 && upstream.poolSize == 4)
        #expect(upstream.projectID == "demo-upstream" && upstream.apiKeys == ["key-one", "key-two"])
        #expect(upstream.authDomainOrigin == "http://127.0.0.1:9099")
        #expect(upstream.identityToolkitURL == "http://127.0.0.1:9099" && upstream.secureTokenURL == "http://localhost:9099")
        #expect(upstream.serviceAccount?.tokenURI == "http://127.0.0.1:9099/token")
    }

    @Test(
        "bad values name the key and what was expected",
        arguments: [
            ("upstream:\n  projectId: p\n  apiKeys: [k]\n  answerTimeout: 0s\n", "upstream.answerTimeout", "a timeout from"),
            ("upstream:\n  apiKeys: [k]\n", "upstream", "projectId is required"),
            ("upstream:\n  projectId: p\n  apiKeys: [k]\n  poolSize: 0\n", "upstream.poolSize", "a whole number from 1 to 1024"),
            ("upstream:\n  projectId: p\n  apiKeys: [k]\n  poolSize: many\n", "upstream.poolSize", "a whole number from 1 to 1024"),
            ("upstream:\n  projectId: My_Project\n  apiKeys: [k]\n", "upstream.projectId", "lower-case letters"),
            ("upstream:\n  projectId: p\n", "upstream.apiKeys", "at least one API key of the project, every platform's"),
            ("upstream:\n  projectId: p\n  apiKeys: [ok, 'a&b']\n", "upstream.apiKeys[1]", "printable ASCII"),
            ("upstream:\n  projectId: p\n  apiKeys: [k]\n  authDomain: https://p.firebaseapp.com\n", "upstream.authDomain", "no scheme"),
            ("upstream:\n  projectId: p\n  apiKeys: [k]\n  authDomain: 10.0.0.1:9099\n", "upstream.authDomain", "host name"),
            (
                "upstream:\n  projectId: p\n  apiKeys: [k]\n  identityToolkitURL: http://identitytoolkit.example.com\n",
                "upstream.identityToolkitURL", "http only for a loopback host"
            ),
            (
                "upstream:\n  projectId: p\n  apiKeys: [k]\n  secureTokenURL: https://u:p@st.example.com\n", "upstream.secureTokenURL",
                "https URL"
            ),
            (
                "upstream:\n  projectId: p\n  apiKeys: [k]\n  identityToolkitURL: https://x.example.com/?a=b\n",
                "upstream.identityToolkitURL", "https URL"
            ),
            ("upstream:\n  projectId: p\n  apiKeys: [k]\n  regionn: x\n", "upstream.regionn", "unknown key"),
            ("upstream:\n  projectId: p\n  apiKeys: [k]\n  readinessInterval: 2h\n", "upstream.readinessInterval", "an interval from"),
        ])
    func badValues(yaml: String, key: String, message: String) throws {
        let error = try #require(self.error(yaml))
        #expect(error.key == key, "\(error)")
        #expect(error.message.contains(message), "\(error)")
        #expect(error.file == "t.yaml" && error.line != nil, "\(error)")
    }

    @Test("readinessInterval: 60 s unless given, from the file or its variable")
    func readinessInterval() throws {
        let yaml = "upstream:\n  projectId: p\n  apiKeys: [k]\n"
        #expect(try parse(yaml).upstream?.readinessInterval == 60)
        #expect(try parse(yaml + "  readinessInterval: 5m\n").upstream?.readinessInterval == 300)
        #expect(try parse(yaml, environment: ["ACTIONLINKS_UPSTREAM_READINESS_INTERVAL": "1s"]).upstream?.readinessInterval == 1)
    }

    @Test("poolSize from the file, and its variable over the file")
    func poolSize() throws {
        let yaml = "upstream:\n  projectId: p\n  apiKeys: [k]\n  poolSize: 64\n"
        #expect(try parse(yaml).upstream?.poolSize == 64)
        #expect(try parse(yaml, environment: ["ACTIONLINKS_UPSTREAM_POOL_SIZE": "2"]).upstream?.poolSize == 2)
        let alone = try #require(error("", environment: ["ACTIONLINKS_UPSTREAM_POOL_SIZE": "2"]))
        #expect(
            alone.key == "upstream" && alone.message.contains("projectId is required"), "a pool size alone is an upstream section: \(alone)"
        )
    }

    @Test("a bad value from a variable names the variable")
    func badVariable() throws {
        let error = try #require(
            self.error(
                "",
                environment: [
                    "ACTIONLINKS_UPSTREAM_PROJECT_ID": "p", "ACTIONLINKS_UPSTREAM_API_KEYS": "k", "ACTIONLINKS_UPSTREAM_AUTH_DOMAIN": "x",
                ]))
        #expect(error.file == "environment variable ACTIONLINKS_UPSTREAM_AUTH_DOMAIN" && error.key == "upstream.authDomain", "\(error)")
    }

    @Test(
        "the service-account file: mode, JSON shape and each field checked, naming the field",
        arguments: [
            ([:], 0o644, "chmod 600"),
            (["type": "authorized_user"], 0o600, "type is 'authorized_user'; expected 'service_account'"),
            (["client_email": nil], 0o600, "client_email is missing"),
            (["private_key_id": ""], 0o600, "private_key_id is missing"),
            (["private_key": "not a key"], 0o600, "private_key is not an RSA private key"),
            (["token_uri": "http://oauth2.example.com/token"], 0o600, "token_uri is 'http://oauth2.example.com/token'"),
        ] as [([String: String?], Int, String)])
    func serviceAccountFile(fields: [String: String?], mode: Int, message: String) throws {
        let path = try accountFile(fields, mode: mode)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = try #require(self.error("upstream:\n  projectId: p\n  apiKeys: [k]\n  serviceAccountFile: \(path)\n"))
        #expect(error.key == "upstream.serviceAccountFile" && error.message.contains(message), "\(error)")
    }

    @Test("a service-account file that is missing or not JSON")
    func unreadableServiceAccountFile() throws {
        let missing = try #require(error("upstream:\n  projectId: p\n  apiKeys: [k]\n  serviceAccountFile: /nonexistent/sa.json\n"))
        #expect(
            missing.key == "upstream.serviceAccountFile" && missing.message.contains("cannot read the service-account file"), "\(missing)")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("actionlinks-sa-\(UUID().uuidString).json").path
        try "[1, 2]".write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let notJSON = try #require(error("upstream:\n  projectId: p\n  apiKeys: [k]\n  serviceAccountFile: \(path)\n"))
        #expect(notJSON.message.contains("not a service-account JSON object"), "\(notJSON)")
    }

    @Test("a service-account file mounted from a Kubernetes secret (a link to a link) is checked at its target")
    func symlinkedAccountFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("actionlinks-secret-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let version = folder.appendingPathComponent("..2026_11_27_10_00_00.123")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        let made = try accountFile()
        let target = version.appendingPathComponent("key.json")
        try FileManager.default.moveItem(atPath: made, toPath: target.path)
        try FileManager.default.createSymbolicLink(
            atPath: folder.appendingPathComponent("..data").path, withDestinationPath: version.lastPathComponent)
        let mounted = folder.appendingPathComponent("key.json").path
        try FileManager.default.createSymbolicLink(atPath: mounted, withDestinationPath: "..data/key.json")
        let yaml = "upstream:\n  projectId: my-project\n  apiKeys: [AIzaSyA]\n  serviceAccountFile: \(mounted)\n"
        #expect(try parse(yaml).upstream?.serviceAccount?.privateKeyID == "0123abcd")

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path)
        let loose = try #require(error(yaml))
        #expect(loose.key == "upstream.serviceAccountFile", "\(loose)")
        #expect(loose.message.contains("a link to") && loose.message.contains("mode 644"), "\(loose)")
        #expect(loose.message.contains("chmod 600") && loose.message.contains("defaultMode: 0400"), "\(loose)")
    }
}
