import ActionLinks
import Foundation

/// A federated sign-in provider (an entry of `providers`), spoken to with OAuth 2 and OpenID
/// Connect: its endpoints and keys come from `<issuer>/.well-known/openid-configuration` at run time.
public struct ProviderSettings: Sendable, Hashable, CustomStringConvertible {
    /// A provider whose issuer, scopes and trusted email domains are known; each may be overridden.
    public enum Preset: String, Sendable, Hashable, CaseIterable {
        /// Yahoo: `https://api.login.yahoo.com`, trusted for yahoo.com.
        case yahoo
        /// Google: `https://accounts.google.com`, trusted for gmail.com.
        case google
        /// Microsoft personal accounts: trusted for outlook.com and hotmail.com.
        case microsoft

        /// Firebase's provider ID for the preset's provider.
        public var providerID: String { rawValue + ".com" }

        /// The OpenID Connect issuer.
        public var issuer: String {
            switch self {
            case .yahoo: "https://api.login.yahoo.com"
            case .google: "https://accounts.google.com"
            case .microsoft: "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0"
            }
        }

        /// The scopes asked for besides `openid`.
        public var scopes: [String] { ["email", "profile"] }

        /// The email domains whose addresses the provider vouches for.
        public var trustedEmailDomains: [String] {
            switch self {
            case .yahoo: ["yahoo.com"]
            case .google: ["gmail.com"]
            case .microsoft: ["outlook.com", "hotmail.com"]
            }
        }
    }

    /// Firebase's provider ID: `yahoo.com`, `google.com`, `microsoft.com`, `apple.com` or `oidc.<name>`.
    public var id: String
    /// The preset the other values start from, if any.
    public var preset: Preset?
    /// The OpenID Connect issuer, an https URL.
    public var issuer: String
    /// The OAuth client ID registered with the provider.
    public var clientID: String
    /// The OAuth client secret (from `clientSecret`, or the trimmed contents of `clientSecretFile`).
    public var clientSecret: String
    /// The scopes asked for; `openid` first, once.
    public var scopes: [String]
    /// The email domains whose addresses this provider vouches for: a sign-in with one may take over
    /// an account with the same unverified address.
    public var trustedEmailDomains: [String]
    /// Where the provider sends the browser back: `<first link domain>/__/auth/handler` unless given.
    public var redirectURI: String
    /// Whether sign-ins with this provider are offered.
    public var enabled: Bool
    /// How long one call to the provider (its discovery document, its keys, its token endpoint)
    /// may take, in seconds (`timeout`, 10 s); a call past it answers `UNAVAILABLE`.
    public var timeout: Int

    /// How the client authenticates at the token endpoint (`tokenEndpointAuthMethod`); `nil`: as the
    /// discovery document offers, HTTP Basic first, and once more with `client_secret_post` when the
    /// provider answers `invalid_client` and offers it.
    public var tokenEndpointAuthMethod: TokenEndpointAuthMethod?

    /// RFC 7591's names of the two ways a client with a secret authenticates at the token endpoint.
    public enum TokenEndpointAuthMethod: String, Sendable, Hashable, CaseIterable {
        /// HTTP Basic, with the ID and secret form-encoded first (RFC 6749 §2.3.1).
        case clientSecretBasic = "client_secret_basic"
        /// `client_id` and `client_secret` in the form body.
        case clientSecretPost = "client_secret_post"
    }

    /// The provider IDs other than `oidc.<name>`.
    public static let wellKnownIDs = ["yahoo.com", "google.com", "microsoft.com", "apple.com"]

    /// `id (issuer, client clientID)`, without the secret.
    public var description: String { "\(id) (\(issuer), client \(clientID))" }
}

extension ProviderSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, preset, issuer, clientId, clientSecret, clientSecretFile, scopes, trustedEmailDomains, redirectUri, enabled, timeout
        case tokenEndpointAuthMethod
    }

    /// Reads an entry of `providers`; `service` gives the link domains (the default redirect URI)
    /// and whether this is a development server (an http issuer on loopback).
    init(from decoder: any Decoder, for service: ServiceSettings) throws {
        let provider = try decoder.container(keyedBy: CodingKeys.self)
        id = try provider.decode(String.self, forKey: .id)
        let name = id.hasPrefix("oidc.") ? id.dropFirst(5) : ""
        guard Self.wellKnownIDs.contains(id) || (!name.isEmpty && name.utf8.allSatisfy(ProviderRules.isNameByte)) else {
            throw provider.problem(
                .id,
                "expected yahoo.com, google.com, microsoft.com, apple.com, oidc.<name> or saml.<name> (lower-case letters, digits and hyphens); got '\(id)'"
            )
        }
        preset = try provider.choice(.preset, as: Preset.self)
        if let preset, Self.wellKnownIDs.contains(id), preset.providerID != id {
            throw provider.problem(
                .preset, "expected a preset for \(id) (or none); got '\(preset.rawValue)', which is for \(preset.providerID)")
        }
        guard let issuer = try provider.string(.issuer) ?? preset?.issuer else {
            throw provider.problem(
                "issuer is required unless a preset gives it (\(KeyedDecodingContainer<CodingKeys>.alternatives(Preset.allCases.map(\.rawValue))))"
            )
        }
        guard ProviderRules.isServiceURL(issuer, development: service.server.development, query: false) else {
            throw provider.problem(
                .issuer,
                "expected an absolute https URL with no query or fragment, such as https://login.example.com (http only for a loopback host with server.development: true); got '\(issuer)'"
            )
        }
        self.issuer = issuer
        clientID = try provider.decode(String.self, forKey: .clientId)
        let secret = try provider.string(.clientSecret)
        let secretFile = try provider.string(.clientSecretFile)
        switch (secret, secretFile) {
        case (let secret?, nil):
            clientSecret = secret
        case (nil, let path?):
            clientSecret = try Self.secret(in: path, at: provider.codingPath + [CodingKeys.clientSecretFile])
        case (nil, nil):
            throw provider.problem("expected clientSecret or clientSecretFile")
        case (_?, _?):
            throw provider.problem(.clientSecretFile, "expected clientSecret or clientSecretFile, not both")
        }
        let asked = try provider.decodeIfPresent([String].self, forKey: .scopes) ?? preset?.scopes ?? ["email", "profile"]
        for (index, scope) in asked.enumerated() where !scope.utf8.allSatisfy(Self.isScopeByte) {
            throw provider.problem(
                .scopes, index: index, "expected a scope token (printable ASCII without spaces, '\"' or '\\'); got '\(scope)'")
        }
        scopes = ["openid"]
        for scope in asked where !scopes.contains(scope) { scopes.append(scope) }
        trustedEmailDomains = try provider.decodeIfPresent([String].self, forKey: .trustedEmailDomains) ?? preset?.trustedEmailDomains ?? []
        for (index, domain) in trustedEmailDomains.enumerated() where !ProviderRules.isLowerCaseDomain(domain) {
            throw provider.problem(.trustedEmailDomains, index: index, "expected a lower-case domain such as example.com; got '\(domain)'")
        }
        let handler = service.linkDomains[0].origin + "/__/auth/handler"
        redirectURI = try provider.string(.redirectUri) ?? handler
        guard ProviderRules.isOnLinkDomain(redirectURI, service.linkDomains, query: true) else {
            throw provider.problem(
                .redirectUri,
                "expected an absolute URL on one of the link domains (\(service.linkDomains.map(\.origin).joined(separator: ", "))), such as \(handler); got '\(redirectURI)'"
            )
        }
        enabled = try provider.boolean(.enabled) ?? true
        timeout = try provider.duration(.timeout, in: 1...600, kind: "a timeout", examples: "10s or 2m") ?? 10
        tokenEndpointAuthMethod = try provider.choice(.tokenEndpointAuthMethod, as: TokenEndpointAuthMethod.self)
    }

    /// The trimmed contents of the secret file at `path`, which only its owner may read.
    private static func secret(in path: String, at key: [any CodingKey]) throws(DecodingProblem) -> String {
        let data = try OwnerOnlyFile.read(path, at: key, what: "the client secret file", holds: "a secret")
        let secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !secret.isEmpty else { throw DecodingProblem(key, "expected the client secret in '\(path)'; the file is empty") }
        return secret
    }

    /// RFC 6749's scope-token: printable ASCII other than space, `"` and `\`.
    private static func isScopeByte(_ byte: UInt8) -> Bool {
        byte == 0x21 || (0x23...0x5B).contains(byte) || (0x5D...0x7E).contains(byte)
    }
}
