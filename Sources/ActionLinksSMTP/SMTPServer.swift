import NIOCore

/// The SMTP server a client sends through: where it is, how the connection is secured and
/// authenticated, and how long each step may take.
public struct SMTPServer: Sendable, Hashable {
    /// How the connection is encrypted.
    public enum Security: Sendable, Hashable {
        /// Plain TCP upgraded with STARTTLS (the submission port, 587). A server that does not offer
        /// STARTTLS is a permanent error: nothing is ever sent in clear.
        case startTLS
        /// TLS from the first byte (implicit TLS, port 465).
        case tls
        /// No encryption: only where the network is trusted. Credentials are sent only to a loopback host.
        case none
    }

    /// Which certificate authorities the server's certificate must chain to.
    public enum Trust: Sendable, Hashable {
        /// The system's trust store.
        case systemRoots
        /// The certificates in a PEM file (a private CA, or a self-signed certificate).
        case certificateAuthorities(pemFile: String)
    }

    /// A user name and password for AUTH PLAIN or AUTH LOGIN; printing them never shows the password.
    public struct Credentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        /// The user name.
        public var username: String
        /// The password.
        public var password: String

        /// Creates credentials.
        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }

        /// The user name, and the password as `<redacted>`.
        public var description: String { "Credentials(username: \(username), password: <redacted>)" }
        /// The same as ``description``: printing with `debugPrint` or inside another value hides the password too.
        public var debugDescription: String { description }
        /// The same for `dump` and other mirrors.
        public var customMirror: Mirror { Mirror(self, children: ["username": username, "password": "<redacted>"]) }
    }

    /// The server's host name or IP address (its certificate must name it).
    public var host: String
    /// The server's TCP port.
    public var port: Int
    /// How the connection is encrypted.
    public var security: Security
    /// The credentials to authenticate with, or `nil` to send without AUTH.
    public var credentials: Credentials?
    /// Which certificate authorities the server's certificate must chain to (with TLS or STARTTLS).
    public var trust: Trust
    /// The name the client gives in EHLO: its own fully qualified domain name, or `localhost`.
    public var ehloName: String
    /// How long each step may take.
    public var timeouts: SMTPTimeouts

    /// Describes a server; `port` defaults to 587 for STARTTLS, 465 for implicit TLS and 25 without TLS.
    public init(
        host: String, port: Int? = nil, security: Security = .startTLS, credentials: Credentials? = nil,
        trust: Trust = .systemRoots, ehloName: String = "localhost", timeouts: SMTPTimeouts = SMTPTimeouts()
    ) {
        self.host = host
        self.security = security
        self.port =
            port
            ?? {
                switch security {
                case .startTLS: return 587
                case .tls: return 465
                case .none: return 25
                }
            }()
        self.credentials = credentials
        self.trust = trust
        self.ehloName = ehloName
        self.timeouts = timeouts
    }

    /// Whether `host` is this machine: `localhost`, 127.0.0.0/8 or ::1.
    public var isLoopback: Bool {
        let name = host.lowercased()
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        guard let address = try? SocketAddress(ipAddress: name.trimmingBrackets, port: 0) else { return false }
        switch address {
        case .v4(let v4): return UInt32(bigEndian: v4.address.sin_addr.s_addr) >> 24 == 127
        case .v6: return address.ipAddress == "::1"
        case .unixDomainSocket: return false
        }
    }

    /// Whether `host` is an IP address rather than a name (no SNI; the certificate must name the address).
    var isIPAddress: Bool { (try? SocketAddress(ipAddress: host.trimmingBrackets, port: 0)) != nil }

    /// `host:port`, for messages.
    var endpoint: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Throws when this configuration cannot work whatever the server says.
    func validate() throws(SMTPError) {
        if credentials != nil, security == .none, !isLoopback {
            throw SMTPError(
                code: .invalidConfiguration,
                message:
                    "credentials would be sent in clear to \(endpoint): use security .startTLS or .tls (security .none "
                    + "authenticates only to a loopback host)")
        }
        guard (1...65535).contains(port) else {
            throw SMTPError(code: .invalidConfiguration, message: "port \(port) is not a TCP port: use 587, 465 or 25")
        }
        guard !ehloName.isEmpty, ehloName.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw SMTPError(
                code: .invalidConfiguration,
                message: "the EHLO name \"\(ehloName)\" is not a domain name: give this host's name, or localhost")
        }
    }
}

extension String {
    fileprivate var trimmingBrackets: String {
        hasPrefix("[") && hasSuffix("]") ? String(dropFirst().dropLast()) : self
    }
}

/// How long each step of an SMTP conversation may take before it fails as ``SMTPError/Code/timedOut``.
///
/// The defaults are RFC 5321's suggestions (§4.5.3.2) scaled down for a server that sends transactional
/// mail and retries: a minute for each command's reply, and longer for the reply to the end of the
/// message, which the server may only give after checking or relaying it.
public struct SMTPTimeouts: Sendable, Hashable {
    /// Opening the TCP connection.
    public var connect: Duration
    /// The TLS handshake.
    public var tlsHandshake: Duration
    /// The server's greeting.
    public var greeting: Duration
    /// The reply to EHLO (or HELO).
    public var ehlo: Duration
    /// The reply to STARTTLS.
    public var startTLS: Duration
    /// Each reply during AUTH.
    public var authentication: Duration
    /// The reply to MAIL FROM.
    public var mailFrom: Duration
    /// The reply to each RCPT TO.
    public var recipient: Duration
    /// The reply to DATA.
    public var data: Duration
    /// Sending the message and the reply to its terminating dot.
    public var endOfData: Duration
    /// The reply to RSET.
    public var reset: Duration
    /// The reply to QUIT.
    public var quit: Duration

    /// Timeouts with the given values; the defaults are those described above.
    public init(
        connect: Duration = .seconds(15), tlsHandshake: Duration = .seconds(30), greeting: Duration = .seconds(60),
        ehlo: Duration = .seconds(60), startTLS: Duration = .seconds(60), authentication: Duration = .seconds(60),
        mailFrom: Duration = .seconds(60), recipient: Duration = .seconds(60), data: Duration = .seconds(60),
        endOfData: Duration = .seconds(300), reset: Duration = .seconds(30), quit: Duration = .seconds(10)
    ) {
        self.connect = connect
        self.tlsHandshake = tlsHandshake
        self.greeting = greeting
        self.ehlo = ehlo
        self.startTLS = startTLS
        self.authentication = authentication
        self.mailFrom = mailFrom
        self.recipient = recipient
        self.data = data
        self.endOfData = endOfData
        self.reset = reset
        self.quit = quit
    }

    /// The timeout of `step`.
    public subscript(step: SMTPError.Step) -> Duration {
        switch step {
        case .connect: return connect
        case .tlsHandshake: return tlsHandshake
        case .greeting: return greeting
        case .ehlo: return ehlo
        case .startTLS: return startTLS
        case .authentication: return authentication
        case .mailFrom: return mailFrom
        case .recipient: return recipient
        case .data: return data
        case .endOfData: return endOfData
        case .reset: return reset
        case .quit: return quit
        }
    }
}
