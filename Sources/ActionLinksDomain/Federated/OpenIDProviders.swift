import ActionLinksConfiguration
import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import Synchronization

/// The fields of a provider's `/.well-known/openid-configuration` this server uses.
struct OpenIDConfiguration: Decodable, Sendable {
    var issuer: String
    var authorizationEndpoint: String
    var tokenEndpoint: String
    var jwksURI: String
    var userinfoEndpoint: String?
    var codeChallengeMethodsSupported: [String]?
    var tokenEndpointAuthMethodsSupported: [String]?
    var authorizationResponseIssParameterSupported: Bool?

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case jwksURI = "jwks_uri"
        case userinfoEndpoint = "userinfo_endpoint"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
    }

    /// Whether the provider takes PKCE with S256.
    var supportsPKCE: Bool { codeChallengeMethodsSupported?.contains("S256") == true }
}

/// What a provider's token endpoint answers.
struct ProviderTokens: Sendable {
    var idToken: String?
    var accessToken: String?
    var expiresIn: Int?
}

/// Speaks to the configured providers over HTTP: discovery and keys are fetched on first use and
/// cached (an hour; the keys again at once, at most every ten seconds, when a token names a key
/// they lack), the code is exchanged at the token endpoint, an access token at the userinfo
/// endpoint. Every call has the provider's deadline (`providers[].timeout`).
final class OpenIDProviders: Sendable {
    let client: HTTPClient
    /// How long discovery and keys are kept.
    static let cacheLifetime: Duration = .seconds(3600)
    /// The least time between two fetches of one provider's keys for an unknown `kid`.
    static let refetchInterval: Duration = .seconds(10)
    /// How many times a request is sent again after a kept-alive connection was closed under it.
    static let closedConnectionRetries = 8

    /// Whether a request failed because its kept-alive connection was closed (`remoteConnectionClosed`,
    /// or NIO's `ioOnClosedChannel` when the close lands between taking the connection from the pool
    /// and writing on it) or reset (`ECONNRESET` on a read or a write, `EPIPE` on a write) under it.
    static func isCutOff(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError { return error == .remoteConnectionClosed }
        if let error = error as? ChannelError { return error == .ioOnClosedChannel }
        if let error = error as? IOError { return error.errnoCode == ECONNRESET || error.errnoCode == EPIPE }
        return false
    }

    private struct Cached: Sendable {
        var configuration: OpenIDConfiguration?
        var configurationFetched: ContinuousClock.Instant?
        var keys: [JWK] = []
        var keysFetched: ContinuousClock.Instant?
    }
    private let cache = Mutex<[String: Cached]>([:])

    init(client: HTTPClient = .shared) {
        self.client = client
    }

    /// The provider's discovery document, whose `issuer` must be the configured one exactly.
    func configuration(for provider: ProviderSettings) async throws(ActionError) -> OpenIDConfiguration {
        let now = ContinuousClock.now
        if let cached = cache.withLock({ $0[provider.issuer] }), let configuration = cached.configuration,
            let fetched = cached.configurationFetched, now - fetched < Self.cacheLifetime
        {
            return configuration
        }
        let url =
            provider.issuer.hasSuffix("/")
            ? provider.issuer + ".well-known/openid-configuration"
            : provider.issuer + "/.well-known/openid-configuration"
        let data = try await get(url, provider: provider, what: "the discovery document of \(provider.id)")
        let configuration: OpenIDConfiguration
        do {
            configuration = try JSONDecoder().decode(OpenIDConfiguration.self, from: data)
        } catch {
            throw ActionError(.unavailable, "the discovery document of \(provider.id) cannot be read", cause: error)
        }
        guard configuration.issuer == provider.issuer else {
            throw ActionError(
                .unavailable,
                "the discovery document of \(provider.id) names the issuer '\(configuration.issuer)', not '\(provider.issuer)'")
        }
        cache.withLock { cache in
            cache[provider.issuer, default: Cached()].configuration = configuration
            cache[provider.issuer, default: Cached()].configurationFetched = now
        }
        return configuration
    }

    /// The provider's signing keys; `refresh` fetches them again (at most every ten seconds).
    func keys(for provider: ProviderSettings, configuration: OpenIDConfiguration, refresh: Bool) async throws(ActionError) -> [JWK] {
        let now = ContinuousClock.now
        if let cached = cache.withLock({ $0[provider.issuer] }), let fetched = cached.keysFetched {
            let age = now - fetched
            if refresh ? age < Self.refetchInterval : age < Self.cacheLifetime { return cached.keys }
        }
        let data = try await get(configuration.jwksURI, provider: provider, what: "the keys of \(provider.id)")
        guard let set = try? JSONDecoder().decode(LenientJWKS.self, from: data) else {
            throw ActionError(.unavailable, "the keys of \(provider.id) cannot be read")
        }
        let keys = set.keys.compactMap(\.key)
        cache.withLock { cache in
            cache[provider.issuer, default: Cached()].keys = keys
            cache[provider.issuer, default: Cached()].keysFetched = now
        }
        return keys
    }

    /// Exchanges an authorization code at the token endpoint, authenticating as the provider's
    /// `tokenEndpointAuthMethod` says or, unset, with HTTP Basic unless the provider offers only
    /// `client_secret_post`; a Basic attempt answered `invalid_client` is made once more with
    /// `client_secret_post` when the provider offers it (some read Basic credentials without
    /// form-decoding them, so a secret with `+ / =` fails there).
    func exchange(
        code: String, provider: ProviderSettings, configuration: OpenIDConfiguration, redirectURI: String, codeVerifier: String?
    ) async throws(ActionError) -> ProviderTokens {
        var fields = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI)]
        if let codeVerifier { fields.append(("code_verifier", codeVerifier)) }
        let offered = configuration.tokenEndpointAuthMethodsSupported ?? ["client_secret_basic"]
        let method: ProviderSettings.TokenEndpointAuthMethod =
            provider.tokenEndpointAuthMethod
            ?? (offered.contains("client_secret_basic") || !offered.contains("client_secret_post") ? .clientSecretBasic : .clientSecretPost)
        var (status, answer) = try await requestTokens(fields, method: method, provider: provider, configuration: configuration)
        if provider.tokenEndpointAuthMethod == nil, method == .clientSecretBasic, answer?.error == "invalid_client",
            offered.contains("client_secret_post")
        {
            (status, answer) = try await requestTokens(fields, method: .clientSecretPost, provider: provider, configuration: configuration)
        }
        guard (200..<300).contains(status), let answer else {
            let error = answer?.error.map { String($0.prefix(100)) } ?? "HTTP \(status)"
            throw ActionError(.invalidIDPResponse, "the provider refused the authorization code (\(error))")
        }
        return ProviderTokens(idToken: answer.idToken, accessToken: answer.accessToken, expiresIn: answer.expiresIn)
    }

    /// One request to the token endpoint with the client authenticated by `method`.
    private func requestTokens(
        _ fields: [(String, String)], method: ProviderSettings.TokenEndpointAuthMethod, provider: ProviderSettings,
        configuration: OpenIDConfiguration
    ) async throws(ActionError) -> (Int, TokenEndpointAnswer?) {
        var fields = fields
        var request = HTTPClientRequest(url: configuration.tokenEndpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        switch method {
        case .clientSecretBasic:
            // RFC 6749 §2.3.1: the ID and secret are form-encoded before they are joined.
            let credentials = Self.formEncode(provider.clientID) + ":" + Self.formEncode(provider.clientSecret)
            request.headers.add(name: "Authorization", value: "Basic " + Data(credentials.utf8).base64EncodedString())
        case .clientSecretPost:
            fields += [("client_id", provider.clientID), ("client_secret", provider.clientSecret)]
        }
        request.body = .bytes(ByteBuffer(string: fields.map { Self.formEncode($0.0) + "=" + Self.formEncode($0.1) }.joined(separator: "&")))
        let (status, data) = try await send(request, provider: provider, what: "the token endpoint of \(provider.id)")
        return (status, try? JSONDecoder().decode(TokenEndpointAnswer.self, from: data))
    }

    /// The provider's UserInfo answer for an access token (OpenID Connect Core §5.3): a JSON object.
    func userInfo(accessToken: String, endpoint: String, provider: ProviderSettings) async throws(ActionError) -> [String: ClaimValue] {
        var request = HTTPClientRequest(url: endpoint)
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "Authorization", value: "Bearer " + accessToken)
        let what = "the userinfo endpoint of \(provider.id)"
        let (status, data) = try await send(request, provider: provider, what: what)
        guard status == 200 else { throw ActionError(.invalidIDPResponse, "\(what) refused the access token (HTTP \(status))") }
        guard case .object(let claims)? = try? JSONDecoder().decode(ClaimValue.self, from: data) else {
            throw ActionError(.invalidIDPResponse, "\(what) did not answer a JSON object")
        }
        return claims
    }

    /// The token endpoint's JSON answer (RFC 6749 §5.1 and §5.2, OpenID Connect Core §3.1.3.3).
    struct TokenEndpointAnswer: Decodable {
        var idToken: String?
        var accessToken: String?
        /// Seconds, as a number (or, from some providers, a string of digits).
        var expiresIn: Int?
        var error: String?

        enum CodingKeys: String, CodingKey {
            case idToken = "id_token", accessToken = "access_token", expiresIn = "expires_in", error
        }

        init(from decoder: any Decoder) throws {
            let answer = try decoder.container(keyedBy: CodingKeys.self)
            idToken = try? answer.decodeIfPresent(String.self, forKey: .idToken)
            accessToken = try? answer.decodeIfPresent(String.self, forKey: .accessToken)
            error = try? answer.decodeIfPresent(String.self, forKey: .error)
            expiresIn =
                (try? answer.decodeIfPresent(Int.self, forKey: .expiresIn))
                ?? (try? answer.decodeIfPresent(String.self, forKey: .expiresIn)).flatMap { $0.flatMap { Int($0) } }
        }
    }

    /// `application/x-www-form-urlencoded` encoding of one name or value.
    static func formEncode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    private func get(_ url: String, provider: ProviderSettings, what: String) async throws(ActionError) -> Data {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        let (status, data) = try await send(request, provider: provider, what: what)
        guard status == 200 else { throw ActionError(.unavailable, "\(what) could not be fetched (HTTP \(status))") }
        return data
    }

    private func send(_ request: HTTPClientRequest, provider: ProviderSettings, what: String) async throws(ActionError) -> (Int, Data) {
        let deadline = NIODeadline.now() + .seconds(Int64(provider.timeout))
        var cutOff = 0
        while true {
            do {
                let response = try await client.execute(request, deadline: deadline)
                let body = try await response.body.collect(upTo: 1 << 20)
                return (Int(response.status.code), Data(buffer: body))
            } catch let error as HTTPClientError where error == .connectTimeout && NIODeadline.now() < deadline {
                // The client gives up connecting after its own 10 s (a busy provider's accept queue
                // drops SYNs); nothing was sent, so it tries again until the provider's deadline.
                continue
            } catch let error where Self.isCutOff(error) && cutOff < Self.closedConnectionRetries && NIODeadline.now() < deadline {
                // A kept-alive connection the provider closed as the request went out on it (uvicorn
                // closes one idle for 5 s, gunicorn 2 s), or reset (a close with bytes unread sends
                // an RST); async-http-client does not send again (swift-server/async-http-client#715),
                // and the next pooled connection may be just as stale. Again, a few times: each
                // closed connection leaves the pool, so one is soon new. A provider that did read the
                // request refuses a code used twice, so the worst is its refusal.
                cutOff += 1
                continue
            } catch {
                throw ActionError(.unavailable, "\(what) could not be reached", cause: error)
            }
        }
    }
}

/// A JWKS whose keys this server cannot use (another key type, a curve jwt-kit lacks) are skipped,
/// not fatal: a provider may publish keys for others beside its signing keys.
private struct LenientJWKS: Decodable {
    struct Entry: Decodable {
        var key: JWK?
        init(from decoder: any Decoder) throws { key = try? JWK(from: decoder) }
    }
    var keys: [Entry]
}
