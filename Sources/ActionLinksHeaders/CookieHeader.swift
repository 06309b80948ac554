/// `Cookie` request headers (RFC 6265 §5.4): `name=value` pairs separated by `;`.
public enum CookieHeader {
    /// The value of the first cookie called `name` in any of the `Cookie` header lines; surrounding
    /// double quotes are removed. Pairs without `=`, empty pairs and junk are skipped.
    public static func value(named name: String, in headers: some Sequence<String>) -> String? {
        let wanted = Array(name.utf8)
        guard !wanted.isEmpty else { return nil }
        var lines = 0
        for header in headers {
            lines += 1
            guard lines <= HeaderText.maximumItems else { return nil }
            let bytes = Array(header.utf8)
            guard bytes.count <= HeaderText.maximumLength else { continue }
            var start = 0
            var pairs = 0
            while start <= bytes.count, pairs < 4 * HeaderText.maximumItems {
                pairs += 1
                let end = bytes[start...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.count
                let pair = HeaderText.trimmed(bytes[start..<end])
                if let equals = pair.firstIndex(of: UInt8(ascii: "=")), HeaderText.trimmed(pair[..<equals]).elementsEqual(wanted) {
                    var value = HeaderText.trimmed(pair[(equals + 1)...])
                    if value.count >= 2, value.first == UInt8(ascii: "\""), value.last == UInt8(ascii: "\"") {
                        value = value.dropFirst().dropLast()
                    }
                    return String(decoding: value, as: UTF8.self)
                }
                start = end + 1
            }
        }
        return nil
    }
}
