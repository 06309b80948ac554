/// An apple-app-site-association file, decoded leniently so that matching works on whatever a server really serves.
///
/// Decoding never fails and never traps: values of the wrong type are recorded (see `Component.mistypedKeys`) or
/// dropped, and `AASAValidator` reports them. Both the current (`components`) and legacy (`paths`,
/// object-keyed `details`) forms are understood.
public struct AppSiteAssociation: Sendable, Hashable {
    /// The `applinks` service, or nil when the file has none.
    public var appLinks: AppLinks?
    /// `webcredentials.apps`: apps that may use the domain's saved passwords.
    public var webCredentialsApps: [String]?
    /// `appclips.apps`: App Clips that may be invoked from the domain.
    public var appClipsApps: [String]?
    /// `activitycontinuation.apps`: apps that may continue Handoff activities from the domain.
    public var activityContinuationApps: [String]?

    /// Creates an association in code, typically for generation.
    public init(
        appLinks: AppLinks? = nil, webCredentialsApps: [String]? = nil, appClipsApps: [String]? = nil,
        activityContinuationApps: [String]? = nil
    ) {
        self.appLinks = appLinks
        self.webCredentialsApps = webCredentialsApps
        self.appClipsApps = appClipsApps
        self.activityContinuationApps = activityContinuationApps
    }

    /// Decodes from parsed JSON; anything that is not an object yields an empty association.
    public init(json: JSONValue) {
        self.appLinks = json["applinks"].map(AppLinks.init(json:))
        self.webCredentialsApps = Self.appList(json["webcredentials"])
        self.appClipsApps = Self.appList(json["appclips"])
        self.activityContinuationApps = Self.appList(json["activitycontinuation"])
    }

    /// Parses and decodes raw file bytes.
    public init(bytes: some Collection<UInt8>) throws(JSONParseError) {
        self.init(json: try JSONValue.parse(bytes))
    }

    private static func appList(_ service: JSONValue?) -> [String]? {
        guard let service, service.objectMembers != nil else { return nil }
        return service["apps"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// The document in Apple's current format, keys in a fixed order so output is byte-for-byte reproducible.
    public var json: JSONValue {
        var members: [JSONValue.Member] = []
        if let appLinks { members.append(.init("applinks", appLinks.json)) }
        let services = [
            ("webcredentials", webCredentialsApps), ("appclips", appClipsApps),
            ("activitycontinuation", activityContinuationApps),
        ]
        for case let (name, apps?) in services {
            members.append(.init(name, .object([.init("apps", .array(apps.map(JSONValue.string)))])))
        }
        return .object(members)
    }
}

extension AppSiteAssociation {
    /// The `applinks` object.
    public struct AppLinks: Sendable, Hashable {
        /// Domain-wide defaults for every component (`applinks.defaults`).
        public var defaults: Component?
        /// App groups and their rules, in file order; object-keyed legacy `details` become one entry per key.
        public var details: [Detail]
        /// Custom `$(name)` variables in file order.
        public var substitutionVariables: [SubstitutionVariable]

        /// Creates the service in code.
        public init(defaults: Component? = nil, details: [Detail], substitutionVariables: [SubstitutionVariable] = []) {
            self.defaults = defaults
            self.details = details
            self.substitutionVariables = substitutionVariables
        }

        /// Decodes `applinks`, accepting both the array and the legacy object-keyed `details`.
        public init(json: JSONValue) {
            self.defaults = json["defaults"].flatMap { $0.objectMembers == nil ? nil : Component(json: $0) }
            switch json["details"] {
            case .array(let elements)?:
                self.details = elements.compactMap { $0.objectMembers == nil ? nil : Detail(json: $0) }
            case .object(let members)?:
                self.details = members.map { Detail(legacyAppID: $0.key, json: $0.value) }
            default:
                self.details = []
            }
            self.substitutionVariables =
                json["substitutionVariables"]?.objectMembers?.map { member in
                    SubstitutionVariable(name: member.key, values: member.value.arrayValue?.compactMap(\.stringValue) ?? [])
                } ?? []
        }

        /// Variable table for matching; with duplicate names the last wins, as with duplicate JSON keys.
        var substitutionTable: [String: [String]] {
            Dictionary(substitutionVariables.map { ($0.name, $0.values) }, uniquingKeysWith: { _, last in last })
        }

        var json: JSONValue {
            var members: [JSONValue.Member] = []
            if let defaults { members.append(.init("defaults", defaults.json)) }
            if !substitutionVariables.isEmpty {
                members.append(
                    .init(
                        "substitutionVariables",
                        .object(substitutionVariables.map { .init($0.name, .array($0.values.map(JSONValue.string))) })))
            }
            members.append(.init("details", .array(details.map(\.json))))
            return .object(members)
        }
    }

    /// One `$(name)` definition.
    public struct SubstitutionVariable: Sendable, Hashable {
        /// The name used inside `$( )`.
        public var name: String
        /// The alternatives; each may contain `*` and `?` but no other variable.
        public var values: [String]

        /// Creates a variable in code.
        public init(name: String, values: [String]) {
            self.name = name
            self.values = values
        }
    }

    /// One element of `applinks.details`.
    public struct Detail: Sendable, Hashable {
        /// `appID` and `appIDs` merged, `appID` first.
        public var appIDs: [String]
        /// The iOS 13+ rules; when present Apple ignores `paths`.
        public var components: [Component]?
        /// The legacy rules, strings optionally prefixed with `NOT `.
        public var paths: [String]?
        /// Defaults for this detail's components (`details[].defaults`).
        public var defaults: Component?

        /// Creates a detail in code.
        public init(appIDs: [String], components: [Component]? = nil, paths: [String]? = nil, defaults: Component? = nil) {
            self.appIDs = appIDs
            self.components = components
            self.paths = paths
            self.defaults = defaults
        }

        init(json: JSONValue) {
            var appIDs: [String] = []
            if let single = json["appID"]?.stringValue { appIDs.append(single) }
            appIDs += json["appIDs"]?.arrayValue?.compactMap(\.stringValue) ?? []
            self.appIDs = appIDs
            self.components = json["components"]?.arrayValue?.compactMap {
                $0.objectMembers == nil ? nil : Component(json: $0)
            }
            self.paths = json["paths"]?.arrayValue?.compactMap(\.stringValue)
            self.defaults = json["defaults"].flatMap { $0.objectMembers == nil ? nil : Component(json: $0) }
        }

        init(legacyAppID: String, json: JSONValue) {
            self.init(json: json)
            appIDs.insert(legacyAppID, at: 0)
        }

        var json: JSONValue {
            var members: [JSONValue.Member] = [.init("appIDs", .array(appIDs.map(JSONValue.string)))]
            if let defaults { members.append(.init("defaults", defaults.json)) }
            if let components { members.append(.init("components", .array(components.map(\.json)))) }
            if let paths { members.append(.init("paths", .array(paths.map(JSONValue.string)))) }
            return .object(members)
        }
    }

    /// One rule of `components`, also the shape of both `defaults` levels.
    public struct Component: Sendable, Hashable {
        /// `/`: pattern for the URL path.
        public var path: String?
        /// `?`: pattern for the whole query, or per-item patterns.
        public var query: Query?
        /// `#`: pattern for the fragment.
        public var fragment: String?
        /// `exclude`: a match stops evaluation and keeps the URL in the browser.
        public var exclude: Bool?
        /// `caseSensitive`: false folds ASCII case.
        public var caseSensitive: Bool?
        /// `percentEncoded`: false compares against the percent-decoded URL.
        public var percentEncoded: Bool?
        /// `comment`: ignored by the system.
        public var comment: String?
        /// Recognised keys whose value has the wrong JSON type; a mistyped `/`, `?` or `#` makes the rule unmatchable.
        public var mistypedKeys: [String]

        /// Creates a rule in code.
        public init(
            path: String? = nil, query: Query? = nil, fragment: String? = nil, exclude: Bool? = nil,
            caseSensitive: Bool? = nil, percentEncoded: Bool? = nil, comment: String? = nil
        ) {
            self.path = path
            self.query = query
            self.fragment = fragment
            self.exclude = exclude
            self.caseSensitive = caseSensitive
            self.percentEncoded = percentEncoded
            self.comment = comment
            self.mistypedKeys = []
        }

        /// Decodes one component or `defaults` object.
        public init(json: JSONValue) {
            self.init()
            for member in json.objectMembers ?? [] {
                let value = member.value
                switch member.key {
                case "/": path = typed(value.stringValue, key: "/")
                case "#": fragment = typed(value.stringValue, key: "#")
                case "comment": comment = typed(value.stringValue, key: "comment")
                case "exclude": exclude = typed(value.boolValue, key: "exclude")
                case "caseSensitive": caseSensitive = typed(value.boolValue, key: "caseSensitive")
                case "percentEncoded": percentEncoded = typed(value.boolValue, key: "percentEncoded")
                case "?": query = typed(Query(json: value), key: "?")
                default: continue
                }
            }
        }

        private mutating func typed<Value>(_ value: Value?, key: String) -> Value? {
            if value == nil, !mistypedKeys.contains(key) { mistypedKeys.append(key) }
            if value != nil { mistypedKeys.removeAll { $0 == key } }
            return value
        }

        /// The `?` key: one pattern for the whole raw query, or constraints on named items only.
        public enum Query: Sendable, Hashable {
            /// Matches the entire query string.
            case pattern(String)
            /// Each named item must match; in file order.
            case items([ItemRule])

            init?(json: JSONValue) {
                switch json {
                case .string(let pattern): self = .pattern(pattern)
                case .object(let members):
                    self = .items(
                        members.map { member in
                            ItemRule(
                                name: member.key,
                                predicate: member.value.stringValue.map(Predicate.pattern) ?? .nonString(member.value))
                        })
                default: return nil
                }
            }

            /// The first item whose value is not a string: one is enough to void the whole dictionary.
            var voidingItem: (name: String, value: JSONValue)? {
                guard case .items(let rules) = self else { return nil }
                for rule in rules {
                    if case .nonString(let value) = rule.predicate { return (rule.name, value) }
                }
                return nil
            }

            var json: JSONValue {
                switch self {
                case .pattern(let pattern): .string(pattern)
                case .items(let rules):
                    .object(
                        rules.map { rule in
                            switch rule.predicate {
                            case .pattern(let pattern): .init(rule.name, .string(pattern))
                            case .nonString(let value): .init(rule.name, value)
                            }
                        })
                }
            }
        }

        /// One `name: predicate` entry of a `?` dictionary.
        public struct ItemRule: Sendable, Hashable {
            /// The query item name, compared literally.
            public var name: String
            /// What every occurrence's value must match.
            public var predicate: Predicate

            /// Creates an item rule in code.
            public init(name: String, predicate: Predicate) {
                self.name = name
                self.predicate = predicate
            }
        }

        /// A query item predicate; one that is not a string voids the whole dictionary, which then counts as absent.
        public enum Predicate: Sendable, Hashable {
            /// A wildcard pattern for the item value.
            case pattern(String)
            /// A value of another JSON type, kept so matching and validation can explain the void dictionary.
            case nonString(JSONValue)
        }

        var json: JSONValue {
            var members: [JSONValue.Member] = []
            if let path { members.append(.init("/", .string(path))) }
            if let query { members.append(.init("?", query.json)) }
            if let fragment { members.append(.init("#", .string(fragment))) }
            if let exclude { members.append(.init("exclude", .bool(exclude))) }
            if let caseSensitive { members.append(.init("caseSensitive", .bool(caseSensitive))) }
            if let percentEncoded { members.append(.init("percentEncoded", .bool(percentEncoded))) }
            if let comment { members.append(.init("comment", .string(comment))) }
            return .object(members)
        }
    }
}
