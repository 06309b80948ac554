import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// One SMTP session: connected, greeted, secured and authenticated by ``open(to:tls:group:logger:)``,
/// then carrying messages one after another until ``quit()`` or a failure (which closes it).
final class SMTPConnection: Sendable {
    let channel: any Channel
    let server: SMTPServer
    let logger: Logger
    private let failure: ConnectionFailure

    private init(channel: any Channel, server: SMTPServer, logger: Logger, failure: ConnectionFailure) {
        self.channel = channel
        self.server = server
        self.logger = logger
        self.failure = failure
    }

    /// Connects to `server` and takes the conversation up to the point where MAIL FROM can be sent.
    static func open(
        to server: SMTPServer, tls: NIOSSLContext?, group: any EventLoopGroup, logger: Logger
    ) async throws(SMTPError) -> SMTPConnection {
        let endpoint = server.endpoint
        let implicitTLS = server.security == .tls ? tls : nil
        let serverHostname = server.isIPAddress ? nil : server.host
        let failure = ConnectionFailure()
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(TimeAmount(server.timeouts.connect))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let implicitTLS {
                        try pipeline.addHandler(NIOSSLClientHandler(context: implicitTLS, serverHostname: serverHostname))
                    }
                    try pipeline.addHandler(ByteToMessageHandler(SMTPReplyDecoder()))
                    try pipeline.addHandler(SMTPChannelHandler(endpoint: endpoint, failure: failure))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: server.host, port: server.port).get()
        } catch ChannelError.connectTimeout {
            throw SMTPError(
                code: .timedOut,
                message: "could not connect to \(endpoint) within \(server.timeouts.connect): is it reachable from here? Try again later",
                step: .connect)
        } catch {
            throw SMTPError(
                code: .connectionFailed,
                message:
                    "could not connect to \(endpoint): check the host and port, and that the server runs (try again later)",
                step: .connect, cause: error)
        }
        var logger = logger
        // The local port: the server's logs name the connection by it.
        logger[metadataKey: "smtp.connection"] = "\(channel.localAddress?.port ?? 0)"
        let connection = SMTPConnection(channel: channel, server: server, logger: logger, failure: failure)
        do {
            // Cancelling the send closes the channel, which ends whichever step is waiting.
            try await withTaskCancellationHandler {
                try await connection.start(tls: tls, serverHostname: serverHostname)
            } onCancel: {
                connection.close()
            }
        } catch {
            connection.close()
            throw error as? SMTPError ?? SMTPError(error, step: nil, endpoint: endpoint)
        }
        return connection
    }

    /// From the greeting to an authenticated session.
    private func start(tls: NIOSSLContext?, serverHostname: String?) async throws(SMTPError) {
        if server.security == .tls { try await tlsHandshake() }
        try await expect([220], sending: nil, step: .greeting)
        var extensions = try await hello()
        if server.security == .startTLS, let tls {
            guard extensions.startTLS else {
                await quit()
                throw SMTPError(
                    code: .startTLSUnavailable,
                    message:
                        "\(server.endpoint) does not offer STARTTLS, which security .startTLS requires; nothing was sent. Use "
                        + "the port that offers STARTTLS (587) or implicit TLS (465)",
                    step: .startTLS)
            }
            try await expect([220], from: "STARTTLS", step: .startTLS)
            do {
                try await channel.eventLoop.submit {
                    try self.channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: tls, serverHostname: serverHostname), position: .first)
                }.get()
            } catch {
                throw SMTPError(error, step: .tlsHandshake, endpoint: server.endpoint)
            }
            try await tlsHandshake()
            // RFC 3207 §4.2: what the server said before TLS is forgotten, and asked for again.
            extensions = try await hello()
        }
        if let credentials = server.credentials {
            try await authenticate(with: credentials, mechanisms: extensions.authenticationMechanisms)
        }
        logger.debug("smtp session ready", metadata: ["smtp.tls": "\(server.security != .none)"])
    }

    /// EHLO, or HELO where the server does not know EHLO and nothing beyond plain SMTP is needed.
    private func hello() async throws(SMTPError) -> SMTPExtensions {
        let reply = try await send("EHLO " + server.ehloName, step: .ehlo)
        if reply.code == 250 { return SMTPExtensions(ehloReply: reply) }
        if [500, 502].contains(reply.code), server.security != .startTLS, server.credentials == nil {
            try await expect([250], from: "HELO " + server.ehloName, step: .ehlo)
            return SMTPExtensions(ehloReply: SMTPReply(code: 250, lines: []))
        }
        throw unexpected(reply, step: .ehlo, expected: [250])
    }

    /// AUTH PLAIN where the server offers it, else AUTH LOGIN (RFC 4954).
    private func authenticate(with credentials: SMTPServer.Credentials, mechanisms: Set<String>) async throws(SMTPError) {
        let reply: SMTPReply
        if mechanisms.contains("PLAIN") {
            let response = Array("\0\(credentials.username)\0\(credentials.password)".utf8).base64
            reply = try await send("AUTH PLAIN " + response, step: .authentication)
        } else if mechanisms.contains("LOGIN") {
            try await expect([334], from: "AUTH LOGIN", step: .authentication)
            try await expect([334], from: Array(credentials.username.utf8).base64, step: .authentication)
            reply = try await send(Array(credentials.password.utf8).base64, step: .authentication)
        } else {
            let offered = mechanisms.isEmpty ? "no AUTH at all" : "AUTH " + mechanisms.sorted().joined(separator: " ")
            throw SMTPError(
                code: .authenticationUnavailable,
                message:
                    "\(server.endpoint) offers \(offered), and this client speaks only PLAIN and LOGIN: send without "
                    + "credentials or use a server that offers one of them",
                step: .authentication)
        }
        guard reply.code == 235 else {
            throw SMTPError(
                code: .authenticationFailed,
                message:
                    "\(server.endpoint) refused the credentials of user \"\(credentials.username)\" (\(reply.summary)): "
                    + (reply.code >= 500 ? "check the user name and password" : "try again later"),
                step: .authentication, replyCode: reply.code)
        }
        logger.debug("smtp authenticated", metadata: ["smtp.mechanism": "\(mechanisms.contains("PLAIN") ? "PLAIN" : "LOGIN")"])
    }

    /// Sends one message: MAIL FROM, RCPT TO for each recipient, DATA and the message (already made
    /// transparent by ``SMTPData/payload(of:)``).
    func send(from sender: String, to recipients: [String], payload: ByteBuffer) async throws(SMTPError) {
        try await expect([250], from: "MAIL FROM:<\(sender)>", step: .mailFrom)
        for recipient in recipients {
            try await expect([250, 251], from: "RCPT TO:<\(recipient)>", step: .recipient)
        }
        try await expect([354], from: "DATA", step: .data)
        try await expect([250], sending: payload, step: .endOfData)
        logger.debug("smtp message accepted", metadata: ["smtp.recipients": "\(recipients.count)"])
    }

    /// RSET: a pooled connection starts its next message from a clean state (and proves it is alive).
    func reset() async throws(SMTPError) {
        try await expect([250], from: "RSET", step: .reset)
    }

    /// QUIT, then close whatever the answer.
    func quit() async {
        do {
            try await expect([221], from: "QUIT", step: .quit)
        } catch {
            logger.debug("smtp QUIT failed", metadata: ["smtp.error": "\(error.code)"])
        }
        close()
    }

    /// Closes the connection at once.
    func close() {
        channel.close(promise: nil)
    }

    private func tlsHandshake() async throws(SMTPError) {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        write(SMTPRequest.tlsHandshake(timeout: TimeAmount(server.timeouts.tlsHandshake), promise: promise)) { promise.fail($0) }
        do {
            try await promise.futureResult.get()
        } catch {
            throw SMTPError(error, step: .tlsHandshake, endpoint: server.endpoint)
        }
    }

    private func expect(_ codes: Set<Int>, from command: String, step: SMTPError.Step) async throws(SMTPError) {
        try await expect(codes, sending: ByteBuffer(string: command + "\r\n"), step: step)
    }

    /// Sends `bytes` (nothing: waits for the greeting) and throws unless the reply's code is one of `codes`.
    private func expect(_ codes: Set<Int>, sending bytes: ByteBuffer?, step: SMTPError.Step) async throws(SMTPError) {
        let reply = try await exchange(bytes, step: step)
        guard codes.contains(reply.code) else { throw unexpected(reply, step: step, expected: codes) }
    }

    private func send(_ command: String, step: SMTPError.Step) async throws(SMTPError) -> SMTPReply {
        try await exchange(ByteBuffer(string: command + "\r\n"), step: step)
    }

    /// Sends `command` (nothing: waits for the greeting) and returns the reply.
    private func exchange(_ command: ByteBuffer?, step: SMTPError.Step) async throws(SMTPError) -> SMTPReply {
        let promise = channel.eventLoop.makePromise(of: SMTPReply.self)
        let timeout = TimeAmount(server.timeouts[step])
        write(SMTPRequest.reply(command: command, step: step, timeout: timeout, promise: promise)) { promise.fail($0) }
        do {
            let reply = try await promise.futureResult.get()
            logger.debug("smtp reply", metadata: ["smtp.step": "\(step)", "smtp.code": "\(reply.code)"])
            return reply
        } catch {
            throw SMTPError(error, step: step, endpoint: server.endpoint)
        }
    }

    /// Writes `request` to the channel handler; where the channel was closed before it got there, calls
    /// `fail` with the connection's first failure (a handshake refused before anyone waited for it).
    /// Where it got there, the handler has completed the request's promise first, and `fail` changes nothing.
    private func write(_ request: SMTPRequest, fail: @escaping @Sendable (SMTPError) -> Void) {
        let failure = self.failure
        let endpoint = server.endpoint
        let step = request.step
        channel.writeAndFlush(request).whenFailure { error in
            var error = failure.first ?? SMTPError(error, step: step, endpoint: endpoint)
            error.step = error.step ?? step
            fail(error)
        }
    }

    /// A reply that is not one of `expected`: a refusal (4xx temporary, 5xx permanent) or a protocol violation.
    private func unexpected(_ reply: SMTPReply, step: SMTPError.Step, expected: Set<Int>) -> SMTPError {
        guard reply.code >= 400 else {
            return SMTPError(
                code: .protocolViolation,
                message:
                    "\(server.endpoint) answered \(step) with \(reply.summary), where SMTP expects "
                    + expected.sorted().map(String.init).joined(separator: " or "),
                step: step, replyCode: reply.code)
        }
        let advice =
            reply.code >= 500
            ? "the server will not accept this as it is (see its reply)" : "the server asks to try again later"
        return SMTPError(
            code: .rejected, message: "\(server.endpoint) refused \(step) with \(reply.summary): \(advice)", step: step,
            replyCode: reply.code)
    }
}

/// What the server said it supports in its EHLO reply (RFC 5321 §4.1.1.1).
struct SMTPExtensions: Sendable, Hashable {
    /// Whether it offers STARTTLS.
    var startTLS = false
    /// The AUTH mechanisms it offers, upper-cased.
    var authenticationMechanisms: Set<String> = []

    /// Reads the extension lines (every line after the first) of an EHLO reply.
    init(ehloReply: SMTPReply) {
        for line in ehloReply.lines.dropFirst() {
            let words = line.uppercased().split(separator: " ")
            guard let keyword = words.first else { continue }
            if keyword == "STARTTLS" { startTLS = true }
            if keyword == "AUTH" { authenticationMechanisms.formUnion(words.dropFirst().map(String.init)) }
            // Some older servers still write `AUTH=LOGIN PLAIN`.
            if keyword.hasPrefix("AUTH=") {
                authenticationMechanisms.insert(String(keyword.dropFirst(5)))
                authenticationMechanisms.formUnion(words.dropFirst().map(String.init))
            }
        }
    }
}
