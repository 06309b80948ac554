import ActionLinks
import ActionLinksChildProcess
import ActionLinksSMTPTestSupport
import ActionLinksTestSupport
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The Firebase Android SDK's round trip through `/__/auth/handler` against a real provider
/// (oidc-provider-mock): the parameters `GenericIdpActivity` sends, the intent it reads back, and
/// the `link` encrypted to its Tink `publicKey`, which Google's own Tink (Python) decrypts here.
@Suite("Federated sign-in from the Android SDK", .timeLimit(.minutes(5)))
struct FederatedAndroidTests {
    typealias App = FederatedApp

    @Test(
        "Android round trip: handler with apn/sha1Cert/publicKey, provider, intent with the encrypted link, signInWithIdp",
        arguments: FederatedApp.stores)
    func roundTrip(store: String) async throws {
        let sub = try await App.subject(["email": "oli@example.com", "name": "Oli Example"])
        let keys = try AndroidKeys()
        defer { keys.remove() }
        try await App.test(store: store) { client in
            let session = Self.sessionID()
            let eventID = UUID().uuidString.lowercased()
            let start = try await client.request("GET", Self.handlerPath(sessionID: session, eventID: eventID, publicKey: keys.publicKey))
            #expect(start.status == 302, "\(start.text)")
            let authorize = try #require(start.header("Location"))
            #expect(authorize.hasPrefix(try OIDCProviderMock.url()))
            let back = try await OIDCProviderMock.logIn(at: authorize, sub: sub)
            let page = try await client.request("GET", Browser.pathAndQuery(back), headers: ["Cookie": Browser.cookie(start) ?? ""])
            #expect(page.status == 200 && page.header("Location") == nil)
            let intent = try #require(Self.intent(in: page.text))
            #expect(intent.target == "intent://firebase.auth/" && intent.fields["scheme"] == "genericidp")
            #expect(intent.fields["package"] == "com.example.app")
            #expect(intent.fields["S.eventId"] == eventID && intent.fields["S.authType"] == "signInWithRedirect")
            #expect(intent.fields["B.encryptionEnabled"] == "true")
            let ciphertext = try #require(intent.fields["S.link"])
            #expect(!ciphertext.contains("code=") && !ciphertext.hasPrefix("https"), "the link travels encrypted")
            let link = try keys.decrypt(ciphertext)
            #expect(link == back, "Tink decrypts the provider's answer")

            // The SDK sends signInWithIdp the sessionId it sent the handler; another one is refused.
            let (other, mismatch) = try await App.signInWithIdp(client, ["requestUri": link, "sessionId": Self.sessionID()])
            #expect(other == 400 && App.errorMessage(mismatch).hasPrefix("INVALID_IDP_RESPONSE"), "\(mismatch)")
            let (status, json) = try await App.signInWithIdp(
                client, ["requestUri": link, "sessionId": session, "returnSecureToken": true])
            #expect(status == 200, "\(json)")
            #expect(json["providerId"] as? String == "oidc.mock" && json["federatedId"] as? String == sub)
            #expect(json["isNewUser"] as? Bool == true && json["idToken"] is String)
            let (again, refused) = try await App.signInWithIdp(client, ["requestUri": link, "sessionId": session])
            #expect(again == 400 && App.errorMessage(refused).hasPrefix("INVALID_IDP_RESPONSE"), "\(refused)")
        }
    }

    @Test("a provider the app may not use: the intent carries firebaseError, unencrypted, for the same package")
    func disabledProvider() async throws {
        let keys = try AndroidKeys()
        defer { keys.remove() }
        try await App.test { client in
            let response = try await client.request(
                "GET", Self.handlerPath(sessionID: Self.sessionID(), eventID: "e-1", publicKey: keys.publicKey, provider: "oidc.off"))
            #expect(response.status == 200)
            let intent = try #require(Self.intent(in: response.text))
            #expect(intent.fields["package"] == "com.example.app" && intent.fields["S.link"] == nil)
            #expect(intent.fields["S.firebaseError"]?.contains("auth/operation-not-allowed") == true, "\(intent.fields)")
            #expect(intent.fields["B.encryptionEnabled"] == "false")
        }
    }

    @Test("refused without a flow or redirect: unknown package, wrong or missing sha1Cert, bad publicKey, missing eventId or sessionId")
    func refusals() async throws {
        let keys = try AndroidKeys()
        defer { keys.remove() }
        let session = Self.sessionID()
        let unregistered: [String] = [
            Self.handlerPath(sessionID: session, eventID: "e-1", publicKey: keys.publicKey, package: "com.attacker.app"),
            Self.handlerPath(sessionID: session, eventID: "e-1", publicKey: keys.publicKey, sha1: String(repeating: "ab", count: 20)),
        ]
        let incomplete: [String] = [
            Self.handlerPath(sessionID: session, eventID: "e-1", publicKey: keys.publicKey, sha1: nil),
            Self.handlerPath(sessionID: session, eventID: "e-1", publicKey: keys.publicKey, sha1: "5e8f16062ea3cd2c"),
            Self.handlerPath(sessionID: session, eventID: "e-1", publicKey: nil),
            Self.handlerPath(sessionID: session, eventID: "e-1", publicKey: "CAESBAgBEAE"),
            Self.handlerPath(sessionID: session, eventID: "e-1", publicKey: "not base64 at all!"),
            Self.handlerPath(sessionID: session, eventID: nil, publicKey: keys.publicKey),
            Self.handlerPath(sessionID: nil, eventID: "e-1", publicKey: keys.publicKey),
        ]
        try await App.test { client in
            for path in unregistered + incomplete {
                let response = try await client.request("GET", path)
                #expect(response.status == 400, "\(path)")
                #expect(response.header("Location") == nil && response.header("Set-Cookie") == nil, "\(path)")
                let named = response.text.contains("sha1CertFingerprints")
                #expect(named == unregistered.contains(path), "only an unregistered app is told so: \(path)")
            }
        }
    }

    @Test(
        "Tink decrypts what TinkHybridEncrypt makes: the SDK's keyset, a compressed point format, RAW and LEGACY prefixes, AES-256-GCM",
        arguments: ["android", "compressed", "raw", "legacy", "aes256"])
    func tinkDecrypts(kind: String) throws {
        let keys = try AndroidKeys(kind: kind)
        defer { keys.remove() }
        let encrypter = try TinkHybridEncrypt(keyset: keys.publicKey)
        let link = "https://links.test.example/__/auth/handler?state=s%2B1&code=c-\(kind)"
        let first = try encrypter.encrypt(Array(link.utf8))
        #expect(try keys.decrypt(first) == link)
        #expect(try encrypter.encrypt(Array(link.utf8)) != first, "a fresh ephemeral key and IV each time")
    }

    @Test("a keyset it cannot encrypt to is refused when the flow starts: AES-CTR-HMAC DEM, HPKE X25519", arguments: ["ctr", "x25519"])
    func unsupportedKeysets(kind: String) throws {
        let keys = try AndroidKeys(kind: kind)
        defer { keys.remove() }
        #expect(throws: TinkHybridEncrypt.Invalid.self) { try TinkHybridEncrypt(keyset: keys.publicKey) }
    }

    // MARK: Helpers

    /// A `sessionId` as `GenericIdpActivity` makes it: `new String(SHA-256(random UUID))`, the
    /// digest's bytes decoded as UTF-8 (invalid sequences become U+FFFD).
    static func sessionID() -> String {
        String(decoding: Array(SHA256.hash(data: Data(UUID().uuidString.lowercased().utf8))), as: UTF8.self)
    }

    /// The handler URL `GenericIdpActivity` opens (parameters in its order); `nil` leaves one out.
    static func handlerPath(
        sessionID: String?, eventID: String?, publicKey: String?, provider: String = "oidc.mock",
        package: String = "com.example.app", sha1: String? = "5e8f16062ea3cd2c4a0d547876baa6f38cabf625"
    ) -> String {
        var items: [(String, String?)] = [
            ("eid", "p"), ("v", "X23.2.1"), ("authType", "signInWithRedirect"), ("apiKey", "demo-api-key"),
            ("providerId", provider), ("sessionId", sessionID), ("eventId", eventID), ("apn", package), ("sha1Cert", sha1),
            ("publicKey", publicKey),
        ]
        items.append(("scopes", "email"))
        return "/__/auth/handler?"
            + items.compactMap { item in item.1.map { "\(item.0)=\(PercentEncoding.encodeComponent($0))" } }.joined(separator: "&")
    }

    /// The intent URI in a page (`intent://...#Intent;name=value;...;end`), its fields decoded as
    /// Android's `Intent.parseUri` decodes them.
    static func intent(in html: String) -> (target: String, fields: [String: String])? {
        guard let start = html.range(of: "intent://") else { return nil }
        let rest = html[start.lowerBound...]
        guard let end = rest.range(of: ";end") else { return nil }
        let uri = String(rest[..<end.upperBound])
        let parts = uri.split(separator: "#Intent;", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        var fields: [String: String] = [:]
        for field in parts[1].split(separator: ";") where field != "end" {
            let pair = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2 else { return nil }
            fields[String(pair[0])] = String(pair[1]).removingPercentEncoding
        }
        return (String(parts[0]), fields)
    }
}

/// A Tink keyset made by Google's Tink (Python, Tests/Tink/tink_hybrid.py) with the SDK's template:
/// its public half as the SDK sends it, and decryption as `GenericIdpActivity` does it.
struct AndroidKeys {
    let directory: URL
    let publicKey: String

    static let script = Repository.root.appendingPathComponent("Tests/Tink/tink_hybrid.py").path

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    /// A keyset of the SDK's template, or of a variation (see `tink_hybrid.py`).
    init(kind: String = "android") throws {
        directory = TestProject.temporaryDirectory("actionlinks-tink")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        publicKey = try Self.python(["keygen", directory.path, kind])
        guard publicKey.contains("\n") else { throw Failed(description: "expected Android's wrapped base64: \(publicKey)") }
    }

    func decrypt(_ ciphertext: String) throws -> String {
        try Self.python(["decrypt", directory.path, ciphertext])
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// Runs the script (it takes well under a second); its standard output, or an error with
    /// what it printed and how to install Tink.
    static func python(_ arguments: [String]) throws -> String {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = .pipe(output)
        process.standardError = .pipe(errors)
        process.standardInput = .nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let problems = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failed(
                description: "tink_hybrid.py \(arguments.first ?? "") failed (exit \(process.terminationStatus)); "
                    + "Tink comes from `bash scripts/install-test-dependencies.sh`:\n\(problems)")
        }
        return text
    }
}
