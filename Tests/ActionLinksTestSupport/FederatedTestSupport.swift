import ActionLinks
import ActionLinksConfiguration
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores

/// The OpenID Connect provider the federated tests sign in with: oidc-provider-mock, which
/// `scripts/test.sh` starts on a loopback port and names in `OIDC_PROVIDER_MOCK_URL`.
public enum OIDCProviderMock {
    public static let variable = "OIDC_PROVIDER_MOCK_URL"

    /// The provider's issuer (`http://127.0.0.1:<port>`, the exact host its tokens name).
    public static func url() throws -> String {
        try MissingTestService.url(variable, starting: "the provider", script: "oidc-provider-mock.sh", folder: "/tmp/oid")
    }

    /// The provider, through the tests' one loopback session.
    public static func origin() throws -> HTTPOrigin { HTTPOrigin(try url()) }

    /// Sets the claims the provider gives `sub` (it keeps them until it stops).
    public static func setClaims(_ sub: String, _ claims: [String: Any]) async throws {
        let reply = try await origin().request(
            "PUT", "/users/" + sub, body: try JSONSerialization.data(withJSONObject: claims), headers: ["Content-Type": "application/json"])
        #expect(reply.status == 204)
    }

    /// Logs `sub` in at an authorization URL (the mock's form: a POST of `sub` to the same URL) and
    /// returns where the provider sends the browser.
    public static func logIn(at authorizationURL: String, sub: String) async throws -> String {
        let reply = try await HTTPOrigin.anywhere.post(authorizationURL, form: [("sub", sub)])
        return try #require(reply.header("Location"), "the provider answered \(reply.status)")
    }

    /// An ID token the provider issues to `clientID` for `sub` with `nonce` (the test plays the
    /// client: authorization, login, token endpoint).
    public static func idToken(sub: String, clientID: String, nonce: String) async throws -> String {
        let redirect = "https://links.test.example/__/auth/handler"
        let query = HTMLForm.encode(pairs: [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirect), ("scope", "openid email profile"),
            ("state", "s"), ("nonce", nonce),
        ])
        let back = try await logIn(at: try url() + "/oauth2/authorize?" + query, sub: sub)
        let code = try #require(Browser.query(back)["code"])
        let reply = try await origin().post(
            "/oauth2/token",
            form: [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect), ("client_id", clientID),
                ("client_secret", "x"),
            ])
        return try #require(reply.json["id_token"] as? String, "\(reply.text)")
    }
}

/// What a test needs of a browser beyond the application's own client: query parsing as the iOS
/// SDK does it, URLs cut to what the in-process client is given, and cookies read from answers.
/// Its requests to the providers go through ``HTTPOrigin`` (the one loopback session: no redirect
/// followed, each hop is looked at; no cookie kept but those a test sends).
public enum Browser {
    /// The query of `url` split on `&` and `=` and decoded once (`+` as a space), the first of a
    /// repeated name winning, as `AuthWebUtils.dictionary(withHttpArgumentsString:)` reads it.
    public static func query(_ url: String) -> [String: String] {
        guard let start = url.firstIndex(of: "?") else { return [:] }
        var query = url[url.index(after: start)...]
        if let hash = query.firstIndex(of: "#") { query = query[..<hash] }
        var items: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            let name = decode(parts[0])
            if items[name] == nil { items[name] = parts.count > 1 ? decode(parts[1]) : "" }
        }
        return items
    }

    /// The path and query of an absolute URL (what the in-process client is given).
    public static func pathAndQuery(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let slash = url[scheme.upperBound...].firstIndex(of: "/") else { return url }
        return String(url[slash...])
    }

    /// The `name=value` of a `Set-Cookie` header.
    public static func cookie(_ response: HTTPReply) -> String? {
        response.header("Set-Cookie").map { String($0.prefix { $0 != ";" }) }
    }
}

/// A server configured for federated sign-in against the mock provider: `yahoo.com` (the Yahoo
/// preset pointed at the mock), `oidc.mock` (trusted for corp.example), `oidc.off` (disabled), an
/// iOS app with both callback schemes, an Android app and a tenant.
public enum FederatedApp {
    public static let bundleID = "com.example.app"
    public static let clientID = "1234567890-abc.apps.googleusercontent.com"
    public static let googleAppID = "1:1234567890:ios:0123456789abcdef"
    public static let clientIDScheme = "com.googleusercontent.apps.1234567890-abc"
    public static let appIDScheme = "app-1-1234567890-ios-0123456789abcdef"
    /// The signing certificate's SHA-1 configured for com.example.app (`apps.android[0].sha1CertFingerprints`).
    public static let androidSHA1 = "5E:8F:16:06:2E:A3:CD:2C:4A:0D:54:78:76:BA:A6:F3:8C:AB:F6:25"
    /// The stores every flow test runs on.
    public static let stores = ["sqlite", "postgres"]
    public static let json = ["Content-Type": "application/json"]
    public static let admin = ["Content-Type": "application/json", "Authorization": "Bearer owner"]

    /// The configuration up to its `providers:` line: a development server on loopback, the
    /// project, an iOS and an Android app and tenant `team-a` (what the SAML tests share).
    public static func configurationBeforeProviders(data: URL, store: String) -> String {
        """
        server:
          host: 127.0.0.1
          port: 0
          development: true
        project:
          id: demo-actionlinks
          apiKey: demo-api-key
          appName: Example App
        linkDomains: [https://links.test.example]
        dataDirectory: \(data.path)
        store: "\(store)"
        users:
          emailEnumerationProtection: false
        continueUrls:
          allow: [https://app.example.com/]
          defaultOrigin: https://app.example.com
        tenants: [team-a]
        apps:
          ios:
            - teamId: ABCDE12345
              bundleId: \(bundleID)
              googleAppId: "\(googleAppID)"
              clientId: \(clientID)
          android:
            - packageName: com.example.app
              sha256CertFingerprints:
                - "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"
              sha1CertFingerprints:
                - "\(androidSHA1)"

        """
    }

    /// The configuration; `moreProviders` are further entries of `providers` (YAML list items).
    public static func configuration(provider: String, data: URL, store: String, moreProviders: String = "") -> String {
        configurationBeforeProviders(data: data, store: store) + """
            providers:
              - id: yahoo.com
                preset: yahoo
                issuer: \(provider)
                clientId: actionlinks-yahoo
                clientSecret: yahoo-secret
                timeout: 2m
              - id: oidc.mock
                issuer: \(provider)
                clientId: actionlinks-oidc
                clientSecret: oidc-secret
                timeout: 2m
                trustedEmailDomains: [corp.example]
              - id: oidc.off
                issuer: \(provider)
                clientId: actionlinks-off
                clientSecret: off-secret
                timeout: 2m
                enabled: false

            """ + moreProviders
    }

    /// Runs `body` against the application on a fresh SQLite file or PostgreSQL database, with
    /// `environment` overrides (`ACTIONLINKS_USERS_ONE_ACCOUNT_PER_EMAIL`, ...) and `moreProviders`.
    public static func test<Value: Sendable>(
        store kind: String = "sqlite", environment: [String: String] = [:], clock: any ServiceClock = SystemServiceClock(),
        moreProviders: String = "",
        _ body: @Sendable (RouterClient) async throws -> Value
    ) async throws -> Value {
        let provider = try OIDCProviderMock.url()
        return try await run(label: "federated", store: kind, environment: environment, clock: clock, body) { data, store in
            configuration(provider: provider, data: data, store: store, moreProviders: moreProviders)
        }
    }

    /// Runs `body` against the application on the configuration `configure` writes for a new data
    /// folder and a fresh SQLite file or PostgreSQL database (``SAMLApp`` runs its own this way);
    /// the app logs warnings as `label`.
    public static func run<Value: Sendable>(
        label: String, store kind: String, environment: [String: String] = [:], clock: any ServiceClock,
        _ body: @Sendable (RouterClient) async throws -> Value,
        configure: (_ data: URL, _ store: String) async throws -> String
    ) async throws -> Value {
        let data = TestProject.temporaryDirectory("actionlinks-" + label)
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: data) }
        let store =
            kind == "postgres"
            ? try await PostgresTestServer.freshDatabaseURL() : "sqlite:" + data.appendingPathComponent("actionlinks.sqlite").path
        let file = data.appendingPathComponent("actionlinks.yaml")
        try await configure(data, store).write(to: file, atomically: true, encoding: .utf8)
        var environment = environment
        // A server on PostgreSQL takes its keys from a key set (it never makes them on a shared store).
        if kind == "postgres", environment["ACTIONLINKS_KEYS_JSON"] == nil {
            environment["ACTIONLINKS_KEYS_JSON"] = try await SharedKeys.json()
        }
        let loaded = try ActionLinksConfiguration.load(file: file.path, environment: environment)
        var logger = Logger(label: label)
        logger.logLevel = .warning
        let app = try await LinkDomainServer.buildApplication(configuration: loaded, www: Repository.www, logger: logger, clock: clock)
        return try await app.test(.router) { client in try await body(RouterClient(client)) }
    }

    /// A new subject at the provider with these claims (a fresh one per test: the provider is shared).
    public static func subject(_ claims: [String: Any]) async throws -> String {
        let sub = "sub-" + UUID().uuidString.lowercased()
        try await OIDCProviderMock.setClaims(sub, claims)
        return sub
    }

    /// A session secret as the iOS SDK makes it (10 capital letters) and its SHA-256 in hex.
    public static func session() -> (secret: String, hash: String) {
        let secret = String((0..<10).map { _ in "ABCDEFGHIJKLMNOPQRSTUVWXYZ".randomElement()! })
        return (secret, FederatedFlow.hash(secret))
    }

    /// The iOS SDK's handler URL (`getHeadfulLiteUrl`), with the client-ID scheme by default.
    public static func iOSHandlerPath(
        provider: String, sessionHash: String, eventID: String = "QWERTYUIOP", path: String = "/__/auth/handler",
        appID: Bool = false, bundleID: String = bundleID, clientID: String = clientID, apiKey: String = "demo-api-key",
        extra: [(String, String)] = []
    ) -> String {
        var items = [
            ("apiKey", apiKey), ("authType", "signInWithRedirect"), ("ibi", bundleID), ("sessionId", sessionHash),
            ("v", "FirebaseAuth.iOS/12.0.0 test"), ("eventId", eventID), ("providerId", provider),
        ]
        items.append(appID ? ("appId", googleAppID) : ("clientId", clientID))
        items.append(("scopes", ""))
        items += extra
        return path + "?" + items.map { "\($0.0)=\(PercentEncoding.encodeComponent($0.1))" }.joined(separator: "&")
    }

    /// One iOS-shaped round trip up to the app: the handler, the provider's login form, the
    /// handler again. Returns the URL the app is opened with.
    public struct Trip: Sendable {
        public var start: HTTPReply
        public var cookie: String?
        public var providerReturn: String?
        public var appURL: String?
    }

    public static func iOSTrip(
        _ client: any HTTPTarget, provider: String, sub: String, sessionHash: String, appID: Bool = false,
        path: String = "/__/auth/handler", eventID: String = "QWERTYUIOP"
    ) async throws -> Trip {
        let start = try await client.request(
            "GET", iOSHandlerPath(provider: provider, sessionHash: sessionHash, eventID: eventID, path: path, appID: appID))
        var trip = Trip(start: start, cookie: Browser.cookie(start))
        guard start.status == 302, let authorize = start.header("Location"), authorize.hasPrefix(try OIDCProviderMock.url()) else {
            return trip
        }
        let back = try await OIDCProviderMock.logIn(at: authorize, sub: sub)
        trip.providerReturn = back
        var headers: [String: String] = [:]
        if let cookie = trip.cookie { headers["Cookie"] = cookie }
        let returned = try await client.request("GET", Browser.pathAndQuery(back), headers: headers)
        trip.appURL = returned.header("Location")
        return trip
    }

    /// The `link` (the SDK's `requestUri`) inside an app URL, read as the iOS SDK reads it.
    public static func link(in appURL: String) -> (link: String?, inner: [String: String]) {
        let outer = Browser.query(appURL)
        let inner = Browser.query(outer["deep_link_id"] ?? "")
        return (inner["link"], inner)
    }

    /// `accounts:signInWithIdp` with a JSON body; the answer's status and object.
    public static func signInWithIdp(
        _ client: any HTTPTarget, _ body: [String: Any], path: String = "/v1/accounts:signInWithIdp?key=demo-api-key"
    ) async throws -> (status: Int, json: [String: Any]) {
        try await post(client, path, body)
    }

    /// A JSON POST (with ``json``'s `Content-Type`, or `headers`); the answer's status and object.
    public static func post(_ client: any HTTPTarget, _ path: String, _ body: [String: Any], headers: [String: String] = json)
        async throws -> (status: Int, json: [String: Any])
    {
        let reply = try await client.request("POST", path, json: body, headers: headers)
        return (reply.status, reply.json)
    }

    /// The Firebase error message (`CODE : detail`) of an answer.
    public static func errorMessage(_ json: [String: Any]) -> String {
        ((json["error"] as? [String: Any])?["message"] as? String) ?? ""
    }

    /// A user with a password (unverified address), signed in: (localId, idToken, refreshToken).
    public static func passwordUser(_ client: any HTTPTarget, email: String, password: String = "a good password") async throws -> (
        String, String, String
    ) {
        let (_, json) = try await post(
            client, "/v1/accounts:signUp?key=demo-api-key", ["email": email, "password": password, "returnSecureToken": true])
        return (
            try #require(json["localId"] as? String, "\(json)"), try #require(json["idToken"] as? String),
            try #require(json["refreshToken"] as? String)
        )
    }

    /// The providers of an account, by lookup with its ID token.
    public static func providers(_ client: any HTTPTarget, idToken: String) async throws -> [String] {
        let (_, json) = try await post(client, "/v1/accounts:lookup?key=demo-api-key", ["idToken": idToken])
        let user = (json["users"] as? [[String: Any]])?.first
        return ((user?["providerUserInfo"] as? [[String: Any]]) ?? []).compactMap { $0["providerId"] as? String }.sorted()
    }
}
