/// Why sending a message (or composing one) failed: what happened, in which step, and whether trying
/// again later can help.
///
/// Every failure is either temporary (a 4xx reply, a refused, reset or closed connection, a timeout, a
/// name that did not resolve: try again later) or permanent (a 5xx reply, a certificate that is not
/// trusted, a server without STARTTLS, refused credentials, a message or configuration that cannot be
/// sent as it is: trying again changes nothing). ``message`` says what to fix. It never holds a
/// password or a message's content.
public struct SMTPError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public var code: Code
    /// What happened and how to fix it.
    public var message: String
    /// The step of the SMTP conversation that failed, if the failure happened in one.
    public var step: Step?
    /// The server's reply code, when the failure is a reply.
    public var replyCode: Int?
    /// The error underneath (a socket's or TLS library's), if any.
    public var cause: (any Error)?

    /// Creates an error; ``isPermanent`` follows from `code` and `replyCode`.
    public init(code: Code, message: String, step: Step? = nil, replyCode: Int? = nil, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.step = step
        self.replyCode = replyCode
        self.cause = cause
    }

    /// Whether trying again later is pointless: a 5xx reply, or a failure that only a change of
    /// configuration or message can fix.
    public var isPermanent: Bool {
        switch code.wrapped {
        case .rejected, .authenticationFailed: return (replyCode ?? 500) >= 500
        case .connectionFailed, .connectionClosed, .timedOut, .protocolViolation: return false
        case .startTLSUnavailable, .tlsFailed, .authenticationUnavailable, .invalidConfiguration, .invalidMessage, .shutDown:
            return true
        }
    }

    /// `code (step): message [cause]`.
    public var description: String {
        var text = "\(code)"
        if let step { text += " (\(step))" }
        text += ": " + message
        if let cause { text += " [\(cause)]" }
        return text
    }
}

extension SMTPError {
    /// The kind of an ``SMTPError``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Wrapped: Hashable, Sendable {
            case connectionFailed, connectionClosed, timedOut, rejected, authenticationFailed, authenticationUnavailable
            case startTLSUnavailable, tlsFailed, protocolViolation, invalidConfiguration, invalidMessage, shutDown
        }

        let wrapped: Wrapped

        /// No connection could be made: refused, unreachable, or the host name did not resolve (temporary).
        public static let connectionFailed = Code(wrapped: .connectionFailed)
        /// The connection was closed or reset in the middle of the conversation (temporary).
        public static let connectionClosed = Code(wrapped: .connectionClosed)
        /// The connection or a reply took longer than its timeout (temporary).
        public static let timedOut = Code(wrapped: .timedOut)
        /// The server refused a step: temporary for a 4xx reply, permanent for a 5xx one.
        public static let rejected = Code(wrapped: .rejected)
        /// The server refused the credentials (535 is permanent; a 4xx reply is temporary).
        public static let authenticationFailed = Code(wrapped: .authenticationFailed)
        /// Credentials are configured but the server offers neither AUTH PLAIN nor AUTH LOGIN (permanent).
        public static let authenticationUnavailable = Code(wrapped: .authenticationUnavailable)
        /// STARTTLS is required but the server does not offer it; nothing was sent in clear (permanent).
        public static let startTLSUnavailable = Code(wrapped: .startTLSUnavailable)
        /// The TLS handshake was refused: an untrusted certificate, a certificate for another host
        /// name, or no protocol both sides speak (permanent).
        public static let tlsFailed = Code(wrapped: .tlsFailed)
        /// The server's reply was malformed or not one SMTP allows at that step (temporary).
        public static let protocolViolation = Code(wrapped: .protocolViolation)
        /// The client's configuration cannot work: an unreadable CA file, credentials that would go
        /// out in clear, an EHLO name with spaces (permanent).
        public static let invalidConfiguration = Code(wrapped: .invalidConfiguration)
        /// The envelope or message cannot be sent as it is: an address with spaces or line breaks,
        /// 8-bit content, a line over 998 octets (permanent).
        public static let invalidMessage = Code(wrapped: .invalidMessage)
        /// The client was shut down before the message could be sent (permanent for this client).
        public static let shutDown = Code(wrapped: .shutDown)

        /// The kind in a few words.
        public var description: String {
            switch wrapped {
            case .connectionFailed: return "connection failed"
            case .connectionClosed: return "connection closed"
            case .timedOut: return "timed out"
            case .rejected: return "rejected"
            case .authenticationFailed: return "authentication failed"
            case .authenticationUnavailable: return "authentication unavailable"
            case .startTLSUnavailable: return "STARTTLS unavailable"
            case .tlsFailed: return "TLS failed"
            case .protocolViolation: return "protocol violation"
            case .invalidConfiguration: return "invalid configuration"
            case .invalidMessage: return "invalid message"
            case .shutDown: return "shut down"
            }
        }
    }

    /// A step of the SMTP conversation, each with its own timeout in ``SMTPTimeouts``.
    public enum Step: String, Hashable, Sendable, CustomStringConvertible {
        /// Opening the TCP connection.
        case connect
        /// The TLS handshake (at once with implicit TLS, after STARTTLS otherwise).
        case tlsHandshake
        /// Waiting for the server's 220 greeting.
        case greeting
        /// EHLO (or HELO) and the server's capabilities.
        case ehlo
        /// The STARTTLS command.
        case startTLS
        /// AUTH PLAIN or AUTH LOGIN.
        case authentication
        /// MAIL FROM.
        case mailFrom
        /// RCPT TO, once per recipient.
        case recipient
        /// The DATA command (before the message).
        case data
        /// The message and its terminating dot, until the server accepts it.
        case endOfData
        /// RSET, before a pooled connection carries another message.
        case reset
        /// QUIT.
        case quit

        /// The step's name.
        public var description: String { rawValue }
    }
}
