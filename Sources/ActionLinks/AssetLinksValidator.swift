extension AssociationDiagnostic.Code {
    /// The top level is not one JSON array.
    public static let assetLinksNotAnArray = Self("assetlinks.not-an-array")
    /// The array is empty.
    public static let assetLinksEmptyList = Self("assetlinks.empty-list")
    /// An element of the array is not an object.
    public static let assetLinksStatementNotObject = Self("assetlinks.statement-not-object")
    /// A statement has no `relation`, or it is empty.
    public static let assetLinksMissingRelation = Self("assetlinks.missing-relation")
    /// `relation` is not an array.
    public static let assetLinksRelationNotArray = Self("assetlinks.relation-not-array")
    /// A relation is not `kind/detail` with a known kind and a detail of `[a-z0-9_.]+`.
    public static let assetLinksInvalidRelation = Self("assetlinks.invalid-relation")
    /// A statement has no `target`.
    public static let assetLinksMissingTarget = Self("assetlinks.missing-target")
    /// `target` is not an object.
    public static let assetLinksTargetNotObject = Self("assetlinks.target-not-object")
    /// `target.namespace` is missing or not `android_app` / `web`.
    public static let assetLinksUnknownNamespace = Self("assetlinks.unknown-namespace")
    /// An Android target has no `package_name`.
    public static let assetLinksMissingPackageName = Self("assetlinks.missing-package-name")
    /// `package_name` is not a Java-style package name.
    public static let assetLinksInvalidPackageName = Self("assetlinks.invalid-package-name")
    /// An Android target has no `sha256_cert_fingerprints`.
    public static let assetLinksMissingFingerprints = Self("assetlinks.missing-fingerprints")
    /// `sha256_cert_fingerprints` is not an array.
    public static let assetLinksFingerprintsNotArray = Self("assetlinks.fingerprints-not-array")
    /// `sha256_cert_fingerprints` is empty.
    public static let assetLinksEmptyFingerprints = Self("assetlinks.empty-fingerprints")
    /// A fingerprint is not 32 colon-separated hex octets.
    public static let assetLinksMalformedFingerprint = Self("assetlinks.malformed-fingerprint")
    /// A fingerprint uses lower-case hex, which Google rejects.
    public static let assetLinksLowercaseFingerprint = Self("assetlinks.lowercase-fingerprint")
    /// A web target has no `site`.
    public static let assetLinksMissingSite = Self("assetlinks.missing-site")
    /// `site` is not an http(s) origin.
    public static let assetLinksInvalidSite = Self("assetlinks.invalid-site")
    /// `site` carries a path.
    public static let assetLinksSiteHasPath = Self("assetlinks.site-has-path")
    /// `site` carries a query.
    public static let assetLinksSiteHasQuery = Self("assetlinks.site-has-query")
    /// `site` carries a fragment.
    public static let assetLinksSiteHasFragment = Self("assetlinks.site-has-fragment")
    /// `site` carries user info.
    public static let assetLinksSiteHasUserInfo = Self("assetlinks.site-has-userinfo")
    /// `include` appears together with `relation`, `target` or `relation_extensions`.
    public static let assetLinksIncludeWithOtherFields = Self("assetlinks.include-with-fields")
    /// `include` is not an https URL string.
    public static let assetLinksInvalidInclude = Self("assetlinks.invalid-include")
    /// Dynamic App Links rules are malformed or empty, so Android discards all of them.
    public static let assetLinksInvalidDynamicRules = Self("assetlinks.invalid-dynamic-rules")
    /// More than one statement declares dynamic rules for the same app; Android picks one unpredictably.
    public static let assetLinksRepeatedDynamicRules = Self("assetlinks.repeated-dynamic-rules")
}

/// Checks assetlinks.json with the rules of Google's Digital Asset Links compatibility suite.
///
/// One bad statement is reported and skipped; the others stay usable, as Google's verifier behaves.
public struct AssetLinksValidator: Sendable {
    private static let knownRelationKinds = ["delegate_permission", "navigate"]
    private static let statementKeys = ["relation", "target", "include", "relation_extensions"]
    private static let dynamicComponentKeys = ["/", "?", "#", "exclude", "comment"]

    /// Creates a validator.
    public init() {}

    /// Validates raw bytes; `usable` keeps only the statements Google would accept, aligned with file indices.
    public func validate(_ bytes: some Collection<UInt8>) -> AssociationValidationReport<AssetLinks> {
        var collector = DiagnosticCollector()
        guard let document = collector.parse(Array(bytes), sizeLimit: .max, fileName: "assetlinks.json") else {
            return AssociationValidationReport(diagnostics: collector.diagnostics, usable: nil)
        }
        guard let elements = document.arrayValue else {
            collector.add(
                .assetLinksNotAnArray, .error, "",
                "The top level is \(document.kindName); Google expects a single array of statements: [{\"relation\": [...], \"target\": {...}}]."
            )
            return AssociationValidationReport(diagnostics: collector.diagnostics, usable: nil)
        }
        if elements.isEmpty {
            collector.add(
                .assetLinksEmptyList, .error, "",
                "The statement list is empty; Google treats that as a fetch error. Add at least one statement.")
        }
        var entries: [AssetLinks.Entry?] = []
        var appsWithDynamicRules: [String: String] = [:]
        for (index, element) in elements.enumerated() {
            var run = StatementCheck(collector: collector, path: DiagnosticCollector.path("", index: index))
            let usable = run.check(element)
            collector = run.collector
            let entry = usable ? AssetLinks.Entry(json: element) : nil
            entries.append(entry)
            if case .statement(let statement)? = entry, statement.dynamicRules != nil,
                case .androidApp(let packageName, _) = statement.target
            {
                let rulesPath = "\(run.path).relation_extensions[\"\(AssetLinks.handleAllURLs)\"].dynamic_app_link_components"
                if let earlier = appsWithDynamicRules[packageName] {
                    collector.add(
                        .assetLinksRepeatedDynamicRules, .warning, rulesPath,
                        "\(packageName) already has dynamic rules at \(earlier); Android does not guarantee which set it uses. Keep one.")
                } else {
                    appsWithDynamicRules[packageName] = rulesPath
                }
            }
        }
        return AssociationValidationReport(diagnostics: collector.diagnostics, usable: AssetLinks(entries: entries))
    }

    /// Checks one array element; statement-level errors make it unusable, dynamic-rule errors do not.
    private struct StatementCheck {
        var collector: DiagnosticCollector
        let path: String
        var usable = true

        mutating func check(_ element: JSONValue) -> Bool {
            guard let members = element.objectMembers else {
                fail(.assetLinksStatementNotObject, path, "Each statement must be an object; this one is \(element.kindName).")
                return false
            }
            collector.reportUnknownKeys(members, known: AssetLinksValidator.statementKeys, at: path, onlyNearMisses: true)
            if let include = element["include"] {
                checkInclude(include, in: element)
                return usable
            }
            checkRelations(element["relation"])
            checkTarget(element["target"])
            if let extensions = element["relation_extensions"] { checkExtensions(extensions) }
            return usable
        }

        mutating func checkInclude(_ include: JSONValue, in statement: JSONValue) {
            let includePath = DiagnosticCollector.path(path, key: "include")
            let standardFields = ["relation", "target", "relation_extensions"].filter { statement[$0] != nil }
            if !standardFields.isEmpty {
                fail(
                    .assetLinksIncludeWithOtherFields, includePath,
                    "An include statement may not also have \(standardFields.joined(separator: ", ")); move those into a separate statement."
                )
            }
            guard let location = include.stringValue, location.lowercased().hasPrefix("https://") else {
                fail(.assetLinksInvalidInclude, includePath, "\"include\" must be an https:// URL string of another statement list.")
                return
            }
        }

        mutating func checkRelations(_ value: JSONValue?) {
            let relationPath = DiagnosticCollector.path(path, key: "relation")
            guard let value else {
                fail(
                    .assetLinksMissingRelation, path,
                    "No relation array specified; add \"relation\": [\"\(AssetLinks.handleAllURLs)\"]. This statement is skipped.")
                return
            }
            guard let relations = value.arrayValue else {
                fail(
                    .assetLinksRelationNotArray, relationPath,
                    "\"relation\" is not an array; wrap it: [\"\(value.stringValue ?? AssetLinks.handleAllURLs)\"].")
                return
            }
            if relations.isEmpty {
                fail(.assetLinksMissingRelation, relationPath, "\"relation\" is empty; add \"\(AssetLinks.handleAllURLs)\".")
            }
            for (index, relation) in relations.enumerated() {
                let elementPath = DiagnosticCollector.path(relationPath, index: index)
                guard let text = relation.stringValue else {
                    fail(
                        .assetLinksInvalidRelation, elementPath,
                        "Invalid relation: \(relation.kindName) instead of a \"kind/detail\" string.")
                    continue
                }
                if let problem = Self.relationProblem(text) {
                    fail(.assetLinksInvalidRelation, elementPath, "Invalid relation string \"\(text)\": \(problem).")
                }
            }
        }

        static func relationProblem(_ relation: String) -> String? {
            let parts = relation.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2 else { return "it must be exactly kind/detail, e.g. \(AssetLinks.handleAllURLs)" }
            guard AssetLinksValidator.knownRelationKinds.contains(String(parts[0])) else {
                return
                    "invalid 'kind' field \"\(parts[0])\"; known kinds are \(AssetLinksValidator.knownRelationKinds.joined(separator: ", "))"
            }
            let detailValid =
                !parts[1].isEmpty
                && parts[1].unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "." }
            return detailValid ? nil : "invalid 'detail' field \"\(parts[1])\"; use only a-z, 0-9, '_' and '.'"
        }

        mutating func checkTarget(_ value: JSONValue?) {
            let targetPath = DiagnosticCollector.path(path, key: "target")
            guard let value else {
                fail(
                    .assetLinksMissingTarget, path,
                    "No target specified; add \"target\": {\"namespace\": \"android_app\", ...}. This statement is skipped.")
                return
            }
            guard let members = value.objectMembers else {
                fail(.assetLinksTargetNotObject, targetPath, "\"target\" is \(value.kindName), not an object.")
                return
            }
            let namespacePath = DiagnosticCollector.path(targetPath, key: "namespace")
            switch value["namespace"]?.stringValue {
            case "android_app":
                collector.reportUnknownKeys(members, known: ["namespace", "package_name", "sha256_cert_fingerprints"], at: targetPath)
                checkPackageName(value["package_name"], at: targetPath)
                checkFingerprints(value["sha256_cert_fingerprints"], at: targetPath)
            case "web":
                collector.reportUnknownKeys(members, known: ["namespace", "site"], at: targetPath)
                checkSite(value["site"], at: targetPath)
            case let other:
                fail(
                    .assetLinksUnknownNamespace, namespacePath,
                    "Unrecognized namespace \(other.map { "\"\($0)\"" } ?? "(missing)"); use \"android_app\" or \"web\".")
            }
        }

        mutating func checkPackageName(_ value: JSONValue?, at targetPath: String) {
            let packagePath = DiagnosticCollector.path(targetPath, key: "package_name")
            guard let value else {
                fail(
                    .assetLinksMissingPackageName, targetPath,
                    "Android app target has no package_name field; add the applicationId, e.g. \"com.example.app\".")
                return
            }
            guard let name = value.stringValue, AssetLinksValidator.isJavaPackageName(name) else {
                fail(
                    .assetLinksInvalidPackageName, packagePath,
                    "Invalid package name \(value.stringValue.map { "\"\($0)\"" } ?? value.kindName); use dot-separated segments that start with a letter, e.g. \"com.example.app\"."
                )
                return
            }
        }

        mutating func checkFingerprints(_ value: JSONValue?, at targetPath: String) {
            let listPath = DiagnosticCollector.path(targetPath, key: "sha256_cert_fingerprints")
            guard let value else {
                fail(
                    .assetLinksMissingFingerprints, targetPath,
                    "Android app target has no sha256_cert_fingerprints; add the signing certificate's SHA-256 from Play Console.")
                return
            }
            guard let fingerprints = value.arrayValue else {
                fail(
                    .assetLinksFingerprintsNotArray, listPath,
                    "sha256_cert_fingerprints is \(value.kindName), not an array; wrap the fingerprint in [ ].")
                return
            }
            if fingerprints.isEmpty {
                fail(.assetLinksEmptyFingerprints, listPath, "sha256_cert_fingerprints must contain at least one certificate fingerprint.")
            }
            for (index, fingerprint) in fingerprints.enumerated() {
                let elementPath = DiagnosticCollector.path(listPath, index: index)
                guard let text = fingerprint.stringValue, AssetLinksValidator.isWellFormedFingerprint(text.uppercased()) else {
                    fail(
                        .assetLinksMalformedFingerprint, elementPath,
                        "Malformed cert fingerprint; expected 32 upper-case hex octets separated by colons, e.g. \"14:6D:E9:…:E5\".")
                    continue
                }
                if text != text.uppercased() {
                    fail(
                        .assetLinksLowercaseFingerprint, elementPath,
                        "Fingerprint uses lower-case hex, which Google rejects as a malformed cert; write it as \"\(text.uppercased())\".")
                }
            }
        }

        mutating func checkSite(_ value: JSONValue?, at targetPath: String) {
            let sitePath = DiagnosticCollector.path(targetPath, key: "site")
            guard let value else {
                fail(.assetLinksMissingSite, targetPath, "Web target has no site field; add \"site\": \"https://example.com\".")
                return
            }
            guard let site = value.stringValue else {
                fail(.assetLinksInvalidSite, sitePath, "\"site\" is \(value.kindName), not a URL string.")
                return
            }
            guard let schemeEnd = site.firstRange(of: "://") else {
                fail(.assetLinksInvalidSite, sitePath, "Invalid site \"\(site)\": it needs a scheme, e.g. \"https://\(site)\".")
                return
            }
            let scheme = site[..<schemeEnd.lowerBound].lowercased()
            guard scheme == "https" || scheme == "http" else {
                fail(.assetLinksInvalidSite, sitePath, "Invalid site \"\(site)\": a non-HTTP URL; use https://host.")
                return
            }
            var rest = site[schemeEnd.upperBound...]
            if let fragmentStart = rest.firstIndex(of: "#") {
                fail(
                    .assetLinksSiteHasFragment, sitePath, "Sites cannot contain fragment identifiers; remove \"\(rest[fragmentStart...])\"."
                )
                rest = rest[..<fragmentStart]
            }
            if let queryStart = rest.firstIndex(of: "?") {
                fail(.assetLinksSiteHasQuery, sitePath, "Sites cannot contain query parameters; remove \"\(rest[queryStart...])\".")
                rest = rest[..<queryStart]
            }
            if let pathStart = rest.firstIndex(of: "/") {
                fail(
                    .assetLinksSiteHasPath, sitePath,
                    "Sites cannot contain a path (not even \"/\"); use just the origin, e.g. \"\(scheme)://\(rest[..<pathStart])\".")
                rest = rest[..<pathStart]
            }
            if rest.contains("@") {
                fail(.assetLinksSiteHasUserInfo, sitePath, "Sites cannot contain login information (user:password@); remove it.")
                rest = rest[rest.index(after: rest.lastIndex(of: "@")!)...]
            }
            let hostAndPort = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let host = hostAndPort.first ?? ""
            let portValid =
                hostAndPort.count == 1
                || (hostAndPort[1].unicodeScalars.count <= 5 && !hostAndPort[1].isEmpty
                    && hostAndPort[1].unicodeScalars.allSatisfy { ("0"..."9").contains($0) } && Int(hostAndPort[1])! <= 65535)
            if host.isEmpty || !portValid {
                fail(.assetLinksInvalidSite, sitePath, "\"\(site)\" is not a valid URL: check the host and port (1-65535).")
            }
        }

        mutating func checkExtensions(_ value: JSONValue) {
            let extensionsPath = DiagnosticCollector.path(path, key: "relation_extensions")
            guard value.objectMembers != nil else {
                dynamicProblem(extensionsPath, "\"relation_extensions\" is \(value.kindName), not an object")
                return
            }
            guard let handler = value[AssetLinks.handleAllURLs] else { return }
            let handlerPath = DiagnosticCollector.path(extensionsPath, key: AssetLinks.handleAllURLs)
            guard handler.objectMembers != nil else {
                dynamicProblem(handlerPath, "it is \(handler.kindName), not an object")
                return
            }
            guard let rules = handler["dynamic_app_link_components"] else { return }
            let rulesPath = DiagnosticCollector.path(handlerPath, key: "dynamic_app_link_components")
            guard let components = rules.arrayValue else {
                dynamicProblem(rulesPath, "it is \(rules.kindName), not an array")
                return
            }
            if components.isEmpty { dynamicProblem(rulesPath, "it is empty") }
            var catchAll: Int?
            for (index, component) in components.enumerated() {
                let componentPath = DiagnosticCollector.path(rulesPath, index: index)
                guard let members = component.objectMembers else {
                    dynamicProblem(componentPath, "it is \(component.kindName), not an object")
                    continue
                }
                collector.reportUnknownKeys(members, known: AssetLinksValidator.dynamicComponentKeys, at: componentPath)
                checkDynamicComponentTypes(members, at: componentPath)
                if let catchAll {
                    collector.add(
                        .unreachableRule, .warning, componentPath,
                        "Unreachable: \(DiagnosticCollector.path(rulesPath, index: catchAll)) matches every URL, so this rule is never evaluated. Move it earlier or delete it."
                    )
                } else if component["?"] == nil, component["#"] == nil, let path = component["/"]?.stringValue, !path.isEmpty,
                    path.unicodeScalars.allSatisfy({ $0 == "*" })
                {
                    catchAll = index
                }
            }
        }

        mutating func checkDynamicComponentTypes(_ members: [JSONValue.Member], at componentPath: String) {
            for member in members {
                let memberPath = DiagnosticCollector.path(componentPath, key: member.key)
                switch member.key {
                case "/", "#", "comment":
                    if member.value.stringValue == nil { dynamicProblem(memberPath, "it is \(member.value.kindName), not a string") }
                case "exclude":
                    if member.value.boolValue == nil { dynamicProblem(memberPath, "it is \(member.value.kindName), not true or false") }
                case "?":
                    guard let items = member.value.objectMembers else {
                        dynamicProblem(
                            memberPath, "it is \(member.value.kindName); Android expects a dictionary of parameter name to pattern")
                        continue
                    }
                    for item in items where item.value.stringValue == nil {
                        collector.add(
                            .nonStringQueryPredicate, .error, DiagnosticCollector.path(memberPath, dataKey: item.key),
                            "Query parameter \"\(item.key)\" maps to \(item.value.kindName); use a pattern string such as \"*\". Malformed rules make Android discard all dynamic rules."
                        )
                    }
                default: continue
                }
            }
        }

        /// Dynamic-rule problems leave the statement usable: Android falls back to the manifest's static filters.
        mutating func dynamicProblem(_ problemPath: String, _ problem: String) {
            collector.add(
                .assetLinksInvalidDynamicRules, .error, problemPath,
                "Invalid dynamic rules: \(problem). Android discards every dynamic rule of this statement and falls back to the manifest.")
        }

        mutating func fail(_ code: AssociationDiagnostic.Code, _ failurePath: String, _ message: String) {
            usable = false
            collector.add(code, .error, failurePath, message)
        }
    }

    /// Android application IDs: two or more dot-separated segments, each a letter then letters, digits or `_`.
    static func isJavaPackageName(_ name: String) -> Bool {
        let segments = name.split(separator: ".", omittingEmptySubsequences: false)
        return segments.count >= 2
            && segments.allSatisfy { segment in
                guard let first = segment.unicodeScalars.first, ("a"..."z").contains(first) || ("A"..."Z").contains(first) else {
                    return false
                }
                return segment.unicodeScalars.allSatisfy {
                    ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
                }
            }
    }

    /// 32 upper-case hex octets separated by colons, the only spelling Google accepts.
    static func isWellFormedFingerprint(_ text: String) -> Bool {
        let octets = text.split(separator: ":", omittingEmptySubsequences: false)
        return octets.count == 32
            && octets.allSatisfy { octet in
                octet.unicodeScalars.count == 2 && octet.unicodeScalars.allSatisfy { ("0"..."9").contains($0) || ("A"..."F").contains($0) }
            }
    }
}
