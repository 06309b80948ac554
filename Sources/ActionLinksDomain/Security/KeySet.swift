import Crypto
import CryptoExtras
import Foundation

/// Every key that the instances of one deployment must share, as one secret: the code HMAC keys,
/// the form key (form tokens, cookies and, through HKDF, the sign-in codes' keys) and the RSA keys
/// that sign ID tokens. `actionlinks keys init` makes it; the server reads it from `keys.file` (a
/// mounted secret, re-read when it changes, so a rotation reaches every instance) or `keys.json`
/// (an environment variable) instead of generating keys under the data directory.
///
/// The JSON document:
/// `{"format": "actionlinks-keys/1", "codeKeys": [<base64>, …], "formKey": <base64>,
///   "idTokenKeys": [{"createdAt": <seconds>, "pem": <PEM>}, …]}`, code keys newest first.
public struct KeySet: Sendable {
    /// One RSA key that signs ID tokens, with when it was made (the newest signs).
    public struct IDTokenKey: Sendable, Hashable, Codable {
        /// When the key was made, in seconds since 1970.
        public var createdAt: Int64
        /// The private key, PEM.
        public var pem: String
    }

    /// HMAC keys for code hashes, the one for new codes first.
    public var codeKeys: [SymmetricKey]
    /// The form key.
    public var formKey: SymmetricKey
    /// The ID-token signing keys, the newest first.
    public var idTokenKeys: [IDTokenKey]

    /// The format's name and version, the document's first field.
    static let format = "actionlinks-keys/1"

    /// A new set: one code key, a form key and one ID-token key made `now`.
    public static func make(now: Timestamp) throws -> KeySet {
        KeySet(
            codeKeys: [SymmetricKey(size: .bits256)], formKey: SymmetricKey(size: .bits256),
            idTokenKeys: [try newIDTokenKey(createdAt: now.seconds)])
    }

    /// The set with a new ID-token key made `now`, which signs from then on; keys older than
    /// `keep` behind their successor (what the server no longer publishes) are left out.
    public func rotated(now: Timestamp, keep: Int64 = 15 * 86_400) throws -> KeySet {
        let newest = idTokenKeys.first?.createdAt ?? 0
        let created = max(now.seconds, newest + 1)
        var keys = [try Self.newIDTokenKey(createdAt: created)]
        // A key is still needed while tokens it signed live: until `keep` after the next one took over.
        var successor = created
        for key in idTokenKeys {
            if now.seconds - successor < keep { keys.append(key) }
            successor = key.createdAt
        }
        var set = self
        set.idTokenKeys = keys
        return set
    }

    static func newIDTokenKey(createdAt: Int64) throws -> IDTokenKey {
        IDTokenKey(createdAt: createdAt, pem: try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation)
    }

    /// Makes the value from each of its fields.
    public init(codeKeys: [SymmetricKey], formKey: SymmetricKey, idTokenKeys: [IDTokenKey]) {
        self.codeKeys = codeKeys
        self.formKey = formKey
        self.idTokenKeys = idTokenKeys.sorted { $0.createdAt > $1.createdAt }
    }

    /// The document's shape.
    private struct Document: Codable {
        var format: String?
        var codeKeys: [String]?
        var formKey: String?
        var idTokenKeys: [IDTokenKey]?
    }

    /// Reads a set; `source` names it in errors (a file, or the variable it came from).
    public init(json: Data, source: String) throws(KeySetError) {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: json)
        } catch {
            throw KeySetError(source: source, message: "expected the JSON that `actionlinks keys init` prints (\(error))")
        }
        guard document.format == Self.format else {
            throw KeySetError(
                source: source, message: "expected \"format\": \"\(Self.format)\"; got \(document.format.map { "\"\($0)\"" } ?? "none")")
        }
        func key(_ text: String, _ name: String) throws(KeySetError) -> SymmetricKey {
            guard let bytes = Data(base64Encoded: text), bytes.count >= 32 else {
                throw KeySetError(source: source, message: "\(name): expected at least 32 bytes in base64")
            }
            return SymmetricKey(data: bytes)
        }
        guard let codes = document.codeKeys, !codes.isEmpty else {
            throw KeySetError(source: source, message: "codeKeys: expected at least one key")
        }
        codeKeys = []
        for (index, text) in codes.enumerated() { codeKeys.append(try key(text, "codeKeys[\(index)]")) }
        guard let form = document.formKey else { throw KeySetError(source: source, message: "formKey: expected a key") }
        formKey = try key(form, "formKey")
        guard let signing = document.idTokenKeys, !signing.isEmpty else {
            throw KeySetError(source: source, message: "idTokenKeys: expected at least one key")
        }
        for (index, entry) in signing.enumerated() {
            guard (try? _RSA.Signing.PrivateKey(pemRepresentation: entry.pem))?.keySizeInBits ?? 0 >= 2048 else {
                throw KeySetError(source: source, message: "idTokenKeys[\(index)].pem: expected a PEM RSA private key of 2048 bits or more")
            }
        }
        idTokenKeys = signing.sorted { $0.createdAt > $1.createdAt }
    }

    /// The JSON document (keys sorted, one line), as `actionlinks keys init` prints it.
    public func json() throws -> Data {
        func base64(_ key: SymmetricKey) -> String { key.withUnsafeBytes { Data($0) }.base64EncodedString() }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(
            Document(format: Self.format, codeKeys: codeKeys.map(base64), formKey: base64(formKey), idTokenKeys: idTokenKeys))
    }

    /// The keys a data directory holds (`keys/codes/<n>.key`, `keys/forms.key`,
    /// `keys/id-tokens/<made>.pem`), as a set: moving a deployment to a shared secret this way keeps
    /// every link, form and token in flight valid.
    public static func read(dataDirectory: String) throws -> KeySet {
        guard let server = try ServerKeys.existing(in: dataDirectory) else {
            throw KeySetError(source: dataDirectory, message: "there are no keys under \(dataDirectory)/keys to pack")
        }
        return KeySet(
            codeKeys: server.codeKeys, formKey: server.formKey,
            idTokenKeys: try SigningKeys.files(in: (dataDirectory as NSString).appendingPathComponent("keys/id-tokens")))
    }
}

/// Where a server's shared keys come from (`keys`).
public enum KeySetSource: Sendable, Hashable {
    /// A file, usually a mounted secret, read again when it changes.
    case file(String)
    /// The set itself, from an environment variable (`ACTIONLINKS_KEYS_JSON`).
    case inline(String)

    /// Reads the set (a file must be the server user's alone, or a platform's read-only mount).
    public func read() throws -> KeySet {
        switch self {
        case .file(let path):
            try PrivateFiles.requirePrivate(path)
            do {
                return try KeySet(json: try Data(contentsOf: URL(fileURLWithPath: path)), source: path)
            } catch let error as KeySetError {
                throw error
            } catch {
                throw KeySetError(source: path, message: "cannot read the file: \(error.localizedDescription)")
            }
        case .inline(let text):
            return try KeySet(json: Data(text.utf8), source: "keys.json (ACTIONLINKS_KEYS_JSON)")
        }
    }
}

/// A key set that cannot be used.
public struct KeySetError: Error, CustomStringConvertible {
    /// The file or variable.
    public let source: String
    /// What is wrong and what to do.
    public let message: String
    /// `source: message`.
    public var description: String { "\(source): \(message)" }
}
