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

/// Seals the outbox's letters with AES-256-GCM under a key of their own, derived with HKDF-SHA-256
/// from the server's form key (as the sign-in codes' keys are: ``SignInCodeKeys``), the mail's ID
/// authenticated with it: a letter cannot be opened without the key, nor moved to another row.
struct OutboxSealing: Sendable {
    let key: SymmetricKey

    init(formKey: SymmetricKey) {
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: formKey, info: Data("actionlinks mail outbox v1".utf8), outputByteCount: 32)
    }

    func seal(_ letter: OutboxLetter, id: String) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let combined = try AES.GCM.seal(try encoder.encode(letter), using: key, authenticating: Data(id.utf8)).combined else {
            throw CryptoKitError.incorrectParameterSize
        }
        return combined
    }

    /// The letter, or `nil` when it does not open (another key, another row, a damaged value).
    func open(_ sealed: Data, id: String) -> OutboxLetter? {
        guard let box = try? AES.GCM.SealedBox(combined: sealed),
            let plain = try? AES.GCM.open(box, using: key, authenticating: Data(id.utf8))
        else { return nil }
        return try? JSONDecoder().decode(OutboxLetter.self, from: plain)
    }
}
