import ActionLinks
import Foundation

/// The Firebase project this server fronts (`upstream`): the project keeps its accounts, and this
/// server is its link domain. Absent, this server is the account store.
public struct UpstreamSettings: Sendable, Hashable {
    /// The upstream project's ID.
    public var projectID: String
    /// The API keys the project's links carry (every platform's: web, iOS, Android); a link or call
    /// with any other key is refused.
    public var apiKeys: [String]
    /// The service account that lets this server ask upstream for codes (link generation with our
    /// own mail), when given.
    public var serviceAccount: UpstreamServiceAccount?
    /// The metadata server the service account's access tokens come from instead of a key file
    /// (`upstream.metadataServer`: Cloud Run, GKE, Compute Engine), as an origin without a trailing
    /// slash, when given.
    public var metadataServer: String?
    /// The project's auth domain, whose `/__/auth/*` helper is proxied, when given.
    public var authDomain: String?
    /// Identity Toolkit's origin, without a trailing slash.
    public var identityToolkitURL: String
    /// Secure Token's origin, without a trailing slash. Checked, but no flow calls it yet: token
    /// refreshes go from the SDKs to Google directly.
    public var secureTokenURL: String
    /// How long a call waits to connect upstream, in seconds, before the page answers 503
    /// (`upstream.connectTimeout`, 3 s).
    public var connectTimeout = 3
    /// How long a call waits for upstream's answer, in seconds, before the page answers 503 and the
    /// proxy 502 (`upstream.answerTimeout`, 10 s).
    public var answerTimeout = 10
    /// How many exchanges with each of upstream's hosts (Identity Toolkit, the service account's
    /// token URL, the auth domain) may be in flight at once (`upstream.poolSize`, 32): the size of
    /// async-http-client's pool of connections per host. One more is refused at once (the page and
    /// the proxy answer 503) rather than queued behind slow ones.
    public var poolSize = 32
    /// How long an answer from upstream keeps `GET /readyz` ready, in seconds
    /// (`upstream.readinessInterval`, 60 s): past it, `/readyz` asks upstream again (`GET
    /// /v2/passwordPolicy` with the first API key).
    public var readinessInterval = 60

    /// Google's Identity Toolkit.
    public static let googleIdentityToolkit = "https://identitytoolkit.googleapis.com"
    /// Google's Secure Token service.
    public static let googleSecureToken = "https://securetoken.googleapis.com"
    /// Google's metadata server, as Cloud Run, GKE and Compute Engine reach it.
    public static let googleMetadataServer = "http://metadata.google.internal"

    /// Whether this server can ask upstream for codes as the project's service account: a key file,
    /// or the metadata server's tokens.
    public var hasServiceAccount: Bool { serviceAccount != nil || metadataServer != nil }

    /// Settings from values.
    public init(
        projectID: String, apiKeys: [String], serviceAccount: UpstreamServiceAccount? = nil, authDomain: String? = nil,
        identityToolkitURL: String = Self.googleIdentityToolkit, secureTokenURL: String = Self.googleSecureToken
    ) {
        self.projectID = projectID
        self.apiKeys = apiKeys
        self.serviceAccount = serviceAccount
        self.authDomain = authDomain
        self.identityToolkitURL = identityToolkitURL
        self.secureTokenURL = secureTokenURL
    }

    /// The origin the auth domain is reached at: `https://<authDomain>`, or `http://` for a
    /// loopback host with a port (tests).
    public var authDomainOrigin: String? {
        guard let authDomain else { return nil }
        return (Self.isLoopbackWithPort(authDomain) ? "http://" : "https://") + authDomain
    }

    /// Whether `key` is one of the configured API keys (compared in full, byte for byte).
    public func accepts(apiKey key: some StringProtocol) -> Bool {
        apiKeys.contains { $0.utf8.elementsEqual(key.utf8) }
    }

    static func isLoopbackWithPort(_ authority: String) -> Bool {
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]),
            (1...65535).contains(port)
        else { return false }
        return Loopback.isLoopback(authority[..<colon])
    }
}

/// What the service-account file given as `upstream.serviceAccountFile` holds (Google's
/// service-account JSON), checked at start.
public struct UpstreamServiceAccount: Sendable, Hashable {
    /// The file's path.
    public var path: String
    /// `client_email`: the assertion's issuer.
    public var clientEmail: String
    /// `private_key_id`: the assertion's `kid`.
    public var privateKeyID: String
    /// `private_key`: the RSA key, PEM.
    public var privateKeyPEM: String
    /// `token_uri`: where the assertion is exchanged for an access token.
    public var tokenURI: String
    /// `project_id`.
    public var projectID: String
}

extension UpstreamSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case projectId, apiKeys, serviceAccountFile, metadataServer, authDomain, identityToolkitURL, secureTokenURL, connectTimeout,
            answerTimeout, poolSize, readinessInterval
    }

    /// Reads `upstream`; nil when neither the file nor the environment gives any of its keys.
    static func decode(from decoder: any Decoder) throws -> UpstreamSettings? {
        let section = try decoder.container(keyedBy: CodingKeys.self)
        let projectID = try section.string(.projectId)
        let apiKeys = try section.strings(.apiKeys)
        let accountFile = try section.string(.serviceAccountFile)
        let metadataServer = try section.string(.metadataServer)
        let authDomain = try section.string(.authDomain)
        let toolkit = try section.string(.identityToolkitURL)
        let secureToken = try section.string(.secureTokenURL)
        let connectTimeout = try section.duration(.connectTimeout, in: 1...60, kind: "a timeout", examples: "3s")
        let answerTimeout = try section.duration(.answerTimeout, in: 1...600, kind: "a timeout", examples: "10s or 1m")
        let poolSize = try section.integer(.poolSize, in: 1...1024)
        let readinessInterval = try section.duration(.readinessInterval, in: 1...3600, kind: "an interval", examples: "60s or 5m")
        if projectID == nil, apiKeys.isEmpty, accountFile == nil, metadataServer == nil, authDomain == nil, toolkit == nil,
            secureToken == nil,
            connectTimeout == nil, answerTimeout == nil, poolSize == nil, readinessInterval == nil
        {
            return nil
        }
        guard let projectID else {
            throw section.problem("projectId is required: the ID of the Firebase project this server fronts")
        }
        guard projectID.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) }) else {
            throw section.problem(.projectId, "expected lower-case letters, digits and hyphens; got '\(projectID)'")
        }
        guard !apiKeys.isEmpty else {
            throw section.problem(
                .apiKeys, "expected at least one API key of the project, every platform's (Firebase console → Project settings)")
        }
        for (index, key) in apiKeys.enumerated()
        where !key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "&") && $0 != UInt8(ascii: "#") }) {
            throw section.problem(.apiKeys, index: index, "expected printable ASCII without spaces, '&' or '#'")
        }
        var settings = UpstreamSettings(projectID: projectID, apiKeys: apiKeys)
        if let authDomain {
            guard Self.isAuthDomain(authDomain) else {
                throw section.problem(
                    .authDomain,
                    "expected a host name such as \(projectID).firebaseapp.com (no scheme or path; a loopback host with a port, such as 127.0.0.1:9099, for tests); got '\(authDomain)'"
                )
            }
            settings.authDomain = authDomain
        }
        settings.identityToolkitURL = try Self.origin(toolkit ?? Self.googleIdentityToolkit, section, .identityToolkitURL)
        settings.secureTokenURL = try Self.origin(secureToken ?? Self.googleSecureToken, section, .secureTokenURL)
        settings.connectTimeout = connectTimeout ?? settings.connectTimeout
        settings.answerTimeout = answerTimeout ?? settings.answerTimeout
        settings.poolSize = poolSize ?? settings.poolSize
        settings.readinessInterval = readinessInterval ?? settings.readinessInterval
        if let metadataServer {
            if accountFile != nil {
                throw section.problem(
                    .metadataServer,
                    "give either serviceAccountFile or metadataServer, not both: the service account's tokens come from one of them")
            }
            settings.metadataServer = try Self.metadataOrigin(metadataServer, section)
        }
        if let accountFile {
            settings.serviceAccount = try UpstreamServiceAccount.read(accountFile, at: section.codingPath + [CodingKeys.serviceAccountFile])
        }
        return settings
    }

    /// `upstream.metadataServer`: `true` (Google's, `http://metadata.google.internal`), `false`
    /// (none), or an origin; plain `http://` only for Google's metadata host, its address
    /// 169.254.169.254 and loopback (a stand-in), as the metadata server is only plain HTTP there.
    private static func metadataOrigin(_ text: String, _ section: KeyedDecodingContainer<CodingKeys>) throws -> String? {
        switch text {
        case "true": return googleMetadataServer
        case "false": return nil
        default: break
        }
        if let url = URLComponents(string: text), url.scheme == "http", let host = url.host,
            ["metadata.google.internal", "169.254.169.254"].contains(host), url.user == nil, url.query == nil, url.fragment == nil,
            url.path.isEmpty || url.path == "/"
        {
            return text.hasSuffix("/") ? String(text.dropLast()) : text
        }
        guard let checked = checkedURL(text) else {
            throw section.problem(
                .metadataServer,
                "expected true, false or the metadata server's origin (http://metadata.google.internal, http://169.254.169.254, "
                    + "https://..., or http:// for a loopback stand-in); got '\(text)'")
        }
        return checked
    }

    /// `text` as an origin without a trailing slash, if it is an https URL (http for a loopback
    /// host) with no user, query or fragment.
    private static func origin(_ text: String, _ section: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> String {
        guard let checked = checkedURL(text) else {
            throw section.problem(
                key,
                "expected an absolute https URL such as \(key == .secureTokenURL ? googleSecureToken : googleIdentityToolkit) "
                    + "(http only for a loopback host such as http://127.0.0.1:9099); got '\(text)'")
        }
        return checked
    }

    /// `text` without a trailing slash if it is an https URL, or http with a loopback host, with no
    /// user, query or fragment: the URLs this server calls, or lets others call, for a project.
    public static func checkedURL(_ text: String) -> String? {
        guard let url = URLComponents(string: text), let host = url.host, !host.isEmpty, url.user == nil, url.password == nil,
            url.query == nil, url.fragment == nil, !text.contains(where: { $0.isWhitespace })
        else { return nil }
        switch url.scheme {
        case "https": break
        case "http": guard Loopback.isLoopback(host) else { return nil }
        default: return nil
        }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    private static func isAuthDomain(_ text: String) -> Bool {
        if isLoopbackWithPort(text) { return true }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && text.utf8.count <= 253
            && labels.allSatisfy { label in
                (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                    && label.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "-") }
            }
    }
}

extension UpstreamServiceAccount {
    /// Reads and checks the service-account file at `path`: only its owner may read it, and it is
    /// Google's service-account JSON with an RSA private key in PEM.
    static func read(_ path: String, at key: [any CodingKey]) throws(DecodingProblem) -> UpstreamServiceAccount {
        let data = try OwnerOnlyFile.read(path, at: key, what: "the service-account file", holds: "the project's private key")
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw DecodingProblem(
                key, "'\(path)' is not a service-account JSON object (Firebase console → Project settings → Service accounts)")
        }
        func field(_ name: String) throws(DecodingProblem) -> String {
            guard let value = object[name] as? String, !value.isEmpty else {
                throw DecodingProblem(
                    key, "'\(path)': \(name) is missing or not a non-empty string; expected Google's service-account JSON")
            }
            return value
        }
        let type = try field("type")
        guard type == "service_account" else {
            throw DecodingProblem(key, "'\(path)': type is '\(type)'; expected 'service_account'")
        }
        let pem = try field("private_key")
        let body = pem.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("-----") }.joined()
        guard pem.contains("-----BEGIN PRIVATE KEY-----") || pem.contains("-----BEGIN RSA PRIVATE KEY-----"),
            let der = Data(base64Encoded: body, options: .ignoreUnknownCharacters), der.count > 256
        else {
            throw DecodingProblem(key, "'\(path)': private_key is not an RSA private key in PEM (-----BEGIN PRIVATE KEY-----)")
        }
        let tokenURI = try field("token_uri")
        guard UpstreamSettings.checkedURL(tokenURI) != nil else {
            throw DecodingProblem(key, "'\(path)': token_uri is '\(tokenURI)'; expected an https URL (http only for a loopback host)")
        }
        return UpstreamServiceAccount(
            path: path, clientEmail: try field("client_email"), privateKeyID: try field("private_key_id"), privateKeyPEM: pem,
            tokenURI: tokenURI, projectID: try field("project_id"))
    }
}

/// `upstream`, which may be absent.
struct UpstreamSection: Decodable {
    var settings: UpstreamSettings?

    init(from decoder: any Decoder) throws {
        settings = try UpstreamSettings.decode(from: decoder)
    }
}
