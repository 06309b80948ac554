#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads the fixture files beside this source file (not bundled as resources: this target has no
/// Foundation, as the module it tests has none).
enum Fixtures {
    static let directory: String = {
        var path = #filePath
        while let last = path.last, last != "/" { path.removeLast() }
        return path + "Fixtures/"
    }()

    static func bytes(_ name: String) throws -> [UInt8] {
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

    struct Missing: Error, CustomStringConvertible {
        let path: String
        var description: String { "fixture missing: \(path)" }
    }
}
