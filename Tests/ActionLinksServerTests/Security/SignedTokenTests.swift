import Crypto
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

@Suite("SignedToken: form tokens, device cookies, reset offers and pending tokens", .timeLimit(.minutes(5)))
struct SignedTokenTests {
    let key = SymmetricKey(size: .bits256)
    let now: Timestamp = Timestamp(milliseconds: 1_800_000_000_000)

    @Test("valid for its binding until its purpose's lifetime ends, and not a moment longer")
    func lifetime() throws {
        for purpose in SignedToken.Purpose.allCases {
            let tokens = SignedToken(purpose, formKey: key)
            let token = tokens.make(bound: ["code", "resetPassword"], now: now)
            let expires = try #require(Int64(token.prefix { $0 != "." }))
            #expect(expires == now.seconds + purpose.lifetime, "\(purpose): the token names its expiry")
            #expect(tokens.verify(token, bound: ["code", "resetPassword"], now: now) == Data())
            #expect(tokens.verify(token, bound: ["code", "resetPassword"], now: now + .seconds(purpose.lifetime - 1)) != nil)
            #expect(tokens.verify(token, bound: ["code", "resetPassword"], now: now + .seconds(purpose.lifetime)) == nil, "\(purpose)")
        }
    }

    @Test("the MAC is HMAC-SHA-256 of the signed part and the length-prefixed bound values under the purpose's HKDF key")
    func knownMAC() throws {
        // A fixed key and clock; the expected token was computed apart, with Python's hmac and hashlib
        // (HKDF per RFC 5869, no salt), so tokens already handed out keep verifying.
        let formKey = SymmetricKey(data: Array(0..<32) as [UInt8])
        let tokens = SignedToken(.rememberedDevice, formKey: formKey)
        let token = tokens.make(bound: ["ann@example.com", "tenant-1"], payload: Data("p".utf8), now: now)
        #expect(token == "1802592000.cA.vjvkMebNxOhdg3ORECjvir2jK35PWivSFX3qAwE1c9Q")
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: formKey, info: Data("actionlinks signed token: remembered device".utf8), outputByteCount: 32)
        let mac = HMAC<SHA256>.authenticationCode(for: Data("1802592000.cA|15:ann@example.com|8:tenant-1".utf8), using: key)
        #expect(token.hasSuffix("." + Base64URL.encode(Data(mac))))
        #expect(tokens.verify(token, bound: ["ann@example.com", "tenant-1"], now: now) == Data("p".utf8))
    }

    @Test("bound to its values: another code, mode, address or split of the same bytes fails")
    func binding() {
        let tokens = SignedToken(.form, formKey: key)
        let token = tokens.make(bound: ["ab", "c"], now: now)
        #expect(tokens.verify(token, bound: ["ab", "c"], now: now) != nil)
        for other in [["ab", "d"], ["a", "bc"], ["abc"], ["ab", "c", ""], ["ab"], []] {
            #expect(tokens.verify(token, bound: other, now: now) == nil, "\(other)")
        }
    }

    @Test("a token of one purpose or one key never passes for another's")
    func purposes() {
        for made in SignedToken.Purpose.allCases {
            let token = SignedToken(made, formKey: key).make(bound: ["x"], now: now)
            for checked in SignedToken.Purpose.allCases where checked != made {
                #expect(SignedToken(checked, formKey: key).verify(token, bound: ["x"], now: now) == nil, "\(made) as \(checked)")
            }
            #expect(SignedToken(made, formKey: SymmetricKey(size: .bits256)).verify(token, bound: ["x"], now: now) == nil)
        }
    }

    @Test("a payload comes back as it was; any change to the expiry, payload or MAC fails")
    func payloadAndTampering() throws {
        let tokens = SignedToken(.pendingAssertion, formKey: key)
        let payload = Data(#"{"sub":"1234","email":"a@example.com"}"#.utf8)
        let token = tokens.make(bound: ["tenant"], payload: payload, now: now)
        #expect(tokens.verify(token, bound: ["tenant"], now: now) == payload)
        let parts = token.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let later = String(Int64(parts[0])! + 60)
        let forged = [
            ([later] + parts.dropFirst()).joined(separator: "."),
            [parts[0], parts[1] + "A", parts[2]].joined(separator: "."),
            [parts[0], parts[2]].joined(separator: "."),
            [parts[0], parts[1], String(parts[2].dropLast()) + (parts[2].hasSuffix("A") ? "B" : "A")].joined(separator: "."),
            token + ".", "." + token, "", ".", "..", "1.2.3.4",
        ]
        for value in forged { #expect(tokens.verify(value, bound: ["tenant"], now: now) == nil, "\(value)") }
    }

    @Test("an expiry beyond the lifetime (another instance's clock aside) or not a small number is refused without arithmetic")
    func hostileExpiry() {
        let tokens = SignedToken(.form, formKey: key)
        let mac = tokens.make(bound: ["x"], now: now).split(separator: ".")[1]
        for expiry in ["9223372036854775807", "-9223372036854775808", "99999999999999", "", "+1", "1e9", " 1"] {
            #expect(tokens.verify(expiry + "." + mac, bound: ["x"], now: now) == nil, "\(expiry)")
        }
        // Made by an instance whose clock is 30 s ahead: still valid here.
        let ahead = tokens.make(bound: ["x"], now: now + .milliseconds(30_000))
        #expect(tokens.verify(ahead, bound: ["x"], now: now) != nil)
        let farAhead = tokens.make(bound: ["x"], now: now + .seconds(SignedToken.clockSkew + 1))
        #expect(tokens.verify(farAhead, bound: ["x"], now: now) == nil)
    }
}
