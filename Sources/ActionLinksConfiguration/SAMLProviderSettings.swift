import ActionLinks
import ActionLinksSAML
import Foundation

/// A SAML 2.0 identity provider (an entry of `providers` whose `id` is `saml.<name>`), with the
/// names Firebase gives an inbound SAML configuration: the IdP's entity ID, single sign-on URL
/// (HTTP-Redirect binding) and signing certificates, and this server's entity ID and ACS URL.
public struct SAMLProviderSettings: Sendable, Hashable, CustomStringConvertible {
    /// `saml.<name>`.
    public var id: String
    /// The IdP's entity ID (`idpEntityId`): the assertions' `Issuer`.
    public var idpEntityID: String
    /// The IdP's single sign-on URL (`ssoUrl`), where the browser takes the AuthnRequest.
    public var ssoURL: String
    /// The IdP's signing certificates (`idpCertificates`, PEM, or `idpCertificateFiles`): a
    /// response or its assertion must be signed with one of them.
    public var idpCertificates: [SAMLCertificate]
    /// This server's entity ID at the IdP (`spEntityId`): the audience assertions must name.
    /// Default: the first link domain's origin.
    public var spEntityID: String
    /// Where the IdP posts its response (`callbackUri`, the ACS URL): the handler
    /// `<first link domain>/__/auth/handler` unless given.
    public var callbackURI: String
    /// The email domains whose addresses (as the `NameID`) this IdP vouches for.
    public var trustedEmailDomains: [String]
    /// Whether sign-ins with this provider are offered.
    public var enabled: Bool

    /// `id (idpEntityID, SP spEntityID)`.
    public var description: String { "\(id) (\(idpEntityID), SP \(spEntityID))" }

    public init(
        id: String, idpEntityID: String, ssoURL: String, idpCertificates: [SAMLCertificate], spEntityID: String, callbackURI: String,
        trustedEmailDomains: [String] = [], enabled: Bool = true
    ) {
        self.id = id
        self.idpEntityID = idpEntityID
        self.ssoURL = ssoURL
        self.idpCertificates = idpCertificates
        self.spEntityID = spEntityID
        self.callbackURI = callbackURI
        self.trustedEmailDomains = trustedEmailDomains
        self.enabled = enabled
    }
}

extension SAMLProviderSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, idpEntityId, ssoUrl, idpCertificates, idpCertificateFiles, spEntityId, callbackUri, trustedEmailDomains, enabled
    }

    /// Whether an entry of `providers` is a SAML provider (its `id` starts with `saml.`).
    static func isSAML(_ decoder: any Decoder) -> Bool {
        guard let entry = try? decoder.container(keyedBy: NameKey.self),
            let id = try? entry.decodeIfPresent(String.self, forKey: NameKey(stringValue: "id"))
        else { return false }
        return id.hasPrefix("saml.")
    }

    /// Reads an entry of `providers`; `service` gives the link domains (the defaults) and whether
    /// this is a development server (an http `ssoUrl` on loopback).
    init(from decoder: any Decoder, for service: ServiceSettings) throws {
        let provider = try decoder.container(keyedBy: CodingKeys.self)
        id = try provider.decode(String.self, forKey: .id)
        let name = id.dropFirst(5)
        guard id.hasPrefix("saml."), !name.isEmpty, name.utf8.count <= 64, name.utf8.allSatisfy(ProviderRules.isNameByte) else {
            throw provider.problem(.id, "expected saml.<name> (lower-case letters, digits and hyphens); got '\(id)'")
        }
        guard let entityID = try provider.string(.idpEntityId) else { throw provider.problem("idpEntityId is required") }
        guard Self.isEntityID(entityID) else {
            throw provider.problem(
                .idpEntityId,
                "expected the IdP's entity ID, a URI without spaces such as https://idp.example.com/metadata; got '\(entityID)'")
        }
        idpEntityID = entityID
        guard let sso = try provider.string(.ssoUrl) else { throw provider.problem("ssoUrl is required") }
        guard
            sso.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
                && ProviderRules.isServiceURL(sso, development: service.server.development, query: true)
        else {
            throw provider.problem(
                .ssoUrl,
                "expected the IdP's single sign-on URL (HTTP-Redirect binding), an absolute https URL without a fragment (http only for a loopback host with server.development: true); got '\(sso)'"
            )
        }
        ssoURL = sso
        let inline = try provider.decodeIfPresent([String].self, forKey: .idpCertificates) ?? []
        let files = try provider.decodeIfPresent([String].self, forKey: .idpCertificateFiles) ?? []
        switch (inline.isEmpty, files.isEmpty) {
        case (false, true):
            idpCertificates = []
            for (index, pem) in inline.enumerated() {
                do throws(SAMLRejection) {
                    idpCertificates += try SAMLCertificate.certificates(pem: pem)
                } catch {
                    throw provider.problem(.idpCertificates, index: index, error.reason)
                }
            }
        case (true, false):
            idpCertificates = []
            for (index, path) in files.enumerated() {
                let text: String
                do {
                    text = try String(contentsOfFile: path, encoding: .utf8)
                } catch {
                    throw provider.problem(
                        .idpCertificateFiles, index: index, "cannot read the certificate file '\(path)': \(Self.reason(error))")
                }
                do throws(SAMLRejection) {
                    idpCertificates += try SAMLCertificate.certificates(pem: text)
                } catch {
                    throw provider.problem(.idpCertificateFiles, index: index, "'\(path)': " + error.reason)
                }
            }
        case (true, true):
            throw provider.problem(
                "expected idpCertificates (PEM) or idpCertificateFiles (paths of PEM files): the IdP's signing certificate")
        case (false, false):
            throw provider.problem(.idpCertificateFiles, "expected idpCertificates or idpCertificateFiles, not both")
        }
        let origin = service.linkDomains[0].origin
        spEntityID = try provider.string(.spEntityId) ?? origin
        guard Self.isEntityID(spEntityID) else {
            throw provider.problem(
                .spEntityId, "expected this server's entity ID at the IdP, a URI without spaces such as \(origin); got '\(spEntityID)'")
        }
        let handler = origin + "/__/auth/handler"
        callbackURI = try provider.string(.callbackUri) ?? handler
        guard ProviderRules.isOnLinkDomain(callbackURI, service.linkDomains, query: false) else {
            throw provider.problem(
                .callbackUri,
                "expected the ACS URL, an absolute URL on one of the link domains (\(service.linkDomains.map(\.origin).joined(separator: ", "))) without a query or fragment, such as \(handler); got '\(callbackURI)'"
            )
        }
        trustedEmailDomains = try provider.decodeIfPresent([String].self, forKey: .trustedEmailDomains) ?? []
        for (index, domain) in trustedEmailDomains.enumerated() where !ProviderRules.isLowerCaseDomain(domain) {
            throw provider.problem(.trustedEmailDomains, index: index, "expected a lower-case domain such as example.com; got '\(domain)'")
        }
        enabled = try provider.boolean(.enabled) ?? true
    }

    private static func reason(_ error: any Error) -> String {
        switch (error as? CocoaError)?.code {
        case .fileReadNoSuchFile?, .fileNoSuchFile?: "No such file or directory"
        case .fileReadNoPermission?: "Permission denied"
        case .fileReadInapplicableStringEncoding?: "the file is not UTF-8 text"
        default: error.localizedDescription
        }
    }

    /// A URI (an entity ID): printable ASCII without spaces, at most 1024 bytes (SAML's limit).
    private static func isEntityID(_ text: String) -> Bool {
        text.utf8.count <= 1024
            && text.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "<") }
    }
}
