import Crypto
import Foundation

/// Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP) as Firebase's TOTP second factor
/// uses them: HMAC-SHA1, six digits, 30-second steps, a 160-bit secret shown as base32 without
/// padding (RFC 4648 section 6), codes accepted `adjacentIntervals` steps either side of now.
package enum TOTP {
    /// `hashingAlgorithm` as the start of an enrolment answers it, and the only one there is.
    package static let hashingAlgorithm = "SHA1"
    /// The digits of a code (`verificationCodeLength`).
    package static let digits = 6
    /// The length of a step, in seconds (`periodSec`). Authenticator apps assume 30 when the
    /// `otpauth://` URL names no period, and the SDKs' URLs name none.
    package static let period: Int64 = 30
    /// The bytes of a secret: 160 bits, RFC 4226's recommendation.
    package static let secretBytes = 20

    /// A new random secret.
    package static func newSecret() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<secretBytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The step `time` (Unix seconds) falls in.
    package static func step(at time: Int64) -> Int64 {
        time >= 0 ? time / period : (time - period + 1) / period
    }

    /// The code of `secret` at `step`, `digits` long with its leading zeros (RFC 4226 section 5.3).
    package static func code(secret: [UInt8], step: Int64, digits: Int = digits) -> String {
        var counter = UInt64(bitPattern: step).bigEndian
        let message = withUnsafeBytes(of: &counter) { Array($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary =
            (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let number = String(binary % modulus)
        return String(repeating: "0", count: digits - number.count) + number
    }

    /// The step within `adjacentIntervals` of `now`'s at which `code` is `secret`'s, nearest to now
    /// first; `nil` when there is none. Every step of the window is computed and compared in
    /// constant time, so how long this takes says nothing of which step (if any) matched.
    package static func matchingStep(_ code: String, secret: [UInt8], now: Int64, adjacentIntervals: Int) -> Int64? {
        guard code.utf8.count == digits, code.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        let current = step(at: now)
        var found: Int64?
        for distance in 0...Int64(adjacentIntervals) {
            for candidate in distance == 0 ? [current] : [current - distance, current + distance] {
                let matches = ConstantTime.equal(Array(self.code(secret: secret, step: candidate).utf8), Array(code.utf8))
                if matches, found == nil { found = candidate }
            }
        }
        return found
    }
}

/// Base32 (RFC 4648 section 6): `A`–`Z` and `2`–`7`, here without `=` padding, which an
/// `otpauth://` URL cannot carry.
package enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// `bytes` in base32, unpadded.
    package static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                output.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { output.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes of `text` (upper or lower case, `=` padding allowed at the end); `nil` for any
    /// other character, or for leftover bits that are not zero.
    package static func decode(_ text: String) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        let characters = Array(text.utf8)
        let end = characters.lastIndex { $0 != UInt8(ascii: "=") }.map { $0 + 1 } ?? 0
        for character in characters[..<end] {
            let value: UInt32
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(character - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(character - UInt8(ascii: "a"))
            case UInt8(ascii: "2")...UInt8(ascii: "7"): value = UInt32(character - UInt8(ascii: "2")) + 26
            default: return nil
            }
            buffer = (buffer << 5) | value
            bits += 5
            if bits >= 8 {
                output.append(UInt8((buffer >> UInt32(bits - 8)) & 0xff))
                bits -= 8
            }
        }
        guard buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }
}
