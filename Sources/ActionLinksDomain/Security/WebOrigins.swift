import ActionLinks
import ActionLinksConfiguration

/// Which browser origins the server trusts (docs/ARCHITECTURE.md §11, docs/LINK-RULES.md §5.4): its
/// own link domains for form posts, and for the REST API's CORS the link domains, the hosts of the
/// continue-URL allow-list, and any loopback origin on a development server. Every other origin gets
/// no CORS headers, and never the admin API.
package struct WebOrigins: Sendable {
    let linkDomainOrigins: Set<String>
    let policy: ContinueURLPolicy
    let development: Bool

    init(settings: ServiceSettings, policy: ContinueURLPolicy) {
        linkDomainOrigins = Set(settings.linkDomains.map { $0.origin.lowercased() })
        self.policy = policy
        development = settings.server.development
    }

    /// Whether `origin` (an `Origin` header) is one of the link domains.
    package func isLinkDomain(_ origin: some StringProtocol) -> Bool {
        linkDomainOrigins.contains(origin.lowercased())
    }

    /// Whether a web app on `origin` may call the REST API from a browser (the value to reflect in
    /// `Access-Control-Allow-Origin`).
    package func allowsAPI(_ origin: String) -> Bool {
        if isLinkDomain(origin) { return true }
        if development, let url = try? URLParts(origin), url.path.isEmpty, url.userinfo == nil, url.query == nil, url.fragment == nil,
            ["http", "https"].contains(url.scheme.lowercased()), let host = url.host, Loopback.isLoopback(host)
        {
            return true
        }
        return policy.allowsOrigin(origin)
    }
}
