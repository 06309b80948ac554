internal import ActionLinksXMLSec

/// Base64 through xmlsec (this module has no Foundation: libxml2's headers bring the system's ICU,
/// which Foundation's own ICU would clash with).
public enum SAMLBase64 {
    /// The bytes of base64 `text` (whitespace allowed); `nil` when it is not base64.
    public static func decode(_ text: String) -> [UInt8]? {
        let compact = String(text.filter { !$0.isWhitespace })
        guard compact.utf8.allSatisfy(isBase64Byte) else { return nil }
        var output = [UInt8](repeating: 0, count: compact.utf8.count / 4 * 3 + 3)
        var length = output.count
        let status = output.withUnsafeMutableBufferPointer { buffer in
            compact.withCString { actionlinks_base64_decode($0, buffer.baseAddress, &length) }
        }
        return status == 0 ? Array(output.prefix(length)) : nil
    }

    /// `bytes` in base64, on one line.
    public static func encode(_ bytes: [UInt8]) -> String {
        guard !bytes.isEmpty else { return "" }
        guard let encoded = bytes.withUnsafeBufferPointer({ actionlinks_base64_encode($0.baseAddress, $0.count) }) else {
            preconditionFailure("xmlsec could not allocate a base64 string")
        }
        defer { actionlinks_free(encoded) }
        return String(cString: encoded)
    }

    private static func isBase64Byte(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2B || byte == 0x2F
            || byte == 0x3D
    }
}

extension StringProtocol {
    /// The text without leading and trailing whitespace and newlines.
    var trimmed: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }

    /// At most `count` characters (for quoting untrusted text in a message).
    func cut(_ count: Int) -> String { String(prefix(count)) }
}

/// Lower-case hex digits.
enum Hex {
    static let digits = Array("0123456789abcdef")

    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text = ""
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }
}
