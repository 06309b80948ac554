extension AssociationDiagnostic.Code {
    /// The top level is not a JSON object.
    public static let aasaNotAnObject = Self("aasa.not-an-object")
    /// There is no `applinks` service, so no universal link can open an app.
    public static let aasaMissingAppLinks = Self("aasa.missing-applinks")
    /// `applinks` has no `details`.
    public static let aasaMissingDetails = Self("aasa.missing-details")
    /// `details` is empty, so no app is associated.
    public static let aasaEmptyDetails = Self("aasa.empty-details")
    /// An app ID is not `TEAMID.bundle.id` with a 10-character upper-case alphanumeric team ID.
    public static let aasaInvalidAppID = Self("aasa.invalid-app-id")
    /// The same app ID is listed more than once.
    public static let aasaDuplicateAppID = Self("aasa.duplicate-app-id")
    /// A detail names no app at all.
    public static let aasaDetailWithoutAppID = Self("aasa.detail-without-app-id")
    /// A detail has neither `components` nor `paths`.
    public static let aasaDetailWithoutRules = Self("aasa.detail-without-rules")
    /// A detail has both `paths` and `components`; Apple ignores `paths` then.
    public static let aasaPathsWithComponents = Self("aasa.paths-with-components")
    /// A pattern uses `$(name)` that is neither custom nor predefined.
    public static let aasaUndefinedVariable = Self("aasa.undefined-variable")
    /// A custom variable reuses a predefined name.
    public static let aasaShadowedVariable = Self("aasa.shadowed-variable")
    /// A substitution variable is malformed (bad name, nested variable, non-array).
    public static let aasaInvalidVariable = Self("aasa.invalid-variable")
}

/// Checks apple-app-site-association bytes the way Apple's CDN and devices read them.
public struct AASAValidator: Sendable {
    /// Apple's limit on the uncompressed file.
    public static let maximumFileSize = 128 * 1024

    private static let rootKeys = ["applinks", "webcredentials", "appclips", "activitycontinuation"]
    private static let appLinksKeys = ["apps", "details", "defaults", "substitutionVariables"]
    private static let detailKeys = ["appID", "appIDs", "components", "paths", "defaults"]
    private static let componentKeys = ["/", "?", "#", "exclude", "caseSensitive", "percentEncoded", "comment"]

    /// Creates a validator.
    public init() {}

    /// Validates raw file bytes; the usable association is what a device would act on.
    public func validate(_ bytes: some Collection<UInt8>) -> AssociationValidationReport<AppSiteAssociation> {
        var run = ValidationRun()
        guard let document = run.collector.parse(Array(bytes), sizeLimit: Self.maximumFileSize, fileName: "apple-app-site-association")
        else {
            return AssociationValidationReport(diagnostics: run.collector.diagnostics, usable: nil)
        }
        guard let rootMembers = document.objectMembers else {
            run.collector.add(
                .aasaNotAnObject, .error, "", "The top level is \(document.kindName); it must be an object like {\"applinks\": {...}}.")
            return AssociationValidationReport(diagnostics: run.collector.diagnostics, usable: nil)
        }
        run.collector.reportUnknownKeys(rootMembers, known: Self.rootKeys, at: "")
        for service in ["webcredentials", "appclips", "activitycontinuation"] {
            if let value = document[service] { run.checkAppListService(value, at: service) }
        }
        if let appLinks = document["applinks"] {
            run.checkAppLinks(appLinks)
        } else {
            let hasOtherService = rootMembers.contains { Self.rootKeys.contains($0.key) }
            run.collector.add(
                .aasaMissingAppLinks, hasOtherService ? .warning : .error, "",
                "There is no \"applinks\" key, so no universal link opens an app. Add {\"applinks\": {\"details\": [...]}}.")
        }
        return AssociationValidationReport(diagnostics: run.collector.diagnostics, usable: AppSiteAssociation(json: document))
    }

    /// State for one validation pass.
    private struct ValidationRun {
        var collector = DiagnosticCollector()
        var seenAppIDs: [String: String] = [:]
        var variables: [String: [String]] = [:]

        mutating func checkAppListService(_ value: JSONValue, at path: String) {
            guard let members = value.objectMembers else {
                wrongType(path, expected: "an object like {\"apps\": [...]}", found: value)
                return
            }
            collector.reportUnknownKeys(members, known: ["apps"], at: path)
            let appsPath = DiagnosticCollector.path(path, key: "apps")
            guard let apps = value["apps"] else {
                collector.add(.wrongType, .error, appsPath, "\"\(path)\" needs an \"apps\" array of app IDs.")
                return
            }
            guard let elements = apps.arrayValue else {
                wrongType(appsPath, expected: "an array of app ID strings", found: apps)
                return
            }
            var seen: Set<String> = []
            for (index, element) in elements.enumerated() {
                let elementPath = DiagnosticCollector.path(appsPath, index: index)
                guard let appID = element.stringValue else {
                    wrongType(elementPath, expected: "an app ID string", found: element)
                    continue
                }
                checkAppIDFormat(appID, at: elementPath)
                if !seen.insert(appID).inserted {
                    collector.add(
                        .aasaDuplicateAppID, .warning, elementPath,
                        "App ID \"\(appID)\" is listed twice in \(path).apps; remove the repeat.")
                }
            }
        }

        mutating func checkAppLinks(_ value: JSONValue) {
            let path = "applinks"
            guard let members = value.objectMembers else {
                wrongType(path, expected: "an object", found: value)
                return
            }
            collector.reportUnknownKeys(members, known: AASAValidator.appLinksKeys, at: path)
            if let apps = value["apps"], apps.arrayValue == nil {
                wrongType("applinks.apps", expected: "an array (legacy files use [])", found: apps)
            }
            if let substitution = value["substitutionVariables"] { checkVariables(substitution) }
            var domainDefaults: AppSiteAssociation.Component?
            if let defaults = value["defaults"] {
                checkComponent(defaults, at: "applinks.defaults", isDefaults: true)
                domainDefaults = defaults.objectMembers == nil ? nil : AppSiteAssociation.Component(json: defaults)
            }
            switch value["details"] {
            case nil:
                collector.add(.aasaMissingDetails, .error, path, "\"applinks\" has no \"details\" array, so no app is associated.")
            case .array(let details)?:
                if details.isEmpty {
                    collector.add(
                        .aasaEmptyDetails, .warning, "applinks.details",
                        "\"details\" is empty, so no app opens any link. Add an entry with \"appIDs\" and \"components\".")
                }
                for (index, detail) in details.enumerated() {
                    checkDetail(
                        detail, at: DiagnosticCollector.path("applinks.details", index: index), legacyAppID: nil,
                        domainDefaults: domainDefaults)
                }
            case .object(let legacyDetails)?:
                if legacyDetails.isEmpty {
                    collector.add(.aasaEmptyDetails, .warning, "applinks.details", "\"details\" is empty, so no app opens any link.")
                }
                for member in legacyDetails {
                    checkDetail(
                        member.value, at: DiagnosticCollector.path("applinks.details", dataKey: member.key), legacyAppID: member.key,
                        domainDefaults: domainDefaults)
                }
            case let other?:
                wrongType("applinks.details", expected: "an array of detail objects", found: other)
            }
        }

        mutating func checkDetail(
            _ value: JSONValue, at path: String, legacyAppID: String?, domainDefaults: AppSiteAssociation.Component?
        ) {
            guard let members = value.objectMembers else {
                wrongType(path, expected: "an object with \"appIDs\" and \"components\"", found: value)
                return
            }
            collector.reportUnknownKeys(members, known: AASAValidator.detailKeys, at: path)
            var appIDs: [(String, String)] = []
            if let legacyAppID { appIDs.append((legacyAppID, path)) }
            if let single = value["appID"] {
                let singlePath = DiagnosticCollector.path(path, key: "appID")
                if let appID = single.stringValue {
                    appIDs.append((appID, singlePath))
                } else {
                    wrongType(singlePath, expected: "an app ID string", found: single)
                }
            }
            if let list = value["appIDs"] {
                let listPath = DiagnosticCollector.path(path, key: "appIDs")
                if let elements = list.arrayValue {
                    for (index, element) in elements.enumerated() {
                        let elementPath = DiagnosticCollector.path(listPath, index: index)
                        if let appID = element.stringValue {
                            appIDs.append((appID, elementPath))
                        } else {
                            wrongType(elementPath, expected: "an app ID string", found: element)
                        }
                    }
                } else {
                    wrongType(listPath, expected: "an array of app ID strings", found: list)
                }
            }
            if appIDs.isEmpty {
                collector.add(.aasaDetailWithoutAppID, .error, path, "This detail names no app; add \"appIDs\": [\"TEAMID.bundle.id\"].")
            }
            for (appID, appIDPath) in appIDs {
                checkAppIDFormat(appID, at: appIDPath)
                if let earlier = seenAppIDs[appID] {
                    collector.add(
                        .aasaDuplicateAppID, .warning, appIDPath,
                        "App ID \"\(appID)\" is already listed at \(earlier); Apple only reaches these rules if the earlier ones all miss. Merge the rules into one detail."
                    )
                } else {
                    seenAppIDs[appID] = appIDPath
                }
            }
            var detailDefaults: AppSiteAssociation.Component?
            if let defaults = value["defaults"] {
                checkComponent(defaults, at: DiagnosticCollector.path(path, key: "defaults"), isDefaults: true)
                detailDefaults = defaults.objectMembers == nil ? nil : AppSiteAssociation.Component(json: defaults)
            }
            let components = value["components"]
            let paths = value["paths"]
            if components != nil, paths != nil {
                collector.add(
                    .aasaPathsWithComponents, .warning, DiagnosticCollector.path(path, key: "paths"),
                    "This detail has both \"paths\" and \"components\"; Apple ignores \"paths\" when \"components\" is present. Move the paths into components."
                )
            }
            if components == nil, paths == nil {
                collector.add(
                    .aasaDetailWithoutRules, .warning, path,
                    "This detail has no \"components\", so it opens no URL. Add components such as {\"/\": \"/*\"}.")
            }
            if let components {
                checkComponents(
                    components, at: DiagnosticCollector.path(path, key: "components"), detailDefaults: detailDefaults,
                    domainDefaults: domainDefaults)
            }
            if let paths { checkLegacyPaths(paths, at: DiagnosticCollector.path(path, key: "paths")) }
        }

        mutating func checkComponents(
            _ value: JSONValue, at path: String, detailDefaults: AppSiteAssociation.Component?,
            domainDefaults: AppSiteAssociation.Component?
        ) {
            guard let elements = value.arrayValue else {
                wrongType(path, expected: "an array of component objects", found: value)
                return
            }
            var catchAll: Int?
            for (index, element) in elements.enumerated() {
                let elementPath = DiagnosticCollector.path(path, index: index)
                checkComponent(element, at: elementPath, isDefaults: false)
                if let catchAll {
                    collector.add(
                        .unreachableRule, .warning, elementPath,
                        "Unreachable: \(DiagnosticCollector.path(path, index: catchAll)) matches every URL, so this rule is never evaluated. Move it before the catch-all or delete it."
                    )
                    continue
                }
                guard element.objectMembers != nil else { continue }
                let component = AppSiteAssociation.Component(json: element)
                if Self.acceptsEverything(component, detailDefaults: detailDefaults, domainDefaults: domainDefaults, variables: variables) {
                    catchAll = index
                }
            }
        }

        static func acceptsEverything(
            _ component: AppSiteAssociation.Component, detailDefaults: AppSiteAssociation.Component?,
            domainDefaults: AppSiteAssociation.Component?, variables: [String: [String]]
        ) -> Bool {
            guard component.mistypedKeys.allSatisfy({ !["/", "?", "#"].contains($0) }) else { return false }
            let layers = [component, detailDefaults, domainDefaults].compactMap { $0 }
            let everything: (String) -> Bool = { AssociationWildcardPattern($0, variables: variables).acceptsEverything }
            let path = layers.lazy.compactMap(\.path).first ?? "*"
            let fragment = layers.lazy.compactMap(\.fragment).first ?? "*"
            let pathIsFree = path.unicodeScalars.allSatisfy { $0 == "/" || $0 == "*" } && path.contains("*")
            let queryIsFree: Bool
            // A voided dictionary counts as absent, as in the matcher.
            switch layers.lazy.compactMap({ $0.query?.voidingItem == nil ? $0.query : nil }).first ?? .pattern("*") {
            case .pattern(let pattern): queryIsFree = everything(pattern)
            case .items(let rules):
                queryIsFree = rules.allSatisfy { rule in
                    if case .pattern(let pattern) = rule.predicate { return everything(pattern) }
                    return false
                }
            }
            return pathIsFree && queryIsFree && everything(fragment)
        }

        mutating func checkComponent(_ value: JSONValue, at path: String, isDefaults: Bool) {
            guard let members = value.objectMembers else {
                wrongType(path, expected: "an object such as {\"/\": \"/buy/*\"}", found: value)
                return
            }
            collector.reportUnknownKeys(members, known: AASAValidator.componentKeys, at: path)
            for member in members {
                let memberPath = DiagnosticCollector.path(path, key: member.key)
                switch member.key {
                case "/", "#":
                    if let pattern = member.value.stringValue {
                        checkVariableReferences(pattern, at: memberPath)
                    } else {
                        wrongType(memberPath, expected: "a pattern string", found: member.value)
                    }
                case "comment":
                    if member.value.stringValue == nil { wrongType(memberPath, expected: "a string", found: member.value) }
                case "exclude", "caseSensitive", "percentEncoded":
                    if member.value.boolValue == nil {
                        wrongType(memberPath, expected: "true or false (not a string)", found: member.value)
                    }
                case "?":
                    checkQuery(member.value, at: memberPath)
                default: continue
                }
            }
        }

        mutating func checkQuery(_ value: JSONValue, at path: String) {
            switch value {
            case .string(let pattern): checkVariableReferences(pattern, at: path)
            case .object(let members):
                for member in members {
                    let memberPath = DiagnosticCollector.path(path, dataKey: member.key)
                    if let pattern = member.value.stringValue {
                        checkVariableReferences(pattern, at: memberPath)
                    } else {
                        collector.add(
                            .nonStringQueryPredicate, .error, memberPath,
                            "Query item \"\(member.key)\" maps to \(member.value.kindName); every value in a \"?\" dictionary must be a pattern string, or the whole dictionary is void and this component matches any query, as if it had no \"?\". Quote it, e.g. \"\(member.key)\": \"*\"."
                        )
                    }
                }
            default:
                wrongType(path, expected: "a pattern string or a dictionary of item name to pattern", found: value)
            }
        }

        mutating func checkLegacyPaths(_ value: JSONValue, at path: String) {
            guard let elements = value.arrayValue else {
                wrongType(path, expected: "an array of path strings", found: value)
                return
            }
            var catchAll: Int?
            for (index, element) in elements.enumerated() {
                let elementPath = DiagnosticCollector.path(path, index: index)
                guard let entry = element.stringValue else {
                    wrongType(elementPath, expected: "a path string", found: element)
                    continue
                }
                if let catchAll {
                    collector.add(
                        .unreachableRule, .warning, elementPath,
                        "Unreachable: \(DiagnosticCollector.path(path, index: catchAll)) matches every path, so this entry is never evaluated. Move it earlier or delete it."
                    )
                    continue
                }
                let pattern = entry.hasPrefix("NOT ") ? String(entry.dropFirst(4)) : entry
                if pattern.contains("*"), pattern.unicodeScalars.allSatisfy({ $0 == "/" || $0 == "*" }) { catchAll = index }
            }
        }

        mutating func checkVariables(_ value: JSONValue) {
            let path = "applinks.substitutionVariables"
            guard let members = value.objectMembers else {
                wrongType(path, expected: "an object of name to array of strings", found: value)
                return
            }
            for member in members {
                let memberPath = DiagnosticCollector.path(path, dataKey: member.key)
                if member.key.isEmpty || member.key.unicodeScalars.contains(where: { "$()".unicodeScalars.contains($0) }) {
                    collector.add(
                        .aasaInvalidVariable, .error, memberPath, "Variable names must be non-empty and cannot contain $, ( or ).")
                }
                if PredefinedSubstitutionVariables.isPredefined(member.key) {
                    collector.add(
                        .aasaShadowedVariable, .warning, memberPath,
                        "\"\(member.key)\" is also a predefined variable; this custom list replaces it. Rename it to avoid surprises.")
                }
                guard let elements = member.value.arrayValue else {
                    wrongType(memberPath, expected: "an array of strings", found: member.value)
                    continue
                }
                var values: [String] = []
                for (index, element) in elements.enumerated() {
                    let elementPath = DiagnosticCollector.path(memberPath, index: index)
                    guard let text = element.stringValue else {
                        wrongType(elementPath, expected: "a string", found: element)
                        continue
                    }
                    if text.contains("$(") {
                        collector.add(
                            .aasaInvalidVariable, .error, elementPath,
                            "Variable values may use * and ? but not other variables; spell the alternatives out.")
                    }
                    values.append(text)
                }
                variables[member.key] = values
            }
        }

        mutating func checkVariableReferences(_ pattern: String, at path: String) {
            for name in AssociationWildcardPattern(pattern, variables: variables).undefinedVariables {
                collector.add(
                    .aasaUndefinedVariable, .error, path,
                    "$(\(name)) is not defined; add it to applinks.substitutionVariables or use a predefined variable (alpha, upper, lower, alnum, digit, xdigit, region, lang)."
                )
            }
        }

        mutating func checkAppIDFormat(_ appID: String, at path: String) {
            guard let problem = AASAValidator.appIDProblem(appID) else { return }
            collector.add(.aasaInvalidAppID, .error, path, "App ID \"\(appID)\" is not TEAMID.bundle.id: \(problem).")
        }

        mutating func wrongType(_ path: String, expected: String, found: JSONValue) {
            collector.add(.wrongType, .error, path, "Expected \(expected), found \(found.kindName).")
        }
    }

    /// Why `appID` is not `TEAMID.bundle.id`, or nil when it is; shared with the generator.
    static func appIDProblem(_ appID: String) -> String? {
        let parts = appID.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let teamID = parts.first.map(String.init) ?? ""
        if let problem = teamIDProblem(teamID) { return problem }
        let bundleID = parts.count == 2 ? String(parts[1]) : ""
        return bundleIDProblem(bundleID)
    }

    static func teamIDProblem(_ teamID: String) -> String? {
        let valid =
            teamID.unicodeScalars.count == 10
            && teamID.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
        return valid ? nil : "the team ID \"\(teamID)\" must be exactly 10 upper-case letters or digits"
    }

    static func bundleIDProblem(_ bundleID: String) -> String? {
        let valid =
            !bundleID.isEmpty
            && bundleID.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { segment in
                !segment.isEmpty
                    && segment.unicodeScalars.allSatisfy {
                        ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
                    }
            }
        return valid ? nil : "the bundle ID \"\(bundleID)\" must be dot-separated letters, digits and hyphens"
    }
}
