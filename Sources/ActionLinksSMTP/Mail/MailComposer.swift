#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A transactional message to compose: a plain-text and an HTML version of the same content.
public struct OutgoingMail: Sendable, Hashable {
    /// The sender shown in `From`.
    public var from: MailAddress
    /// The recipient shown in `To`.
    public var to: MailAddress
    /// The subject, any text.
    public var subject: String
    /// The plain-text version.
    public var text: String
    /// The HTML version.
    public var html: String
    /// The `Message-ID` (with or without angle brackets); `nil` for a new random one at the sender's domain.
    public var messageID: String?
    /// The `Date`; `nil` for now.
    public var date: Date?
    /// More header fields, such as `X-` fields, written after the standard ones.
    public var extraHeaders: [MailHeader]

    /// Creates a message.
    public init(
        from: MailAddress, to: MailAddress, subject: String, text: String, html: String, messageID: String? = nil,
        date: Date? = nil, extraHeaders: [MailHeader] = []
    ) {
        self.from = from
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.messageID = messageID
        self.date = date
        self.extraHeaders = extraHeaders
    }
}

/// A header field to add to a message, such as `X-Mailer: ActionLinks`.
public struct MailHeader: Sendable, Hashable {
    /// The field's name.
    public var name: String
    /// The field's value, any text (encoded as RFC 2047 words when it is not ASCII).
    public var value: String

    /// A header field.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// A composed message: its bytes and the `Message-ID` they carry.
public struct ComposedMail: Sendable, Hashable {
    /// The RFC 5322 message: 7-bit, CRLF line ends, no line over 998 octets; what ``SMTPEnvelope`` sends.
    public var bytes: [UInt8]
    /// The `Message-ID`, without angle brackets.
    public var messageID: String
}

/// Composes the RFC 5322 / MIME message of an ``OutgoingMail``: `multipart/alternative` with the text
/// part then the HTML part, both UTF-8, each quoted-printable or base64, whichever is shorter.
public enum MailComposer {
    /// Header fields the composer writes itself, which ``OutgoingMail/extraHeaders`` cannot repeat.
    static let composedHeaders: Set<String> = [
        "date", "from", "to", "subject", "message-id", "mime-version", "auto-submitted", "content-type",
        "content-transfer-encoding",
    ]

    /// The message's bytes; throws an ``SMTPError/Code/invalidMessage`` error for an address, a
    /// `Message-ID` or an extra header that cannot be written as it is.
    public static func compose(_ mail: OutgoingMail) throws(SMTPError) -> ComposedMail {
        for (role, address) in [("From", mail.from), ("To", mail.to)] where !address.isPlain {
            throw SMTPError(
                code: .invalidMessage,
                message:
                    "the \(role) address \"\(address.address.prefix(100))\" is not a plain address (local@domain in ASCII, "
                    + "without spaces or brackets)")
        }
        let messageID = try mail.messageID.map(validMessageID) ?? newMessageID(domain: mail.from.domain ?? "localhost")
        var generator = SystemRandomNumberGenerator()
        // `=_` occurs in neither encoding's output (quoted-printable writes `=` only before hex digits or
        // a line end, base64 has no `_`), so the boundary cannot appear inside a part.
        let boundary = "=_" + randomHex(16, using: &generator)
        var lines = [
            HeaderField.folded("Date", rfc5322Date(mail.date ?? Date())),
            HeaderField.address("From", mail.from),
            HeaderField.address("To", mail.to),
            HeaderField.unstructured("Subject", mail.subject),
            HeaderField.folded("Message-ID", "<" + messageID + ">"),
            "MIME-Version: 1.0",
            // RFC 3834: mail sent by a program, so that auto-responders do not answer it.
            "Auto-Submitted: auto-generated",
        ]
        for header in mail.extraHeaders {
            let name = header.name
            let isFieldName = !name.isEmpty && name.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: ":") }
            guard isFieldName, !composedHeaders.contains(name.lowercased()) else {
                throw SMTPError(
                    code: .invalidMessage,
                    message:
                        "the extra header \"\(name.prefix(100))\" is not a header name the composer can add (printable ASCII "
                        + "without a colon, not one it writes itself)")
            }
            lines.append(HeaderField.unstructured(name, header.value))
        }
        lines += [HeaderField.folded("Content-Type", "multipart/alternative; boundary=\"\(boundary)\""), ""]
        for (type, content) in [("text/plain", mail.text), ("text/html", mail.html)] {
            let (encoding, body) = TransferEncoding.shorter(of: content)
            lines += [
                "--" + boundary, "Content-Type: \(type); charset=UTF-8", "Content-Transfer-Encoding: \(encoding.rawValue)", "", body,
            ]
        }
        lines.append("--" + boundary + "--")
        return ComposedMail(bytes: Array((lines.joined(separator: "\r\n") + "\r\n").utf8), messageID: messageID)
    }

    /// A new `Message-ID` (without angle brackets): 128 random bits at `domain`.
    public static func newMessageID(domain: String) -> String {
        var generator = SystemRandomNumberGenerator()
        return randomHex(16, using: &generator) + "@" + domain
    }

    /// `date` as RFC 5322 §3.3 writes it, in UTC: `Tue, 01 Jul 2025 09:05:03 +0000`.
    public static func rfc5322Date(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let (days, secondOfDay) = seconds.quotientAndRemainder(dividingBy: 86_400)
        let day = secondOfDay < 0 ? days - 1 : days
        let time = secondOfDay < 0 ? secondOfDay + 86_400 : secondOfDay
        let (year, month, dayOfMonth) = civilDate(daysSince1970: day)
        // 1 January 1970 was a Thursday.
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((day % 7) + 7) % 7]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(weekday), \(two(dayOfMonth)) \(months[month - 1]) \(year) \(two(time / 3600)):\(two(time / 60 % 60)):\(two(time % 60)) +0000"
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01: counted in 400-year eras of
    /// 146,097 days, with years starting in March so that the leap day falls at a year's end.
    private static func civilDate(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// A given `Message-ID` without its angle brackets, if it is one (`left@right` in printable ASCII).
    private static func validMessageID(_ given: String) throws(SMTPError) -> String {
        let id = given.hasPrefix("<") && given.hasSuffix(">") ? String(given.dropFirst().dropLast()) : given
        let parts = id.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty }),
            id.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "<") && $0 != UInt8(ascii: ">") }),
            id.utf8.count <= 900
        else {
            throw SMTPError(
                code: .invalidMessage,
                message: "the Message-ID \"\(given.prefix(100))\" is not left@right in printable ASCII: leave it out for a new one")
        }
        return id
    }

    private static func randomHex(_ byteCount: Int, using generator: inout some RandomNumberGenerator) -> String {
        let hex = Array("0123456789abcdef".utf8)
        let bytes = (0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return String(decoding: bytes.flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 0xF)]] }, as: UTF8.self)
    }
}
