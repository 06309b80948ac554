extension Array<UInt8> {
    /// Base64 (RFC 4648, with padding) on one line.
    var base64: String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((count + 2) / 3 * 4)
        var index = startIndex
        while index < endIndex {
            let chunk = self[index..<Swift.min(index + 3, endIndex)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<4 {
                out.append(position <= chunk.count ? alphabet[Int(value >> (18 - 6 * UInt32(position)) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
