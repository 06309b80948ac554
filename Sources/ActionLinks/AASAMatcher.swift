/// A URL already split into raw parts, so matching sees exactly the percent-encoded text that was written.
public struct AssociatedURL: Sendable, Hashable {
    /// The host, compared case-insensitively.
    public var host: String
    /// The raw path; empty reads as `/`.
    public var path: String
    /// The raw query without `?`; nil reads as "".
    public var query: String?
    /// The raw fragment without `#`; nil reads as "".
    public var fragment: String?

    /// Creates a split URL.
    public init(host: String, path: String, query: String? = nil, fragment: String? = nil) {
        self.host = host
        self.path = path
        self.query = query
        self.fragment = fragment
    }
}

/// What an association file decides for one URL and app, and why.
public struct AASAMatchResult: Sendable, Hashable {
    /// The decision Apple's matcher would reach.
    public enum Outcome: Sendable, Hashable {
        /// The app opens the URL.
        case match
        /// A rule with `exclude: true` (or legacy `NOT `) matched: the URL stays in the browser.
        case exclude
        /// No rule for this app matched.
        case noMatch
    }

    /// Where a rule lives in the file.
    public enum Rule: Sendable, Hashable, CustomStringConvertible {
        /// `applinks.details[detail].components[component]`.
        case component(detail: Int, component: Int)
        /// `applinks.details[detail].paths[path]`.
        case legacyPath(detail: Int, path: Int)

        /// The rule's JSON path, e.g. `applinks.details[0].components[2]`.
        public var description: String {
            switch self {
            case .component(let detail, let component): "applinks.details[\(detail)].components[\(component)]"
            case .legacyPath(let detail, let path): "applinks.details[\(detail)].paths[\(path)]"
            }
        }
    }

    /// A rule that was tried before the decision and did not match.
    public struct Miss: Sendable, Hashable {
        /// The rule tried.
        public let rule: Rule
        /// A short human explanation of the first constraint that failed.
        public let reason: String
    }

    /// The decision.
    public let outcome: Outcome
    /// The rule that decided, nil for `.noMatch`.
    public let decidingRule: Rule?
    /// Every rule tried before the decision, in evaluation order.
    public let misses: [Miss]
    /// One sentence summarising the decision.
    public let summary: String
}

/// Decides universal-link handling exactly as Apple documents it, including the undocumented path quirks.
public struct AASAMatcher: Sendable {
    /// The association being evaluated.
    public let association: AppSiteAssociation
    private let variables: [String: [String]]

    /// Prepares a matcher for one association file.
    public init(association: AppSiteAssociation) {
        self.association = association
        self.variables = association.appLinks?.substitutionTable ?? [:]
    }

    /// Evaluates `url` for `appID` against the file served by `domain`.
    public func evaluate(_ url: AssociatedURL, appID: String, domain: String) -> AASAMatchResult {
        guard Self.normalizedHost(url.host) == Self.normalizedHost(domain) else {
            return AASAMatchResult(
                outcome: .noMatch, decidingRule: nil, misses: [],
                summary: "URL host \"\(url.host)\" is not \"\(domain)\", so this file does not apply")
        }
        guard let appLinks = association.appLinks else {
            return AASAMatchResult(outcome: .noMatch, decidingRule: nil, misses: [], summary: "the file has no applinks service")
        }
        var misses: [AASAMatchResult.Miss] = []
        var consideredDetails = 0
        for (detailIndex, detail) in appLinks.details.enumerated() where detail.appIDs.contains(appID) {
            consideredDetails += 1
            if let components = detail.components {
                for (componentIndex, component) in components.enumerated() {
                    let rule = AASAMatchResult.Rule.component(detail: detailIndex, component: componentIndex)
                    let settings = ResolvedComponent(component, detail: detail.defaults, domain: appLinks.defaults)
                    if let reason = mismatchReason(settings, url: url) {
                        misses.append(.init(rule: rule, reason: reason))
                        continue
                    }
                    return decided(settings.exclude ? .exclude : .match, by: rule, misses: misses)
                }
            } else if let paths = detail.paths {
                for (pathIndex, entry) in paths.enumerated() {
                    let rule = AASAMatchResult.Rule.legacyPath(detail: detailIndex, path: pathIndex)
                    let isExclusion = entry.hasPrefix("NOT ")
                    let pattern = isExclusion ? String(entry.dropFirst(4)) : entry
                    // Legacy patterns match the path only, case-sensitively, with no substitution variables.
                    if let reason = pathMismatch(pattern, rawPath: url.path, caseSensitive: true, percentEncoded: true, variables: nil) {
                        misses.append(.init(rule: rule, reason: reason))
                        continue
                    }
                    return decided(isExclusion ? .exclude : .match, by: rule, misses: misses)
                }
            }
        }
        let summary =
            consideredDetails == 0
            ? "no applinks detail lists app ID \"\(appID)\"" : "no rule for app ID \"\(appID)\" matched"
        return AASAMatchResult(outcome: .noMatch, decidingRule: nil, misses: misses, summary: summary)
    }

    private func decided(
        _ outcome: AASAMatchResult.Outcome, by rule: AASAMatchResult.Rule, misses: [AASAMatchResult.Miss]
    ) -> AASAMatchResult {
        let verb = outcome == .exclude ? "excluded" : "matched"
        return AASAMatchResult(outcome: outcome, decidingRule: rule, misses: misses, summary: "\(verb) by \(rule)")
    }

    /// Built-in → `applinks.defaults` → detail `defaults` → component, key by key.
    private struct ResolvedComponent {
        let path: String
        let query: AppSiteAssociation.Component.Query
        let fragment: String
        let exclude: Bool
        let caseSensitive: Bool
        let percentEncoded: Bool
        let mistypedPatternKeys: [String]

        init(
            _ component: AppSiteAssociation.Component, detail: AppSiteAssociation.Component?,
            domain: AppSiteAssociation.Component?
        ) {
            let layers = [component, detail, domain].compactMap { $0 }
            path = layers.lazy.compactMap(\.path).first ?? "*"
            query = layers.lazy.compactMap(\.query).first ?? .pattern("*")
            fragment = layers.lazy.compactMap(\.fragment).first ?? "*"
            exclude = layers.lazy.compactMap(\.exclude).first ?? false
            caseSensitive = layers.lazy.compactMap(\.caseSensitive).first ?? true
            percentEncoded = layers.lazy.compactMap(\.percentEncoded).first ?? true
            mistypedPatternKeys = component.mistypedKeys.filter { ["/", "?", "#"].contains($0) }
        }
    }

    /// Nil when every constraint holds, otherwise the first failure in words.
    private func mismatchReason(_ settings: ResolvedComponent, url: AssociatedURL) -> String? {
        if let key = settings.mistypedPatternKeys.first {
            return "\"\(key)\" is not a string (or string/dictionary for \"?\"), so this component never matches"
        }
        if let reason = pathMismatch(
            settings.path, rawPath: url.path, caseSensitive: settings.caseSensitive,
            percentEncoded: settings.percentEncoded, variables: variables)
        {
            return reason
        }
        if let reason = queryMismatch(settings, rawQuery: url.query ?? "") { return reason }
        let fragment = settings.percentEncoded ? (url.fragment ?? "") : AssociationWildcardPattern.percentDecoded(url.fragment ?? "")
        let fragmentPattern = AssociationWildcardPattern(settings.fragment, variables: variables)
        if !fragmentPattern.matches(fragment, caseSensitive: settings.caseSensitive) {
            return "fragment \"\(fragment)\" does not match \"\(settings.fragment)\"" + undefinedNote(fragmentPattern)
        }
        return nil
    }

    /// Apple's path quirks: leading `/` optional, leading slash runs collapse, trailing slashes are insignificant,
    /// `…/*` also matches its parent, and an empty path is `/`.
    private func pathMismatch(
        _ patternText: String, rawPath: String, caseSensitive: Bool, percentEncoded: Bool, variables: [String: [String]]?
    ) -> String? {
        let shownPath = rawPath.isEmpty ? "/" : rawPath
        let subjectText = percentEncoded ? shownPath : AssociationWildcardPattern.percentDecoded(shownPath)
        let subject = Self.trimmingSlashes(Array(subjectText.unicodeScalars))
        let trimmedPattern = String(String.UnicodeScalarView(Self.trimmingSlashes(Array(patternText.unicodeScalars))))
        var candidates = [trimmedPattern]
        if trimmedPattern.hasSuffix("/*") { candidates.append(String(trimmedPattern.dropLast(2))) }
        let compiled = candidates.map { AssociationWildcardPattern($0, variables: variables) }
        if compiled.contains(where: { $0.matches(subject, caseSensitive: caseSensitive) }) { return nil }
        return "path \"\(subjectText)\" does not match \"\(patternText)\"" + undefinedNote(compiled[0])
    }

    private func queryMismatch(_ settings: ResolvedComponent, rawQuery: String) -> String? {
        let decode: (String) -> String = {
            settings.percentEncoded ? $0 : AssociationWildcardPattern.percentDecoded($0)
        }
        switch settings.query {
        case .pattern(let patternText):
            let pattern = AssociationWildcardPattern(patternText, variables: variables)
            let query = decode(rawQuery)
            if pattern.matches(query, caseSensitive: settings.caseSensitive) { return nil }
            return "query \"\(query)\" does not match \"\(patternText)\"" + undefinedNote(pattern)
        case .items(let rules):
            for rule in rules {
                if case .nonString(let value) = rule.predicate {
                    return "query item \"\(rule.name)\" has \(value.kindName) instead of a string pattern, which voids "
                        + "the whole \"?\" dictionary, so this component never matches"
                }
            }
            let items = AssociationWildcardPattern.queryItems(rawQuery).map { (name: decode($0.name), value: decode($0.value)) }
            for rule in rules {
                guard case .pattern(let patternText) = rule.predicate else { continue }
                let pattern = AssociationWildcardPattern(patternText, variables: variables)
                let ruleName = Array(rule.name.unicodeScalars)
                let values = items.filter { item in
                    let itemName = Array(item.name.unicodeScalars)
                    return itemName.count == ruleName.count
                        && zip(itemName, ruleName).allSatisfy {
                            AssociationWildcardPattern.scalarsEqual($0, $1, caseSensitive: settings.caseSensitive)
                        }
                }.map(\.value)
                if values.isEmpty {
                    if !pattern.matches("", caseSensitive: settings.caseSensitive) {
                        return "query item \"\(rule.name)\" is missing and \"\" does not match \"\(patternText)\""
                            + undefinedNote(pattern)
                    }
                    continue
                }
                for value in values where !pattern.matches(value, caseSensitive: settings.caseSensitive) {
                    return "query item \"\(rule.name)\" value \"\(value)\" does not match \"\(patternText)\""
                        + undefinedNote(pattern)
                }
            }
            return nil
        }
    }

    private func undefinedNote(_ pattern: AssociationWildcardPattern) -> String {
        guard let name = pattern.undefinedVariables.first else { return "" }
        return " (substitution variable $(\(name)) is not defined, so nothing can match it)"
    }

    private static func trimmingSlashes(_ scalars: [Unicode.Scalar]) -> [Unicode.Scalar] {
        guard let first = scalars.firstIndex(where: { $0 != "/" }) else { return [] }
        let last = scalars.lastIndex(where: { $0 != "/" })!
        return Array(scalars[first...last])
    }

    private static func normalizedHost(_ host: String) -> String {
        var lowered = String(String.UnicodeScalarView(host.unicodeScalars.map(AssociationWildcardPattern.asciiLowercased)))
        if lowered.hasSuffix(".") { lowered.removeLast() }
        return lowered
    }
}

extension AssociatedURL {
    /// Splits `url` with the strict splitter: host, raw path (`/` when empty), raw query and fragment.
    public init(parsing url: String) throws(URLSplitError) {
        let parts = try URLParts(url)
        guard let host = parts.host, !host.isEmpty else {
            throw URLSplitError(code: .emptyHost, offset: nil, message: "the URL has no host, so no association file applies to it")
        }
        self.init(host: String(host), path: parts.path.isEmpty ? "/" : String(parts.path), query: parts.query.map(String.init),
            fragment: parts.fragment.map(String.init))
    }
}
