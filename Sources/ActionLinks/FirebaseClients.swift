/// Whether one Firebase client SDK would accept a link, and how it would read it.
public struct ClientVerdict: Sendable, Hashable {
    /// The Firebase client SDKs whose link reading is emulated.
    public enum Client: String, Sendable, Hashable, CaseIterable, Codable {
        /// The Firebase JS SDK (`ActionCodeURL.parseLink`, `isSignInWithEmailLink`).
        case js
        /// The Firebase iOS SDK (`ActionCodeURL(link:)`, `isSignIn(withEmailLink:)`).
        case ios
        /// The Firebase Android SDK (`ActionCodeUrl.parseLink`, `isSignInWithEmailLink`).
        case android

        /// The SDK's name for people.
        public var displayName: String {
            switch self {
            case .js: "Firebase JS SDK"
            case .ios: "Firebase iOS SDK"
            case .android: "Firebase Android SDK"
            }
        }
    }

    /// Which SDK this is about.
    public let client: Client
    /// Whether the SDK would take the link as an action link.
    public let accepts: Bool
    /// What is wrong with the link for this SDK: why it refuses it, or which field it reads differently.
    public let problems: [String]

    /// Emulates each SDK's reading of `input` and compares it with ActionLinks' own reading `action`.
    public static func verdicts(for input: String, action: ActionCodeLink?) -> [ClientVerdict] {
        Client.allCases.map { client in
            let reading: ClientReading
            switch client {
            case .js: reading = ClientReading.javaScript(input)
            case .ios: reading = ClientReading.iOS(input)
            case .android: reading = ClientReading.android(input)
            }
            return reading.verdict(for: client, against: action)
        }
    }
}

/// The fields an SDK reads from a link: each SDK's parsing rules, reproduced from its source.
struct ClientReading {
    var fields: [String: String] = [:]
    /// Set when the SDK gives up on the link as a whole (a thrown decoding error, for instance).
    var refusal: String?

    /// The JS SDK: `parseDeepLink` picks the inner link, then `querystringDecode` splits on `&`, then
    /// on every `=` (keeping only the first two pieces), then `decodeURIComponent`s, which throws on
    /// a malformed escape and so rejects the whole link.
    static func javaScript(_ input: String) -> ClientReading {
        struct URIError: Error {}
        func querystringDecode(_ url: Substring) throws -> [String: String] {
            var out: [String: String] = [:]
            for token in rawQuery(url).split(separator: "&") {
                let pieces = token.split(separator: "=", omittingEmptySubsequences: false)
                guard let key = PercentEncoding.decode(pieces[0]) else { throw URIError() }
                if pieces.count > 1 {
                    guard let value = PercentEncoding.decode(pieces[1]) else { throw URIError() }
                    out[key] = value
                } else {
                    out[key] = "undefined"  // decodeURIComponent(undefined)
                }
            }
            return out
        }
        do {
            let top = try querystringDecode(input[...])
            let link = top["link"].nonEmpty
            let doubleDeepLink = try link.flatMap { try querystringDecode($0[...])["deep_link_id"].nonEmpty }
            let iOSDeepLink = top["deep_link_id"].nonEmpty
            let iOSDoubleDeepLink = try iOSDeepLink.flatMap { try querystringDecode($0[...])["link"].nonEmpty }
            let actionLink = iOSDoubleDeepLink ?? iOSDeepLink ?? doubleDeepLink ?? link ?? input
            return ClientReading(fields: try querystringDecode(actionLink[...]))
        } catch {
            return ClientReading(refusal: "decodeURIComponent throws on a malformed escape or invalid UTF-8")
        }
    }

    /// The iOS SDK: `URLComponents.query` (the whole query, percent-decoded), split on `&`, each item
    /// at its first `=`, name and value decoded again; when `oobCode` and `mode` are not both there,
    /// it follows `deep_link_id`, else `link`. A Dynamic Link reaches it already resolved.
    static func iOS(_ input: String) -> ClientReading {
        func parseURL(_ url: Substring) -> [String: String] {
            guard let query = PercentEncoding.decode(rawQuery(url)) else { return [:] }
            var items: [String: String] = [:]
            for component in query.split(separator: "&") {
                guard let eq = component.firstIndex(of: "="),
                    let key = PercentEncoding.decode(component[..<eq]),
                    let value = PercentEncoding.decode(component[component.index(after: eq)...])
                else { continue }
                items[key] = value
            }
            return items
        }
        var start = input
        if let parts = try? URLParts(input), LinkUnwrapper.wrapperKind(parts) == .dynamicLinkWrapper,
            let resolved = LinkUnwrapper.linkParameters(of: parts).link
        {
            start = resolved
        }
        // Because the whole query is decoded first, a nested link's parameters land partly at the
        // top and partly in `deep_link_id`/`link`: the outer values stand, the inner ones fill gaps.
        var items = parseURL(start[...])
        var depth = 1
        while items["oobCode"] == nil || items["mode"] == nil, depth < LinkUnwrapper.maximumDepth,
            let next = items.removeValue(forKey: "deep_link_id") ?? items.removeValue(forKey: "link")
        {
            items.merge(parseURL(next[...])) { outer, _ in outer }
            depth += 1
        }
        return ClientReading(fields: items)
    }

    /// The Android SDK: `Uri.getQueryParameter`, which returns the first occurrence and decodes `+` as
    /// a space; parameters missing at the top are read from the `link` parameter's URL.
    static func android(_ input: String) -> ClientReading {
        func parameters(_ url: Substring) -> [String: String] {
            var items: [String: String] = [:]
            for component in rawQuery(url).split(separator: "&") {
                let eq = component.firstIndex(of: "=")
                let key = decodePlus(eq.map { component[..<$0] } ?? component)
                if items[key] == nil {
                    items[key] = eq.map { decodePlus(component[component.index(after: $0)...]) } ?? ""
                }
            }
            return items
        }
        func decodePlus(_ text: Substring) -> String {
            let spaced = String(text).replacing("+", with: " ")
            return PercentEncoding.decode(spaced) ?? spaced
        }
        var items = parameters(input[...])
        if items["oobCode"] == nil, let link = items["link"] { items = parameters(link[...]) }
        return ClientReading(fields: items)
    }

    /// The query as the SDKs find it in a string: after the first `?`, up to the next `#`.
    static func rawQuery(_ url: Substring) -> Substring {
        guard let question = url.firstIndex(of: "?") else { return url[url.endIndex...] }
        let rest = url[url.index(after: question)...]
        return rest[..<(rest.firstIndex(of: "#") ?? rest.endIndex)]
    }

    func verdict(for client: ClientVerdict.Client, against action: ActionCodeLink?) -> ClientVerdict {
        if let refusal {
            return ClientVerdict(client: client, accepts: false, problems: ["rejects the link: \(refusal)"])
        }
        var missing: [String] = []
        let required = client == .ios ? ["oobCode", "mode"] : ["apiKey", "oobCode", "mode"]
        for name in required where fields[name].nonEmpty == nil { missing.append(name) }
        if !missing.isEmpty {
            let names = missing.count == 1 ? missing[0] : missing.dropLast().joined(separator: ", ") + " and " + missing[missing.count - 1]
            return ClientVerdict(
                client: client, accepts: false, problems: ["rejects the link: \(names) \(missing.count == 1 ? "is" : "are") missing"])
        }
        guard let mode = fields["mode"], ActionCodeLink.Mode(rawValue: mode) != nil else {
            return ClientVerdict(client: client, accepts: false, problems: ["rejects the link: mode '\(fields["mode"] ?? "")' is unknown"])
        }
        guard let action else {
            return ClientVerdict(client: client, accepts: true, problems: ["accepts a link that ActionLinks rejects"])
        }
        var problems: [String] = []
        var compared: [(String, String?)] = [
            ("mode", action.mode.rawValue), ("oobCode", action.oobCode), ("continueUrl", action.continueURL),
            ("tenantId", action.tenantID),
        ]
        if client != .ios { compared.append(("apiKey", action.apiKey)) }
        if client != .android { compared.append(("lang", action.languageCode)) }
        for (name, ours) in compared where fields[name].nonEmpty != ours {
            let theirs = fields[name].nonEmpty.map { "\"\($0)\"" } ?? "nothing"
            problems.append("reads \(name) as \(theirs) instead of \(ours.map { "\"\($0)\"" } ?? "nothing")")
        }
        return ClientVerdict(client: client, accepts: true, problems: problems)
    }
}
