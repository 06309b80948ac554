import Foundation

/// Base64url without padding (RFC 4648 §5), as in codes and JWTs.
enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let input = Array(bytes)
        let alphabet = Self.alphabet
        return String(unsafeUninitializedCapacity: (input.count * 4 + 2) / 3) { output in
            var written = 0
            var index = 0
            while index + 3 <= input.count {
                let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                output[written] = alphabet[Int(group >> 18 & 63)]
                output[written + 1] = alphabet[Int(group >> 12 & 63)]
                output[written + 2] = alphabet[Int(group >> 6 & 63)]
                output[written + 3] = alphabet[Int(group & 63)]
                written += 4
                index += 3
            }
            let rest = input.count - index
            if rest > 0 {
                let group = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
                output[written] = alphabet[Int(group >> 18 & 63)]
                output[written + 1] = alphabet[Int(group >> 12 & 63)]
                written += 2
                if rest == 2 {
                    output[written] = alphabet[Int(group >> 6 & 63)]
                    written += 1
                }
            }
            return written
        }
    }

    static func decode(_ text: some StringProtocol) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
