import Foundation
import NIOCore
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The token endpoint's hand-written form reading (``PlainForm``) and answer (`TokenResponse`'s
/// `plainJSON`), which the token refresh fast path answers with, give exactly what the general
/// form path and JSONEncoder give.
@Suite("Token endpoint: plain forms and answers", .timeLimit(.minutes(5)))
struct TokenEndpointFormTests {
    @Test("the token endpoint's plain forms decode as the general form path decodes them; anything else goes that path")
    func plainForms() throws {
        func general(_ form: String) throws(ActionError) -> TokenRequest {
            var call = RESTCall(
                caller: Caller(isAdmin: false), namesProject: false, body: ByteBuffer(string: form), query: [:], method: .post)
            call.isForm = true
            return try call.decodeForm(TokenRequest.self)
        }
        for form in [
            "grant_type=refresh_token&refresh_token=AbC-_0.9~", "refresh_token=x&grant_type=refresh_token", "grantType=a&refreshToken=b",
            "grant_type=&refresh_token=", "grant_type=refresh_token", "grant_type=refresh_token&other=1&key_x=2",
            "grant_type=a&grantType=b", "grant_type=a&grant_type=b", "grant_type=a%20b", "grant_type=a+b", "a[b]=c", "", "&", "x",
            "grant_type=refresh_token&", "=x", "GRANT_TYPE=x",
        ] {
            var call = RESTCall(
                caller: Caller(isAdmin: false), namesProject: false, body: ByteBuffer(string: form), query: [:], method: .post)
            call.isForm = true
            let fast: Result<TokenRequest, ActionError>
            do throws(ActionError) { fast = .success(try call.decode(TokenRequest.self)) } catch { fast = .failure(error) }
            let slow: Result<TokenRequest, ActionError>
            do throws(ActionError) { slow = .success(try general(form)) } catch { slow = .failure(error) }
            switch (fast, slow) {
            case (.success(let a), .success(let b)):
                #expect(a.grantType == b.grantType && a.refreshToken == b.refreshToken, "\(form)")
            case (.failure(let a), .failure(let b)):
                #expect(a.code == b.code, "\(form)")
            default:
                Issue.record("\(form): \(fast) against \(slow)")
            }
        }
        #expect(
            PlainForm.fields(ByteBuffer(string: "grant_type=refresh_token&refresh_token=abc")) == [
                "grantType": "refresh_token", "refreshToken": "abc",
            ])
        for form in ["a=1&a=2", "grant_type=a&grantType=b", "a=%41", "a=b+c", "client_id=x", "a", "a=1&", ""] {
            #expect(PlainForm.fields(ByteBuffer(string: form)) == nil, "\(form)")
        }
    }

    @Test("the token answer's own JSON is byte for byte JSONEncoder's, and values that need escaping go to JSONEncoder")
    func plainTokenAnswer() throws {
        let clean = ["a", "Z", "0", "-", "_", ".", "/", "~", " ", "+", "=", ":", "{", "<", "'"]
        let escaped = ["\"", "\\", "é", "\u{7F}", "\n", "\u{1}"]
        var plain = 0
        for round in 0..<500 {
            // Every other answer is made of characters that need no escaping, the rest may hold some.
            let pieces = round % 2 == 0 ? clean : clean + escaped
            func text() -> String { (0..<Int.random(in: 0...8)).map { _ in pieces.randomElement()! }.joined() }
            let answer = TokenResponse(
                accessToken: text(), expiresIn: "3600", tokenType: "Bearer", refreshToken: text(), idToken: text(), userID: text(),
                projectID: text())
            let encoded = try IdentityToolkitJSON.encoder.encode(answer)
            if let own = answer.plainJSON {
                plain += 1
                #expect(own == encoded, "\(String(decoding: own, as: UTF8.self)) against \(String(decoding: encoded, as: UTF8.self))")
            } else {
                let values = [answer.accessToken, answer.refreshToken, answer.idToken, answer.userID, answer.projectID]
                #expect(values.contains { $0.utf8.contains { $0 < 0x20 || $0 >= 0x7F || $0 == 0x22 || $0 == 0x5C } })
            }
        }
        #expect(plain >= 250)
    }
}
