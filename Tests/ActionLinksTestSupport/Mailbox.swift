import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import Foundation
import Synchronization

/// Collects the mail a ``TestApp`` sends, in place of the configured backend: a test reads the
/// message (recipient, subject, text, HTML, mode) instead of the server's output.
public final class Mailbox: Sendable {
    private struct State {
        var messages: [MailMessage] = []
        /// How many messages to each address ``next(to:timeout:)`` has handed out.
        var taken: [String: Int] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// The transport to give the server: every message lands here.
    public var transport: MailTransport { { [self] message in state.withLock { $0.messages.append(message) } } }

    /// Every message received so far, oldest first.
    public var messages: [MailMessage] { state.withLock { $0.messages } }

    /// The messages to `address` received so far.
    public func messages(to address: String) -> [MailMessage] { messages.filter { $0.to == address } }

    /// Waits for the next message to `address` (one that no earlier call returned); the mailer
    /// delivers in the background, so a request's answer may come before its mail.
    public func next(to address: String, timeout: Duration = .seconds(60)) async throws -> MailMessage {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let message: MailMessage? = state.withLock { state in
                let index = state.taken[address, default: 0]
                let sent = state.messages.filter { $0.to == address }
                guard index < sent.count else { return nil }
                state.taken[address] = index + 1
                return sent[index]
            }
            if let message { return message }
            guard clock.now < deadline else {
                throw TestSupportError("no mail to \(address) within \(timeout); received: \(messages.map { "\($0.to): \($0.subject)" })")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The first link on the test link domain in a message's text.
    public static func link(in message: MailMessage) throws -> String {
        guard let line = message.text.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix(TestProject.linkOrigin + "/") })
        else { throw TestSupportError("no link in the mail to \(message.to): \(message.text)") }
        return String(line)
    }

    /// Waits for the next message to `address` and returns the link in it.
    public func nextLink(to address: String, timeout: Duration = .seconds(60)) async throws -> String {
        try Self.link(in: try await next(to: address, timeout: timeout))
    }
}
