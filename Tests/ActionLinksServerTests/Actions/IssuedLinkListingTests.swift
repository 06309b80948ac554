import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

/// The emulator's listing of issued links (`emulatorListing`, red-team finding 4, security issue).
@Suite("The emulator's listing of issued links", .timeLimit(.minutes(5)))
struct IssuedLinkListingTests {
    @Test("emulatorListing with development: false does not start, and says why")
    func listingNeedsDevelopment() async throws {
        let refused = await #expect(throws: (any Error).self) {
            try await TestApp.router(environment: [
                "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": String(repeating: "t", count: 40),
                "ACTIONLINKS_EMULATOR_LISTING": "true",
            ]) { _ in }
        }
        let message = refused.map { "\($0)" } ?? ""
        #expect(message.contains("emulatorListing") == true, "\(message)")
        #expect(message.contains("server.development: true") == true)
    }
}
