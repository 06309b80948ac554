import ActionLinks

/// The project the server stands in for (`project`).
public struct ProjectSettings: Sendable, Hashable {
    /// The project ID in REST paths (`/v1/projects/<id>/...`).
    public var id = "demo-actionlinks"
    /// The API keys clients pass as `?key=` or `x-goog-api-key`: `project.apiKey` (one unrestricted
    /// key) first, then `project.apiKeys`; `demo-api-key` when neither is given. A link a client
    /// asked for carries that client's key; every other link carries ``apiKey``.
    public var apiKeys = [APIKey("demo-api-key")]
    /// The app's name, as emails and pages show it.
    public var appName = "ActionLinks"
    /// `project.mobileLinkDomain`: which link domain wraps mobile links.
    public var mobileLinks = MobileLinks.firstLinkDomain

    /// Which link domain serves mobile links (`/__/auth/links`), as Firebase's
    /// `mobileLinksConfig.domain` says whether a project has a domain for them at all.
    public enum MobileLinks: Sendable, Hashable {
        /// The first of `linkDomains` (the default).
        case firstLinkDomain
        /// This one of `linkDomains`.
        case domain(LinkDomain)
        /// None (`none`): a production server refuses `iOSBundleId` and `androidPackageName` with
        /// `DYNAMIC_LINK_NOT_ACTIVATED`, as Firebase does for a project without a mobile link domain.
        case notActivated
    }

    /// The key a link carries when no client's key is known (links the admin asks for, the
    /// recovery mail after an email change): the first unrestricted key, else the first key.
    public var apiKey: String { (apiKeys.first { !$0.isRestricted } ?? apiKeys.first)?.key ?? "" }
}

extension ProjectSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, apiKey, apiKeys, appName, mobileLinkDomain
    }

    /// Reads `project`.
    public init(from decoder: any Decoder) throws {
        let project = try decoder.container(keyedBy: CodingKeys.self)
        if let id = try project.string(.id) {
            guard id.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) }) else {
                throw project.problem(.id, "expected lower-case letters, digits and hyphens; got '\(id)'")
            }
            self.id = id
        }
        var keys: [APIKey] = []
        if let key = try project.string(.apiKey) {
            guard APIKey.isWellFormed(key) else { throw project.problem(.apiKey, "expected printable ASCII without spaces, '&' or '#'") }
            keys.append(APIKey(key))
        }
        for (index, entry) in try project.decode([APIKeyEntry].self, forKey: .apiKeys).enumerated() {
            guard !keys.contains(where: { $0.key == entry.apiKey.key }) else {
                throw DecodingProblem(
                    project.codingPath + [CodingKeys.apiKeys, IndexKey(index), APIKeyEntry.CodingKeys.key],
                    "this key is already listed (project.apiKey or an earlier entry); each key has one restriction")
            }
            keys.append(entry.apiKey)
        }
        if !keys.isEmpty { apiKeys = keys }
        appName = try project.string(.appName) ?? appName
        if let text = try project.string(.mobileLinkDomain) {
            if text == "none" {
                mobileLinks = .notActivated
            } else {
                do throws(LinkDomainError) {
                    mobileLinks = .domain(try LinkDomain(text))
                } catch {
                    throw project.problem(.mobileLinkDomain, "expected one of linkDomains, or none; " + error.message + "; got '\(text)'")
                }
            }
        }
    }
}
