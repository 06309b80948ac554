/// A Digital Asset Links statement list (`/.well-known/assetlinks.json`).
///
/// `entries` stays aligned with the file's array so indices in results and diagnostics point at the same element;
/// an element that cannot be used at all is nil.
public struct AssetLinks: Sendable, Hashable {
    /// The relation that lets an app open a site's links.
    public static let handleAllURLs = "delegate_permission/common.handle_all_urls"
    /// The relation that lets an app use a site's saved credentials.
    public static let getLoginCredentials = "delegate_permission/common.get_login_creds"

    /// File elements in order; nil where an element is not a statement or include.
    public var entries: [Entry?]

    /// Creates a list in code.
    public init(entries: [Entry?]) {
        self.entries = entries
    }

    /// Decodes leniently: anything shaped like a statement or include is kept; the validator judges usability.
    public init(json: JSONValue) {
        self.entries = json.arrayValue?.map(Entry.init(json:)) ?? []
    }

    /// Parses and decodes raw file bytes.
    public init(bytes: some Collection<UInt8>) throws(JSONParseError) {
        self.init(json: try JSONValue.parse(bytes))
    }

    /// The statement list with dropped elements omitted, keys in a fixed order for reproducible output.
    public var json: JSONValue {
        .array(entries.compactMap { $0?.json })
    }

    /// One element of the list.
    public enum Entry: Sendable, Hashable {
        /// A statement about a target.
        case statement(Statement)
        /// `{"include": url}`: more statements live at `url`.
        case include(String)

        init?(json: JSONValue) {
            guard json.objectMembers != nil else { return nil }
            if let include = json["include"]?.stringValue {
                self = .include(include)
                return
            }
            guard let statement = Statement(json: json) else { return nil }
            self = .statement(statement)
        }

        var json: JSONValue {
            switch self {
            case .include(let url): .object([.init("include", .string(url))])
            case .statement(let statement): statement.json
            }
        }
    }

    /// `relation` + `target` (+ Android 15 `relation_extensions`).
    public struct Statement: Sendable, Hashable {
        /// `kind/detail` relation strings.
        public var relations: [String]
        /// What the relations are granted to.
        public var target: Target
        /// Dynamic App Links rules under `relation_extensions[handle_all_urls].dynamic_app_link_components`.
        public var dynamicRules: DynamicRules?

        /// Creates a statement in code.
        public init(relations: [String], target: Target, dynamicRules: DynamicRules? = nil) {
            self.relations = relations
            self.target = target
            self.dynamicRules = dynamicRules
        }

        init?(json: JSONValue) {
            guard let relations = json["relation"]?.arrayValue?.compactMap(\.stringValue),
                let targetJSON = json["target"], let target = Target(json: targetJSON)
            else { return nil }
            self.relations = relations
            self.target = target
            let extensions = json["relation_extensions"]?[AssetLinks.handleAllURLs]
            self.dynamicRules = extensions?["dynamic_app_link_components"].map(DynamicRules.init(json:))
        }

        var json: JSONValue {
            var members: [JSONValue.Member] = [
                .init("relation", .array(relations.map(JSONValue.string))), .init("target", target.json),
            ]
            if case .components(let components)? = dynamicRules {
                let rules = JSONValue.object([.init("dynamic_app_link_components", .array(components.map(\.json)))])
                members.append(.init("relation_extensions", .object([.init(AssetLinks.handleAllURLs, rules)])))
            }
            return .object(members)
        }
    }

    /// The asset a statement is about.
    public enum Target: Sendable, Hashable {
        /// `namespace: android_app`.
        case androidApp(packageName: String, sha256Fingerprints: [String])
        /// `namespace: web`.
        case web(site: String)

        init?(json: JSONValue) {
            switch json["namespace"]?.stringValue {
            case "android_app":
                guard let packageName = json["package_name"]?.stringValue else { return nil }
                let fingerprints = json["sha256_cert_fingerprints"]?.arrayValue?.compactMap(\.stringValue) ?? []
                self = .androidApp(packageName: packageName, sha256Fingerprints: fingerprints)
            case "web":
                guard let site = json["site"]?.stringValue else { return nil }
                self = .web(site: site)
            default:
                return nil
            }
        }

        var json: JSONValue {
            switch self {
            case .androidApp(let packageName, let fingerprints):
                .object([
                    .init("namespace", .string("android_app")), .init("package_name", .string(packageName)),
                    .init("sha256_cert_fingerprints", .array(fingerprints.map(JSONValue.string))),
                ])
            case .web(let site):
                .object([.init("namespace", .string("web")), .init("site", .string(site))])
            }
        }
    }

    /// Dynamic App Links rules; Android discards all of them when any field is malformed or the list is empty.
    public enum DynamicRules: Sendable, Hashable {
        /// Well-formed rules, evaluated in order.
        case components([DynamicComponent])
        /// Malformed or empty: Android falls back to the manifest's static intent filters.
        case discarded(reason: String)

        init(json: JSONValue) {
            guard let elements = json.arrayValue else {
                self = .discarded(reason: "dynamic_app_link_components is \(json.kindName), not an array")
                return
            }
            guard !elements.isEmpty else {
                self = .discarded(reason: "dynamic_app_link_components is empty")
                return
            }
            var components: [DynamicComponent] = []
            for (index, element) in elements.enumerated() {
                switch DynamicComponent.decode(element) {
                case .success(let component): components.append(component)
                case .failure(let problem):
                    self = .discarded(reason: "dynamic_app_link_components[\(index)]: \(problem.reason)")
                    return
                }
            }
            self = .components(components)
        }
    }

    /// One Dynamic App Links rule; `/`, `#` and `?` use `*`, `?` and `?*`, all optional.
    public struct DynamicComponent: Sendable, Hashable {
        /// `/`: pattern for the decoded path.
        public var path: String?
        /// `?`: every named parameter must be present with a value matching its pattern; order is irrelevant.
        public var query: [QueryParameter]?
        /// `#`: pattern for the decoded fragment.
        public var fragment: String?
        /// `exclude`: a match keeps the URL out of the app.
        public var exclude: Bool
        /// `comment`: ignored.
        public var comment: String?

        /// Creates a rule in code.
        public init(
            path: String? = nil, query: [QueryParameter]? = nil, fragment: String? = nil, exclude: Bool = false,
            comment: String? = nil
        ) {
            self.path = path
            self.query = query
            self.fragment = fragment
            self.exclude = exclude
            self.comment = comment
        }

        /// One `name: pattern` entry of the `?` dictionary.
        public struct QueryParameter: Sendable, Hashable {
            /// The parameter name, compared after decoding.
            public var name: String
            /// Pattern for the decoded value.
            public var pattern: String

            /// Creates a parameter rule.
            public init(name: String, pattern: String) {
                self.name = name
                self.pattern = pattern
            }
        }

        struct Malformed: Error {
            let reason: String
        }

        static func decode(_ json: JSONValue) -> Result<DynamicComponent, Malformed> {
            guard let members = json.objectMembers else { return .failure(Malformed(reason: "is \(json.kindName), not an object")) }
            var component = DynamicComponent()
            for member in members {
                switch member.key {
                case "/", "#", "comment":
                    guard let text = member.value.stringValue else {
                        return .failure(Malformed(reason: "\"\(member.key)\" is \(member.value.kindName), not a string"))
                    }
                    if member.key == "/" {
                        component.path = text
                    } else if member.key == "#" {
                        component.fragment = text
                    } else {
                        component.comment = text
                    }
                case "exclude":
                    guard let flag = member.value.boolValue else {
                        return .failure(Malformed(reason: "\"exclude\" is \(member.value.kindName), not a boolean"))
                    }
                    component.exclude = flag
                case "?":
                    guard let items = member.value.objectMembers else {
                        return .failure(Malformed(reason: "\"?\" is \(member.value.kindName), not a dictionary"))
                    }
                    var parameters: [QueryParameter] = []
                    for item in items {
                        guard let pattern = item.value.stringValue else {
                            return .failure(
                                Malformed(reason: "query parameter \"\(item.key)\" maps to \(item.value.kindName), not a string"))
                        }
                        parameters.append(QueryParameter(name: item.key, pattern: pattern))
                    }
                    component.query = parameters
                default:
                    continue
                }
            }
            return .success(component)
        }

        var json: JSONValue {
            var members: [JSONValue.Member] = []
            if let path { members.append(.init("/", .string(path))) }
            if let query { members.append(.init("?", .object(query.map { .init($0.name, .string($0.pattern)) }))) }
            if let fragment { members.append(.init("#", .string(fragment))) }
            if exclude { members.append(.init("exclude", .bool(true))) }
            if let comment { members.append(.init("comment", .string(comment))) }
            return .object(members)
        }
    }
}
