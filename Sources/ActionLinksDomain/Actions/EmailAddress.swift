import Foundation

/// Email addresses as the server keeps them.
public enum EmailAddress {
    /// The canonical form of an address (trimmed, lower-cased), or `nil` when it is not one.
    public static func canonical(_ text: String) -> String? {
        let email = text.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard email.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64, !parts[1].isEmpty,
            !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), !parts[1].contains(".."),
            email.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && !"<>()[]\\,;:\"".unicodeScalars.contains($0) })
        else { return nil }
        return email
    }

    /// The address as a page fronting a Firebase project shows it: the first character of the
    /// local part, three dots (whatever its length), and the domain (`a•••@example.com`), so a
    /// forwarded or scanned link does not tell whose it is. Text without an `@` is masked whole.
    public static func masked(_ email: String) -> String {
        guard let at = email.lastIndex(of: "@") else { return email.isEmpty ? "" : "•••" }
        let local = email[..<at]
        return (local.count > 1 ? String(local.prefix(1)) : "") + "•••" + email[at...]
    }
}
