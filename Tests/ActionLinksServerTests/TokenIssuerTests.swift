import Crypto
import Foundation
import Testing

@testable import ActionLinksServer

@Suite("ID token signatures")
struct TokenIssuerTests {
    let issuer = TokenIssuer(key: P256.Signing.PrivateKey(), projectID: "demo-actionlinks")
    let account = Account(localID: "abcdefghijklmnopqrstuvwxyz12", email: "ann@example.com", emailVerified: true, createdAt: .now)
    /// (n - 1) / 2 for P-256, in hex: the largest S a token may carry.
    static let halfOrderHex = "7fffffff800000007fffffffffffffffde737d56d38bcf4279dce5617e3192a8"

    func signatureBytes(_ token: String) throws -> [UInt8] {
        try #require(Base64URL.decode(token.split(separator: ".")[2]).map(Array.init))
    }

    @Test("every issued token carries a low S and verifies")
    func lowS() throws {
        var high: [String] = []
        for _ in 0..<200 {
            let token = issuer.idToken(for: account, signInProvider: "password", now: .now)
            let signature = try signatureBytes(token)
            #expect(signature.count == 64)
            let s = signature[32...].map { String(format: "%02x", $0) }.joined()
            if s > Self.halfOrderHex { high.append(s) }
            #expect(issuer.verify(token, now: .now) != nil)
        }
        #expect(high.isEmpty, "\(high.count) of 200 tokens carry a high S, e.g. \(high.first ?? "")")
    }

    @Test("the same token with S replaced by n - S is refused, although the signature is mathematically valid")
    func highSRefused() throws {
        let token = issuer.idToken(for: account, signInProvider: "password", now: .now)
        let signature = try signatureBytes(token)
        let forged = Array(signature[..<32]) + LowS.negated(signature[32...])
        #expect(forged != signature)
        let parts = token.split(separator: ".")
        let signingInput = Data((parts[0] + "." + parts[1]).utf8)
        let ecdsa = try P256.Signing.ECDSASignature(rawRepresentation: forged)
        #expect(issuer.key.publicKey.isValidSignature(ecdsa, for: signingInput), "n - S must be the other valid form")
        let malleated = parts[0] + "." + parts[1] + "." + Base64URL.encode(forged)
        #expect(issuer.verify(malleated, now: .now) == nil)
        #expect(issuer.verify(token, now: .now)?.sub == account.localID)
    }

    @Test("n - S arithmetic: borrows across bytes, and n - (n - S) is S")
    func negation() {
        var one = [UInt8](repeating: 0, count: 32)
        one[31] = 1
        var orderMinusOne = LowS.order
        orderMinusOne[31] -= 1
        #expect(LowS.negated(one) == orderMinusOne)
        #expect(LowS.negated(LowS.negated(LowS.halfOrder)) == LowS.halfOrder)
        #expect(!LowS.isHigh(LowS.halfOrder))
        #expect(LowS.isHigh(LowS.negated(LowS.halfOrder)))
    }
}
