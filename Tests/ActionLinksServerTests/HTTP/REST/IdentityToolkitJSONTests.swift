import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The REST API's JSON (``IdentityToolkitJSON``): hand-written answers a JSON reader reads back
/// exactly, and bodies read as Google reads them.
@Suite("REST JSON: answers and bodies", .timeLimit(.minutes(5)))
struct IdentityToolkitJSONTests {
    @Test("REST answers are JSON that a JSON reader reads back exactly, whatever the strings hold")
    func answers() throws {
        let pieces =
            ["\"", "\\", "/", "a", " ", "\u{7F}", "é", "中", "👩‍💻", "\u{2028}", "\u{FEFF}"] + (0..<32).map { String(UnicodeScalar(UInt8($0))) }
        for _ in 0..<300 {
            let text = (0..<Int.random(in: 0...12)).map { _ in pieces.randomElement()! }.joined()
            let data = IdentityToolkitJSON.encode(SendOobCodeResponse(email: text, oobLink: "https://l.example/?a=1&b=/", oobCode: text))
            // JSONDecoder, not JSONSerialization: Foundation's reader drops a U+FEFF inside a string.
            let object = try JSONDecoder().decode([String: String].self, from: data)
            #expect(
                object == [
                    "kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": text, "oobLink": "https://l.example/?a=1&b=/",
                    "oobCode": text,
                ])
        }
        let error = try #require(try JSONSerialization.jsonObject(with: ActionError.invalidCode.body) as? [String: [String: Any]])
        #expect(error["error"]?["code"] as? Int == 400 && (error["error"]?["message"] as? String)?.hasPrefix("INVALID_OOB_CODE : ") == true)
    }

    @Test("REST bodies: names or numbers for requestType, lenient booleans, unknown fields ignored, wrong types named")
    func requests() throws {
        func decode(_ json: String) throws(ActionError) -> SendOobCodeRequest {
            try IdentityToolkitJSON.decode(SendOobCodeRequest.self, from: Data(json.utf8))
        }
        #expect(try decode(#"{"requestType":1,"future":{"x":[1]}}"#).requestType?.name == "PASSWORD_RESET")
        #expect(try decode(#"{"requestType":"EMAIL_SIGNIN","canHandleCodeInApp":"true"}"#).canHandleCodeInApp?.value == true)
        #expect(try decode(#"{"androidMinimumVersion":12}"#).androidMinimumVersion?.digits == "12")
        #expect(try decode("").requestType == nil, "an empty body is an empty object")
        for (json, code, mention) in [
            (#"{"email":5}"#, ActionError.Code.invalidArgument, "'email'"),
            (#"{"returnOobLink":"yes"}"#, .invalidArgument, "'returnOobLink'"),
            (#"{"androidMinimumVersion":"1.0"}"#, .invalidArgument, "version code"), ("[1]", .invalidJSON, ""), ("{", .invalidJSON, ""),
        ] {
            do throws(ActionError) {
                _ = try decode(json)
                Issue.record("\(json) was accepted")
            } catch {
                #expect(error.code == code && (mention.isEmpty || error.message.contains(mention)), "\(json): \(error)")
            }
        }
    }
}
