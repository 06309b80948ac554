import Foundation
import Testing

@testable import ActionLinksConfiguration

@Suite("Federated sign-in providers", .timeLimit(.minutes(5)))
struct ProviderSettingsTests: ServiceSettingsSuite {
    static var prefix: String { domains }
    static let domains = "linkDomains: [links.example.com, go.example.com]\n"

    /// A file holding `text`, with `mode`.
    func secretFile(_ text: String, mode: Int) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("actionlinks-secret-\(UUID().uuidString)").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    @Test("the documented shape: a preset and a generic OpenID Connect provider")
    func documentedShape() throws {
        let path = try secretFile("  corp-secret\n", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let providers = try parse(
            """
            providers:
              - id: yahoo.com
                preset: yahoo
                clientId: yahoo-client
                clientSecret: yahoo-secret
              - id: oidc.corp
                issuer: https://login.corp.example
                clientId: corp-client
                clientSecretFile: \(path)
                scopes: [email, profile, openid, email]
                trustedEmailDomains: [corp.example]
                redirectUri: https://go.example.com/__/auth/handler
                enabled: false
                timeout: 2m
                tokenEndpointAuthMethod: client_secret_post

            """
        ).providers
        #expect(providers.count == 2)
        let yahoo = providers[0]
        #expect(yahoo.id == "yahoo.com" && yahoo.preset == .yahoo && yahoo.issuer == "https://api.login.yahoo.com")
        #expect(yahoo.clientID == "yahoo-client" && yahoo.clientSecret == "yahoo-secret")
        #expect(yahoo.scopes == ["openid", "email", "profile"] && yahoo.trustedEmailDomains == ["yahoo.com"])
        #expect(yahoo.redirectURI == "https://links.example.com/__/auth/handler" && yahoo.enabled && yahoo.timeout == 10)
        #expect(yahoo.tokenEndpointAuthMethod == nil)
        #expect(!yahoo.description.contains("yahoo-secret"))
        let corp = providers[1]
        #expect(corp.preset == nil && corp.issuer == "https://login.corp.example" && corp.clientSecret == "corp-secret")
        #expect(corp.scopes == ["openid", "email", "profile"] && corp.trustedEmailDomains == ["corp.example"])
        #expect(corp.redirectURI == "https://go.example.com/__/auth/handler" && !corp.enabled && corp.timeout == 120)
        #expect(corp.tokenEndpointAuthMethod == .clientSecretPost)
    }

    @Test("any preset key may be overridden, issuer included; a generic provider asks for email and profile")
    func overrides() throws {
        let providers = try parse(
            """
            providers:
              - {id: google.com, preset: google, issuer: "https://accounts.example.com", scopes: [email], trustedEmailDomains: [], clientId: c, clientSecret: s}
              - {id: microsoft.com, preset: microsoft, clientId: c, clientSecret: s}
              - {id: oidc.plain, issuer: "https://id.example.com/realms/x", clientId: c, clientSecret: s}
              - {id: oidc.yahoo-staff, preset: yahoo, clientId: c, clientSecret: s}
              - {id: apple.com, issuer: "https://appleid.apple.com", clientId: c, clientSecret: s}

            """
        ).providers
        #expect(providers[0].issuer == "https://accounts.example.com" && providers[0].scopes == ["openid", "email"])
        #expect(providers[0].trustedEmailDomains.isEmpty)
        #expect(providers[1].trustedEmailDomains == ["outlook.com", "hotmail.com"])
        #expect(providers[2].scopes == ["openid", "email", "profile"] && providers[2].trustedEmailDomains.isEmpty)
        #expect(providers[3].issuer == "https://api.login.yahoo.com")
        #expect(providers[4].id == "apple.com")
    }

    @Test("index-path variables override an entry's keys, the secret among them")
    func environment() throws {
        let yaml = "providers:\n  - {id: yahoo.com, preset: yahoo, clientId: c, clientSecret: from-file}\n"
        let provider = try #require(
            try parse(
                yaml,
                environment: [
                    "ACTIONLINKS_PROVIDERS_0_CLIENT_SECRET": "from-environment", "ACTIONLINKS_PROVIDERS_0_SCOPES": "email",
                    "ACTIONLINKS_PROVIDERS_0_ENABLED": "false",
                ]
            ).providers.first)
        #expect(provider.clientSecret == "from-environment" && provider.scopes == ["openid", "email"] && !provider.enabled)
        let bad = try #require(error(yaml, environment: ["ACTIONLINKS_PROVIDERS_0_ISSUER": "http://login.example.com"]))
        #expect(bad.file == "environment variable ACTIONLINKS_PROVIDERS_0_ISSUER" && bad.key == "providers[0].issuer", "\(bad)")
    }

    @Test("an http issuer only on loopback, only on a development server")
    func loopbackIssuer() throws {
        let yaml = "providers:\n  - {id: oidc.local, issuer: \"http://127.0.0.1:9000/realm\", clientId: c, clientSecret: s}\n"
        #expect(try parse("server:\n  development: true\n" + yaml).providers.first?.issuer == "http://127.0.0.1:9000/realm")
        let production = try #require(error(yaml))
        #expect(production.key == "providers[0].issuer" && production.message.contains("http only for a loopback host"))
        let remote = "providers:\n  - {id: oidc.local, issuer: \"http://login.example.com\", clientId: c, clientSecret: s}\n"
        #expect(error("server:\n  development: true\n" + remote)?.key == "providers[0].issuer")
    }

    @Test("a secret file must be readable by its owner only; its error names chmod 600")
    func secretFileMode() throws {
        let open = try secretFile("secret", mode: 0o644)
        let empty = try secretFile("\n", mode: 0o600)
        defer {
            try? FileManager.default.removeItem(atPath: open)
            try? FileManager.default.removeItem(atPath: empty)
        }
        let entry = "providers:\n  - {id: oidc.corp, issuer: \"https://login.corp.example\", clientId: c, clientSecretFile: \"%@\"}\n"
        let loose = try #require(error(entry.replacingOccurrences(of: "%@", with: open)))
        #expect(loose.key == "providers[0].clientSecretFile" && loose.line == 3, "\(loose)")
        #expect(loose.message.contains("mode 644") && loose.message.contains("chmod 600 \(open)"), "\(loose)")
        let blank = try #require(error(entry.replacingOccurrences(of: "%@", with: empty)))
        #expect(blank.message.contains("the file is empty"), "\(blank)")
        let missing = try #require(error(entry.replacingOccurrences(of: "%@", with: "/nonexistent/secret")))
        #expect(missing.key == "providers[0].clientSecretFile" && missing.message.contains("cannot read the client secret file"))
    }

    @Test(
        "bad entries name their key, line and what was expected",
        arguments: [
            ("  - {preset: yahoo, clientId: c, clientSecret: s}\n", "providers[0]", "id is required"),
            ("  - {id: facebook.com, issuer: \"https://a.example\", clientId: c, clientSecret: s}\n", "providers[0].id", "oidc.<name>"),
            ("  - {id: oidc., issuer: \"https://a.example\", clientId: c, clientSecret: s}\n", "providers[0].id", "got 'oidc.'"),
            ("  - {id: oidc.Corp, issuer: \"https://a.example\", clientId: c, clientSecret: s}\n", "providers[0].id", "got 'oidc.Corp'"),
            (
                "  - {id: yahoo.com, preset: yahooo, clientId: c, clientSecret: s}\n", "providers[0].preset",
                "expected yahoo, google or microsoft"
            ),
            ("  - {id: google.com, preset: yahoo, clientId: c, clientSecret: s}\n", "providers[0].preset", "which is for yahoo.com"),
            ("  - {id: oidc.corp, clientId: c, clientSecret: s}\n", "providers[0]", "issuer is required unless a preset gives it"),
            (
                "  - {id: oidc.corp, issuer: login.corp.example, clientId: c, clientSecret: s}\n", "providers[0].issuer",
                "absolute https URL"
            ),
            ("  - {id: oidc.corp, issuer: \"https://a.example/?x=1\", clientId: c, clientSecret: s}\n", "providers[0].issuer", "no query"),
            ("  - {id: yahoo.com, preset: yahoo, clientSecret: s}\n", "providers[0]", "clientId is required"),
            ("  - {id: yahoo.com, preset: yahoo, clientId: c}\n", "providers[0]", "expected clientSecret or clientSecretFile"),
            (
                "  - {id: yahoo.com, preset: yahoo, clientId: c, clientSecret: s, clientSecretFile: f}\n", "providers[0].clientSecretFile",
                "not both"
            ),
            (
                "  - {id: yahoo.com, preset: yahoo, clientId: c, clientSecret: s, scopes: [\"a b\"]}\n", "providers[0].scopes[0]",
                "scope token"
            ),
            ("  - {id: yahoo.com, preset: yahoo, clientId: c, clientSecret: s, scopes: email}\n", "providers[0].scopes", "expected a list"),
            (
                "  - {id: yahoo.com, preset: yahoo, clientId: c, clientSecret: s, timeout: 0s}\n", "providers[0].timeout",
                "expected a timeout from 1s to 10m"
            ),
            (
                "  - {id: yahoo.com, preset: yahoo, clientId: c, clientSecret: s, trustedEmailDomains: [Corp.example]}\n",
                "providers[0].trustedEmailDomains[0]", "lower-case domain"
            ),
            (
                "  - {id: yahoo.com, preset: yahoo, clientId: c, clientSecret: s, trustedEmailDomains: [localhost]}\n",
                "providers[0].trustedEmailDomains[0]", "lower-case domain"
            ),
            (
                "  - {id: yahoo.com, preset: yahoo, clientId: c, clientSecret: s, redirectUri: \"https://evil.example/__/auth/handler\"}\n",
                "providers[0].redirectUri", "on one of the link domains (https://links.example.com, https://go.example.com)"
            ),
            (
                "  - {id: yahoo.com, preset: yahoo, clientId: c, clientSecret: s, enabled: yes please}\n", "providers[0].enabled",
                "true or false"
            ),
            (
                "  - {id: yahoo.com, preset: yahoo, clientId: c, clientSecret: s, tokenEndpointAuthMethod: basic}\n",
                "providers[0].tokenEndpointAuthMethod", "expected client_secret_basic or client_secret_post; got 'basic'"
            ),
            (
                "  - {id: yahoo.com, preset: yahoo, clientId: c, clientSecret: s, clientID: c}\n", "providers[0].clientID",
                "did you mean 'clientId'?"
            ),
            (
                "  - {id: yahoo.com, preset: yahoo, clientId: c, clientSecret: s}\n  - {id: yahoo.com, preset: yahoo, clientId: d, clientSecret: s}\n",
                "providers[1].id", "provider 'yahoo.com' is listed twice"
            ),
        ])
    func bad(entries: String, key: String, message: String) throws {
        let problem = try #require(error("providers:\n" + entries))
        #expect(problem.file == "t.yaml" && problem.key == key && problem.line != nil, "\(problem)")
        #expect(problem.message.contains(message), "\(problem)")
    }
}
