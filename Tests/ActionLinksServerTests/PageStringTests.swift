@testable import ActionLinksServer
import Foundation
import Testing

/// Page strings: placeholders are filled in one pass.
@Suite("Page strings")
struct PageStringTests {
    @Test("a value that looks like a placeholder is left as it is")
    func onePass() async throws {
        let templates = try await PageTemplates(www: TestServer.root.appendingPathComponent("www").path)
        let text = templates.text("verifyEmail.done.body", "en", ["email": "{{appName}}@example.com", "appName": "Example"])
        #expect(text == "{{appName}}@example.com is now verified for Example.")
    }
}
