import ActionLinks
import ActionLinksConfiguration
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// One rendered email.
public struct MailMessage: Sendable, Hashable {
    /// The recipient's address.
    public var to: String
    /// The `From:` header.
    public var from: String
    /// The subject.
    public var subject: String
    /// The plain-text part.
    public var text: String
    /// The HTML part.
    public var html: String
    /// The mode of the link in it (for logs and webhooks).
    public var mode: ActionCodeLink.Mode
}

/// Delivers one message; throwing means "not delivered" (the mailer retries with backoff).
public typealias MailTransport = @Sendable (MailMessage) async throws -> Void

/// Renders each link's email and delivers it in the background, retrying failures with backoff.
///
/// Requests never wait for delivery. On graceful shutdown the queue is drained before the process
/// exits. A message that fails every attempt is logged (without its link); the code stays valid and
/// stored, so the person can use a link sent again or ask for a new one.
public final class Mailer: Service, Sendable {
    let settings: MailSettings
    let templates: PageTemplates
    let logger: Logger
    let metrics: ServerMetrics?
    let deliver: @Sendable (MailMessage) async throws -> Void
    private let stream: AsyncStream<MailMessage>
    private let continuation: AsyncStream<MailMessage>.Continuation

    /// A mailer with the configured backend, or with `transport` instead of it (an in-memory
    /// mailbox in tests, which then read what was sent instead of the server's output).
    /// `printsSecrets`: whether the `log` backend may print links and codes (a development server);
    /// a production server's platform keeps its output in logs many people read.
    public init(
        settings: MailSettings, templates: PageTemplates, metrics: ServerMetrics? = nil, transport: MailTransport? = nil,
        printsSecrets: Bool = true, logger: Logger
    ) {
        self.settings = settings
        self.templates = templates
        self.metrics = metrics
        self.logger = logger
        (stream, continuation) = AsyncStream.makeStream(of: MailMessage.self)
        if let transport {
            deliver = transport
            return
        }
        switch settings.backend {
        case .log: deliver = { message in Self.printMessage(message, withholding: !printsSecrets) }
        case .sendmail(let command): deliver = { message in try await Self.pipe(message, to: command) }
        case .webhook(let url, let token): deliver = { message in try await Self.post(message, to: url, bearerToken: token) }
        }
    }

    /// Renders the email for a link (with its sign-in code, for a sign-in link when codes are on)
    /// and queues it.
    public func send(
        mode: ActionCodeLink.Mode, to recipient: String, link: String, languageCode: String?, appName: String, signInCode: String? = nil
    ) async {
        queue(mode: mode, to: recipient, link: link, languageCode: languageCode, appName: appName, signInCode: signInCode)
    }

    /// ``send(mode:to:link:languageCode:appName:signInCode:)`` from a caller that is not a task:
    /// the message is rendered and queued, and delivered by ``run()``.
    func queue(
        mode: ActionCodeLink.Mode, to recipient: String, link: String, languageCode: String?, appName: String, signInCode: String? = nil
    ) {
        continuation.yield(
            render(mode: mode, to: recipient, link: link, languageCode: languageCode, appName: appName, signInCode: signInCode))
    }

    /// The message `send` would queue.
    func render(
        mode: ActionCodeLink.Mode, to recipient: String, link: String, languageCode: String?, appName: String, signInCode: String? = nil
    ) -> MailMessage {
        templates.mail(
            mode: mode, link: link, email: recipient, appName: appName, languageCode: languageCode, from: settings.from,
            signInCode: signInCode)
    }

    /// Delivers queued messages until graceful shutdown, then delivers what is left and returns.
    public func run() async throws {
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                var inFlight = 0
                for await message in stream {
                    if inFlight >= 8 {
                        await group.next()
                        inFlight -= 1
                    }
                    inFlight += 1
                    group.addTask { await self.deliverWithRetries(message) }
                }
            }
        } onGracefulShutdown: {
            self.continuation.finish()
        }
    }

    func deliverWithRetries(_ message: MailMessage) async {
        var delay: Duration = .seconds(1)
        for attempt in 1...settings.attempts {
            do {
                try await deliver(message)
                metrics?.mailOutcome(delivered: true, final: true)
                logger.info("mail delivered", metadata: ["mode": "\(message.mode.rawValue)", "attempt": "\(attempt)"])
                return
            } catch {
                metrics?.mailOutcome(delivered: false, final: attempt == settings.attempts)
                logger.warning(
                    "mail delivery failed", metadata: ["mode": "\(message.mode.rawValue)", "attempt": "\(attempt)", "error": "\(error)"])
                if attempt < settings.attempts {
                    try? await Task.sleep(for: delay)
                    delay = min(delay * 2, .seconds(60))
                }
            }
        }
        logger.error(
            "mail not delivered after every attempt; the link stays valid and a new one can be requested",
            metadata: ["mode": "\(message.mode.rawValue)", "attempts": "\(settings.attempts)"])
    }

    // MARK: Backends

    /// The `log` backend: development only, so it prints the link (which logs never contain).
    static func printMessage(_ message: MailMessage, withholding: Bool = false) {
        let body = withholding ? withheld(message.text) : message.text
        let text = "--- mail to \(message.to): \(message.subject)\n\(body)\n---\n"
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// `text` with every link and every sign-in code's line of digit groups withheld: what the `log`
    /// backend prints on a production server, whose output ends up in logs (Cloud Logging keeps
    /// standard output too).
    static func withheld(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let visible = line.unicodeScalars.filter { $0 != "\u{2066}" && $0 != "\u{2069}" }
            if visible.count(where: { $0.properties.numericType == .decimal }) >= 6,
                visible.allSatisfy({ $0.properties.numericType == .decimal || $0 == " " })
            {
                return "<sign-in code withheld>"
            }
            return line.split(separator: " ", omittingEmptySubsequences: false).map { $0.contains("://") ? "<link withheld>" : String($0) }
                .joined(separator: " ")
        }.joined(separator: "\n")
    }

    /// The `sendmail` backend: the whole message on the command's standard input; exit 0 is success.
    static func pipe(_ message: MailMessage, to command: [String]) async throws {
        let input = Data(MIMEMessage.render(message).utf8)
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            // Blocking reads and writes on threads of their own: a slow command never holds one of the
            // few cooperative threads, and no dispatch source watches the pipes (tearing down a
            // FileHandle's readabilityHandler was seen to crash Linux's libdispatch in
            // _dispatch_event_loop_drain).
            Thread.detachNewThread {
                do {
                    try run(command, input: input)
                    done.resume()
                } catch {
                    done.resume(throwing: error)
                }
            }
        }
    }

    /// How long a sendmail command may run before it is stopped and the attempt counts as failed.
    static let commandTimeout: TimeInterval = 60

    /// Runs `command` with `input` on its standard input and waits for it (on the calling thread).
    private static func run(_ command: [String], input: Data) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let stdin = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr
        do {
            try process.run()
        } catch {
            throw MailDeliveryError(message: "cannot run \(command[0]): \(error)")
        }
        // Error output is read to its end as it comes, so a chatty command can never fill the pipe
        // and hang; the first 4 KB are kept for the log.
        let collected = ErrorOutput()
        let errorsRead = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let handle = stderr.fileHandleForReading
            while case let chunk = handle.availableData, !chunk.isEmpty { collected.append(chunk) }
            errorsRead.signal()
        }
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + commandTimeout, execute: watchdog)
        // A command that exits without reading its input leaves the write failing with EPIPE (the
        // signal is ignored); its exit status says what happened.
        try? stdin.fileHandleForWriting.write(contentsOf: input)
        try? stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        watchdog.cancel()
        errorsRead.wait()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let how =
                process.terminationReason == .exit
                ? "exited with \(process.terminationStatus)" : "was stopped by signal \(process.terminationStatus)"
            throw MailDeliveryError(message: "\(command[0]) \(how): \(collected.text.prefix(300))")
        }
    }

    /// The `webhook` backend: `{"from","to","subject","text","html","mode"}` as JSON; any 2xx is success.
    static func post(_ message: MailMessage, to url: String, bearerToken: String?) async throws {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if let bearerToken { request.headers.add(name: "Authorization", value: "Bearer " + bearerToken) }
        let body = WebhookMessage(
            from: message.from, to: message.to, subject: message.subject, text: message.text, html: message.html,
            mode: message.mode.rawValue)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        request.body = .bytes(ByteBuffer(bytes: try encoder.encode(body)))
        let response: HTTPClientResponse
        do {
            response = try await HTTPClient.shared.execute(request, timeout: webhookTimeout)
        } catch {
            throw MailDeliveryError(message: "the webhook \(url) could not be reached: \(error)")
        }
        // Read (at most 64 KB of) the answer so that the connection can be used again.
        _ = try? await response.body.collect(upTo: 64 * 1024)
        guard (200..<300).contains(response.status.code) else {
            throw MailDeliveryError(message: "the webhook answered \(response.status.code)")
        }
    }

    /// How long a webhook delivery may take before the attempt counts as failed (and is retried).
    static let webhookTimeout: TimeAmount = .seconds(15)
}

/// A command's error output, gathered while it runs (the first 4 KB).
final class ErrorOutput: Sendable {
    private let data = Mutex(Data())
    func append(_ chunk: Data) { data.withLock { if $0.count < 4096 { $0.append(chunk.prefix(4096 - $0.count)) } } }
    var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }
}

/// Why one delivery attempt failed.
struct MailDeliveryError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// RFC 5322 / MIME rendering of a message: multipart/alternative, UTF-8, base64 bodies.
enum MIMEMessage {
    static func render(_ message: MailMessage, date: Date = Date()) -> String {
        let boundary = "=_" + Secrets.token().prefix(24)
        let domain =
            message.from.split(separator: "@").last.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "> ")) } ?? "localhost"
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        var lines = [
            "From: " + message.from,
            "To: " + message.to,
            "Subject: " + encodedWord(message.subject),
            "Date: " + formatter.string(from: date),
            "Message-ID: <\(Secrets.token().prefix(32))@\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
        ]
        for (type, body) in [("text/plain", message.text), ("text/html", message.html)] {
            lines += ["--" + boundary, "Content-Type: \(type); charset=UTF-8", "Content-Transfer-Encoding: base64", ""]
            lines += wrapped(Data(body.utf8).base64EncodedString())
        }
        lines.append("--" + boundary + "--")
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// RFC 2047 encoded word when the text is not plain ASCII.
    static func encodedWord(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
        return "=?UTF-8?B?" + Data(text.utf8).base64EncodedString() + "?="
    }

    static func wrapped(_ text: String) -> [String] {
        var lines: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(76)))
            rest = rest.dropFirst(76)
        }
        return lines
    }
}

/// What the webhook backend POSTs for each message.
struct WebhookMessage: Encodable, Sendable {
    var from: String
    var to: String
    var subject: String
    var text: String
    var html: String
    var mode: String
}
