#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns the bytes of a text part into a string, whatever charset the message declared.
///
/// UTF-8 and ASCII are decoded in Swift; everything else goes through the C library's iconv, which
/// knows every charset mail is written in (KOI8-R, Windows-1251, Shift_JIS, ISO-2022-JP, EUC-JP...).
/// Bytes that do not decode become U+FFFD and are counted, so a bad message is still read.
public enum CharsetDecoder {
    /// The text, and what went wrong while decoding it (empty when nothing did).
    public struct Decoded: Sendable, Hashable {
        /// The decoded text.
        public let text: String
        /// The charset that was actually used (it can differ from the declared one, see ``problems``).
        public let charset: String
        /// Sentences naming what could not be decoded.
        public let problems: [String]
    }

    /// Decodes `bytes` declared as `charset` (`nil` when the message did not say).
    public static func decode(_ bytes: some Collection<UInt8>, charset declared: String?) -> Decoded {
        let bytes = Array(bytes)
        let label = declared.map(normalizedLabel) ?? ""
        switch label {
        case "utf-8", "utf8", "unicode-1-1-utf-8":
            let (text, invalid) = decodeUTF8(bytes)
            let problems = invalid == 0 ? [] : ["\(invalid) invalid UTF-8 sequence\(invalid == 1 ? "" : "s") became U+FFFD"]
            return Decoded(text: text, charset: "UTF-8", problems: problems)
        case "", "us-ascii", "ascii", "ansi_x3.4-1968", "x-unknown", "unknown-8bit":
            if let text = String(validating: bytes, as: UTF8.self) {
                return Decoded(text: text, charset: "UTF-8", problems: [])
            }
            // Undeclared or mislabelled 8-bit text is most often Windows-1252; say so rather than guess silently.
            let fallback = convert(bytes, from: "WINDOWS-1252")
            let what = label.isEmpty ? "no charset was declared" : "it was declared \(declared!)"
            return Decoded(
                text: fallback.text, charset: "windows-1252",
                problems: ["8-bit text although \(what): read as windows-1252"] + fallback.problems)
        default:
            guard let iconvName = iconvName(for: label) else {
                let text = String(decoding: bytes, as: UTF8.self)
                return Decoded(text: text, charset: "UTF-8", problems: ["unknown charset '\(declared!)': read as UTF-8"])
            }
            let converted = convert(bytes, from: iconvName)
            return Decoded(text: converted.text, charset: declared!, problems: converted.problems)
        }
    }

    /// Decodes UTF-8, replacing each invalid sequence with U+FFFD, and counts the replacements.
    static func decodeUTF8(_ bytes: [UInt8]) -> (text: String, invalid: Int) {
        if let text = String(validating: bytes, as: UTF8.self) { return (text, 0) }
        var invalid = 0
        var scalars = String.UnicodeScalarView()
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        loop: while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): scalars.append(Unicode.UTF8.decode(encoded))
            case .error:
                invalid += 1
                scalars.append("\u{FFFD}")
            case .emptyInput: break loop
            }
        }
        return (String(scalars), invalid)
    }

    /// Whether a charset label is one this machine can decode.
    public static func isSupported(_ charset: String) -> Bool {
        let label = normalizedLabel(charset)
        if ["utf-8", "utf8", "us-ascii", "ascii"].contains(label) { return true }
        guard let name = iconvName(for: label), let descriptor = open(name) else { return false }
        iconv_close(descriptor)
        return true
    }

    static func normalizedLabel(_ charset: String) -> String {
        var label = charset.lowercased()
        label.removeAll { $0 == "\"" || $0 == "'" }
        // RFC 2231 allows a language after '*' ("utf-8*en"); iconv would not know the suffix.
        if let star = label.firstIndex(of: "*") { label = String(label[..<star]) }
        return String(label.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    /// The iconv name for a label, applying what mail clients and browsers do with common mislabels.
    static func iconvName(for label: String) -> String? {
        switch label {
        // WHATWG maps these to windows-1252: real mail labelled Latin-1 routinely uses its extra characters.
        case "iso-8859-1", "iso8859-1", "latin1", "l1", "cp1252", "windows-1252", "x-cp1252", "cp819": return "WINDOWS-1252"
        case "windows-1251", "cp1251", "x-cp1251": return "WINDOWS-1251"
        // Shift_JIS mail is in practice Microsoft's superset (NEC and IBM extensions): decode it as CP932.
        case "shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji", "csshiftjis", "windows-31j", "cp932": return "CP932"
        case "euc-jp", "x-euc-jp", "eucjp": return "EUC-JP"
        case "iso-2022-jp", "csiso2022jp": return "ISO-2022-JP"
        case "koi8-r", "koi8r", "cskoi8r": return "KOI8-R"
        case "koi8-u": return "KOI8-U"
        case "gb2312", "gbk", "x-gbk": return "GBK"
        case "ks_c_5601-1987", "euc-kr": return "EUC-KR"
        default:
            // Anything else is handed to iconv as written; only plain names get that far.
            guard !label.isEmpty, label.utf8.count <= 40,
                label.utf8.allSatisfy({
                    isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".")
                        || $0 == UInt8(ascii: ":")
                })
            else { return nil }
            return label.uppercased()
        }
    }

    private static func open(_ name: String) -> iconv_t? {
        let descriptor = iconv_open("UTF-8", name)
        return descriptor == iconv_t(bitPattern: -1) ? nil : descriptor
    }

    /// Converts with iconv; an undecodable byte becomes U+FFFD and decoding resumes after it.
    static func convert(_ input: [UInt8], from name: String) -> (text: String, problems: [String]) {
        guard let descriptor = open(name) else {
            return (String(decoding: input, as: UTF8.self), ["iconv cannot decode '\(name)' here: read as UTF-8"])
        }
        defer { iconv_close(descriptor) }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 2)
        var replaced = 0
        let chunkSize = 16_384
        let chunk = UnsafeMutablePointer<CChar>.allocate(capacity: chunkSize)
        defer { chunk.deallocate() }
        func append(upTo end: UnsafeMutablePointer<CChar>) {
            output.append(contentsOf: UnsafeRawBufferPointer(start: chunk, count: chunk.distance(to: end)))
        }
        var source = input.map { CChar(bitPattern: $0) }
        source.withUnsafeMutableBufferPointer { buffer in
            var inPointer = buffer.baseAddress
            var inLeft = buffer.count
            while inLeft > 0 {
                var outPointer: UnsafeMutablePointer<CChar>? = chunk
                var outLeft = chunkSize
                let status = iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
                let failure = status == -1 ? errno : 0
                append(upTo: outPointer!)
                guard status == -1, failure != E2BIG else { continue }
                guard failure == EILSEQ || failure == EINVAL else { break }
                // An invalid byte, or a sequence cut off at the end: replace one byte and go on.
                output.append(contentsOf: [0xEF, 0xBF, 0xBD])
                replaced += 1
                inPointer = inPointer.map { $0 + 1 }
                inLeft -= 1
            }
            // Stateful charsets (ISO-2022-JP) may owe a final reset; iconv writes it on a flush.
            var outPointer: UnsafeMutablePointer<CChar>? = chunk
            var outLeft = chunkSize
            _ = iconv(descriptor, nil, nil, &outPointer, &outLeft)
            append(upTo: outPointer!)
        }
        let problems =
            replaced == 0 ? [] : ["\(replaced) byte\(replaced == 1 ? "" : "s") could not be decoded as \(name) and became U+FFFD"]
        return (String(decoding: output, as: UTF8.self), problems)
    }
}

@inline(__always) func isAlphanumeric(_ c: UInt8) -> Bool {
    (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
        || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9"))
}
