import ActionLinks
import ActionLinksConfiguration
import Crypto
import Foundation
import Logging

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
    /// The outbox's ID of the mail: the left part of its `Message-ID`, the same at every attempt,
    /// so a receiver can drop a repeat.
    public var id: String = ""
}

/// Delivers one message. A thrown ``MailDeliveryError`` says whether a later try may succeed; any
/// other error counts as temporary (the deliverer tries again).
public typealias MailTransport = @Sendable (MailMessage) async throws -> Void

/// Turns each link into a mail waiting in the store's outbox (docs/ARCHITECTURE.md §13).
///
/// A mail is a letter: what its message is rendered from (the mode, the recipient, the link, the
/// language, the sign-in code), sealed (``OutboxSealing``), so the outbox never holds a link or a
/// code in clear. The issuer writes it with the link's code where there is one (``LinkIssueWrite/mail``),
/// else on its own (``enqueue(_:)``), before the request is answered; the ``MailDeliverer`` of
/// whichever instance claims it renders it with this server's templates and sends it.
public final class Mailer: Sendable {
    let settings: MailSettings
    let templates: PageTemplates
    let sealing: OutboxSealing
    let outbox: any MailOutboxStore
    let gateway: StoreGateway
    /// Tells this instance's deliverer that a mail was just written, so it goes at once.
    let written = WakeSignal()

    /// A mailer writing to `outbox`, sealing with a key derived from `formKey`.
    public init(settings: MailSettings, templates: PageTemplates, outbox: any MailOutboxStore, formKey: SymmetricKey, logger: Logger) {
        self.settings = settings
        self.templates = templates
        self.outbox = outbox
        sealing = OutboxSealing(formKey: formKey)
        gateway = StoreGateway(logger: logger)
    }

    /// The sealed mail of a link: `codeHash` is the link's code in this server's code store (the
    /// mail is not sent once it is used or voided), `expiresAt` the link's end (nor after it).
    package func letter(
        mode: ActionCodeLink.Mode, to recipient: String, link: String, languageCode: String?, appName: String, signInCode: String?,
        codeHash: Data?, expiresAt: Timestamp, now: Timestamp
    ) throws(ActionError) -> OutboxMail {
        let id = Secrets.hexID()
        let letter = OutboxLetter(
            mode: mode.rawValue, to: recipient, link: link, languageCode: languageCode, appName: appName, signInCode: signInCode)
        let sealed: Data
        do {
            sealed = try sealing.seal(letter, id: id)
        } catch {
            throw ActionError(.internalError, "the mail could not be sealed", cause: error)
        }
        return OutboxMail(id: id, sealed: sealed, codeHash: codeHash, createdAt: now, expiresAt: expiresAt, dueAt: now)
    }

    /// Writes `mail` to the outbox on its own (a link whose code is written elsewhere, or is not
    /// this server's) and tells the deliverer.
    package func enqueue(_ mail: OutboxMail) async throws(ActionError) {
        try await gateway.call { try await self.outbox.enqueue(mail) }
        wake()
    }

    /// Tells this instance's deliverer that a mail was written (with its link's code).
    package func wake() { written.signal() }

    /// The message of a sealed mail, rendered with this server's templates; `nil` when it does not
    /// open (another deployment's key).
    func message(of mail: OutboxMail) -> MailMessage? {
        guard let letter = sealing.open(mail.sealed, id: mail.id), let mode = ActionCodeLink.Mode(rawValue: letter.mode) else { return nil }
        var message = templates.mail(
            mode: mode, link: letter.link, email: letter.to, appName: letter.appName, languageCode: letter.languageCode,
            from: settings.from, signInCode: letter.signInCode)
        message.id = mail.id
        return message
    }
}
