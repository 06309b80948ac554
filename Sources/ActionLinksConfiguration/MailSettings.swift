import ActionLinks
import Foundation

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
        /// Send each message to an SMTP server (`mail.smtp`).
        case smtp(SMTPSettings)
    }

    /// The delivery backend (default `log`).
    public var backend = Backend.log
    /// The `From:` address.
    public var from = "ActionLinks <noreply@localhost>"
    /// How long a mail that could not be delivered yet (the backend was unreachable, or answered
    /// "try later") is retried, with backoff, before it is given up (`mail.retryFor`, default 1 h).
    public var retryFor = 3600
    /// How old the oldest waiting mail may be before `/readyz` says so (`mail.backlogAlarm`, 15 min).
    public var backlogAlarm = 900
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

/// An SMTP server to send through (`mail.smtp`).
public struct SMTPSettings: Sendable, Hashable {
    /// How the connection is protected.
    public enum Security: String, Sendable, Hashable {
        /// STARTTLS on a plain connection, required (`smtp://`, port 587 by default).
        case startTLS
        /// TLS from the first byte (`smtps://`, port 465 by default).
        case tls
        /// None (`smtp://…?tls=none`): only to a server on this machine.
        case none
    }

    /// The server's host name or address.
    public var host: String
    /// Its port.
    public var port: Int
    /// How the connection is protected.
    public var security: Security
    /// The user to authenticate as (AUTH PLAIN or LOGIN), if any.
    public var username: String?
    /// The user's password (from `mail.smtp.passwordFile` or `mail.smtp.password`).
    public var password: String?
    /// Certificate authorities to trust instead of the system's (PEM), `mail.smtp.caFile`.
    public var caFile: String?

    /// `smtp[s]://[user@]host[:port]`: the URL without the password, for logs.
    public var description: String {
        "\(security == .tls ? "smtps" : "smtp")://\(username.map { $0 + "@" } ?? "")\(host):\(port)\(security == .none ? "?tls=none" : "")"
    }
}

extension MailSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case backend, from, sendmailCommand, webhookUrl, webhookToken, attempts, logContents, smtp, retryFor, backlogAlarm
    }

    enum SMTPKeys: String, CodingKey, CaseIterable {
        case url, password, passwordFile, caFile
    }

    /// The names `mail.backend` takes.
    enum BackendName: String, CaseIterable {
        case log, sendmail, webhook, smtp
    }

    /// Reads `mail`; every key is read whatever the backend, so each variable is used.
    public init(from decoder: any Decoder) throws {
        let mail = try decoder.container(keyedBy: CodingKeys.self)
        from = try mail.string(.from) ?? from
        if try mail.integer(.attempts, in: 0...1_000_000) != nil {
            throw mail.problem(
                .attempts,
                "mail.attempts is gone: every mail waits in the store's outbox and is retried for mail.retryFor (default 1h); remove attempts"
            )
        }
        retryFor = try mail.duration(.retryFor, in: 60...(7 * 86400), kind: "a retry period", examples: "30m, 1h or 1d") ?? retryFor
        backlogAlarm = try mail.duration(.backlogAlarm, in: 10...86400, kind: "an age", examples: "5m or 1h") ?? backlogAlarm
        logContents = try mail.choice(.logContents, as: LogContents.self)
        let name = try mail.choice(.backend, as: BackendName.self) ?? .log
        let command = try mail.string(.sendmailCommand) ?? "/usr/sbin/sendmail -t -i"
        let url = try mail.string(.webhookUrl)
        let token = try mail.string(.webhookToken)
        let smtp = try Self.smtp(try mail.nestedContainer(keyedBy: SMTPKeys.self, forKey: .smtp), required: name == .smtp)
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
        case .smtp:
            guard let smtp else { throw mail.problem(.smtp, "expected mail.smtp.url, such as smtp://user@smtp.example.com:587") }
            backend = .smtp(smtp)
        }
    }

    /// Reads `mail.smtp` (every key, whatever the backend); `nil` without a URL.
    static func smtp(_ smtp: KeyedDecodingContainer<SMTPKeys>, required: Bool) throws -> SMTPSettings? {
        let password = try smtp.string(.password)
        let passwordFile = try smtp.string(.passwordFile)
        let caFile = try smtp.string(.caFile)
        guard let text = try smtp.string(.url) else { return nil }
        let expected =
            "expected smtp://[user@]host[:port] (STARTTLS required, port 587), smtps://[user@]host[:port] (TLS, port 465) or smtp://host:25?tls=none (a server on this machine only), with the password in mail.smtp.passwordFile"
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "smtp" || scheme == "smtps", let host = components.host, !host.isEmpty
        else { throw smtp.problem(.url, expected + "; got '\(text)'") }
        guard components.password == nil else {
            throw smtp.problem(.url, "the URL holds a password, which would show wherever the URL does; put it in mail.smtp.passwordFile")
        }
        guard components.path.isEmpty || components.path == "/" else { throw smtp.problem(.url, expected + "; got '\(text)'") }
        var security: SMTPSettings.Security = scheme == "smtps" ? .tls : .startTLS
        for item in components.queryItems ?? [] {
            guard item.name == "tls", item.value == "none", scheme == "smtp" else {
                throw smtp.problem(.url, "the only parameter is tls=none (smtp:// to a server on this machine); got '\(item.name)'")
            }
            security = .none
        }
        if security == .none, !Loopback.isLoopback(host) {
            throw smtp.problem(
                .url, "tls=none sends the password and every link in clear, so only to a server on this machine; \(host) is not")
        }
        let port = components.port ?? (security == .tls ? 465 : security == .none ? 25 : 587)
        guard (1...65535).contains(port) else { throw smtp.problem(.url, "the port must be 1-65535") }
        if password != nil, passwordFile != nil {
            throw smtp.problem(.password, "expected either mail.smtp.password or mail.smtp.passwordFile, not both")
        }
        var secret = password
        if let passwordFile {
            let data = try OwnerOnlyFile.read(
                passwordFile, at: smtp.codingPath + [SMTPKeys.passwordFile], what: "the SMTP password file", holds: "a password")
            secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let user = components.user?.removingPercentEncoding
        if secret != nil, user == nil {
            throw smtp.problem(.url, "a password is given but the URL names no user: smtp://user@host:587")
        }
        if user != nil, secret == nil, required {
            throw smtp.problem(.passwordFile, "the URL names user '\(user ?? "")' but no password is given (mail.smtp.passwordFile)")
        }
        return SMTPSettings(host: host, port: port, security: security, username: user, password: secret, caFile: caFile)
    }
}
