import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksHeaders
import HTTPTypes

/// Who is really calling (docs/ARCHITECTURE.md §11): the socket's peer, unless that peer is one of
/// `server.trustedProxies`, in which case the client and the scheme come from the proxy's
/// `Forwarded` (RFC 7239) or, without it, `X-Forwarded-For` / `X-Forwarded-Proto` headers. Headers
/// from any other peer are ignored: a client cannot name its own address or scheme.
enum ClientIdentity {
    /// The client's address and the scheme a trusted proxy says the client used (`nil` when no
    /// trusted proxy said).
    static func resolve(peer: String?, headers: HTTPFields, trustedProxies: [IPNetwork]) -> (address: String?, forwardedScheme: String?) {
        guard let peer, !trustedProxies.isEmpty, let peerAddress = IPAddress(peer),
            trustedProxies.contains(where: { $0.contains(peerAddress) })
        else { return (peer, nil) }
        var chain: [String]
        var scheme: String?
        let forwarded = headers[values: .forwarded]
        if !forwarded.isEmpty {
            let elements = ForwardedHeader.elements(forwarded)
            chain = elements.compactMap(\.forAddress)
            scheme = elements.last?.proto
        } else {
            chain = XForwardedFor.addresses(headers[values: .xForwardedFor])
            scheme = headers[values: .xForwardedProto].last.flatMap { $0.split(separator: ",").last }.map {
                $0.trimmingCharacters(in: .whitespaces)
            }
        }
        scheme = scheme.map { $0.lowercased() }.flatMap { $0 == "https" || $0 == "http" ? $0 : nil }
        // The nearest hop is last: walk back over our own proxies to the first address that is not one.
        var client = peer
        for hop in chain.reversed() {
            guard let address = IPAddress(hop) else { break }
            client = hop
            if !trustedProxies.contains(where: { $0.contains(address) }) { break }
        }
        return (client, scheme)
    }
}

extension HTTPField.Name {
    static let forwarded = Self("Forwarded")!
    static let xForwardedFor = Self("X-Forwarded-For")!
    static let xForwardedProto = Self("X-Forwarded-Proto")!
}
