import Crypto
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The code hashes ``ServerKeys`` computes from its keyed HMAC state.
@Suite("Server keys: code hashes", .timeLimit(.minutes(5)))
struct ServerKeysTests {
    @Test("code hashes from the keyed HMAC state are HMAC-SHA-256 under each key, call after call")
    func codeHashes() {
        let keys = ServerKeys(
            codeKeys: [SymmetricKey(size: .bits256), SymmetricKey(size: .bits256)], formKey: SymmetricKey(size: .bits256))
        for _ in 0..<50 {
            let code = Secrets.token()
            let expected = keys.codeKeys.map { Data(HMAC<SHA256>.authenticationCode(for: Data(code.utf8), using: $0)) }
            #expect(keys.codeHashes(code) == expected)
            #expect(keys.newCodeHash(code) == expected[0])
        }
    }
}
