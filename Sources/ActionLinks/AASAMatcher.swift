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
    /// Every rule with its defaults resolved and its patterns compiled, once, in file order.
    private let details: [CompiledDetail]

    /// Prepares a matcher for one association file: resolves defaults and compiles every pattern, so
    /// each evaluation only runs the matching.
    public init(association: AppSiteAssociation) {
        self.association = association
        let variables = association.appLinks?.substitutionTable ?? [:]
        let domainDefaults = association.appLinks?.defaults
        details = (association.appLinks?.details ?? []).enumerated().map { detailIndex, detail in
            if let components = detail.components {
                return CompiledDetail(
                    appIDs: detail.appIDs,
                    rules: components.enumerated().map { componentIndex, component in
                        CompiledRule(
                            rule: .component(detail: detailIndex, component: componentIndex),
                            settings: ResolvedComponent(component, detail: detail.defaults, domain: domainDefaults), variables: variables)
                    })
            }
            return CompiledDetail(
                appIDs: detail.appIDs,
                rules: (detail.paths ?? []).enumerated().map { pathIndex, entry in
                    CompiledRule(rule: .legacyPath(detail: detailIndex, path: pathIndex), legacyPath: entry)
                })
        }
    }

    /// Evaluates `url` for `appID` against the file served by `domain`, explaining every rule that did not decide.
    public func evaluate(_ url: AssociatedURL, appID: String, domain: String) -> AASAMatchResult {
        run(url, appID: appID, domain: domain, explain: true)
    }

    /// The decision alone, without explanations: what a server routing requests needs, several times faster.
    public func decide(_ url: AssociatedURL, appID: String, domain: String) -> (
        outcome: AASAMatchResult.Outcome, rule: AASAMatchResult.Rule?
    ) {
        let result = run(url, appID: appID, domain: domain, explain: false)
        return (result.outcome, result.decidingRule)
    }

    private func run(_ url: AssociatedURL, appID: String, domain: String, explain: Bool) -> AASAMatchResult {
        guard Self.normalizedHost(url.host) == Self.normalizedHost(domain) else {
            return AASAMatchResult(
                outcome: .noMatch, decidingRule: nil, misses: [],
                summary: explain ? "URL host \"\(url.host)\" is not \"\(domain)\", so this file does not apply" : "")
        }
        guard association.appLinks != nil else {
            return AASAMatchResult(outcome: .noMatch, decidingRule: nil, misses: [], summary: "the file has no applinks service")
        }
        let subject = Subject(url)
        var misses: [AASAMatchResult.Miss] = []
        var consideredDetails = 0
        for detail in details where detail.appIDs.contains(appID) {
            consideredDetails += 1
            for rule in detail.rules {
                if let reason = rule.mismatch(subject, explain: explain) {
                    if explain { misses.append(.init(rule: rule.rule, reason: reason + (rule.voidedQueryNote ?? ""))) }
                    continue
                }
                let outcome: AASAMatchResult.Outcome = rule.excludes ? .exclude : .match
                let summary =
                    explain ? "\(outcome == .exclude ? "excluded" : "matched") by \(rule.rule)" + (rule.voidedQueryNote ?? "") : ""
                return AASAMatchResult(outcome: outcome, decidingRule: rule.rule, misses: misses, summary: summary)
            }
        }
        let summary =
            !explain
            ? "" : consideredDetails == 0 ? "no applinks detail lists app ID \"\(appID)\"" : "no rule for app ID \"\(appID)\" matched"
        return AASAMatchResult(outcome: .noMatch, decidingRule: nil, misses: misses, summary: summary)
    }

    /// Built-in → `applinks.defaults` → detail `defaults` → component, key by key.
    struct ResolvedComponent: Sendable {
        let path: String
        let query: AppSiteAssociation.Component.Query
        /// The first `?` dictionary, from the component outwards, that a non-string value voided.
        let voidedQuery: (layer: Layer, name: String, value: JSONValue)?
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
            // docs/LINK-RULES.md §7.2: one non-string value voids the whole `?` dictionary. Void means
            // absent, not unmatchable: Apple documents `?` as "the pattern or dictionary to match with
            // the URL query component. The default is `*`, which matches everything", the dictionary's
            // values as patterns, and a component left unspecified as ignored (WWDC19 "What's New in
            // Universal Links"); it documents no case where a `?` makes a component unmatchable. So a
            // voided layer counts as having no `?`: the next layer's `?`, else `*`, applies. A `?` that
            // is neither a string nor a dictionary is another case (`mistypedPatternKeys`).
            var effectiveQuery: AppSiteAssociation.Component.Query?
            var voided: (layer: Layer, name: String, value: JSONValue)?
            for (layer, rule) in zip([Layer.component, .detailDefaults, .domainDefaults], [component, detail, domain]) {
                guard let query = rule?.query else { continue }
                if let item = query.voidingItem {
                    if voided == nil { voided = (layer, item.name, item.value) }
                    continue
                }
                effectiveQuery = query
                break
            }
            query = effectiveQuery ?? .pattern("*")
            voidedQuery = voided
            fragment = layers.lazy.compactMap(\.fragment).first ?? "*"
            exclude = layers.lazy.compactMap(\.exclude).first ?? false
            caseSensitive = layers.lazy.compactMap(\.caseSensitive).first ?? true
            percentEncoded = layers.lazy.compactMap(\.percentEncoded).first ?? true
            mistypedPatternKeys = component.mistypedKeys.filter { ["/", "?", "#"].contains($0) }
        }

        /// Where a setting came from.
        enum Layer: Sendable {
            case component, detailDefaults, domainDefaults
        }
    }

    private struct CompiledDetail: Sendable {
        let appIDs: [String]
        let rules: [CompiledRule]
    }

    /// The URL's parts in the forms rules compare, computed once per evaluation.
    private struct Subject {
        let shownPath: String
        let path: [Unicode.Scalar]
        let decodedShownPath: String
        let decodedPath: [Unicode.Scalar]
        let rawQuery: String
        let decodedQuery: String
        let items: [(name: [Unicode.Scalar], value: String)]
        let decodedItems: [(name: [Unicode.Scalar], value: String)]
        let fragment: String
        let decodedFragment: String

        init(_ url: AssociatedURL) {
            shownPath = url.path.isEmpty ? "/" : url.path
            path = AASAMatcher.trimmingSlashes(Array(shownPath.unicodeScalars))
            decodedShownPath = AssociationWildcardPattern.percentDecoded(shownPath)
            decodedPath = AASAMatcher.trimmingSlashes(Array(decodedShownPath.unicodeScalars))
            rawQuery = url.query ?? ""
            decodedQuery = AssociationWildcardPattern.percentDecoded(rawQuery)
            let rawItems = AssociationWildcardPattern.queryItems(rawQuery)
            items = rawItems.map { (Array($0.name.unicodeScalars), $0.value) }
            decodedItems = rawItems.map {
                (
                    Array(AssociationWildcardPattern.percentDecoded($0.name).unicodeScalars),
                    AssociationWildcardPattern.percentDecoded($0.value)
                )
            }
            fragment = url.fragment ?? ""
            decodedFragment = AssociationWildcardPattern.percentDecoded(fragment)
        }
    }

    /// One rule, ready to match.
    private struct CompiledRule: Sendable {
        enum Query: Sendable {
            case pattern(AssociationWildcardPattern)
            case items([(name: String, scalars: [Unicode.Scalar], pattern: AssociationWildcardPattern)])
        }

        let rule: AASAMatchResult.Rule
        let excludes: Bool
        let caseSensitive: Bool
        let percentEncoded: Bool
        let pathText: String
        /// The trimmed pattern, and for `…/*` also its parent.
        let paths: [AssociationWildcardPattern]
        let fragmentText: String
        let fragment: AssociationWildcardPattern?
        let query: Query?
        /// Said after every explanation of this rule when a non-string value voided a `?` dictionary.
        let voidedQueryNote: String?
        let mistypedKey: String?

        init(rule: AASAMatchResult.Rule, settings: ResolvedComponent, variables: [String: [String]]) {
            self.rule = rule
            excludes = settings.exclude
            caseSensitive = settings.caseSensitive
            percentEncoded = settings.percentEncoded
            pathText = settings.path
            paths = Self.pathPatterns(settings.path, variables: variables)
            fragmentText = settings.fragment
            fragment = AssociationWildcardPattern(settings.fragment, variables: variables)
            mistypedKey = settings.mistypedPatternKeys.first
            switch settings.query {
            case .pattern(let text):
                query = .pattern(AssociationWildcardPattern(text, variables: variables))
            case .items(let rules):
                query = .items(
                    rules.compactMap { rule in
                        guard case .pattern(let text) = rule.predicate else { return nil }
                        return (rule.name, Array(rule.name.unicodeScalars), AssociationWildcardPattern(text, variables: variables))
                    })
            }
            voidedQueryNote = settings.voidedQuery.map { layer, name, value in
                let owner =
                    switch layer {
                    case .component: "its"
                    case .detailDefaults: "the detail defaults'"
                    case .domainDefaults: "applinks.defaults'"
                    }
                return " (\(owner) \"?\" dictionary is ignored: query item \"\(name)\" has \(value.kindName) instead of a string pattern, "
                    + "which voids the whole dictionary)"
            }
        }

        /// Legacy `paths`: the path only, case-sensitively, encoded, without substitution variables; `NOT ` excludes.
        init(rule: AASAMatchResult.Rule, legacyPath entry: String) {
            self.rule = rule
            excludes = entry.hasPrefix("NOT ")
            caseSensitive = true
            percentEncoded = true
            pathText = excludes ? String(entry.dropFirst(4)) : entry
            paths = Self.pathPatterns(pathText, variables: nil)
            fragmentText = "*"
            fragment = nil
            query = nil
            voidedQueryNote = nil
            mistypedKey = nil
        }

        /// Apple's path quirks: leading `/` optional, leading slash runs collapse, trailing slashes are
        /// insignificant, `…/*` also matches its parent, and an empty path is `/`.
        private static func pathPatterns(_ text: String, variables: [String: [String]]?) -> [AssociationWildcardPattern] {
            let trimmed = String(String.UnicodeScalarView(AASAMatcher.trimmingSlashes(Array(text.unicodeScalars))))
            var candidates = [trimmed]
            if trimmed.hasSuffix("/*") { candidates.append(String(trimmed.dropLast(2))) }
            return candidates.map { AssociationWildcardPattern($0, variables: variables) }
        }

        /// Nil when every constraint holds; otherwise the first failure, in words when `explain`.
        func mismatch(_ url: Subject, explain: Bool) -> String? {
            if let mistypedKey {
                return "\"\(mistypedKey)\" is not a string (or string/dictionary for \"?\"), so this component never matches"
            }
            let path = percentEncoded ? url.path : url.decodedPath
            if !paths.contains(where: { $0.matches(path, caseSensitive: caseSensitive) }) {
                guard explain else { return "" }
                return "path \"\(percentEncoded ? url.shownPath : url.decodedShownPath)\" does not match \"\(pathText)\""
                    + undefinedNote(paths[0])
            }
            if let reason = queryMismatch(url, explain: explain) { return reason }
            if let fragment {
                let text = percentEncoded ? url.fragment : url.decodedFragment
                if !fragment.matches(text, caseSensitive: caseSensitive) {
                    guard explain else { return "" }
                    return "fragment \"\(text)\" does not match \"\(fragmentText)\"" + undefinedNote(fragment)
                }
            }
            return nil
        }

        private func queryMismatch(_ url: Subject, explain: Bool) -> String? {
            switch query {
            case nil:
                return nil
            case .pattern(let pattern):
                let text = percentEncoded ? url.rawQuery : url.decodedQuery
                if pattern.matches(text, caseSensitive: caseSensitive) { return nil }
                guard explain else { return "" }
                return "query \"\(text)\" does not match \"\(pattern.source)\"" + undefinedNote(pattern)
            case .items(let rules):
                let items = percentEncoded ? url.items : url.decodedItems
                for rule in rules {
                    var found = false
                    for item in items
                    where item.name.count == rule.scalars.count
                        && zip(item.name, rule.scalars).allSatisfy({
                            AssociationWildcardPattern.scalarsEqual($0, $1, caseSensitive: caseSensitive)
                        })
                    {
                        found = true
                        if !rule.pattern.matches(item.value, caseSensitive: caseSensitive) {
                            guard explain else { return "" }
                            return "query item \"\(rule.name)\" value \"\(item.value)\" does not match \"\(rule.pattern.source)\""
                                + undefinedNote(rule.pattern)
                        }
                    }
                    if !found, !rule.pattern.matches("", caseSensitive: caseSensitive) {
                        guard explain else { return "" }
                        return "query item \"\(rule.name)\" is missing and \"\" does not match \"\(rule.pattern.source)\""
                            + undefinedNote(rule.pattern)
                    }
                }
                return nil
            }
        }

        private func undefinedNote(_ pattern: AssociationWildcardPattern) -> String {
            guard let name = pattern.undefinedVariables.first else { return "" }
            return " (substitution variable $(\(name)) is not defined, so nothing can match it)"
        }
    }

    static func trimmingSlashes(_ scalars: [Unicode.Scalar]) -> [Unicode.Scalar] {
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
        self.init(
            host: String(host), path: parts.path.isEmpty ? "/" : String(parts.path), query: parts.query.map(String.init),
            fragment: parts.fragment.map(String.init))
    }
}
