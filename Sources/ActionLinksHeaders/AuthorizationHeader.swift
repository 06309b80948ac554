/// An `Authorization` header (RFC 9110 §11.6.2): a scheme, case-insensitive, and its credentials.
public struct AuthorizationHeader: Sendable, Hashable {
    /// The scheme in lower case (`bearer`, `basic`, ...).
    public let scheme: String
    /// What follows the scheme and the spaces after it.
    public let credentials: String

    /// Parses `<scheme> <credentials>`; `nil` when the scheme is not a token, nothing follows it, or
    /// the credentials hold control characters.
    public init?(_ header: String) {
        let bytes = Array(header.utf8)
        guard bytes.count <= HeaderText.maximumLength else { return nil }
        let trimmed = HeaderText.trimmed(bytes[...])
        guard let space = trimmed.firstIndex(where: { $0 == HeaderText.space || $0 == HeaderText.tab }) else { return nil }
        let scheme = trimmed[..<space]
        let credentials = HeaderText.trimmed(trimmed[space...])
        guard HeaderText.isToken(scheme), !credentials.isEmpty,
            credentials.allSatisfy({ $0 == HeaderText.tab || ($0 >= 0x20 && $0 != 0x7F) })
        else { return nil }
        self.scheme = HeaderText.lowercased(scheme)
        self.credentials = String(decoding: credentials, as: UTF8.self)
    }

    /// The token of a `Bearer` header (`bearer`, `BEARER` and `Bearer` alike), else `nil`.
    public var bearerToken: String? { scheme == "bearer" ? credentials : nil }
}
