import Foundation
import Testing

@testable import ActionLinksServer

/// The hand-written fast paths give exactly what the Foundation code they replace gave.
@Suite("Hot paths")
struct HotPathTests {
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

    @Test("tokens are 43 base64url characters, all different")
    func tokens() {
        let tokens = (0..<1000).map { _ in Secrets.token() }
        #expect(Set(tokens).count == tokens.count)
        #expect(tokens.allSatisfy { ActionService.isWellFormedCode($0) })
    }

    @Test("objects of strings are written byte for byte as JSONSerialization writes them")
    func stringObjects() throws {
        func foundation(_ object: [String: Any]) throws -> [UInt8] {
            Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
        }
        let oobLink = "http://localhost:8080/__/auth/action?apiKey=demo-api-key&mode=signIn&oobCode=Qx7-_&continueUrl=https%3A%2F%2Fapp.example.com%2F"
        let answers: [[String: Any]] = [
            ["kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": "ann@example.com", "oobLink": oobLink, "oobCode": "Qx7-_"],
            ["kind": "identitytoolkit#GetOobConfirmationCodeResponse"],
            ["kind": "identitytoolkit#ResetPasswordResponse", "email": "a@b.c", "requestType": "VERIFY_AND_CHANGE_EMAIL", "newEmail": "d@e.f"],
            [:],
        ]
        for answer in answers { #expect(RESTAPI.stringObjectJSON(answer) == (try foundation(answer))) }
        // Every character class: quotes, backslashes, slashes, each control character, DEL, non-ASCII, emoji.
        let pieces = ["\"", "\\", "/", "a", "Z", "0", " ", "\u{7F}", "é", "ß", "中", "👩‍💻", "\u{2028}", "\u{FEFF}"]
            + (0..<32).map { String(UnicodeScalar(UInt8($0))) }
        var generator = SystemRandomNumberGenerator()
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        for _ in 0..<500 {
            var object: [String: Any] = [:]
            for _ in 0..<Int.random(in: 0...6, using: &generator) {
                let key = String((0..<Int.random(in: 1...8, using: &generator)).map { _ in letters.randomElement(using: &generator)! })
                object[key] = (0..<Int.random(in: 0...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            }
            let folded = object.keys.map { $0.lowercased() }
            if Set(folded).count == folded.count {
                #expect(RESTAPI.stringObjectJSON(object) == (try foundation(object)), "\(object)")
            } else {
                #expect(RESTAPI.stringObjectJSON(object) == nil)
            }
        }
        // Anything else is left to JSONSerialization.
        #expect(RESTAPI.stringObjectJSON(["kind": "x", "isNewUser": true]) == nil)
        #expect(RESTAPI.stringObjectJSON(["users": [["localId": "a"]]]) == nil)
        #expect(RESTAPI.stringObjectJSON(["local_id": "a"]) == nil)
    }
}
