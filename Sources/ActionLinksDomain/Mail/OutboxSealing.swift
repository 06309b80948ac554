import Crypto
import Foundation

/// What the outbox keeps of a mail: everything its message is rendered from again at delivery,
/// the link and the sign-in code among them, so it is only ever stored sealed.
struct OutboxLetter: Codable, Sendable, Hashable {
    var mode: String
    var to: String
    var link: String
    var languageCode: String?
    var appName: String
    var signInCode: String?
}

/// Seals the outbox's letters (``Sealing``, purpose `actionlinks mail outbox v1`), the mail's ID
/// authenticated with each: a letter cannot be opened without the key, nor moved to another row.
struct OutboxSealing: Sendable {
    let sealing: Sealing

    init(formKey: SymmetricKey) {
        sealing = Sealing(formKey: formKey, purpose: "actionlinks mail outbox v1")
    }

    func seal(_ letter: OutboxLetter, id: String) throws -> Data {
        try sealing.seal(letter, context: id)
    }

    /// The letter, or `nil` when it does not open (another key, another row, a damaged value).
    func open(_ sealed: Data, id: String) -> OutboxLetter? {
        sealing.open(OutboxLetter.self, sealed, context: id)
    }
}
