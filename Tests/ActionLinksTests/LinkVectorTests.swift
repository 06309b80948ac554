import Testing

@testable import ActionLinks

@Suite("Shared link vectors", .timeLimit(.minutes(5)))
struct LinkVectorTests {
    @Test("the vectors file is there and complete")
    func vectorsAreLoaded() throws {
        let vectors = try LinkVector.load()
        #expect(vectors.count >= 16)
        #expect(vectors.contains { $0.expect == nil } && vectors.contains { $0.expect != nil })
    }

    @Test("each vector parses as expected", arguments: try LinkVector.load())
    func vector(_ vector: LinkVector) {
        let parsed = ActionCodeLink.parse(vector.input)
        let actual = parsed.map {
            LinkVector.Expectation(
                mode: $0.mode.rawValue, oobCode: $0.oobCode, apiKey: $0.apiKey, continueUrl: $0.continueURL,
                lang: $0.languageCode, tenantId: $0.tenantID)
        }
        #expect(actual == vector.expect, "\(vector.about)")
        let inspection = LinkInspection(vector.input)
        #expect(inspection.action == parsed)
        #expect((inspection.failure == nil) == (parsed != nil))
        #expect(inspection.layers.first?.url == vector.input)
    }
}
