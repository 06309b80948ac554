import ActionLinks
import ActionLinksTestSupport
import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore
import Testing

@testable import ActionLinksConfiguration
@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The ID-token checks on tokens signed here (ES256, as Yahoo signs them), and the flow store on
/// both stores.
@Suite("Federated sign-in units", .timeLimit(.minutes(5)))
struct FederatedUnitTests {
    struct Claims: JWTPayload {
        var iss = "https://login.example"
        var sub = "user-1"
        var aud: [String] = ["client-1"]
        var exp: Double
        var iat: Double
        var nonce: String? = "n-1"
        var email: String? = "ann@example.com"
        var emailVerified: String? = "true"

        enum CodingKeys: String, CodingKey {
            case iss, sub, aud, exp, iat, nonce, email
            case emailVerified = "email_verified"
        }

        init(now: Timestamp) {
            exp = Double(now.seconds + 600)
            iat = Double(now.seconds)
        }

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    static let now: Timestamp = Timestamp(milliseconds: 1_800_000_000_000)

    /// An ES256 key pair: the signing collection (with or without `kid`) and the public JWK.
    static func key(kid: String?) async throws -> (JWTKeyCollection, JWK) {
        let key = ES256PrivateKey()
        let collection = JWTKeyCollection()
        await collection.add(ecdsa: key, kid: kid.map { JWKIdentifier(string: $0) })
        let parameters = try #require(key.parameters)
        let jwk = JWK.ecdsa(.es256, identifier: JWKIdentifier(string: kid ?? "only"), x: parameters.x, y: parameters.y, curve: .p256)
        return (collection, jwk)
    }

    static func verify(_ token: String, keys: [JWK], nonce: ProviderIDToken.NonceExpectation = .exactly("n-1"), now: Timestamp = now)
        async -> Result<ProviderIDToken, ProviderIDToken.Rejection>
    {
        do throws(ProviderIDToken.Rejection) {
            return .success(
                try await ProviderIDToken.verify(
                    token, keys: keys, issuer: "https://login.example", clientID: "client-1", nonce: nonce, now: now))
        } catch {
            return .failure(error)
        }
    }

    @Test("an ES256 token with its kid verifies; its claims are read (aud an array, email_verified a string)")
    func es256() async throws {
        let (signer, jwk) = try await Self.key(kid: "k1")
        let token = try await signer.sign(Claims(now: Self.now), kid: JWKIdentifier(string: "k1"))
        let verified = try await Self.verify(token, keys: [jwk]).get()
        #expect(verified.claims.sub == "user-1" && verified.claims.emailVerified?.value == true)
        #expect(ProviderAssertion(providerID: "oidc.x", token: verified).emailVerified)
    }

    @Test("a kid the keys lack asks for the keys again; without a kid the only key is used, and with several keys none")
    func keySelection() async throws {
        let (signer, jwk) = try await Self.key(kid: "k1")
        let (_, other) = try await Self.key(kid: "k2")
        let named = try await signer.sign(Claims(now: Self.now), kid: JWKIdentifier(string: "k1"))
        #expect(await Self.verify(named, keys: [other]).rejection == .unknownKey)
        let (unnamedSigner, unnamedKey) = try await Self.key(kid: nil)
        let unnamed = try await unnamedSigner.sign(Claims(now: Self.now))
        #expect((try? await Self.verify(unnamed, keys: [unnamedKey]).get()) != nil)
        guard case .failure(.invalid) = await Self.verify(unnamed, keys: [unnamedKey, jwk]) else {
            Issue.record("a token without kid was checked against one of several keys")
            return
        }
        // Signed by another key under the right kid: the signature fails.
        let impostor = JWK.ecdsa(.es256, identifier: JWKIdentifier(string: "k1"), x: other.x, y: other.y, curve: .p256)
        guard case .failure(.invalid) = await Self.verify(named, keys: [impostor]) else {
            Issue.record("a token verified with the wrong key")
            return
        }
    }

    @Test("iss, aud, exp and nonce are each checked; a raw nonce matches its SHA-256")
    func claims() async throws {
        let (signer, jwk) = try await Self.key(kid: "k1")
        func token(_ change: (inout Claims) -> Void) async throws -> String {
            var claims = Claims(now: Self.now)
            change(&claims)
            return try await signer.sign(claims, kid: JWKIdentifier(string: "k1"))
        }
        let cases: [(String, (inout Claims) -> Void)] = [
            ("iss", { $0.iss = "https://evil.example" }), ("aud", { $0.aud = ["client-2"] }),
            ("exp", { $0.exp = Double(Self.now.seconds - 120) }), ("iat", { $0.iat = Double(Self.now.seconds + 3600) }),
        ]
        for (name, change) in cases {
            guard case .failure(.invalid) = await Self.verify(try await token(change), keys: [jwk]) else {
                Issue.record("\(name) was not checked")
                continue
            }
        }
        #expect(await Self.verify(try await token { $0.nonce = "n-2" }, keys: [jwk]).rejection == .nonce)
        #expect(await Self.verify(try await token { $0.nonce = nil }, keys: [jwk]).rejection == .nonce)
        #expect(await Self.verify(try await token { $0.nonce = nil }, keys: [jwk], nonce: .given(nil)).isSuccess)
        let hashed = try await token { $0.nonce = FederatedFlow.hash("raw") }
        #expect(await Self.verify(hashed, keys: [jwk], nonce: .given("raw")).isSuccess)
        #expect(await Self.verify(hashed, keys: [jwk], nonce: .given(nil)).rejection == .nonce)
    }

    @Test("a pending token carries its assertion for an hour and nothing altered passes")
    func pendingTokens() async throws {
        let tokens = PendingTokens(formKey: .init(size: .bits256))
        var assertion = ProviderAssertion(providerID: "oidc.x", token: ProviderIDToken.unverified(#"{"sub":"s","email":"a@b.example"}"#)!)
        assertion.displayName = "Ann"
        let token = tokens.token(for: assertion, tenantID: "t", now: Self.now)
        #expect(tokens.assertion(from: token, tenantID: "t", now: Self.now + .milliseconds(1000)) == assertion)
        #expect(tokens.assertion(from: token, tenantID: "t", now: Self.now + .milliseconds(3_600_000)) == nil, "an hour on")
        #expect(tokens.assertion(from: token, tenantID: "", now: Self.now) == nil, "another tenant")
        #expect(tokens.assertion(from: "x" + token, tenantID: "t", now: Self.now) == nil)
        #expect(PendingTokens(formKey: .init(size: .bits256)).assertion(from: token, tenantID: "t", now: Self.now) == nil)
    }

    static func store(_ kind: String) async throws -> any FederatedFlowStore {
        if kind == "postgres" { return try await PostgresTestServer.freshStore().federatedFlows }
        let path = TestProject.temporaryDirectory("actionlinks-flows").appendingPathComponent("test.sqlite").path
        return try SQLiteDatabase(path: path).federatedFlows
    }

    static func flow(_ state: String, expires: Timestamp = now + FederatedFlow.lifetime) -> FederatedFlow {
        FederatedFlow(
            stateHash: FederatedFlow.hash(state), tenantID: "", providerID: "yahoo.com", kind: .iOSApp, returnTo: "app-1-2-ios-3",
            eventID: "E", authType: "signInWithRedirect", sessionHash: FederatedFlow.hash("secret"), bindingHash: "b", nonce: "n",
            codeVerifier: nil, redirectURI: "https://links.example/__/auth/handler", createdAt: now, expiresAt: expires)
    }

    @Test("a flow returns once and is consumed once, only after its return and before its expiry", arguments: FederatedApp.stores)
    func flowStore(kind: String) async throws {
        let store = try await Self.store(kind)
        try await store.saveFlow(Self.flow("s1"))
        try await store.saveFlow(Self.flow("s2", expires: Self.now + .milliseconds(10)))
        let hash = FederatedFlow.hash("s1")
        #expect(try await store.flow(stateHash: hash) == Self.flow("s1"))
        #expect(
            try await store.consumeFlow(stateHash: hash, now: Self.now + .milliseconds(1)) == false, "consumed before the provider answered"
        )
        #expect(try await store.markReturned(stateHash: hash, codeHash: "c", now: Self.now + .milliseconds(1)))
        #expect(try await store.markReturned(stateHash: hash, codeHash: "d", now: Self.now + .milliseconds(2)) == false)
        #expect(try await store.flow(stateHash: hash)?.codeHash == "c")
        #expect(try await store.consumeFlow(stateHash: hash, now: Self.now + .milliseconds(3)))
        #expect(try await store.consumeFlow(stateHash: hash, now: Self.now + .milliseconds(4)) == false)
        #expect(try await store.flow(stateHash: hash)?.consumedAt == Self.now + .milliseconds(3))
        let late = FederatedFlow.hash("s2")
        #expect(try await store.markReturned(stateHash: late, codeHash: nil, now: Self.now + .milliseconds(10)) == false)
        #expect(try await store.flow(stateHash: FederatedFlow.hash("unknown")) == nil)
    }

    @Test(
        "a UserInfo answer fills what the ID token lacks: its sub must be the token's, the token's claims win, token checks and a foreign email_verified are never taken"
    )
    func userInfoMerge() throws {
        let token = try #require(
            ProviderIDToken.unverified(#"{"iss":"https://login.example","sub":"user-1","nonce":"n-1","name":"Token Name"}"#))
        let info: [String: ClaimValue] = [
            "sub": .string("user-1"), "email": .string("Ann@Example.com"), "email_verified": .bool(true), "name": .string("Info Name"),
            "given_name": .string("Ann"), "nonce": .string("other"), "iss": .string("https://evil.example"),
        ]
        let merged = try token.merging(userInfo: info)
        #expect(merged.claims.email == "Ann@Example.com" && merged.claims.emailVerified?.value == true)
        #expect(merged.claims.name == "Token Name" && merged.claims.givenName == "Ann")
        #expect(merged.claims.nonce == "n-1" && merged.claims.iss == "https://login.example")
        let raw = try #require(ClaimValue.object(json: merged.payload))
        #expect(raw["given_name"] == .string("Ann") && raw["iss"] == .string("https://login.example"))

        // Another subject's answer is refused.
        var other = info
        other["sub"] = .string("user-2")
        #expect(throws: ProviderIDToken.Rejection.self) { try token.merging(userInfo: other) }
        other["sub"] = nil
        #expect(throws: ProviderIDToken.Rejection.self) { try token.merging(userInfo: other) }

        // A token with its own address takes no email_verified said of another one.
        let withEmail = try #require(ProviderIDToken.unverified(#"{"sub":"user-1","email":"bob@example.com"}"#))
        let kept = try withEmail.merging(userInfo: info)
        #expect(kept.claims.email == "bob@example.com" && kept.claims.emailVerified == nil)
        let same = try withEmail.merging(userInfo: [
            "sub": .string("user-1"), "email": .string("bob@example.com"), "email_verified": .bool(true),
        ])
        #expect(same.claims.emailVerified?.value == true)
    }
}

extension FederatedUnitTests {
    /// What counts as a connection cut under a request, which is sent again: a close seen by the
    /// client, a close that lands before the write (NIO's `ioOnClosedChannel`, seen once in a CI
    /// run as a 503 "token endpoint could not be reached"), a reset, a broken pipe; never a
    /// refused connection or a timeout, which another try would only repeat.
    @Test("a closed, reset or broken kept-alive connection is tried again; a refused connection or a timeout is not")
    func cutOffErrors() {
        #expect(OpenIDProviders.isCutOff(HTTPClientError.remoteConnectionClosed))
        #expect(OpenIDProviders.isCutOff(ChannelError.ioOnClosedChannel))
        #expect(OpenIDProviders.isCutOff(IOError(errnoCode: ECONNRESET, reason: "read")))
        #expect(OpenIDProviders.isCutOff(IOError(errnoCode: EPIPE, reason: "write")))
        #expect(!OpenIDProviders.isCutOff(IOError(errnoCode: ECONNREFUSED, reason: "connect")))
        #expect(!OpenIDProviders.isCutOff(HTTPClientError.deadlineExceeded))
        #expect(!OpenIDProviders.isCutOff(ChannelError.connectTimeout(.seconds(1))))
    }

    @Test(
        "a kept-alive connection the provider closes or resets as a code goes out on it: sent again until a connection answers",
        arguments: [LoopbackHTTPServer.Connections.keptAliveOnce, .keptAliveOnceReset])
    func keptAliveConnectionClosed(connections: LoopbackHTTPServer.Connections) async throws {
        let answer = Data(#"{"access_token":"at-1","id_token":"it-1","expires_in":"3600"}"#.utf8)
        let server = try LoopbackHTTPServer(routes: ["/token": .init(body: answer)], connections: connections)
        defer { server.stop() }
        let origin = server.origin
        let yaml = """
            linkDomains: [links.example.com]
            server: {development: true}
            providers:
              - id: oidc.loop
                issuer: \(origin)
                clientId: client-1
                clientSecret: secret-1
                timeout: 2m
            """
        let provider = try #require(try ActionLinksConfiguration.parse(yaml: yaml, file: "t.yaml").service.providers.first)
        let configuration = try JSONDecoder().decode(
            OpenIDConfiguration.self,
            from: Data(
                #"{"issuer":"\#(origin)","authorization_endpoint":"\#(origin)/a","token_endpoint":"\#(origin)/token","jwks_uri":"\#(origin)/k"}"#
                    .utf8))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let providers = OpenIDProviders(client: client)
        var exchanged: [ProviderTokens] = []
        var failure: (any Error)?
        do {
            // Each connection answers once and drops the next request on it: every reuse is cut.
            // Exchanges go on until the client has reused a connection (it may open new ones
            // while an answered one is not back in its pool yet).
            for attempt in 1...50 where server.requestsDropped < 2 {
                exchanged.append(
                    try await providers.exchange(
                        code: "code-\(attempt)", provider: provider, configuration: configuration, redirectURI: "https://l/h",
                        codeVerifier: nil))
            }
        } catch {
            failure = error
        }
        try await client.shutdown()
        #expect(failure == nil, "\(String(describing: failure))")
        #expect(exchanged.allSatisfy { $0.accessToken == "at-1" } && !exchanged.isEmpty)
        #expect(server.requestsDropped >= 2, "the client reused a connection too rarely, so nothing was tested")
        #expect(server.requestsRead == exchanged.count + server.requestsDropped)
    }
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }

    /// Why it was refused, if it was.
    var rejection: ProviderIDToken.Rejection? {
        if case .failure(let error as ProviderIDToken.Rejection) = self { return error }
        return nil
    }
}
