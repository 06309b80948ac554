import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksHeaders
import HTTPTypes

/// Who is really calling (docs/ARCHITECTURE.md §11): the socket's peer, unless that peer is one of
/// `server.trustedProxies`, in which case the client and the scheme come from the headers those
/// proxies write (`server.proxyHeaders`: `X-Forwarded-For` and `X-Forwarded-Proto`, or
/// `Forwarded`), walked from the right past trusted hops only. The other kind of header is never
/// read: a proxy passes on what it does not write itself, so that one is the client's own. Headers
/// from any other peer are ignored: a client cannot name its own address or scheme.
enum ClientIdentity {
    /// The client's address and the scheme a trusted proxy says the client used (`nil` when no
    /// trusted proxy said).
    static func resolve(peer: String?, headers: HTTPFields, settings: ServerSettings) -> (address: String?, forwardedScheme: String?) {
        let trustedProxies = settings.trustedProxies
        guard let peer, !trustedProxies.isEmpty, let peerAddress = IPAddress(peer),
            trustedProxies.contains(where: { $0.contains(peerAddress) })
        else { return (peer, nil) }
        let chain: [String]
        var scheme: String?
        switch settings.proxyHeaders {
        case .forwarded:
            let elements = ForwardedHeader.elements(headers[values: .forwarded])
            chain = elements.map { $0.forAddress ?? "" }
            scheme = elements.last?.proto
        case .xforwarded:
            chain = XForwardedFor.addresses(headers[values: .xForwardedFor])
            scheme = headers[values: .xForwardedProto].last.flatMap { $0.split(separator: ",").last }.map {
                $0.trimmingCharacters(in: .whitespaces)
            }
        }
        scheme = scheme.map { $0.lowercased() }.flatMap { $0 == "https" || $0 == "http" ? $0 : nil }
        // The nearest hop is last: walk back over our own proxies to the first address that is not
        // one. A hop that is not an address (`unknown`, an obfuscated `_hidden`) ends the walk there:
        // what lies to its left was written by someone the trusted proxies do not vouch for.
        var client = peer
        for hop in chain.reversed() {
            guard let address = IPAddress(hop) else {
                client = hop.isEmpty ? "unknown" : hop
                break
            }
            client = address.description
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
