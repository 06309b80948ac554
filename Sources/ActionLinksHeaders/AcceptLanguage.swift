/// `Accept-Language` (RFC 9110 §12.5.4): language ranges with optional q-values.
public enum AcceptLanguage {
    /// The ranges in header order, without empty items, `q=0` items, items with a malformed q-value
    /// and tags that are not language ranges (`[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*` or `*`). Never
    /// traps; a header longer than 8 KiB reads as empty.
    public static func ranges(_ header: String) -> [(tag: String, quality: Double)] {
        let bytes = Array(header.utf8)
        guard bytes.count <= HeaderText.maximumLength else { return [] }
        var result: [(tag: String, quality: Double)] = []
        for item in HeaderText.split(bytes[...], on: UInt8(ascii: ",")) {
            let parts = HeaderText.split(item, on: UInt8(ascii: ";"), limit: 8)
            guard let first = parts.first else { continue }
            let tag = HeaderText.trimmed(first)
            guard isLanguageRange(tag) else { continue }
            var quality = 1.0
            var valid = true
            for parameter in parts.dropFirst() {
                let parameter = HeaderText.trimmed(parameter)
                guard parameter.count >= 2, parameter.first.map({ $0 | 0x20 }) == UInt8(ascii: "q"),
                    parameter[parameter.startIndex + 1] == UInt8(ascii: "=")
                else { continue }
                guard let value = qValue(parameter.dropFirst(2)) else {
                    valid = false
                    break
                }
                quality = value
            }
            guard valid, quality > 0 else { continue }
            result.append((String(decoding: tag, as: UTF8.self), quality))
        }
        return result
    }

    /// The range with the highest quality for which `available` names a language (the first of
    /// equals wins); `*` is ignored. `nil` when none does.
    public static func best(_ header: String, available: (String) -> String?) -> String? {
        var best: (language: String, quality: Double)?
        for range in ranges(header) where range.tag != "*" {
            guard range.quality > (best?.quality ?? 0), let language = available(range.tag) else { continue }
            best = (language, range.quality)
        }
        return best?.language
    }

    /// `[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*` or `*`.
    static func isLanguageRange(_ bytes: ArraySlice<UInt8>) -> Bool {
        if bytes.count == 1, bytes.first == UInt8(ascii: "*") { return true }
        guard !bytes.isEmpty, bytes.count <= 64 else { return false }
        var subtagLength = 0
        var first = true
        for byte in bytes {
            if byte == UInt8(ascii: "-") {
                guard subtagLength > 0 else { return false }
                subtagLength = 0
                first = false
                continue
            }
            let letter = (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            let digit = (0x30...0x39).contains(byte)
            guard letter || (digit && !first) else { return false }
            subtagLength += 1
            guard subtagLength <= 8 else { return false }
        }
        return subtagLength > 0
    }

    /// `0(.d{0,3})? / 1(.0{0,3})?` as a number; `nil` when malformed.
    static func qValue(_ bytes: ArraySlice<UInt8>) -> Double? {
        guard let first = bytes.first, first == UInt8(ascii: "0") || first == UInt8(ascii: "1"), bytes.count <= 5 else { return nil }
        let rest = bytes.dropFirst()
        if rest.isEmpty { return first == UInt8(ascii: "1") ? 1 : 0 }
        guard rest.first == UInt8(ascii: "."), rest.count <= 4 else { return nil }
        // Thousandths as an integer, so 0.7 reads as exactly 0.7.
        var thousandths = 0
        var scale = 100
        for byte in rest.dropFirst() {
            guard (0x30...0x39).contains(byte) else { return nil }
            if first == UInt8(ascii: "1"), byte != UInt8(ascii: "0") { return nil }
            thousandths += Int(byte - 0x30) * scale
            scale /= 10
        }
        return first == UInt8(ascii: "1") ? 1 : Double(thousandths) / 1000
    }
}
