import Foundation

/// A file of secrets that the configuration names (a provider's client secret, a service-account
/// key): read whole, and refused, with the fix, unless only its owner may read it.
enum OwnerOnlyFile {
    /// The contents of `path`, named at `key`. `what` names the file in the errors ("the client
    /// secret file") and `holds` says what is at stake ("a secret").
    ///
    /// A symbolic link is checked at its target, through every link on the way: a Kubernetes
    /// secret is mounted as `key.json -> ..data/key.json`, `..data -> ..<timestamp>`, and the
    /// link's own mode (always 777) says nothing about who may read the key.
    static func read(_ path: String, at key: [any CodingKey], what: String, holds: String) throws(DecodingProblem) -> Data {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let isLink = target != URL(fileURLWithPath: path).standardizedFileURL.path
        let shown = isLink ? "'\(path)' (a link to '\(target)')" : "'\(path)'"
        let attributes: [FileAttributeKey: Any]
        let data: Data
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: target)
            data = try Data(contentsOf: URL(fileURLWithPath: target))
        } catch {
            throw DecodingProblem(key, "cannot read \(what) \(shown): \(error.localizedDescription)")
        }
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0o777
        guard mode & 0o077 == 0 else {
            throw DecodingProblem(
                key,
                "expected a file only its owner can read, as it holds \(holds); \(shown) has mode \(String(mode, radix: 8)): run chmod 600 \(target)"
                    + (isLink ? " (for a Kubernetes secret, mount it with defaultMode: 0400)" : "")
            )
        }
        return data
    }
}
