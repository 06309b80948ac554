import Foundation
import Testing

/// The repository carries its own copies of what the project's `../shared` folder holds for the
/// tests (the link vectors and the Firebase JS SDK's browser builds), so that a clone builds and
/// passes its tests on its own. Where `../shared` is beside the repository (as in CI), the copies
/// must be the same files, byte for byte: a copy can never drift from the original.
@Suite("Copies of ../shared", .timeLimit(.minutes(5)))
struct SharedCopyTests {
    /// One folder of `../shared` and where the repository keeps its copy.
    struct Copy: Sendable, CustomTestStringConvertible {
        let shared: String
        let repository: String
        var testDescription: String { "\(repository) = ../shared/\(shared)" }
    }

    static let copies = [
        Copy(shared: "vectors", repository: "Tests/Vectors"),
        Copy(shared: "clients/firebase-js-sdk-11.0.2", repository: "Tests/Clients/firebase-js-sdk-11.0.2"),
        Copy(shared: "clients/firebase-js-sdk-11.9.0-modular", repository: "Tests/Clients/firebase-js-sdk-11.9.0-modular"),
    ]

    /// `ACTIONLINKS_SHARED` when set (it must then exist), else `shared` beside the repository.
    static let sharedFolder: URL = {
        if let path = ProcessInfo.processInfo.environment["ACTIONLINKS_SHARED"] { return URL(fileURLWithPath: path) }
        return repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared")
    }()

    /// Whether there is a `../shared` to compare with: a clone on its own has none (the test is then
    /// skipped); a folder named by `ACTIONLINKS_SHARED` is always compared (if it is missing, the test fails).
    static let hasSharedFolder =
        ProcessInfo.processInfo.environment["ACTIONLINKS_SHARED"] != nil || FileManager.default.fileExists(atPath: sharedFolder.path)

    // Skipped without `../shared`: a person who clones the repository has none, and the copies are
    // then all there is. CI runs with `../shared` beside the clone, so there the copies are checked.
    @Test(
        "each copy has exactly the files of ../shared, byte for byte",
        .enabled(if: hasSharedFolder, "no ../shared beside the repository (set ACTIONLINKS_SHARED to compare with one elsewhere)"),
        arguments: copies)
    func identical(_ copy: Copy) throws {
        let original = Self.sharedFolder.appendingPathComponent(copy.shared)
        let ours = repositoryRoot.appendingPathComponent(copy.repository)
        let originalFiles = try Self.files(in: original)
        let ourFiles = try Self.files(in: ours)
        #expect(!originalFiles.isEmpty, "\(original.path) holds no files")
        let missing = originalFiles.subtracting(ourFiles).sorted()
        let extra = ourFiles.subtracting(originalFiles).sorted()
        #expect(missing.isEmpty, "in \(original.path) but not in \(copy.repository): \(missing); copy them over unchanged")
        #expect(extra.isEmpty, "in \(copy.repository) but not in \(original.path): \(extra); remove them")
        for name in originalFiles.intersection(ourFiles).sorted() {
            let a = try Data(contentsOf: original.appendingPathComponent(name))
            let b = try Data(contentsOf: ours.appendingPathComponent(name))
            guard a != b else { continue }
            let offset = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
            Issue.record(
                "\(copy.repository)/\(name) differs from \(original.path)/\(name) at byte \(offset) (\(b.count) bytes against \(a.count)); copy it over unchanged"
            )
        }
    }

    /// The regular files under `folder`, as paths relative to it; throws when the folder is missing.
    static func files(in folder: URL) throws -> Set<String> {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw CopyCheckError(description: "\(folder.path) is not a folder")
        }
        var names: Set<String> = []
        let walk = FileManager.default.enumerator(atPath: folder.path)
        while let name = walk?.nextObject() as? String {
            let attributes = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)
            if attributes[.type] as? FileAttributeType == .typeRegular { names.insert(name) }
        }
        return names
    }

    struct CopyCheckError: Error, CustomStringConvertible {
        let description: String
    }
}
