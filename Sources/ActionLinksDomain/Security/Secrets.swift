/// Random values from the system's CSPRNG.
package enum Secrets {
    /// 256 bits, base64url without padding (43 characters of `[A-Za-z0-9_-]`).
    package static func token() -> String {
        // Four 64-bit draws (one getrandom call each) rather than 32 single-byte ones.
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for _ in 0..<4 { withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) } }
        return Base64URL.encode(bytes)
    }

    /// 128 bits as 32 lower-case hex digits (an outbox mail's ID, the left part of its Message-ID).
    package static func hexID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// A 27-character session ID for `accounts:createAuthUri`, as Firebase's are.
    package static func sessionID() -> String { String(accountID().prefix(27)) }

    /// A 28-character account ID, as Firebase's are.
    static func accountID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        var generator = SystemRandomNumberGenerator()
        return String(decoding: (0..<28).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] }, as: UTF8.self)
    }
}
