import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// ``Base64URL``'s hand-written encoder gives exactly what the Foundation code it replaces gave.
@Suite("Base64URL", .timeLimit(.minutes(5)))
struct Base64URLTests {
    /// What `Base64URL.encode` was: Foundation's base64 with `+/` swapped and padding dropped.
    func foundationBase64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test("Base64URL.encode matches Foundation's base64url for every length and byte")
    func base64URL() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<100 {
            for _ in 0..<20 {
                let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                #expect(Base64URL.encode(bytes) == foundationBase64URL(bytes))
                #expect(Base64URL.decode(Base64URL.encode(bytes)) == Data(bytes))
            }
        }
        let all = (0...255).map { UInt8($0) }
        #expect(Base64URL.encode(all) == foundationBase64URL(all))
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
    }
}
