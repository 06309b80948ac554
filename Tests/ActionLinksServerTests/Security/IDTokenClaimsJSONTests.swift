import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The ID token claims' hand-written JSON (``IDTokenClaims``'s `directJSON`) gives exactly what
/// JSONEncoder gives.
@Suite("ID token claims written directly", .timeLimit(.minutes(5)))
struct IDTokenClaimsJSONTests {
    @Test("ID token claims written directly read back as JSONEncoder's: the same members and values, whatever the text")
    func directClaims() throws {
        let pieces = [
            "a", "Z", "0", "-", "/", " ", "\"", "\\", "é", "日本", "🙂", "\u{7F}", "\n", "\t", "\u{0}", "\u{1F}", "\u{2028}", "<", "&",
        ]
        func text() -> String { (0..<Int.random(in: 0...10)).map { _ in pieces.randomElement()! }.joined() }
        func maybe() -> String? { Bool.random() ? text() : nil }
        var direct = 0
        for round in 0..<600 {
            var identities: [String: [String]] = [:]
            for _ in 0..<Int.random(in: 0...3) { identities[text()] = (0..<Int.random(in: 0...2)).map { _ in text() } }
            var claims = IDTokenClaims(
                iss: text(), aud: text(), authTime: Int64.random(in: 0...Int64.max), userID: text(), iat: Int64.random(in: -5...1 << 40),
                exp: Int64.random(in: 0...1 << 40), email: maybe(), emailVerified: [nil, true, false].randomElement()!,
                phoneNumber: maybe(), name: maybe(), picture: maybe(), providerID: maybe(),
                firebase: .init(identities: identities, signInProvider: text(), tenant: maybe()))
            // Every fifth has what only JSONEncoder writes here.
            if round % 10 == 5 { claims.custom = ["admin": .bool(true)] }
            if round % 10 == 7 { claims.firebase.signInAttributes = .object(["a": .string(text())]) }
            let encoded = try SigningKeys.JWTSigner.encoder.encode(claims)
            guard let own = claims.directJSON else {
                #expect(!claims.custom.isEmpty || claims.firebase.signInAttributes != nil)
                continue
            }
            direct += 1
            let ownObject = try JSONSerialization.jsonObject(with: Data(own)) as? NSDictionary
            let encodedObject = try JSONSerialization.jsonObject(with: encoded) as? NSDictionary
            #expect(ownObject != nil && ownObject == encodedObject, "\(String(decoding: own, as: UTF8.self))")
            #expect(try JSONDecoder().decode(IDTokenClaims.self, from: Data(own)) == claims)
        }
        #expect(direct >= 400)
    }
}
