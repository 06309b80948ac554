import ActionLinks
import ActionLinksConfiguration
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Testing

import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores

/// The second OpenID Connect provider the federated tests sign in with: django-oidc-provider
/// (`Tests/DjangoOIDCProvider/provider.py`), which `scripts/test.sh` starts on a loopback port and
/// names in `DJANGO_OIDC_PROVIDER_URL`. Its ID tokens carry no profile (it is served at
/// `/userinfo`), its token endpoint reads HTTP Basic credentials without form-decoding them, and its
/// users log in with Django's own CSRF-protected login form.
public enum DjangoOIDCProvider {
    public static let variable = "DJANGO_OIDC_PROVIDER_URL"
    /// The client `provider.py` registers, whose secret has `+`, `/` and `=`.
    public static let clientID = "actionlinks-django"
    public static let clientSecret = "dj+secret/with=signs+=="
    public static let password = "a good password"

    /// Whether the tests that need it run: when the variable is set, and always in CI (where
    /// `scripts/test.sh` sets it, so that a missing provider fails rather than skips).
    public static var enabled: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment[variable]?.isEmpty == false || environment["CI"]?.isEmpty == false
    }

    /// The provider's issuer (`http://127.0.0.1:<port>/openid`).
    public static func url() throws -> String {
        try MissingTestService.url(variable, starting: "the provider", script: "django-oidc-provider.sh", folder: "/tmp/dja")
    }

    /// Logs `username` in at an authorization URL as a browser would, with a cookie jar of its own
    /// on top of the tests' one loopback session (which keeps none): the provider sends the browser
    /// to its login form, the form is posted with its CSRF token, and the authorization URL, now
    /// with a session, answers with a redirect to the client. Returns where the provider sends the
    /// browser then.
    public static func logIn(at authorizationURL: String, username: String) async throws -> String {
        var cookies: [String: String] = [:]

        func send(_ url: URL, form: [(String, String)]? = nil) async throws -> HTTPReply {
            var headers: [String: String] = [:]
            if !cookies.isEmpty {
                headers["Cookie"] = cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
            }
            let reply =
                if let form {
                    try await HTTPOrigin.anywhere.post(url.absoluteString, form: form, headers: headers)
                } else {
                    try await HTTPOrigin.anywhere.request("GET", url.absoluteString, headers: headers)
                }
            if let field = reply.header("Set-Cookie") {
                for name in ["csrftoken", "sessionid"] {
                    guard let start = field.range(of: name + "=") else { continue }
                    cookies[name] = String(field[start.upperBound...].prefix { $0 != ";" && $0 != "," && $0 != " " })
                }
            }
            return reply
        }
        func location(_ reply: HTTPReply, from url: URL) throws -> URL {
            let location = try #require(reply.header("Location"), "the provider answered \(reply.status)")
            return try #require(URL(string: location, relativeTo: url)?.absoluteURL)
        }

        let authorize = try #require(URL(string: authorizationURL))
        let toLogin = try await send(authorize)
        let loginURL = try location(toLogin, from: authorize)
        #expect(loginURL.path.hasPrefix("/accounts/login"), "\(loginURL)")
        let form = try await send(loginURL).text
        let marker = try #require(form.range(of: #"name="csrfmiddlewaretoken" value=""#), "no CSRF token in the login form")
        let token = String(form[marker.upperBound...].prefix { $0 != "\"" })
        let loggedIn = try await send(loginURL, form: [("csrfmiddlewaretoken", token), ("username", username), ("password", password)])
        #expect(loggedIn.status == 302, "the login form answered \(loggedIn.status): \(loggedIn.text.prefix(500))")
        let back = try await send(try location(loggedIn, from: loginURL))
        return try location(back, from: authorize).absoluteString
    }

    /// The ID token and access token the provider issues to its client for `username` with
    /// `nonce` (the test plays an app that signs in with the provider itself: authorization, the
    /// login form, the token endpoint with `client_secret_post`).
    public static func tokens(username: String, nonce: String) async throws -> (idToken: String, accessToken: String) {
        let redirect = "https://links.test.example/__/auth/handler"
        let query = HTMLForm.encode(pairs: [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirect), ("scope", "openid email profile"),
            ("state", "s"), ("nonce", nonce),
        ])
        let back = try await logIn(at: try url() + "/authorize?" + query, username: username)
        let code = try #require(Browser.query(back)["code"], "\(back)")
        let answer = try await HTTPOrigin(try url()).post(
            "/token",
            form: [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect), ("client_id", clientID),
                ("client_secret", clientSecret),
            ])
        return (try #require(answer.json["id_token"] as? String, "\(answer.text)"), try #require(answer.json["access_token"] as? String))
    }
}
