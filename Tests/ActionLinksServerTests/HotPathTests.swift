import Crypto
import Foundation
import NIOCore
import Testing

@testable import ActionLinksServer

/// The hand-written fast paths give exactly what the Foundation code they replace gave.
@Suite("Hot paths", .timeLimit(.minutes(5)))
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
        #expect(tokens.allSatisfy { ActionCompleter.isWellFormedCode($0) })
    }

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

    @Test("a target project is looked for only in a body that could name one")
    func mayNameTarget() {
        func call(_ body: String) -> RESTCall {
            RESTCall(caller: Caller(isAdmin: false), namesProject: false, body: ByteBuffer(string: body), query: [:], method: .post)
        }
        for body in [
            #"{"targetProjectId":"p"}"#, #"{"target_project_id":"p"}"#, #"{"TARGET_project_ID":"p"}"#, #"{"\u0074argetProjectId":"p"}"#,
            "%74arget_project_id=p",
        ] {
            #expect(call(body).mayNameTarget, "\(body)")
        }
        for body in [#"{"email":"a@b.c","requestType":"EMAIL_SIGNIN"}"#, "grant_type=refresh_token&refresh_token=abc", ""] {
            #expect(!call(body).mayNameTarget, "\(body)")
        }
    }
}
