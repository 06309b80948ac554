import Crypto
import CryptoExtras
import Foundation
import JWTKit
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The ID tokens' signer (OpenSSL's libcrypto) against swift-crypto's BoringSSL and JWTKit.
@Suite("OpenSSL RSA signer", .timeLimit(.minutes(5)))
struct OpenSSLSignerTests {
    @Test("its RS256 signatures are byte for byte swift-crypto's (PKCS #1 v1.5 is deterministic), for PKCS #1 and PKCS #8 keys")
    func sameSignaturesAsSwiftCrypto() throws {
        for bits in [_RSA.Signing.KeySize.bits2048, .bits3072] {
            let key = try _RSA.Signing.PrivateKey(keySize: bits)
            for pem in [key.pemRepresentation, key.pkcs8PEMRepresentation] {
                let signer = try OpenSSLRSASigner(pem: pem)
                #expect(signer.signatureLength == bits.bitCount / 8)
                for length in [0, 1, 31, 200, 4096] {
                    let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ length) }
                    let digest = SHA256.hash(data: message)
                    var ours: [UInt8] = [7]
                    try digest.withUnsafeBytes { try signer.sign(digest: $0, appendingTo: &ours) }
                    #expect(ours.first == 7, "the signature is appended, not written over the buffer")
                    let theirs = try key.signature(for: digest, padding: .insecurePKCS1v1_5)
                    #expect(Array(ours.dropFirst()) == Array(theirs.rawRepresentation))
                }
            }
        }
    }

    @Test("signatures made on many threads at once are all right")
    func concurrentSignatures() async throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let signer = try OpenSSLRSASigner(pem: key.pemRepresentation)
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let digest = SHA256.hash(data: Array("message \(index)".utf8))
                    var signature: [UInt8] = []
                    try digest.withUnsafeBytes { try signer.sign(digest: $0, appendingTo: &signature) }
                    let made = _RSA.Signing.RSASignature(rawRepresentation: signature)
                    return key.publicKey.isValidSignature(made, for: digest, padding: .insecurePKCS1v1_5)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 64 && results.allSatisfy { $0 })
    }

    @Test("an ID token it signs verifies with JWTKit under the key's kid")
    func tokenVerifiesWithJWTKit() async throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let signer = try SigningKeys.JWTSigner(pem: key.pemRepresentation, kid: "k1")
        struct Payload: JWTPayload, Equatable {
            var sub: SubjectClaim
            var exp: ExpirationClaim
            func verify(using algorithm: some JWTAlgorithm) throws { try exp.verifyNotExpired() }
        }
        let payload = Payload(sub: "user-1", exp: .init(value: Date(timeIntervalSince1970: 4_000_000_000)))
        let token = try signer.sign(payload)
        let keys = JWTKeyCollection()
        await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: key.pemRepresentation).publicKey, digestAlgorithm: .sha256, kid: "k1")
        let verified = try await keys.verify(token, as: Payload.self)
        #expect(verified == payload)
        let header = try JSONSerialization.jsonObject(with: #require(Base64URL.decode(token.split(separator: ".")[0]))) as? [String: String]
        #expect(header == ["alg": "RS256", "kid": "k1", "typ": "JWT"])
    }

    @Test("a key it cannot use is refused with what is wrong")
    func refusedKeys() throws {
        #expect(throws: OpenSSLError.self) { try OpenSSLRSASigner(pem: "not a key") }
        do {
            _ = try OpenSSLRSASigner(pem: "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n")
            Issue.record("a truncated key was accepted")
        } catch {
            #expect(error.message.hasPrefix("OpenSSL failed reading the PEM private key"))
        }
        do {
            _ = try OpenSSLRSASigner(pem: P256.Signing.PrivateKey().pemRepresentation)
            Issue.record("an elliptic-curve key was accepted")
        } catch {
            #expect(error.message == "the PEM private key is not an RSA key")
        }
    }
}
