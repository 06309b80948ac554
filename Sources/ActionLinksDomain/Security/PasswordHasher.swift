import Crypto
import CryptoExtras
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// scrypt password hashes in PHC string form: `$scrypt$ln=14,r=8,p=5$<salt>$<hash>`.
///
/// The parameters are OWASP's 16 MiB choice (N=2^14, r=8, p=5); they are stored with each hash, so
/// raising them later still verifies older hashes, up to ``Ceiling``: a stored hash above it is
/// refused at import and never run (one imported at ln=20, r=32, p=16 would take 4 GiB and
/// minutes per sign-in attempt, for anyone who knows the address).
///
/// At most `concurrency` hashes run at once (`users.passwordHashConcurrency`, one per core by
/// default), which bounds the memory scrypt takes under a burst of sign-ins (16 MiB each); at most
/// `queueLimit` more wait for a turn (`users.passwordHashQueue`), and beyond that a call fails at
/// once with ``Busy`` (answered 503 `UNAVAILABLE` with `Retry-After`) instead of waiting without
/// bound behind an attacker's burst.
///
/// Each hash runs on a thread of its own, started for it (tens of microseconds against a hash's
/// tens of milliseconds), never on Swift's cooperative pool: a hash holds its thread for its whole
/// time, and with one cooperative thread per core a burst of sign-ins would otherwise stall every
/// other request and the database pool's own tasks. No pool is shared between hashers, so one
/// app's backlog never delays another's hashes (several apps run in one test process).
public actor PasswordHasher {
    /// The most a stored hash may cost, for this server's scrypt and Firebase's alike: scrypt's
    /// memory, 128·N·r bytes, at most 32 MiB (twice the default's), and its work, N·r·p, at most
    /// 2^21 (3.2 times the default's 2^14·8·5). Firebase's own parameters (N ≤ 2^14, r ≤ 8, p = 1:
    /// 16 MiB, 2^17) are within it.
    public enum Ceiling {
        /// The most memory one hash may take, in bytes.
        public static let memoryBytes = 32 << 20
        /// The most N·r·p may be.
        public static let work = 1 << 21

        /// Why parameters are above the ceiling, or nil when they are within it (and sane: ln 1
        /// to 30, r and p from 1).
        public static func refusal(logRounds: Int, blockSize: Int, parallelism: Int) -> String? {
            guard (1...30).contains(logRounds), blockSize >= 1, parallelism >= 1 else {
                return "scrypt parameters out of range (ln \(logRounds), r \(blockSize), p \(parallelism))"
            }
            let (memory, memoryOverflow) = (128 * blockSize).multipliedReportingOverflow(by: 1 << logRounds)
            if memoryOverflow || memory > memoryBytes {
                return
                    "scrypt ln=\(logRounds), r=\(blockSize) needs \(memoryOverflow ? "too much" : "\(memory >> 20) MiB of") memory per hash; "
                    + "at most \(memoryBytes >> 20) MiB (128·N·r) is run"
            }
            let (work, workOverflow) = ((1 << logRounds) * blockSize).multipliedReportingOverflow(by: parallelism)
            if workOverflow || work > Self.work {
                return "scrypt ln=\(logRounds), r=\(blockSize), p=\(parallelism) is too slow to run per sign-in: N·r·p is at most 2^21"
            }
            return nil
        }
    }

    /// The hasher's queue is full: the call is answered 503 `UNAVAILABLE` instead of waiting.
    public struct Busy: Error, CustomStringConvertible {
        public var description: String { "every password hash slot is taken and the queue is full" }
    }

    /// log2 of scrypt's N.
    let logRounds: Int
    let blockSize = 8
    let parallelism: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private let concurrency: Int
    private let queueLimit: Int

    /// A hasher with OWASP's parameters (or cheaper ones for tests), running `concurrency` hashes
    /// at once with at most `queueLimit` waiting.
    public init(
        logRounds: Int = 14, parallelism: Int = 5, concurrency: Int = ProcessInfo.processInfo.activeProcessorCount, queueLimit: Int = 64
    ) {
        self.logRounds = logRounds
        self.parallelism = parallelism
        self.concurrency = max(1, concurrency)
        self.queueLimit = max(0, queueLimit)
    }

    /// A hash no password matches, with this hasher's cost: verifying against it takes as long as
    /// against a real one (a sign-in for an unknown address must not answer faster).
    public nonisolated var decoy: String {
        "$scrypt$ln=\(logRounds),r=8,p=\(parallelism)$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    }

    /// The PHC string for `password` with a fresh 16-byte salt.
    public func hash(_ password: String) async throws -> String {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let derived = try await derive(password, salt: salt, logRounds: logRounds, blockSize: blockSize, parallelism: parallelism)
        return "$scrypt$ln=\(logRounds),r=\(blockSize),p=\(parallelism)$\(Base64URL.encode(salt))$\(Base64URL.encode(derived))"
    }

    /// A stored PHC string taken apart.
    public struct Stored: Sendable {
        public var logRounds: Int
        public var blockSize: Int
        public var parallelism: Int
        public var salt: [UInt8]
        public var hash: [UInt8]

        /// `phc` taken apart, or nil when it is not `$scrypt$ln=…,r=…,p=…$<salt>$<hash>` (base64url).
        public init?(_ phc: String) {
            let parts = phc.split(separator: "$", omittingEmptySubsequences: false)
            guard parts.count == 5, parts[0].isEmpty, parts[1] == "scrypt", let salt = Base64URL.decode(parts[3]),
                let hash = Base64URL.decode(parts[4]), !hash.isEmpty
            else { return nil }
            var parameters: [String: Int] = [:]
            for pair in parts[2].split(separator: ",") {
                let item = pair.split(separator: "=")
                guard item.count == 2, let value = Int(item[1]), parameters.updateValue(value, forKey: String(item[0])) == nil else {
                    return nil
                }
            }
            guard parameters.count == 3, let ln = parameters["ln"], let r = parameters["r"], let p = parameters["p"] else { return nil }
            (logRounds, blockSize, parallelism, self.salt, self.hash) = (ln, r, p, Array(salt), Array(hash))
        }

        /// Why this hash is not run, or nil when its cost is within ``Ceiling``.
        public var refusal: String? { Ceiling.refusal(logRounds: logRounds, blockSize: blockSize, parallelism: parallelism) }
    }

    /// Why a stored `passwordHash` of this server's kind cannot be imported, or nil when it can.
    public nonisolated static func refusal(stored phc: String) -> String? {
        guard let stored = Stored(phc) else { return "not a hash of the form $scrypt$ln=<n>,r=<n>,p=<n>$<salt>$<hash> (base64url)" }
        return stored.refusal
    }

    /// Whether `password` matches `phc` (compared in constant time). A hash that is malformed or
    /// costs more than ``Ceiling`` matches nothing and is never run.
    public func verify(_ password: String, against phc: String) async throws -> Bool {
        guard let stored = Stored(phc), stored.refusal == nil else { return false }
        let derived = try await derive(
            password, salt: stored.salt, logRounds: stored.logRounds, blockSize: stored.blockSize, parallelism: stored.parallelism)
        return ConstantTime.equal(derived, stored.hash)
    }

    /// A 32-byte scrypt key, computed within the hasher's bounds (imported Firebase hashes use it).
    func scrypt(password: [UInt8], salt: [UInt8], logRounds: Int, blockSize: Int, parallelism: Int) async throws -> [UInt8] {
        if let refusal = Ceiling.refusal(logRounds: logRounds, blockSize: blockSize, parallelism: parallelism) {
            throw PasswordHasherError(description: refusal)
        }
        try await acquire()
        defer { release() }
        return try await Self.onThreadOfItsOwn {
            let key = try KDF.Scrypt.deriveKey(
                from: password, salt: salt, outputByteCount: 32, rounds: 1 << logRounds, blockSize: blockSize, parallelism: parallelism)
            return key.withUnsafeBytes { Array($0) }
        }
    }

    private func derive(_ password: String, salt: [UInt8], logRounds: Int, blockSize: Int, parallelism: Int) async throws -> [UInt8] {
        try await scrypt(password: Array(password.utf8), salt: salt, logRounds: logRounds, blockSize: blockSize, parallelism: parallelism)
    }

    /// Runs `body` on a new thread and resumes with its result.
    private static func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.name = "scrypt"
            thread.start()
        }
    }

    func acquire() async throws {
        if running < concurrency {
            running += 1
            return
        }
        guard waiting.count < queueLimit else { throw Busy() }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}

/// A stored hash this server will not run.
public struct PasswordHasherError: Error, CustomStringConvertible {
    public var description: String
}
