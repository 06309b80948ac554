#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// SAML's `xs:dateTime` instants (`2026-01-02T03:04:05Z`, fractions of a second and an offset
/// allowed), in milliseconds since 1970, and back.
public enum SAMLTime {
    /// The instant `text` names; `nil` when it is not an xs:dateTime. One without a zone is UTC
    /// (SAML requires UTC).
    public static func milliseconds(_ text: String) -> Int64? {
        let bytes = Array(text.trimmed.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        func byte(_ index: Int, is expected: Character) -> Bool { index < bytes.count && bytes[index] == expected.asciiValue }
        guard let year = number(0..<4), byte(4, is: "-"), let month = number(5..<7), byte(7, is: "-"), let day = number(8..<10),
            byte(10, is: "T"), let hour = number(11..<13), byte(13, is: ":"), let minute = number(14..<16), byte(16, is: ":"),
            let second = number(17..<19), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var millisecond = 0
        if byte(index, is: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                if digits < 3 { millisecond = millisecond * 10 + Int(bytes[index] - 0x30) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in min(digits, 3)..<3 { millisecond *= 10 }
        }
        var offset = 0
        if byte(index, is: "Z") {
            index += 1
        } else if byte(index, is: "+") || byte(index, is: "-") {
            guard let hours = number(index + 1..<index + 3), byte(index + 3, is: ":"), let minutes = number(index + 4..<index + 6),
                hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 60 + minutes) * 60 * (byte(index, is: "-") ? -1 : 1)
            index += 6
        }
        guard index == bytes.count else { return nil }
        var fields = tm()
        fields.tm_year = Int32(year - 1900)
        fields.tm_mon = Int32(month - 1)
        fields.tm_mday = Int32(day)
        fields.tm_hour = Int32(hour)
        fields.tm_min = Int32(minute)
        fields.tm_sec = Int32(second)
        let seconds = Int64(timegm(&fields)) - Int64(offset)
        return seconds * 1000 + Int64(millisecond)
    }

    /// `milliseconds` as SAML writes instants: UTC, whole seconds, `Z`.
    public static func text(_ milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var fields = tm()
        gmtime_r(&seconds, &fields)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(fields.tm_year + 1900)-\(two(fields.tm_mon + 1))-\(two(fields.tm_mday))T\(two(fields.tm_hour)):\(two(fields.tm_min)):\(two(fields.tm_sec))Z"
    }
}
