import Crypto
import Foundation

/// The secrets that hash codes and sign forms: from the data directory, generated on first start
/// and kept across restarts, or from a shared key set (``KeySet``) that every instance mounts.
///
/// - `keys/codes/<n>.key`: HMAC keys for code hashes. The highest number hashes new codes; every
///   key still present is tried on lookup, so a rotation (add `<n+1>.key`) keeps links in flight.
/// - `keys/id-tokens/`: the RSA keys that sign ID tokens (``SigningKeys``).
/// - `keys/service-accounts/`: the public halves of service-account keys (``CustomTokenVerifier``).
/// - `keys/forms.key`: the HMAC key for the CSRF tokens of the pages' forms.
public struct ServerKeys: Sendable {
    /// Code HMAC keys, the newest first.
    public let codeKeys: [SymmetricKey]
    /// The form (CSRF) key.
    public let formKey: SymmetricKey
    /// An HMAC keyed with each code key, in the same order: copied for each hash, so the key's
    /// inner and outer pads are worked out once, not for every code.
    private let codeMACs: [HMAC<SHA256>]

    /// Loads the keys from `directory`, creating any that are missing (files 0600, folders 0700).
    ///
    /// A key file that the group or others may open stops the start: anyone who reads it can
    /// forge links, form tokens or ID tokens.
    public init(directory: String) throws {
        let fileManager = FileManager.default
        let keys = (directory as NSString).appendingPathComponent("keys")
        let codes = (keys as NSString).appendingPathComponent("codes")
        try PrivateFiles.makeDirectory(codes)

        var numbered: [(Int, SymmetricKey)] = []
        for name in try fileManager.contentsOfDirectory(atPath: codes) where name.hasSuffix(".key") {
            guard let number = Int(name.dropLast(4)) else { continue }
            numbered.append((number, try Self.readSymmetricKey((codes as NSString).appendingPathComponent(name))))
        }
        if numbered.isEmpty {
            numbered = [(1, try Self.symmetricKey((codes as NSString).appendingPathComponent("1.key")))]
        }
        codeKeys = numbered.sorted { $0.0 > $1.0 }.map(\.1)
        codeMACs = codeKeys.map { HMAC<SHA256>(key: $0) }

        formKey = try Self.symmetricKey((keys as NSString).appendingPathComponent("forms.key"))
    }

    /// The keys under `directory` when they are all there, read without making any (a server on a
    /// shared store never invents keys); `nil` when there are none.
    public static func existing(in directory: String) throws -> ServerKeys? {
        let keys = (directory as NSString).appendingPathComponent("keys")
        let codes = (keys as NSString).appendingPathComponent("codes")
        let form = (keys as NSString).appendingPathComponent("forms.key")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: codes)) ?? []
        var numbered: [(Int, SymmetricKey)] = []
        for name in names where name.hasSuffix(".key") {
            guard let number = Int(name.dropLast(4)) else { continue }
            numbered.append((number, try readSymmetricKey((codes as NSString).appendingPathComponent(name))))
        }
        guard !numbered.isEmpty, FileManager.default.fileExists(atPath: form) else { return nil }
        return ServerKeys(codeKeys: numbered.sorted { $0.0 > $1.0 }.map(\.1), formKey: try readSymmetricKey(form))
    }

    /// The code and form keys of a shared key set.
    public init(keySet: KeySet) {
        self.init(codeKeys: keySet.codeKeys, formKey: keySet.formKey)
    }

    /// Keys made in memory (tests, benchmarks).
    public init(codeKeys: [SymmetricKey], formKey: SymmetricKey) {
        self.codeKeys = codeKeys
        self.formKey = formKey
        codeMACs = codeKeys.map { HMAC<SHA256>(key: $0) }
    }

    /// Whether `other` holds the same code and form keys, in the same order.
    package func sameKeys(as other: ServerKeys) -> Bool {
        func bytes(_ key: SymmetricKey) -> Data { key.withUnsafeBytes { Data($0) } }
        return codeKeys.map(bytes) == other.codeKeys.map(bytes) && bytes(formKey) == bytes(other.formKey)
    }

    /// HMAC-SHA-256 of `code` under each accepted key, the one for new codes first.
    public func codeHashes(_ code: String) -> [Data] {
        codeMACs.map { Self.hash(code, $0) }
    }

    /// The hash a new code is stored under.
    public func newCodeHash(_ code: String) -> Data {
        Self.hash(code, codeMACs[0])
    }

    /// The same as `HMAC<SHA256>.authenticationCode(for: code, using: key)`, from the keyed state.
    private static func hash(_ code: String, _ keyed: HMAC<SHA256>) -> Data {
        var mac = keyed
        var code = code
        code.withUTF8 { mac.update(data: UnsafeRawBufferPointer($0)) }
        return Data(mac.finalize())
    }

    static func readSymmetricKey(_ path: String) throws -> SymmetricKey {
        try PrivateFiles.requirePrivate(path)
        let text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Data(base64Encoded: text), bytes.count >= 32 else {
            throw ServerKeysError(path: path, message: "expected at least 32 bytes in base64")
        }
        return SymmetricKey(data: bytes)
    }

    /// The key in `path`, made first if the file does not exist.
    static func symmetricKey(_ path: String) throws -> SymmetricKey {
        if !FileManager.default.fileExists(atPath: path) {
            let key = SymmetricKey(size: .bits256)
            try createSecret(Data(key.withUnsafeBytes { Data($0) }.base64EncodedString().utf8), at: path)
        }
        // Read back what is on disk: when several instances share the data directory and start
        // together, only the first one's new key lands, and every instance must use that one.
        return try readSymmetricKey(path)
    }

    /// Writes a new secret to `path` unless the file exists already (then it leaves it alone).
    ///
    /// The secret goes to a temporary file created 0600 (never readable by others, not even
    /// briefly), which is then hard-linked to `path`: `link` fails if `path` exists, so of several
    /// processes creating the same key at once exactly one wins and none overwrites another's.
    static func createSecret(_ data: Data, at path: String) throws {
        let temporary = path + ".new-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        try PrivateFiles.createFile(temporary, contents: data)
        defer { unlink(temporary) }
        if link(temporary, path) != 0, errno != EEXIST {
            throw ServerKeysError(path: path, message: "cannot create the file: \(String(cString: strerror(errno)))")
        }
    }
}

/// A key file that cannot be read or written.
public struct ServerKeysError: Error, CustomStringConvertible {
    /// The file.
    public let path: String
    /// What is wrong and what to do.
    public let message: String
    /// `path: message`.
    public var description: String { "\(path): \(message)" }
}
