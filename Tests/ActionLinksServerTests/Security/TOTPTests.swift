import Testing

@testable import ActionLinksDomain

@Suite("TOTP (RFC 6238) and base32 (RFC 4648)")
struct TOTPTests {
    /// RFC 6238 appendix B's SHA-1 seed, ASCII `12345678901234567890`.
    static let seed = Array("12345678901234567890".utf8)

    /// RFC 6238 appendix B, SHA-1: the time, the 8-digit code, and its last six digits (the same
    /// truncation modulo 10^6, which is what Firebase's six-digit codes are).
    static let vectors: [(time: Int64, eight: String, six: String)] = [
        (59, "94287082", "287082"), (1_111_111_109, "07081804", "081804"), (1_111_111_111, "14050471", "050471"),
        (1_234_567_890, "89005924", "005924"), (2_000_000_000, "69279037", "279037"), (20_000_000_000, "65353130", "353130"),
    ]

    @Test("RFC 6238 appendix B's SHA-1 vectors, at 8 and 6 digits", arguments: vectors)
    func rfc6238(time: Int64, eight: String, six: String) {
        let step = TOTP.step(at: time)
        #expect(TOTP.code(secret: Self.seed, step: step, digits: 8) == eight)
        #expect(TOTP.code(secret: Self.seed, step: step) == six)
        #expect(TOTP.matchingStep(six, secret: Self.seed, now: time, adjacentIntervals: 0) == step)
    }

    @Test("RFC 4648 section 10's base32 vectors, unpadded, and back")
    func base32() {
        let vectors = [
            ("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI"),
        ]
        for (plain, encoded) in vectors {
            #expect(Base32.encode(Array(plain.utf8)) == encoded)
            #expect(Base32.decode(encoded) == Array(plain.utf8))
        }
        #expect(Base32.decode("MZXW6YQ=") == Array("foob".utf8), "padding is allowed")
        #expect(Base32.decode("mzxw6yq") == Array("foob".utf8), "so is lower case")
        #expect(Base32.decode("MZXW6YQ1") == nil, "1 is not base32")
        #expect(Base32.decode("MZXW6YR") == nil, "leftover bits that are not zero")
        #expect(Base32.encode(Self.seed) == "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        let secret = TOTP.newSecret()
        #expect(secret.count == 20 && Base32.encode(secret).count == 32 && Base32.decode(Base32.encode(secret)) == secret)
    }

    @Test("a code is accepted within adjacentIntervals steps either side, the nearest step first, and nowhere else")
    func window() {
        let now: Int64 = 1_700_000_015
        let current = TOTP.step(at: now)
        for offset in Int64(-6)...6 {
            let code = TOTP.code(secret: Self.seed, step: current + offset)
            let found = TOTP.matchingStep(code, secret: Self.seed, now: now, adjacentIntervals: 5)
            #expect(found == (abs(offset) <= 5 ? current + offset : nil), "offset \(offset)")
            #expect(TOTP.matchingStep(code, secret: Self.seed, now: now, adjacentIntervals: 0) == (offset == 0 ? current : nil))
        }
        #expect(TOTP.matchingStep("28708", secret: Self.seed, now: 59, adjacentIntervals: 5) == nil, "five digits")
        #expect(TOTP.matchingStep("1000000", secret: Self.seed, now: 59, adjacentIntervals: 5) == nil, "seven digits")
        #expect(TOTP.matchingStep("28708a", secret: Self.seed, now: 59, adjacentIntervals: 5) == nil)
        #expect(TOTP.step(at: -1) == -1 && TOTP.step(at: 0) == 0 && TOTP.step(at: 29) == 0 && TOTP.step(at: 30) == 1)
    }
}
