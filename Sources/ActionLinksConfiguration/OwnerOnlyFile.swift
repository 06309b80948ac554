import Foundation

/// A file of secrets that the configuration names (a provider's client secret, a service-account
/// key): read whole, and refused, with the fix, unless only its owner may read it.
enum OwnerOnlyFile {
    /// The contents of `path`, named at `key`. `what` names the file in the errors ("the client
    /// secret file") and `holds` says what is at stake ("a secret").
    static func read(_ path: String, at key: [any CodingKey], what: String, holds: String) throws(DecodingProblem) -> Data {
        let attributes: [FileAttributeKey: Any]
        let data: Data
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw DecodingProblem(key, "cannot read \(what) '\(path)': \(error.localizedDescription)")
        }
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0o777
        guard mode & 0o077 == 0 else {
            throw DecodingProblem(
                key,
                "expected a file only its owner can read, as it holds \(holds); it has mode \(String(mode, radix: 8)): run chmod 600 \(path)"
            )
        }
        return data
    }
}
