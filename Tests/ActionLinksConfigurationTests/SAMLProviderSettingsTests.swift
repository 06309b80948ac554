import Foundation
import Testing

@testable import ActionLinksConfiguration

@Suite("SAML providers", .timeLimit(.minutes(5)))
struct SAMLProviderSettingsTests: ServiceSettingsSuite {
    static var prefix: String { domains }
    static let domains = "linkDomains: [links.example.com, go.example.com]\n"
    /// The test IdP's certificate (Tests/ActionLinksSAMLTests/Fixtures), as one YAML line.
    static let certificateFile = ConfigurationText.repository.appendingPathComponent("Tests/ActionLinksSAMLTests/Fixtures/idp-cert.pem")
    static var pem: String { (try? String(contentsOf: certificateFile, encoding: .utf8)) ?? "" }
    static var inlinePEM: String { "\"" + pem.replacingOccurrences(of: "\n", with: "\\n") + "\"" }

    @Test("the documented shape, beside an OpenID Connect provider; the defaults are the first link domain and its handler")
    func documentedShape() throws {
        let settings = try parse(
            """
            providers:
              - id: saml.corp
                idpEntityId: https://idp.corp.example/metadata
                ssoUrl: https://idp.corp.example/sso
                idpCertificates: [ \(Self.inlinePEM) ]
                spEntityId: https://links.example.com/__/auth/saml
                callbackUri: https://go.example.com/__/auth/handler
                trustedEmailDomains: [corp.example]
              - id: saml.files
                idpEntityId: urn:example:idp
                ssoUrl: "https://idp.example/sso?tenant=a"
                idpCertificateFiles: [\(Self.certificateFile.path)]
                enabled: false
              - {id: oidc.corp, issuer: "https://login.corp.example", clientId: c, clientSecret: s}

            """)
        #expect(settings.providers.map(\.id) == ["oidc.corp"])
        let (corp, files) = (settings.samlProviders[0], settings.samlProviders[1])
        #expect(settings.samlProviders.count == 2)
        #expect(
            corp.id == "saml.corp" && corp.idpEntityID == "https://idp.corp.example/metadata"
                && corp.ssoURL == "https://idp.corp.example/sso")
        #expect(corp.idpCertificates.count == 1 && corp.idpCertificates == files.idpCertificates)
        #expect(corp.spEntityID == "https://links.example.com/__/auth/saml" && corp.callbackURI == "https://go.example.com/__/auth/handler")
        #expect(corp.trustedEmailDomains == ["corp.example"] && corp.enabled)
        #expect(files.spEntityID == "https://links.example.com" && files.callbackURI == "https://links.example.com/__/auth/handler")
        #expect(files.ssoURL == "https://idp.example/sso?tenant=a" && !files.enabled && files.trustedEmailDomains.isEmpty)
    }

    @Test("an http ssoUrl only on loopback, only on a development server")
    func loopback() throws {
        let yaml =
            "providers:\n  - {id: saml.local, idpEntityId: x, ssoUrl: \"http://127.0.0.1:9000/sso\", idpCertificates: [\(Self.inlinePEM)]}\n"
        #expect(try parse("server:\n  development: true\n" + yaml).samlProviders.first?.ssoURL == "http://127.0.0.1:9000/sso")
        let production = try #require(error(yaml))
        #expect(production.key == "providers[0].ssoUrl" && production.message.contains("http only for a loopback host"), "\(production)")
    }

    @Test(
        "bad entries name their key, line and what was expected",
        arguments: [
            (
                "{id: saml., idpEntityId: x, ssoUrl: \"https://i.example\", idpCertificates: [%@]}", "providers[0].id",
                "expected saml.<name>"
            ),
            ("{id: saml.Corp, idpEntityId: x, ssoUrl: \"https://i.example\", idpCertificates: [%@]}", "providers[0].id", "got 'saml.Corp'"),
            ("{id: saml.corp, ssoUrl: \"https://i.example\", idpCertificates: [%@]}", "providers[0]", "idpEntityId is required"),
            (
                "{id: saml.corp, idpEntityId: \"a b\", ssoUrl: \"https://i.example\", idpCertificates: [%@]}", "providers[0].idpEntityId",
                "without spaces"
            ),
            ("{id: saml.corp, idpEntityId: x, idpCertificates: [%@]}", "providers[0]", "ssoUrl is required"),
            (
                "{id: saml.corp, idpEntityId: x, ssoUrl: \"https://i.example/#f\", idpCertificates: [%@]}", "providers[0].ssoUrl",
                "without a fragment"
            ),
            (
                "{id: saml.corp, idpEntityId: x, ssoUrl: \"ftp://i.example\", idpCertificates: [%@]}", "providers[0].ssoUrl",
                "absolute https URL"
            ),
            (
                "{id: saml.corp, idpEntityId: x, ssoUrl: \"https://i.example\"}", "providers[0]",
                "expected idpCertificates (PEM) or idpCertificateFiles"
            ),
            (
                "{id: saml.corp, idpEntityId: x, ssoUrl: \"https://i.example\", idpCertificates: [%@], idpCertificateFiles: [f]}",
                "providers[0].idpCertificateFiles", "not both"
            ),
            (
                "{id: saml.corp, idpEntityId: x, ssoUrl: \"https://i.example\", idpCertificates: [MIIC]}",
                "providers[0].idpCertificates[0]", "expected a PEM certificate"
            ),
            (
                "{id: saml.corp, idpEntityId: x, ssoUrl: \"https://i.example\", idpCertificates: [\"-----BEGIN CERTIFICATE-----\\nAAAA\\n-----END CERTIFICATE-----\"]}",
                "providers[0].idpCertificates[0]", "not an X.509 certificate"
            ),
            (
                "{id: saml.corp, idpEntityId: x, ssoUrl: \"https://i.example\", idpCertificateFiles: [/nonexistent/idp.pem]}",
                "providers[0].idpCertificateFiles[0]", "cannot read the certificate file '/nonexistent/idp.pem'"
            ),
            (
                "{id: saml.corp, idpEntityId: x, ssoUrl: \"https://i.example\", idpCertificates: [%@], callbackUri: \"https://evil.example/__/auth/handler\"}",
                "providers[0].callbackUri", "on one of the link domains (https://links.example.com, https://go.example.com)"
            ),
            (
                "{id: saml.corp, idpEntityId: x, ssoUrl: \"https://i.example\", idpCertificates: [%@], trustedEmailDomains: [Corp.example]}",
                "providers[0].trustedEmailDomains[0]", "lower-case domain"
            ),
            (
                "{id: saml.corp, idpEntityId: x, ssoUrl: \"https://i.example\", idpCertificates: [%@], clientId: c}",
                "providers[0].clientId", "unknown key"
            ),
        ])
    func bad(entry: String, key: String, message: String) throws {
        let problem = try #require(error("providers:\n  - " + entry.replacingOccurrences(of: "%@", with: Self.inlinePEM) + "\n"))
        #expect(problem.file == "t.yaml" && problem.key == key && problem.line != nil, "\(problem)")
        #expect(problem.message.contains(message), "\(problem)")
    }

    @Test("a SAML provider listed twice is named")
    func twice() throws {
        let entry = "  - {id: saml.corp, idpEntityId: x, ssoUrl: \"https://i.example\", idpCertificates: [\(Self.inlinePEM)]}\n"
        let problem = try #require(error("providers:\n" + entry + entry))
        #expect(problem.key == "providers[1].id" && problem.message.contains("provider 'saml.corp' is listed twice"), "\(problem)")
    }
}
