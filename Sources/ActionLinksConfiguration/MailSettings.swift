/// How emails go out (`mail`).
public struct MailSettings: Sendable, Hashable {
    /// The delivery backend.
    public enum Backend: Sendable, Hashable {
        /// Print each message (and its link) to standard output: development only.
        case log
        /// Pipe each message to a sendmail-compatible command (`msmtp -t`, `sendmail -t -i`).
        case sendmail(command: [String])
        /// POST each message as JSON to a URL (an email API or a relay of your own).
        case webhook(url: String, bearerToken: String?)
    }

    /// The delivery backend (default `log`).
    public var backend = Backend.log
    /// The `From:` address.
    public var from = "ActionLinks <noreply@localhost>"
    /// How many times a failed delivery is tried in all before it is reported as failed.
    public var attempts = 5
    /// What the `log` backend prints of a mail (`mail.logContents`); `nil`: all of it on a
    /// development server, the links and codes withheld on a production one.
    public var logContents: LogContents?

    /// What the `log` backend prints.
    public enum LogContents: String, Sendable, Hashable, CaseIterable {
        /// The whole text, links and sign-in codes included.
        case full
        /// The text with every link and sign-in code withheld.
        case withheld
    }
}

extension MailSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case backend, from, sendmailCommand, webhookUrl, webhookToken, attempts, logContents
    }

    /// The names `mail.backend` takes.
    enum BackendName: String, CaseIterable {
        case log, sendmail, webhook
    }

    /// Reads `mail`; every key is read whatever the backend, so each variable is used.
    public init(from decoder: any Decoder) throws {
        let mail = try decoder.container(keyedBy: CodingKeys.self)
        from = try mail.string(.from) ?? from
        attempts = try mail.integer(.attempts, in: 1...20) ?? attempts
        logContents = try mail.choice(.logContents, as: LogContents.self)
        let name = try mail.choice(.backend, as: BackendName.self) ?? .log
        let command = try mail.string(.sendmailCommand) ?? "/usr/sbin/sendmail -t -i"
        let url = try mail.string(.webhookUrl)
        let token = try mail.string(.webhookToken)
        switch name {
        case .log:
            backend = .log
        case .sendmail:
            backend = .sendmail(command: command.split(separator: " ").map(String.init))
        case .webhook:
            guard let url, url.hasPrefix("https://") || url.hasPrefix("http://127.0.0.1") || url.hasPrefix("http://localhost") else {
                throw mail.problem(
                    .webhookUrl, "expected the https URL the webhook backend POSTs each message to (http only on 127.0.0.1 or localhost)")
            }
            backend = .webhook(url: url, bearerToken: token)
        }
    }
}
