import Crypto
import CryptoExtras
import Foundation
import JWTKit
import Synchronization

/// The RSA keys that sign ID tokens and session cookies (RS256 with a `kid`, as Firebase's), kept
/// in `keys/id-tokens/<created>.pem` under the data directory (files 0600), and their public
/// halves as a JWKS (`/.well-known/jwks.json`).
///
/// The newest key signs. Keys rotate: when the newest is older than `rotation`, a new one is made
/// and signs from then on, while the older ones stay published (and accepted) for `retention`,
/// long enough for every token they signed to expire (a session cookie lives 14 days at most).
/// Several instances on one store share one key set instead (``KeySet``, `keys.file`): its keys are
/// read, never written, and a new version of the set (`actionlinks keys rotate --key-set`) is
/// taken up by every instance when it re-reads the file.
public final class SigningKeys: Sendable {
    /// One key.
    struct Key: Sendable {
        var id: String
        /// When the key was made (seconds).
        var createdAt: Int64
        var privateKey: JWTKit.Insecure.RSA.PrivateKey
        var jwk: PublicJWK
        /// The same key, signing RS256 JWTs without JWTKit's actor and header encoding.
        var signer: JWTSigner
    }

    /// Signs RS256 JWTs with one key: the header (`alg`, `kid`, `typ`) is encoded once, the
    /// payload with one shared encoder, and the signature made by OpenSSL (``OpenSSLRSASigner``) on
    /// the caller's thread (no actor hop). Tokens verify with JWTKit and any JWT library, as before.
    struct JWTSigner: Sendable {
        let signer: OpenSSLRSASigner
        /// `base64url(header) + "."`.
        let encodedHeader: [UInt8]

        init(pem: String, kid: String) throws {
            signer = try OpenSSLRSASigner(pem: pem)
            let header = try JSONSerialization.data(withJSONObject: ["alg": "RS256", "kid": kid, "typ": "JWT"], options: [.sortedKeys])
            encodedHeader = Array(Base64URL.encode(header).utf8) + [UInt8(ascii: ".")]
        }

        /// JWTKit's payload encoding (`JSONEncoder` with dates in seconds), one instance for all calls.
        static let encoder: JSONEncoder = {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .secondsSince1970
            return encoder
        }()

        /// A signed JWT of `payload`.
        func sign(_ payload: some Encodable) throws -> String {
            try sign(json: Array(try Self.encoder.encode(payload)))
        }

        /// A signed JWT of ID token claims (written directly, see ``IDTokenClaims/directJSON``).
        func sign(_ claims: IDTokenClaims) throws -> String {
            try sign(json: claims.directJSON ?? Array(try Self.encoder.encode(claims)))
        }

        /// A signed JWT of the payload `json`.
        private func sign(json: [UInt8]) throws -> String {
            var token = encodedHeader
            token.reserveCapacity(encodedHeader.count + (json.count * 4 + 2) / 3 + 1 + (signer.signatureLength * 4 + 2) / 3)
            token.append(contentsOf: Base64URL.encode(json).utf8)
            var signature: [UInt8] = []
            signature.reserveCapacity(signer.signatureLength)
            try SHA256.hash(data: token).withUnsafeBytes { digest in try signer.sign(digest: digest, appendingTo: &signature) }
            token.append(UInt8(ascii: "."))
            token.append(contentsOf: Base64URL.encode(signature).utf8)
            return String(decoding: token, as: UTF8.self)
        }
    }

    /// What signs and verifies at the moment.
    struct Current: Sendable {
        /// Published keys, the signing one first.
        var keys: [Key]
        var collection: JWTKeyCollection
        /// The JWKS document (the HTTP layer answers it with its ETag).
        var jwks: [UInt8]
    }

    /// Where the keys are.
    public enum Origin: Sendable, Hashable {
        /// PEM files in a folder; `makes`: the server makes the first key and the rotated ones
        /// (a server on a shared store only reads what is there).
        case directory(String, makes: Bool)
        /// A shared key set, read again at every refresh; never written.
        case keySet(KeySetSource)
    }

    package let origin: Origin
    /// Seconds after which a new key is made (0: never).
    let rotation: Int64
    /// Seconds an older key stays published after a newer one signs.
    let retention: Int64
    private let current: Mutex<Current?> = Mutex(nil)

    /// The keys in `directory` (made when there are none).
    public convenience init(directory: String, rotation: Int64 = 30 * 86_400, retention: Int64 = 15 * 86_400) {
        self.init(origin: .directory(directory, makes: true), rotation: rotation, retention: retention)
    }

    /// The keys at `origin`.
    public init(origin: Origin, rotation: Int64 = 30 * 86_400, retention: Int64 = 15 * 86_400) {
        self.origin = origin
        self.rotation = rotation
        self.retention = retention
    }

    /// Reads the keys, makes the first key or a rotated one when due (in a folder the server makes
    /// keys in), and publishes the result.
    public func refresh(now: Timestamp) async throws {
        let seconds = now.seconds
        var keys: [Key]
        switch origin {
        case .keySet(let source):
            keys = try source.read().idTokenKeys.map { try Self.key(pem: $0.pem, createdAt: $0.createdAt, source: "idTokenKeys") }
        case .directory(let directory, let makes):
            func load() throws -> [Key] {
                try Self.files(in: directory).map {
                    try Self.key(pem: $0.pem, createdAt: $0.createdAt, source: "\(directory)/\($0.createdAt).pem")
                }
            }
            if makes { try PrivateFiles.makeDirectory(directory) }
            keys = try load()
            if makes, keys.isEmpty || (rotation > 0 && seconds - keys[0].createdAt >= rotation) {
                // Read back what is on disk: another process may have made the same file first.
                try Self.makeKey(in: directory, createdAt: max(seconds, (keys.first?.createdAt ?? 0) + 1))
                keys = try load()
            }
        }
        guard !keys.isEmpty else {
            throw SigningKeysError(
                message: "there is no ID-token signing key (\(origin.described)); `actionlinks keys init` makes a key set")
        }
        // The signing key, and older ones while tokens they signed may still be in use.
        let signing = keys[0]
        let published = [signing] + keys.dropFirst().filter { seconds - $0.createdAt < rotation + retention || rotation == 0 }
        let collection = JWTKeyCollection()
        for key in published { await collection.add(rsa: key.privateKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: key.id)) }
        let document = PublicJWKSet(keys: published.map(\.jwk))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let jwks = Array(try encoder.encode(document))
        current.withLock { $0 = Current(keys: published, collection: collection, jwks: jwks) }
    }

    /// Makes a new signing key now in the folder `directory` (`actionlinks keys rotate`); running
    /// servers take it up on their next refresh. Returns its key ID.
    @discardableResult
    public static func rotate(in directory: String, now: Timestamp) throws -> String {
        try PrivateFiles.makeDirectory(directory)
        let newest = try files(in: directory).first?.createdAt ?? 0
        let created = max(now.seconds, newest + 1)
        try makeKey(in: directory, createdAt: created)
        guard let made = try files(in: directory).first(where: { $0.createdAt == created }) else { return "" }
        return try key(pem: made.pem, createdAt: created, source: directory).id
    }

    /// The keys in use (``refresh(now:)`` must have run).
    var keys: Current {
        get throws {
            guard let current = current.withLock({ $0 }) else { throw SigningKeysError(message: "the signing keys were not loaded") }
            return current
        }
    }

    /// The PEM files of a folder (`<made>.pem`), the newest first; each must be the server user's
    /// alone (or a platform's read-only mount).
    package static func files(in directory: String) throws -> [KeySet.IDTokenKey] {
        var keys: [KeySet.IDTokenKey] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasSuffix(".pem") {
            guard let created = Int64(name.dropLast(4)) else { continue }
            let path = (directory as NSString).appendingPathComponent(name)
            try PrivateFiles.requirePrivate(path)
            keys.append(KeySet.IDTokenKey(createdAt: created, pem: try String(contentsOfFile: path, encoding: .utf8)))
        }
        return keys.sorted { $0.createdAt > $1.createdAt }
    }

    /// A key from its PEM; `source` names it in the error.
    static func key(pem: String, createdAt: Int64, source: String) throws -> Key {
        do {
            return try key(JWTKit.Insecure.RSA.PrivateKey(pem: pem), pem: pem, createdAt: createdAt)
        } catch {
            throw SigningKeysError(message: "\(source): expected a PEM RSA private key of 2048 bits or more (\(error))")
        }
    }

    /// How fast this machine makes an ID token's signature (`actionlinks keys speed`): RSA-2048
    /// PKCS #1 v1.5 signatures of SHA-256 digests with a new key, as ``JWTSigner`` makes them, for
    /// about `cpuSeconds` of the calling thread's CPU time. Returns signatures per CPU second and
    /// CPU microseconds per signature.
    public static func signatureSpeed(cpuSeconds: Double) throws -> (perSecond: Double, microseconds: Double) {
        let signer = try OpenSSLRSASigner(pem: _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation)
        let digest = SHA256.hash(data: Array("a JWT's header and payload".utf8))
        var signature: [UInt8] = []
        signature.reserveCapacity(signer.signatureLength)
        func signOnce() throws {
            signature.removeAll(keepingCapacity: true)
            try digest.withUnsafeBytes { try signer.sign(digest: $0, appendingTo: &signature) }
        }
        func cpu() -> Double {
            var time = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }
        try signOnce()
        let start = cpu()
        var count = 0
        while cpu() - start < cpuSeconds {
            for _ in 0..<10 { try signOnce() }
            count += 10
        }
        let elapsed = cpu() - start
        return (Double(count) / elapsed, elapsed / Double(count) * 1e6)
    }

    /// Writes a new key file (0600) unless one of that name exists.
    private static func makeKey(in directory: String, createdAt: Int64) throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let path = (directory as NSString).appendingPathComponent("\(createdAt).pem")
        try ServerKeys.createSecret(Data(key.pemRepresentation.utf8), at: path)
    }

    static func key(_ privateKey: JWTKit.Insecure.RSA.PrivateKey, pem: String, createdAt: Int64) throws -> Key {
        let (modulus, exponent) = try privateKey.publicKey.getKeyPrimitives()
        let id = SHA256.hash(data: privateKey.publicKey.derRepresentation).prefix(10).map { String(format: "%02x", $0) }.joined()
        return Key(
            id: id, createdAt: createdAt, privateKey: privateKey,
            jwk: PublicJWK(kid: id, n: Base64URL.encode(modulus), e: Base64URL.encode(exponent)),
            signer: try JWTSigner(pem: pem, kid: id))
    }
}

extension SigningKeys.Origin {
    /// Where the keys are, for a message.
    var described: String {
        switch self {
        case .directory(let directory, _): directory
        case .keySet(.file(let path)): path
        case .keySet(.inline): "keys.json"
        }
    }
}

/// A signing key file that cannot be used.
public struct SigningKeysError: Error, CustomStringConvertible {
    /// What is wrong, and where.
    public let message: String
    public var description: String { message }
}

/// One public RSA key of the JWKS.
struct PublicJWK: Codable, Sendable {
    var kty = "RSA"
    var alg = "RS256"
    var use = "sig"
    var kid: String
    var n: String
    var e: String
}

/// `/.well-known/jwks.json`.
struct PublicJWKSet: Codable, Sendable {
    var keys: [PublicJWK]
}
