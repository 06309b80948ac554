#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The fixture files in the `Fixtures/` folder beside a test source file. They are read from the
/// source tree, not bundled as resources, so a test target without Foundation (as the modules the
/// email and SAML tests cover have none) can read them.
public struct FixtureFiles: Sendable {
    /// The folder, with a trailing `/`.
    public let directory: String

    /// The `Fixtures/` folder beside `file` (the caller's `#filePath`).
    public init(besideFile file: String = #filePath) {
        var path = file
        while let last = path.last, last != "/" { path.removeLast() }
        directory = path + "Fixtures/"
    }

    /// The bytes of the fixture `name`.
    public func bytes(_ name: String) throws(Missing) -> [UInt8] {
        let path = directory + name
        guard let file = fopen(path, "rb") else { throw Missing(path: path) }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return bytes
    }

    /// A fixture that is not there.
    public struct Missing: Error, CustomStringConvertible {
        public let path: String
        public var description: String { "fixture missing: \(path)" }
    }
}
