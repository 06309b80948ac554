import ActionLinks
import ActionLinksChildProcess
import ActionLinksConfiguration
import ActionLinksSMTP
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import Synchronization

/// Why one delivery attempt failed, and whether a later attempt may succeed: a permanent failure
/// (the server refused the message or the address for good, 5xx) is given up at once; a temporary
/// one (unreachable, "try later", 4xx) is tried again, with backoff, for `mail.retryFor`.
public struct MailDeliveryError: Error, CustomStringConvertible {
    /// What happened (never the message's link or code).
    public let message: String
    /// Whether no later attempt can succeed.
    public let permanent: Bool

    /// Makes the value from each of its fields.
    public init(message: String, permanent: Bool) {
        self.message = message
        self.permanent = permanent
    }

    public var description: String { message }
}

/// The configured backends (`mail.backend`), each a ``MailTransport``.
enum MailBackends {
    /// The transport of `settings`' backend, and what stops it. `printsSecrets`: whether the `log`
    /// backend may print links and codes; `ehloName`: the name this server gives an SMTP server.
    static func transport(_ settings: MailSettings, printsSecrets: Bool, ehloName: String, logger: Logger) throws(ActionError) -> (
        MailTransport, stop: @Sendable () async -> Void
    ) {
        switch settings.backend {
        case .log: return ({ message in printMessage(message, withholding: !printsSecrets) }, {})
        case .sendmail(let command): return ({ message in try await pipe(message, to: command) }, {})
        case .webhook(let url, let token): return ({ message in try await post(message, to: url, bearerToken: token) }, {})
        case .smtp(let smtp):
            let client: SMTPClient
            do {
                client = try SMTPClient(server: server(smtp, ehloName: ehloName), maximumConnections: 2, logger: logger)
            } catch {
                throw ActionError(.internalError, "mail.smtp: \(error.message)")
            }
            return ({ message in try await send(message, with: client) }, { await client.shutdown() })
        }
    }

    /// The SMTP server `mail.smtp` names, with deadlines well inside a mail's lease
    /// (``MailDeliverer/lease``), so that a slow server never has two instances sending one mail.
    static func server(_ smtp: SMTPSettings, ehloName: String) -> SMTPServer {
        let security: SMTPServer.Security =
            switch smtp.security {
            case .startTLS: .startTLS
            case .tls: .tls
            case .none: .none
            }
        return SMTPServer(
            host: smtp.host, port: smtp.port, security: security,
            credentials: smtp.username.map { SMTPServer.Credentials(username: $0, password: smtp.password ?? "") },
            trust: smtp.caFile.map { .certificateAuthorities(pemFile: $0) } ?? .systemRoots, ehloName: ehloName,
            timeouts: SMTPTimeouts(
                connect: .seconds(10), tlsHandshake: .seconds(15), greeting: .seconds(20), ehlo: .seconds(20), startTLS: .seconds(20),
                authentication: .seconds(20), mailFrom: .seconds(20), recipient: .seconds(20), data: .seconds(20),
                endOfData: .seconds(30), reset: .seconds(10), quit: .seconds(5)))
    }

    /// The `smtp` backend: the message composed (``composed(_:)``) and sent to its recipient.
    static func send(_ message: MailMessage, with client: SMTPClient) async throws {
        let mail = try composed(message)
        let sender = MailAddress(parsing: message.from)?.address ?? message.from
        do {
            try await client.send(SMTPEnvelope(sender: sender, recipients: [message.to], message: mail.bytes))
        } catch let error as SMTPError {
            throw MailDeliveryError(message: "\(error)", permanent: error.isPermanent)
        }
    }

    /// The message as RFC 5322 bytes: `multipart/alternative`, UTF-8, RFC 2047 words of at most 75
    /// characters, its `Message-ID` the outbox's ID at the sender's domain, the same at every try.
    static func composed(_ message: MailMessage) throws(MailDeliveryError) -> ComposedMail {
        let from = MailAddress(parsing: message.from) ?? MailAddress(message.from)
        do {
            return try MailComposer.compose(
                OutgoingMail(
                    from: from, to: MailAddress(message.to), subject: message.subject, text: message.text, html: message.html,
                    messageID: message.id.isEmpty ? nil : message.id + "@" + (from.domain ?? "localhost")))
        } catch {
            throw MailDeliveryError(message: "the message cannot be written: \(error.message)", permanent: true)
        }
    }

    /// The `log` backend: a development server's prints the link (which logs never contain); a
    /// production server's withholds links and codes (`mail.logContents`).
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

    /// The `sendmail` backend: the whole message on the command's standard input; exit 0 is
    /// success, `EX_TEMPFAIL` (75, as msmtp and sendmail say "try later") or a stop a temporary
    /// failure, any other exit a permanent one.
    static func pipe(_ message: MailMessage, to command: [String]) async throws {
        let input = Data(try composed(message).bytes)
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
    /// Spawned with `posix_spawn` (``ChildProcess``), not Foundation's `Process`, whose `run()` in
    /// Swift 6.3.1 can crash the whole server (swift-corelibs-foundation #5472).
    private static func run(_ command: [String], input: Data) throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let stdin = Pipe()
        let stderr = Pipe()
        process.standardInput = .pipe(stdin)
        process.standardOutput = .nullDevice
        process.standardError = .pipe(stderr)
        do {
            try process.run()
        } catch {
            try? stdin.fileHandleForWriting.close()
            try? stderr.fileHandleForReading.close()
            throw MailDeliveryError(message: "cannot run \(command[0]): \(error)", permanent: true)
        }
        // Error output is read to its end as it comes, so a chatty command can never fill the pipe
        // and hang; the first 4 KB are kept for the log.
        let collected = ErrorOutput()
        let errorsRead = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let handle = stderr.fileHandleForReading
            while case let chunk = handle.availableData, !chunk.isEmpty { collected.append(chunk) }
            try? handle.close()
            errorsRead.signal()
        }
        let watchdog = DispatchWorkItem { process.terminate() }
        DispatchQueue.global().asyncAfter(deadline: .now() + commandTimeout, execute: watchdog)
        // A command that exits without reading its input leaves the write failing with EPIPE (the
        // signal is ignored); its exit status says what happened.
        try? stdin.fileHandleForWriting.write(contentsOf: input)
        try? stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        watchdog.cancel()
        errorsRead.wait()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let exited = process.terminationReason == .exit
            let how = exited ? "exited with \(process.terminationStatus)" : "was stopped by signal \(process.terminationStatus)"
            throw MailDeliveryError(
                message: "\(command[0]) \(how): \(collected.text.prefix(300))", permanent: exited && process.terminationStatus != 75)
        }
    }

    /// The `webhook` backend: `{"id","from","to","subject","text","html","mode"}` as JSON; any 2xx is success;
    /// 408, 425, 429 and 5xx are temporary failures, any other answer a permanent one.
    static func post(_ message: MailMessage, to url: String, bearerToken: String?) async throws {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if let bearerToken { request.headers.add(name: "Authorization", value: "Bearer " + bearerToken) }
        let body = WebhookMessage(
            id: message.id, from: message.from, to: message.to, subject: message.subject, text: message.text, html: message.html,
            mode: message.mode.rawValue)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        request.body = .bytes(ByteBuffer(bytes: try encoder.encode(body)))
        let response: HTTPClientResponse
        do {
            response = try await HTTPClient.shared.execute(request, timeout: webhookTimeout)
        } catch {
            throw MailDeliveryError(message: "the webhook \(url) could not be reached: \(error)", permanent: false)
        }
        // Read (at most 64 KB of) the answer so that the connection can be used again.
        _ = try? await response.body.collect(upTo: 64 * 1024)
        // 408, 425, 429 and 5xx say "later"; any other 4xx that this message will never go.
        let status = Int(response.status.code)
        guard (200..<300).contains(status) else {
            throw MailDeliveryError(
                message: "the webhook answered \(status)", permanent: (400..<500).contains(status) && ![408, 425, 429].contains(status))
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

/// What the webhook backend POSTs for each message.
struct WebhookMessage: Encodable, Sendable {
    /// The outbox's ID: the same at every attempt, so a relay can drop a repeat.
    var id: String
    var from: String
    var to: String
    var subject: String
    var text: String
    var html: String
    var mode: String
}
