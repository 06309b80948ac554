import ActionLinks
import Foundation

/// What the entries of `providers` (OpenID Connect and SAML) require of their names, URLs and
/// domains, in one place.
enum ProviderRules {
    /// A byte of a provider's name or of a domain label: a lower-case letter, a digit or `-`.
    static func isNameByte(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "-")
    }

    /// An absolute `https` URL with a host and no user, password or fragment (and no query unless
    /// `query`); `http` only for a loopback host on a development server.
    static func isServiceURL(_ text: String, development: Bool, query: Bool) -> Bool {
        guard let url = URLComponents(string: text), let host = url.host, !host.isEmpty, url.user == nil, url.password == nil,
            url.fragment == nil, query || url.query == nil
        else { return false }
        switch url.scheme {
        case "https": return true
        case "http": return development && Loopback.isLoopback(host)
        default: return false
        }
    }

    /// A lower-case domain name of two labels or more (`corp.example`).
    static func isLowerCaseDomain(_ text: String) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && text.utf8.count <= 253
            && labels.allSatisfy { label in
                (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-" && label.utf8.allSatisfy(isNameByte)
            }
    }

    /// A URL on one of the link domains, with no user, password or fragment (and no query unless
    /// `query`).
    static func isOnLinkDomain(_ text: String, _ domains: [LinkDomain], query: Bool) -> Bool {
        guard let url = URLComponents(string: text), url.fragment == nil, query || url.query == nil, url.user == nil, url.password == nil
        else { return false }
        return domains.contains { text.hasPrefix($0.origin + "/") }
    }
}
