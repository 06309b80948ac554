import Crypto
import Foundation

/// Values sealed with AES-256-GCM under a key of their own for each purpose, derived with
/// HKDF-SHA-256 from the server's form key (as the sign-in codes' keys are: ``SignInCodeKeys``),
/// with a context authenticated alongside (the row or account a value belongs to): a sealed value
/// cannot be opened without the key, read for another purpose, or moved to another context.
/// Every instance that shares the server's keys opens what another sealed.
struct Sealing: Sendable {
    let key: SymmetricKey

    /// The key for `purpose` (a fixed string naming the kind of value and its version).
    init(formKey: SymmetricKey, purpose: String) {
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: formKey, info: Data(purpose.utf8), outputByteCount: 32)
    }

    /// `value` as JSON, sealed with `context`.
    func seal<Value: Encodable>(_ value: Value, context: String) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try seal(bytes: try encoder.encode(value), context: context)
    }

    /// `bytes`, sealed with `context`.
    func seal(bytes: Data, context: String) throws -> Data {
        guard let combined = try AES.GCM.seal(bytes, using: key, authenticating: Data(context.utf8)).combined else {
            throw CryptoKitError.incorrectParameterSize
        }
        return combined
    }

    /// The value, or `nil` when it does not open (another key, purpose or context, a damaged value).
    func open<Value: Decodable>(_ type: Value.Type, _ sealed: Data, context: String) -> Value? {
        guard let plain = open(bytes: sealed, context: context) else { return nil }
        return try? JSONDecoder().decode(type, from: plain)
    }

    /// The bytes, or `nil` when they do not open.
    func open(bytes sealed: Data, context: String) -> Data? {
        guard let box = try? AES.GCM.SealedBox(combined: sealed) else { return nil }
        return try? AES.GCM.open(box, using: key, authenticating: Data(context.utf8))
    }
}
