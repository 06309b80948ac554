import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain

/// A deployment as docs/DEPLOYING.md draws it: two `actionlinks serve` processes behind one nginx,
/// on one PostgreSQL reached only through its Unix socket (Cloud SQL's form on Cloud Run), sharing
/// one key set mounted read-only as Kubernetes mounts a secret. They must never disagree.
extension HeavyTests {
    @Suite("Two instances behind nginx, on PostgreSQL's socket, with one mounted key set", .serialized, .timeLimit(.minutes(20)))
    struct ProxiedInstancesTests {
        @Test(
            "a reset form from one instance completes on the other; a sign-in code mailed by one is exchanged on the other; an ID token from one is accepted by the other; a key rotation reaches both; per-IP limits count each client apart and a forged X-Forwarded-For gains nothing"
        )
        func agree() async throws {
            let cluster = try await PrivatePostgresCluster(socketFolder: "cloudsql/demo:europe-west1:links")
            defer { Task { await cluster.remove() } }
            #expect(cluster.url.contains("@:") && cluster.url.contains("?host=/"), "\(cluster.url)")
            let keys = try KeySet.make(now: .now)
            let secret = try await MountedSecret(name: "keys.json", contents: try keys.json())
            defer { Task { await secret.remove() } }
            let environment = [
                "ACTIONLINKS_STORE": cluster.url, "ACTIONLINKS_KEYS_FILE": secret.path,
                "ACTIONLINKS_SERVER_TRUSTED_PROXIES": "127.0.0.1/32", "ACTIONLINKS_LIMITS_SENDS_PER_IP_PER_HOUR": "3",
            ]
            async let first = TestServer(environment: environment)
            async let second = TestServer(environment: environment)
            let instances = try await [first, second]
            let proxy = try NginxProxy(upstreams: instances.map { String($0.base.dropFirst("http://".count)) })
            try await proxy.started()
            /// A client behind the proxy, at `source`, its requests pinned to instance `index` (or round robin).
            func client(_ source: String) -> CurlClient { CurlClient(base: proxy.base, source: source) }
            let on = [["X-Test-Instance": "0"], ["X-Test-Instance": "1"]]
            let someone = client("127.0.0.4")

            // A reset form rendered by one instance completes on the other.
            try await instances[0].createAccount(email: "ann@example.com", password: "first password")
            let reset = try await instances[0].link("PASSWORD_RESET", email: "ann@example.com")
            let page = try await someone.request("GET", try instances[0].local(reset.link), headers: on[0])
            #expect(page.status == 200 && page.header("X-Upstream") == String(instances[0].base.dropFirst(7)), "\(page.headers)")
            let done = try await someone.submitForm(
                of: page, ["password": "second password", "passwordAgain": "second password"], headers: on[1])
            #expect(done.status == 200 && done.header("X-Upstream") == String(instances[1].base.dropFirst(7)), "\(done.text)")
            let signedIn = try await someone.api(
                "signInWithPassword", ["email": "ann@example.com", "password": "second password", "returnSecureToken": true], headers: on[0]
            )
            #expect(signedIn.status == 200, "the new password holds on the first instance: \(signedIn.text)")

            // A sign-in code mailed by one instance is exchanged on the other.
            let asked = try await someone.api("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "bo@example.com"], headers: on[0])
            #expect(asked.status == 200, "\(asked.text)")
            let mailed = try await Self.mailedCode(instances[0], to: "bo@example.com")
            let exchanged = try await someone.post(
                "/v1/signInCodes:exchange?key=\(TestProject.apiKey)", ["email": "bo@example.com", "code": mailed], headers: on[1])
            #expect(
                exchanged.status == 200 && (exchanged.json["emailLink"] as? String)?.contains("mode=signIn") == true, "\(exchanged.text)")

            // An ID token from one instance is accepted by the other.
            let made = try await someone.api("signUp", ["email": "cy@example.com", "password": "cy password 1"], headers: on[0])
            let idToken = try #require(made.json["idToken"] as? String, "\(made.text)")
            let looked = try await someone.api("lookup", ["idToken": idToken], headers: on[1])
            #expect(looked.status == 200 && (looked.json["users"] as? [[String: Any]])?.first?["email"] as? String == "cy@example.com")

            // A rotation (a new version of the secret) reaches both: each signs with the new key, each
            // accepts what the other signed, and both still accept a token the old key signed.
            let rotated = try keys.rotated(now: .now)
            try secret.update(try rotated.json())
            let newKey = try SigningKeys.key(pem: rotated.idTokenKeys[0].pem, createdAt: rotated.idTokenKeys[0].createdAt, source: "test")
                .id
            for index in 0..<2 {
                try await Eventually.wait(for: "instance \(index) to publish the rotated key") {
                    let jwks = try await someone.request("GET", "/.well-known/jwks.json", headers: on[index])
                    return jwks.text.contains(newKey)
                }
            }
            let fresh = try await someone.api("signUp", ["email": "dee@example.com", "password": "dee password 1"], headers: on[1])
            let freshToken = try #require(fresh.json["idToken"] as? String, "\(fresh.text)")
            #expect(Self.keyID(of: freshToken) == newKey, "the new key signs")
            #expect(try await someone.api("lookup", ["idToken": freshToken], headers: on[0]).status == 200)
            #expect(try await someone.api("lookup", ["idToken": idToken], headers: on[1]).status == 200, "the old key still verifies")

            // Per-IP limits behind the proxy: each client is itself, over both instances (round robin),
            // and what a client writes in X-Forwarded-For or Forwarded does not make it another.
            try await Self.awayFromTheHourEnd()
            let (one, two) = (client("127.0.0.2"), client("127.0.0.3"))
            var statuses: [Int] = []
            for index in 0..<5 {
                let forged = index < 3 ? [:] : ["X-Forwarded-For": "198.51.100.\(index)", "Forwarded": "for=198.51.100.\(index + 10)"]
                statuses.append(
                    try await one.api("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "e\(index)@example.com"], headers: forged)
                        .status)
            }
            #expect(statuses == [200, 200, 200, 429, 429], "\(statuses)")
            #expect(try await two.api("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "f@example.com"]).status == 200)
        }

        /// The code in the last mail the log backend printed to `address`, once it is printed.
        static func mailedCode(_ server: TestServer, to address: String) async throws -> String {
            try await Eventually.wait(for: "a mail to \(address)") { server.standardOutput.contains("--- mail to \(address):") }
            return try UpstreamSignInCodeTests.mailedCode(server, to: address)
        }

        /// The `kid` of a JWT's header.
        static func keyID(of token: String) -> String? {
            guard let header = token.split(separator: ".").first, let data = Data(base64URL: String(header)) else { return nil }
            return (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["kid"] as? String
        }

        /// Waits, if the hour's window ends within a minute, until the next one starts: an hourly
        /// count started before the end would start again after it.
        static func awayFromTheHourEnd() async throws {
            let left = 3600 - Int(Date().timeIntervalSince1970) % 3600
            if left < 60 { try await Task.sleep(for: .seconds(left + 1)) }
        }
    }
}
