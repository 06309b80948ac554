/// Whether a statement list lets an Android app handle a URL, and which statement and rule decided.
public struct AssetLinksVerdict: Sendable, Hashable {
    /// The decision.
    public enum Outcome: Sendable, Hashable {
        /// Verified for the app; the URL opens it (subject to the manifest's intent filters).
        case handled
        /// Verified, but a dynamic rule (or the absence of a matching one) keeps this URL out of the app.
        case excluded
        /// No statement grants `handle_all_urls` to this package and certificate.
        case notAuthorized
    }

    /// Something that was examined and did not decide, with the reason.
    public struct Miss: Sendable, Hashable {
        /// Index of the element in the file's array.
        public let statement: Int
        /// Index within `dynamic_app_link_components`, when the miss is a rule.
        public let component: Int?
        /// A short human explanation.
        public let reason: String
    }

    /// The decision.
    public let outcome: Outcome
    /// The statement that authorised the app, if any.
    public let statement: Int?
    /// The dynamic rule that decided, if one did.
    public let component: Int?
    /// Everything examined before the decision.
    public let misses: [Miss]
    /// One sentence summarising the decision.
    public let summary: String
}

/// Evaluates Digital Asset Links plus Android 15 Dynamic App Links rules for one app and URL.
///
/// Patterns follow Android's documented glob: `*` consumes characters only up to the first occurrence of the
/// pattern's next character (no backtracking), `?` is one character, `?*` one or more. Matching is case-sensitive
/// and runs on decoded URL parts, as Android's `Uri` exposes them. `include` statements are reported, not fetched.
public struct AssetLinksMatcher: Sendable {
    /// The statement list being evaluated.
    public let assetLinks: AssetLinks

    /// Prepares a matcher for one statement list.
    public init(assetLinks: AssetLinks) {
        self.assetLinks = assetLinks
    }

    /// Evaluates `url` for the app `packageName` signed with `certificateFingerprint`, against `domain`'s file.
    public func evaluate(
        _ url: AssociatedURL, packageName: String, certificateFingerprint: String, domain: String
    ) -> AssetLinksVerdict {
        guard url.host.lowercased() == domain.lowercased() else {
            return AssetLinksVerdict(
                outcome: .notAuthorized, statement: nil, component: nil, misses: [],
                summary: "URL host \"\(url.host)\" is not \"\(domain)\", so this file does not apply")
        }
        let fingerprint = Self.normalizedFingerprint(certificateFingerprint) ?? certificateFingerprint
        var misses: [AssetLinksVerdict.Miss] = []
        for (index, entry) in assetLinks.entries.enumerated() {
            guard let entry else {
                misses.append(.init(statement: index, component: nil, reason: "not a usable statement"))
                continue
            }
            guard case .statement(let statement) = entry else {
                if case .include(let location) = entry {
                    misses.append(
                        .init(statement: index, component: nil, reason: "include of \(location) is not followed; evaluate that file too"))
                }
                continue
            }
            if let reason = Self.authorizationFailure(statement, packageName: packageName, fingerprint: fingerprint) {
                misses.append(.init(statement: index, component: nil, reason: reason))
                continue
            }
            return decide(statement.dynamicRules, statement: index, url: url, misses: misses)
        }
        return AssetLinksVerdict(
            outcome: .notAuthorized, statement: nil, component: nil, misses: misses,
            summary: "no statement grants \(AssetLinks.handleAllURLs) to \(packageName) with certificate \(fingerprint)")
    }

    private func decide(
        _ rules: AssetLinks.DynamicRules?, statement: Int, url: AssociatedURL, misses: [AssetLinksVerdict.Miss]
    ) -> AssetLinksVerdict {
        switch rules {
        case nil:
            return AssetLinksVerdict(
                outcome: .handled, statement: statement, component: nil, misses: misses,
                summary: "verified by statement \(statement); no dynamic rules, so the manifest's intent filters decide")
        case .discarded(let reason)?:
            return AssetLinksVerdict(
                outcome: .handled, statement: statement, component: nil, misses: misses,
                summary: "verified by statement \(statement); dynamic rules discarded (\(reason)), so the manifest decides")
        case .components(let components)?:
            var misses = misses
            for (index, component) in components.enumerated() {
                if let reason = Self.mismatch(component, url: url) {
                    misses.append(.init(statement: statement, component: index, reason: reason))
                    continue
                }
                return AssetLinksVerdict(
                    outcome: component.exclude ? .excluded : .handled, statement: statement, component: index,
                    misses: misses,
                    summary:
                        "\(component.exclude ? "excluded" : "handled") by dynamic_app_link_components[\(index)] of statement \(statement)")
            }
            return AssetLinksVerdict(
                outcome: .excluded, statement: statement, component: nil, misses: misses,
                summary: "no dynamic rule of statement \(statement) matched, and Android treats an unmatched URL as excluded")
        }
    }

    private static func authorizationFailure(_ statement: AssetLinks.Statement, packageName: String, fingerprint: String) -> String? {
        guard case .androidApp(let listedPackage, let fingerprints) = statement.target else {
            return "targets a web site, not an Android app"
        }
        guard listedPackage == packageName else { return "is for package \(listedPackage)" }
        guard statement.relations.contains(AssetLinks.handleAllURLs) else {
            return "does not grant \(AssetLinks.handleAllURLs)"
        }
        guard fingerprints.contains(fingerprint) else {
            if fingerprints.contains(where: { $0.uppercased() == fingerprint }) {
                return "lists the fingerprint in lower case, which Google's verifier rejects as malformed"
            }
            return "does not list certificate \(fingerprint)"
        }
        return nil
    }

    private static func mismatch(_ component: AssetLinks.DynamicComponent, url: AssociatedURL) -> String? {
        let path = AssociationWildcardPattern.percentDecoded(url.path.isEmpty ? "/" : url.path)
        if let pattern = component.path, !globMatches(pattern, path) {
            return "path \"\(path)\" does not match \"\(pattern)\""
        }
        let fragment = AssociationWildcardPattern.percentDecoded(url.fragment ?? "")
        if let pattern = component.fragment, !globMatches(pattern, fragment) {
            return "fragment \"\(fragment)\" does not match \"\(pattern)\""
        }
        let parameters = AssociationWildcardPattern.queryItems(url.query ?? "").map {
            (
                name: AssociationWildcardPattern.percentDecoded($0.name, plusAsSpace: true),
                value: AssociationWildcardPattern.percentDecoded($0.value, plusAsSpace: true)
            )
        }
        for rule in component.query ?? [] {
            let values = parameters.filter { $0.name == rule.name }.map(\.value)
            if values.isEmpty { return "query parameter \"\(rule.name)\" is missing" }
            if !values.contains(where: { globMatches(rule.pattern, $0) }) {
                return "no value of query parameter \"\(rule.name)\" matches \"\(rule.pattern)\""
            }
        }
        return nil
    }

    /// Android's simple glob: linear, never backtracks.
    private static func globMatches(_ patternText: String, _ inputText: String) -> Bool {
        let pattern = Array(patternText.unicodeScalars)
        let input = Array(inputText.unicodeScalars)
        var patternIndex = 0
        var inputIndex = 0
        while patternIndex < pattern.count {
            switch pattern[patternIndex] {
            case "*":
                while patternIndex < pattern.count, pattern[patternIndex] == "*" { patternIndex += 1 }
                guard patternIndex < pattern.count else { return true }
                let stop = pattern[patternIndex]
                if stop != "?" {
                    while inputIndex < input.count, input[inputIndex] != stop { inputIndex += 1 }
                }
            case "?":
                guard inputIndex < input.count else { return false }
                inputIndex += 1
                patternIndex += 1
            case let literal:
                guard inputIndex < input.count, input[inputIndex] == literal else { return false }
                inputIndex += 1
                patternIndex += 1
            }
        }
        return inputIndex == input.count
    }

    /// Upper-case with colons, accepting the colon-less and lower-case spellings tools print; nil if not SHA-256 hex.
    static func normalizedFingerprint(_ text: String) -> String? {
        let hex = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != ":" && $0 != " " })).uppercased()
        guard hex.unicodeScalars.count == 64,
            hex.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) || ("A"..."F").contains($0) })
        else { return nil }
        var octets: [String] = []
        var start = hex.startIndex
        while start < hex.endIndex {
            let end = hex.index(start, offsetBy: 2)
            octets.append(String(hex[start..<end]))
            start = end
        }
        return octets.joined(separator: ":")
    }
}
