import NIOCore

/// One message and where it goes: the envelope sender (MAIL FROM), the recipients (RCPT TO) and the
/// RFC 5322 message itself (headers and body, as ``MailComposer`` makes it).
public struct SMTPEnvelope: Sendable, Hashable {
    /// The envelope sender, where bounces go; empty for the null sender (`MAIL FROM:<>`).
    public var sender: String
    /// The recipients, one RCPT TO each.
    public var recipients: [String]
    /// The message: 7-bit, lines of at most 998 octets. Line ends are sent as CRLF whatever they are here.
    public var message: [UInt8]

    /// Creates an envelope.
    public init(sender: String, recipients: [String], message: [UInt8]) {
        self.sender = sender
        self.recipients = recipients
        self.message = message
    }

    /// Throws when an address cannot go into MAIL FROM or RCPT TO as it is.
    func validate() throws(SMTPError) {
        guard !recipients.isEmpty else {
            throw SMTPError(code: .invalidMessage, message: "the envelope has no recipient: give at least one address")
        }
        if !sender.isEmpty { try Self.validate(sender, as: "sender") }
        for recipient in recipients { try Self.validate(recipient, as: "recipient") }
    }

    private static func validate(_ address: String, as role: String) throws(SMTPError) {
        let isPlain = address.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "<") && $0 != UInt8(ascii: ">") }
        guard isPlain, address.utf8.count <= 254, address.contains("@") else {
            throw SMTPError(
                code: .invalidMessage,
                message:
                    "the \(role) address \"\(address.prefix(100))\" is not a plain ASCII address (local@domain, no spaces, "
                    + "line breaks or angle brackets, at most 254 characters): internationalized addresses are not supported")
        }
    }
}

/// The DATA payload of a message (RFC 5321 §4.5.2).
enum SMTPData {
    /// The longest line SMTP carries, without its CRLF (RFC 5321 §4.5.3.1.6).
    static let maximumLineLength = 998

    /// `message` with every line end as CRLF, a `.` doubled at the start of each line so that no line
    /// ends the data early, and the terminating `CRLF.CRLF`. Throws for 8-bit content or a line too long.
    static func payload(of message: [UInt8]) throws(SMTPError) -> ByteBuffer {
        var out = ByteBuffer()
        out.reserveCapacity(message.count + message.count / 32 + 5)
        var lineLength = 0
        var index = message.startIndex
        while index < message.endIndex {
            let byte = message[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                // CRLF, a bare CR or a bare LF: each ends one line.
                if byte == UInt8(ascii: "\r"), index < message.endIndex, message[index] == UInt8(ascii: "\n") { index += 1 }
                out.writeStaticString("\r\n")
                lineLength = 0
            case 0, 0x80...:
                throw SMTPError(
                    code: .invalidMessage,
                    message:
                        "the message has \(byte == 0 ? "a NUL byte" : "8-bit bytes"): encode it as 7-bit (MailComposer uses "
                        + "quoted-printable or base64 bodies and RFC 2047 headers)")
            default:
                if lineLength == 0, byte == UInt8(ascii: ".") { out.writeInteger(UInt8(ascii: ".")) }
                lineLength += 1
                guard lineLength <= maximumLineLength else {
                    throw SMTPError(
                        code: .invalidMessage,
                        message: "the message has a line longer than \(maximumLineLength) octets: wrap or encode it (quoted-printable)")
                }
                out.writeInteger(byte)
            }
        }
        if lineLength > 0 { out.writeStaticString("\r\n") }
        out.writeStaticString(".\r\n")
        return out
    }
}
