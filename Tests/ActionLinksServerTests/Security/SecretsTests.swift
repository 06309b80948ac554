import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The random tokens (``Secrets``) codes and sessions are made of.
@Suite("Secrets: tokens", .timeLimit(.minutes(5)))
struct SecretsTests {
    @Test("tokens are 43 base64url characters, all different")
    func tokens() {
        let tokens = (0..<1000).map { _ in Secrets.token() }
        #expect(Set(tokens).count == tokens.count)
        #expect(tokens.allSatisfy { ActionCompleter.isWellFormedCode($0) })
    }
}
