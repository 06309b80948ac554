import Crypto
import CryptoExtras
import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// scrypt password hashes in PHC string form: `$scrypt$ln=14,r=8,p=5$<salt>$<hash>`.
///
/// The parameters are OWASP's 16 MiB choice (N=2^14, r=8, p=5); they are stored with each hash, so
/// raising them later still verifies older hashes. At most `concurrency` hashes run at once, which
/// bounds the memory scrypt takes under a burst of sign-ins or password resets: one by default, so a
/// server under any load holds at most one 16 MiB block (each hash takes a core for its time; on
/// the 2-core machine two at once doubled sign-ins per second and added 16 MiB to the peak RSS).
///
/// scrypt runs on threads of its own (``threads``), never on Swift's cooperative pool: a hash holds
/// its thread for a quarter of a second, and with one cooperative thread per core a burst of
/// sign-ins would otherwise stall every other request, and the database pool's own tasks, until it
/// passed (seen as PostgreSQL calls timing out while the tests hashed passwords).
public actor PasswordHasher {
    /// The process's scrypt threads, one per core; every hasher shares them, so several apps in one
    /// process (tests) still hash at most one password per core at a time.
    static let threads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: System.coreCount)
        pool.start()
        return pool
    }()

    /// log2 of scrypt's N.
    let logRounds: Int
    let blockSize = 8
    let parallelism: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private let concurrency: Int

    /// A hasher with OWASP's parameters (or cheaper ones for tests).
    public init(logRounds: Int = 14, parallelism: Int = 5, concurrency: Int = 1) {
        Self.returnLargeBlocks
        self.logRounds = logRounds
        self.parallelism = parallelism
        self.concurrency = concurrency
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

    /// Whether `password` matches `phc` (compared in constant time).
    public func verify(_ password: String, against phc: String) async throws -> Bool {
        let parts = phc.split(separator: "$")
        guard parts.count == 4, parts[0] == "scrypt", let salt = Base64URL.decode(parts[2]), let expected = Base64URL.decode(parts[3])
        else {
            return false
        }
        var parameters: [String: Int] = [:]
        for pair in parts[1].split(separator: ",") {
            let item = pair.split(separator: "=")
            if item.count == 2, let value = Int(item[1]) { parameters[String(item[0])] = value }
        }
        guard let ln = parameters["ln"], let r = parameters["r"], let p = parameters["p"], (1...20).contains(ln), (1...32).contains(r),
            (1...16).contains(p)
        else { return false }
        let derived = try await derive(password, salt: Array(salt), logRounds: ln, blockSize: r, parallelism: p)
        return ConstantTime.equal(derived, expected)
    }

    /// A 32-byte scrypt key, computed in the hasher's bounded pool (imported Firebase hashes use it).
    func scrypt(password: [UInt8], salt: [UInt8], logRounds: Int, blockSize: Int, parallelism: Int) async throws -> [UInt8] {
        await acquire()
        defer { release() }
        return try await Self.threads.runIfActive {
            let key = try KDF.Scrypt.deriveKey(
                from: password, salt: salt, outputByteCount: 32, rounds: 1 << logRounds, blockSize: blockSize, parallelism: parallelism)
            return key.withUnsafeBytes { Array($0) }
        }
    }

    private func derive(_ password: String, salt: [UInt8], logRounds: Int, blockSize: Int, parallelism: Int) async throws -> [UInt8] {
        try await scrypt(password: Array(password.utf8), salt: salt, logRounds: logRounds, blockSize: blockSize, parallelism: parallelism)
    }

    /// Makes glibc give scrypt's 16 MiB blocks back to the system when a hash is done. By default it
    /// raises its mmap threshold to the size of the first large block freed, and from then on serves
    /// such blocks from its arenas and keeps them: after the first password hash, every thread that
    /// hashed one held 16 MiB more for good. A fixed threshold turns that off.
    private static let returnLargeBlocks: Void = {
        #if canImport(Glibc)
            // mallopt is in <malloc.h>, which the Glibc module leaves out; M_MMAP_THRESHOLD is -3.
            typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
            guard let mallopt = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
            _ = unsafeBitCast(mallopt, to: Mallopt.self)(-3, 256 * 1024)
        #endif
    }()

    private func acquire() async {
        if running < concurrency {
            running += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
