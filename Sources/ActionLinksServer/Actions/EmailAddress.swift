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
}
