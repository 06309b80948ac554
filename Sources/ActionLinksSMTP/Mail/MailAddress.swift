/// An email address with an optional display name, as in `From: Example App <noreply@example.com>`.
public struct MailAddress: Sendable, Hashable {
    /// The address itself (`local@domain`), plain ASCII.
    public var address: String
    /// The name shown for it, any text (encoded as RFC 2047 words when it is not ASCII).
    public var displayName: String?

    /// An address with an optional display name.
    public init(_ address: String, displayName: String? = nil) {
        self.address = address
        self.displayName = displayName
    }

    /// Reads `Name <local@domain>`, `"Name" <local@domain>`, `<local@domain>` or `local@domain`, as
    /// configuration files write them; `nil` when there is no address in it.
    public init?(parsing text: String) {
        let trimmed = text.trimmingSpaces
        guard trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") else {
            guard !trimmed.isEmpty, !trimmed.contains(" ") else { return nil }
            self.init(trimmed)
            return
        }
        let address = trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)].trimmingSpaces
        var name = trimmed[..<open].trimmingSpaces
        if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") {
            name = String(name.dropFirst().dropLast()).replacing("\\\"", with: "\"")
        }
        guard !address.isEmpty else { return nil }
        self.init(address, displayName: name.isEmpty ? nil : name)
    }

    /// The domain of the address (after its last `@`), lower-cased; `nil` when it has none.
    public var domain: String? { Self.domain(of: address) }

    /// The domain of `address` (after its last `@`), lower-cased; `nil` when it has none. The domain a
    /// message's `Message-ID` names.
    public static func domain(of address: String) -> String? {
        guard let at = address.lastIndex(of: "@") else { return nil }
        let domain = address[address.index(after: at)...].lowercased()
        return domain.isEmpty ? nil : domain
    }

    /// Whether the address can go into a header as it is: ASCII without spaces, brackets or line
    /// breaks, with a local part and a domain.
    var isPlain: Bool {
        let forbidden = Set("<>()[],;:\"\\".utf8)
        guard let at = address.lastIndex(of: "@"), at != address.startIndex, domain != nil, address.utf8.count <= 254 else {
            return false
        }
        return address.utf8.allSatisfy { (0x21...0x7E).contains($0) && !forbidden.contains($0) }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
