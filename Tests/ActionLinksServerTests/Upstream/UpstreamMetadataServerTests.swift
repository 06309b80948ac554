import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksConfiguration

/// Credentials without a key file (`upstream.metadataServer`): on Cloud Run, GKE and Compute Engine
/// the service account's access token comes from the metadata server. A stand-in answers as Google's
/// does: only with `Metadata-Flavor: Google` on the request (403 otherwise), and with it on the answer.
@Suite("Upstream mode: the metadata server's tokens", .timeLimit(.minutes(5)))
struct UpstreamMetadataServerTests {
    typealias Upstream = UpstreamModeTests
    typealias Strict = StrictUpstream

    /// The token request's path and query, as the front makes it (firebase-admin's scopes).
    static let tokenPath =
        "/computeMetadata/v1/instance/service-accounts/default/token?scopes="
        + "https%3A%2F%2Fwww%2Egoogleapis%2Ecom%2Fauth%2Fcloud%2Dplatform%2Chttps%3A%2F%2Fwww%2Egoogleapis%2Ecom%2Fauth%2Ffirebase%2C"
        + "https%3A%2F%2Fwww%2Egoogleapis%2Ecom%2Fauth%2Fidentitytoolkit"

    /// A stand-in metadata server whose token is `token` (the strict upstream's admin credential),
    /// answering with `Metadata-Flavor: Google` unless `flavored` is false.
    static func metadataServer(token: String, flavored: Bool = true) throws -> LoopbackHTTPServer {
        var headers = ["Content-Type": "application/json"]
        if flavored { headers["Metadata-Flavor"] = "Google" }
        let body = #"{"access_token":"\#(token)","expires_in":3599,"token_type":"Bearer"}"#
        return try LoopbackHTTPServer(
            routes: [tokenPath: .init(headers: headers, body: Data(body.utf8), requires: ["Metadata-Flavor": "Google"])])
    }

    @Test(
        "with metadataServer and no key file, sendOobCode gets its token from the metadata server once (kept until it expires) and mails the link; an answer without Metadata-Flavor is refused"
    )
    func metadataToken() async throws {
        let upstream = try await Strict.start()
        let metadata = try Self.metadataServer(token: Strict.adminToken)
        let front = try await Upstream.front(
            for: upstream,
            environment: ["ACTIONLINKS_UPSTREAM_API_KEYS": Strict.unrestrictedKey, "ACTIONLINKS_UPSTREAM_METADATA_SERVER": metadata.origin])
        for email in ["meta-one@example.com", "meta-two@example.com"] {
            let asked = try await front.api(
                "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": email, "continueUrl": "https://app.example.com/finish"],
                key: Strict.unrestrictedKey)
            #expect(asked.status == 200, "\(email): \(asked.text)")
            let link = try await Upstream.mailedLink(front, to: email)
            #expect(link.contains("mode=signIn"), "\(link)")
        }
        #expect(metadata.requestsRead == 1, "one token fetch, kept for the second call: \(metadata.requestsRead)")
        // The stand-in is as strict as Google's: without Metadata-Flavor, no token.
        #expect(try await HTTPOrigin(metadata.origin).request("GET", Self.tokenPath).status == 403)

        // Something on the metadata address that is not the metadata server: no token is taken from it.
        let impostor = try Self.metadataServer(token: Strict.adminToken, flavored: false)
        let misled = try await Upstream.front(
            for: upstream,
            environment: ["ACTIONLINKS_UPSTREAM_API_KEYS": Strict.unrestrictedKey, "ACTIONLINKS_UPSTREAM_METADATA_SERVER": impostor.origin])
        let refused = try await misled.api(
            "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "meta-three@example.com", "continueUrl": "https://app.example.com/"],
            key: Strict.unrestrictedKey)
        #expect(refused.status >= 500 && Upstream.mailCount(misled, to: "meta-three@example.com") == 0, "\(refused.text)")
        #expect(impostor.requestsRead == 1)
    }

    @Test(
        "upstream.metadataServer: true is Google's, a URL is checked (plain http only for Google's metadata host and loopback), never with a key file"
    )
    func settings() throws {
        func parse(_ value: String, file: Bool = false) throws(ConfigurationError) -> UpstreamSettings? {
            var yaml = "upstream:\n  projectId: p\n  apiKeys: [k]\n  metadataServer: \"\(value)\"\n"
            if file { yaml += "  serviceAccountFile: /nonexistent/key.json\n" }
            return try ActionLinksConfiguration.parse(yaml: yaml, file: "test.yaml", environment: [:]).service.upstream
        }
        #expect(try parse("true")?.metadataServer == "http://metadata.google.internal")
        #expect(try parse("true")?.hasServiceAccount == true)
        #expect(try parse("false")?.metadataServer == nil)
        #expect(try parse("http://169.254.169.254/")?.metadataServer == "http://169.254.169.254")
        #expect(try parse("http://127.0.0.1:8123")?.metadataServer == "http://127.0.0.1:8123")
        for bad in ["http://metadata.example.com", "metadata.google.internal", "http://metadata.google.internal/computeMetadata"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try parse(bad) }
        }
        do {
            _ = try parse("true", file: true)
            Issue.record("a key file and the metadata server together were taken")
        } catch {
            #expect(error.key == "upstream.metadataServer" && error.message.contains("not both"), "\(error)")
        }
    }
}
