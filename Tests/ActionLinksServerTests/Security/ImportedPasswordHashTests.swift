import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// Firebase's modified scrypt, with the example of Firebase's own scrypt repository
/// (github.com/firebase/scrypt, README): the parameters a project's console shows, a user's salt
/// and hash from `firebase auth:export`, and the password they hash.
@Suite("Imported Firebase password hashes", .timeLimit(.minutes(5)))
struct ImportedPasswordHashTests {
    static let signerKey = "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="
    static let saltSeparator = "Bw=="
    static let salt = "42xEC+ixf3L2lw=="
    static let hash = "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="

    static func imported() throws -> ImportedPasswordHashes.Hash {
        let salt = try #require(UserImport.base64(salt))
        let hash = try #require(UserImport.base64(hash))
        let signerKey = try #require(UserImport.base64(signerKey))
        let separator = try #require(UserImport.base64(saltSeparator))
        return ImportedPasswordHashes.Hash(
            salt: salt, hash: hash, signerKey: signerKey, saltSeparator: separator, rounds: 8, memoryCost: 14)
    }

    @Test("the password of Firebase's example matches its hash; any other does not")
    func firebaseExample() async throws {
        let hasher = PasswordHasher()
        let hashes = ImportedPasswordHashes()
        let imported = try Self.imported()
        #expect(try await hashes.verify("user1password", against: imported, hasher: hasher))
        #expect(try await !hashes.verify("user1Password", against: imported, hasher: hasher))
        #expect(try await !hashes.verify("", against: imported, hasher: hasher))
    }

    @Test("the stored form reads back as the same hash; this server's own hashes are not imported ones")
    func storedForm() throws {
        let imported = try Self.imported()
        #expect(ImportedPasswordHashes().parse(imported.stored) == imported)
        #expect(ImportedPasswordHashes().parse("$scrypt$ln=14,r=8,p=5$AAAA$AAAA") == nil)
        var broken = imported
        broken.memoryCost = 15
        #expect(ImportedPasswordHashes().parse(broken.stored) == nil, "Firebase's memory cost is at most 14")
    }

    @Test("standard and URL-safe base64, with or without padding, decode alike")
    func base64() {
        #expect(UserImport.base64("42xEC+ixf3L2lw==") == UserImport.base64("42xEC-ixf3L2lw"))
        #expect(UserImport.base64("not base64!") == nil)
    }
}
