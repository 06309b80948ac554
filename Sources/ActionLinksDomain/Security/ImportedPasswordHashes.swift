import Crypto
import CryptoExtras
import Foundation

/// Password hashes imported from Firebase (`firebase auth:export`, `accounts:batchCreate`), kept as
/// they came so migrated users keep their passwords: Firebase's modified scrypt, verified with the
/// project's hash parameters, and replaced by this server's own scrypt on the next sign-in.
///
/// Firebase's scrypt: `key = scrypt(password, salt + saltSeparator, N = 2^memCost, r = rounds,
/// p = 1, 32 bytes)`, and the stored hash is the project's signer key encrypted with AES-256-CTR
/// under `key` with a zero IV. Stored here as
/// `$firebase-scrypt$r=<rounds>,mem=<memCost>$<salt>$<hash>$<signer key>$<salt separator>`
/// (each part base64url).
public struct ImportedPasswordHashes: Sendable {
    /// One imported hash with its parameters.
    public struct Hash: Sendable, Hashable {
        public var salt: [UInt8]
        public var hash: [UInt8]
        public var signerKey: [UInt8]
        public var saltSeparator: [UInt8]
        public var rounds: Int
        public var memoryCost: Int

        /// The stored form.
        public var stored: String {
            "$firebase-scrypt$r=\(rounds),mem=\(memoryCost)$\(Base64URL.encode(salt))$\(Base64URL.encode(hash))$"
                + "\(Base64URL.encode(signerKey))$\(Base64URL.encode(saltSeparator))"
        }

        /// Whether the parameters are ones Firebase issues (`rounds` 1 to 8, `memoryCost` 1 to 14).
        public var hasValidParameters: Bool { (1...8).contains(rounds) && (1...14).contains(memoryCost) && !signerKey.isEmpty }
    }

    /// The imported hash `stored` holds, or `nil` when it is this server's own kind.
    public func parse(_ stored: String) -> Hash? {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 7, parts[0].isEmpty, parts[1] == "firebase-scrypt" else { return nil }
        var parameters: [String: Int] = [:]
        for pair in parts[2].split(separator: ",") {
            let item = pair.split(separator: "=")
            if item.count == 2, let value = Int(item[1]) { parameters[String(item[0])] = value }
        }
        guard let rounds = parameters["r"], let memoryCost = parameters["mem"], let salt = Base64URL.decode(parts[3]),
            let hash = Base64URL.decode(parts[4]), let signerKey = Base64URL.decode(parts[5]), let separator = Base64URL.decode(parts[6])
        else { return nil }
        let value = Hash(
            salt: Array(salt), hash: Array(hash), signerKey: Array(signerKey), saltSeparator: Array(separator), rounds: rounds,
            memoryCost: memoryCost)
        return value.hasValidParameters ? value : nil
    }

    /// Whether `password` matches (compared in constant time). The scrypt runs in `hasher`'s pool,
    /// so imported hashes count against the same memory bound.
    public func verify(_ password: String, against hash: Hash, hasher: PasswordHasher) async throws -> Bool {
        let key = try await hasher.scrypt(
            password: Array(password.utf8), salt: hash.salt + hash.saltSeparator, logRounds: hash.memoryCost, blockSize: hash.rounds,
            parallelism: 1)
        return ConstantTime.equal(try Self.encrypt(hash.signerKey, key: key), hash.hash)
    }

    /// Firebase's stored value for a key derived from a password: the signer key under AES-256-CTR.
    static func encrypt(_ signerKey: [UInt8], key: [UInt8]) throws -> [UInt8] {
        let sealed = try AES._CTR.encrypt(
            signerKey, using: SymmetricKey(data: key), nonce: AES._CTR.Nonce(nonceBytes: [UInt8](repeating: 0, count: 16)))
        return Array(sealed)
    }

    public init() {}
}
