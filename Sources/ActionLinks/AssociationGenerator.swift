/// The apps a link domain serves, in plain Swift, from which both association files are generated.
public struct AppsConfiguration: Sendable, Hashable {
    /// An iOS, iPadOS, macOS or visionOS app.
    public struct AppleApp: Sendable, Hashable {
        /// The 10-character App ID prefix (team ID).
        public var teamID: String
        /// The bundle identifier.
        public var bundleID: String
        /// The numeric App Store ID, carried for store fallbacks; association files do not use it.
        public var appStoreID: String?
        /// The Firebase app ID of the iOS app (`GOOGLE_APP_ID`, `1:1234567890:ios:0123456789abcdef`).
        public var googleAppID: String?
        /// The OAuth client ID of the iOS app (`CLIENT_ID`, `1234567890-abc.apps.googleusercontent.com`).
        public var clientID: String?

        /// Creates an Apple app entry.
        public init(teamID: String, bundleID: String, appStoreID: String? = nil, googleAppID: String? = nil, clientID: String? = nil) {
            self.teamID = teamID
            self.bundleID = bundleID
            self.appStoreID = appStoreID
            self.googleAppID = googleAppID
            self.clientID = clientID
        }

        /// `TEAMID.bundle.id`, the form association files use.
        public var appID: String { "\(teamID).\(bundleID)" }

        /// The URL scheme the Firebase iOS SDK returns to after a web sign-in when it knows the app
        /// by its Firebase app ID: `app-1-1234567890-ios-0123456789abcdef`.
        public var googleAppIDURLScheme: String? {
            googleAppID.map { "app-" + $0.replacing(":", with: "-") }
        }

        /// The URL scheme the Firebase iOS SDK returns to when the app has an OAuth client ID: the
        /// client ID reversed, `com.googleusercontent.apps.1234567890-abc`.
        public var clientIDURLScheme: String? {
            clientID.map { $0.split(separator: ".", omittingEmptySubsequences: false).reversed().joined(separator: ".") }
        }
    }

    /// An Android app.
    public struct AndroidApp: Sendable, Hashable {
        /// The applicationId.
        public var packageName: String
        /// SHA-256 signing-certificate fingerprints; any case, with or without colons.
        public var sha256Fingerprints: [String]
        /// The lowest versionCode that handles links, carried for routing; association files do not use it.
        public var minimumVersion: Int?
        /// SHA-1 signing-certificate fingerprints (any case, with or without colons): what the
        /// Firebase Android SDK sends as `sha1Cert` when it opens `/__/auth/handler`; association
        /// files do not use them.
        public var sha1Fingerprints: [String]

        /// Creates an Android app entry.
        public init(packageName: String, sha256Fingerprints: [String], minimumVersion: Int? = nil, sha1Fingerprints: [String] = []) {
            self.packageName = packageName
            self.sha256Fingerprints = sha256Fingerprints
            self.minimumVersion = minimumVersion
            self.sha1Fingerprints = sha1Fingerprints
        }
    }

    /// An extra rule added after the claimed auth paths, on both platforms.
    public struct PathRule: Sendable, Hashable {
        /// Path pattern (`*`, `?`, `?*`).
        public var path: String
        /// Query parameters that must be present with matching values.
        public var query: [AssetLinks.DynamicComponent.QueryParameter]
        /// Fragment pattern, if constrained.
        public var fragment: String?
        /// True keeps matching URLs out of the apps.
        public var exclude: Bool
        /// Written into both files to explain the rule.
        public var comment: String?

        /// Creates a rule.
        public init(
            path: String, query: [AssetLinks.DynamicComponent.QueryParameter] = [], fragment: String? = nil,
            exclude: Bool = false, comment: String? = nil
        ) {
            self.path = path
            self.query = query
            self.fragment = fragment
            self.exclude = exclude
            self.comment = comment
        }
    }

    /// Apple apps; all share one `applinks` detail.
    public var appleApps: [AppleApp]
    /// Android apps; one statement each.
    public var androidApps: [AndroidApp]
    /// Rules beyond the auth paths; on Android they turn on Dynamic App Links.
    public var extraRules: [PathRule]
    /// App IDs that share the domain's passwords; also grants Android apps `get_login_creds`.
    public var webCredentialsAppIDs: [String]
    /// App Clip app IDs.
    public var appClipAppIDs: [String]
    /// Whether the apps also open web action links (`/__/auth/action*`). Off by default: a reset or
    /// verify link sent for the web then opens the web page even where the app is installed, and
    /// only mobile links (`/__/auth/links*`, sent with `handleCodeInApp`) open the app.
    public var claimActionLinks: Bool
    /// Whether the apps open web action links for email sign-in only (`/__/auth/action` with the
    /// query `mode=signIn`: an iOS 14 component and an Android 15 dynamic rule), as a server fronting
    /// a Firebase project claims them: sign-in links open the app, reset and verify links stay on the
    /// web page. Implied by ``claimActionLinks``.
    public var claimSignInActionLinks = false

    /// Creates a configuration.
    public init(
        appleApps: [AppleApp] = [], androidApps: [AndroidApp] = [], extraRules: [PathRule] = [],
        webCredentialsAppIDs: [String] = [], appClipAppIDs: [String] = [], claimActionLinks: Bool = false
    ) {
        self.appleApps = appleApps
        self.androidApps = androidApps
        self.extraRules = extraRules
        self.webCredentialsAppIDs = webCredentialsAppIDs
        self.appClipAppIDs = appClipAppIDs
        self.claimActionLinks = claimActionLinks
    }

    /// The auth paths the apps claim, before any extra rule: `/__/auth/links*`, and
    /// `/__/auth/action*` when ``claimActionLinks`` is on.
    public var claimedAuthPaths: [String] {
        [AssociationGenerator.mobileLinkPath] + (claimActionLinks ? [AssociationGenerator.webActionPath] : [])
    }
}

/// Why a configuration could not become association files.
public enum AssociationGeneratorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A configuration value is malformed: which field, the value, and what was expected.
    case invalidValue(field: String, value: String, expected: String)
    /// There is no app for the requested file.
    case noApps(file: String)
    /// The output exceeds the platform size limit.
    case fileTooLarge(file: String, byteCount: Int, limit: Int)
    /// Our own validator found problems in the output, usually from an extra rule.
    case generatedFileRejected(file: String, diagnostics: [AssociationDiagnostic])

    /// A sentence naming the value and the fix.
    public var description: String {
        switch self {
        case .invalidValue(let field, let value, let expected):
            "\(field) \"\(value)\" is invalid: expected \(expected)"
        case .noApps(let file):
            "\(file) needs at least one app in the configuration"
        case .fileTooLarge(let file, let byteCount, let limit):
            "generated \(file) is \(byteCount) bytes, over the \(limit)-byte limit; use fewer, broader rules"
        case .generatedFileRejected(let file, let diagnostics):
            "generated \(file) fails validation: " + diagnostics.map(\.description).joined(separator: "; ")
        }
    }
}

/// Turns an `AppsConfiguration` into byte-for-byte reproducible, validator-clean association files.
public struct AssociationGenerator: Sendable {
    /// Mobile links (sent with `handleCodeInApp`): every generated file covers them, first, so no
    /// extra rule can shadow them.
    public static let mobileLinkPath = "/__/auth/links*"
    /// Web action links: covered, right after the mobile links, only with
    /// ``AppsConfiguration/claimActionLinks``.
    public static let webActionPath = "/__/auth/action*"
    /// The web action handler's path, claimed with the query `mode=signIn` (``AppsConfiguration/claimSignInActionLinks``).
    public static let signInActionPath = "/__/auth/action"
    static let signInActionComment = "Email sign-in links open the app; reset and verify links stay on the web page"
    /// Size ceiling for both files (Apple's AASA limit, applied to assetlinks.json too).
    public static let maximumFileSize = 128 * 1024

    /// The configuration being generated.
    public let configuration: AppsConfiguration

    /// Prepares a generator.
    public init(configuration: AppsConfiguration) {
        self.configuration = configuration
    }

    /// The apple-app-site-association bytes.
    public func appleAppSiteAssociation() throws(AssociationGeneratorError) -> [UInt8] {
        guard !configuration.appleApps.isEmpty else { throw .noApps(file: "apple-app-site-association") }
        var appIDs: [String] = []
        for app in configuration.appleApps {
            if AASAValidator.teamIDProblem(app.teamID) != nil {
                throw .invalidValue(
                    field: "teamID of \(app.bundleID)", value: app.teamID, expected: "exactly 10 upper-case letters or digits")
            }
            if AASAValidator.bundleIDProblem(app.bundleID) != nil {
                throw .invalidValue(field: "bundleID", value: app.bundleID, expected: "dot-separated letters, digits and hyphens")
            }
            try Self.appendUnique(app.appID, to: &appIDs, field: "Apple app")
        }
        try checkRules()
        var components = configuration.claimedAuthPaths.map { AppSiteAssociation.Component(path: $0, comment: Self.comment(for: $0)) }
        if configuration.claimSignInActionLinks, !configuration.claimActionLinks {
            components.append(
                AppSiteAssociation.Component(
                    path: Self.signInActionPath, query: .items([.init(name: "mode", predicate: .pattern("signIn"))]),
                    comment: Self.signInActionComment))
        }
        components += configuration.extraRules.map { rule in
            AppSiteAssociation.Component(
                path: rule.path,
                query: rule.query.isEmpty
                    ? nil : .items(rule.query.map { .init(name: $0.name, predicate: .pattern($0.pattern)) }),
                fragment: rule.fragment, exclude: rule.exclude ? true : nil, comment: rule.comment)
        }
        let association = AppSiteAssociation(
            appLinks: .init(details: [.init(appIDs: appIDs, components: components)]),
            webCredentialsApps: try Self.checkedAppIDs(configuration.webCredentialsAppIDs, field: "webcredentials app ID"),
            appClipsApps: try Self.checkedAppIDs(configuration.appClipAppIDs, field: "App Clip app ID"))
        let bytes = association.json.serialized(.pretty)
        try Self.checkSize(bytes, file: "apple-app-site-association")
        let report = AASAValidator().validate(bytes)
        guard report.isClean else {
            throw .generatedFileRejected(file: "apple-app-site-association", diagnostics: report.diagnostics)
        }
        return bytes
    }

    /// The assetlinks.json bytes.
    public func assetLinks() throws(AssociationGeneratorError) -> [UInt8] {
        guard !configuration.androidApps.isEmpty else { throw .noApps(file: "assetlinks.json") }
        try checkRules()
        var relations = [AssetLinks.handleAllURLs]
        if !configuration.webCredentialsAppIDs.isEmpty { relations.append(AssetLinks.getLoginCredentials) }
        // Without rules the app's intent filters alone choose the paths; rules (Android 15's Dynamic
        // App Links) are written whenever the claim is narrower than the whole domain: extra rules,
        // or only the mobile links.
        let dynamicRules: AssetLinks.DynamicRules? =
            configuration.extraRules.isEmpty && configuration.claimActionLinks
            ? nil
            : .components(
                configuration.claimedAuthPaths.map { .init(path: $0, comment: Self.comment(for: $0)) }
                    + (configuration.claimSignInActionLinks && !configuration.claimActionLinks
                        ? [
                            .init(
                                path: Self.signInActionPath, query: [.init(name: "mode", pattern: "signIn")],
                                comment: Self.signInActionComment)
                        ] : [])
                    + configuration.extraRules.map {
                        .init(
                            path: $0.path, query: $0.query.isEmpty ? nil : $0.query, fragment: $0.fragment,
                            exclude: $0.exclude, comment: $0.comment)
                    })
        var packageNames: [String] = []
        var entries: [AssetLinks.Entry?] = []
        for app in configuration.androidApps {
            guard AssetLinksValidator.isJavaPackageName(app.packageName) else {
                throw .invalidValue(
                    field: "packageName", value: app.packageName,
                    expected: "dot-separated segments starting with a letter, such as com.example.app")
            }
            try Self.appendUnique(app.packageName, to: &packageNames, field: "Android package")
            guard !app.sha256Fingerprints.isEmpty else {
                throw .invalidValue(
                    field: "sha256Fingerprints of \(app.packageName)", value: "[]", expected: "at least one SHA-256 certificate fingerprint"
                )
            }
            var fingerprints: [String] = []
            for fingerprint in app.sha256Fingerprints {
                guard let normalized = AssetLinksMatcher.normalizedFingerprint(fingerprint) else {
                    throw .invalidValue(
                        field: "SHA-256 fingerprint of \(app.packageName)", value: fingerprint,
                        expected: "64 hex digits, optionally as 32 colon-separated octets (AA:BB:…)")
                }
                try Self.appendUnique(normalized, to: &fingerprints, field: "fingerprint of \(app.packageName)")
            }
            let target = AssetLinks.Target.androidApp(packageName: app.packageName, sha256Fingerprints: fingerprints)
            entries.append(.statement(.init(relations: relations, target: target, dynamicRules: dynamicRules)))
        }
        let bytes = AssetLinks(entries: entries).json.serialized(.pretty)
        try Self.checkSize(bytes, file: "assetlinks.json")
        let report = AssetLinksValidator().validate(bytes)
        guard report.isClean else { throw .generatedFileRejected(file: "assetlinks.json", diagnostics: report.diagnostics) }
        return bytes
    }

    private static func comment(for path: String) -> String {
        path == mobileLinkPath ? "Mobile auth links (handleCodeInApp) open the app" : "Web auth action links open the app too"
    }

    private func checkRules() throws(AssociationGeneratorError) {
        for rule in configuration.extraRules {
            guard rule.path.hasPrefix("/") || rule.path.hasPrefix("*") else {
                throw .invalidValue(
                    field: "extra rule path", value: rule.path, expected: "a pattern starting with / or *, such as /products/*")
            }
            for parameter in rule.query where parameter.name.isEmpty {
                throw .invalidValue(field: "query parameter name in rule \(rule.path)", value: "", expected: "a non-empty name")
            }
        }
    }

    private static func checkedAppIDs(_ appIDs: [String], field: String) throws(AssociationGeneratorError) -> [String]? {
        guard !appIDs.isEmpty else { return nil }
        var unique: [String] = []
        for appID in appIDs {
            if let problem = AASAValidator.appIDProblem(appID) {
                throw .invalidValue(field: field, value: appID, expected: "TEAMID.bundle.id; \(problem)")
            }
            try appendUnique(appID, to: &unique, field: field)
        }
        return unique
    }

    private static func appendUnique(_ value: String, to list: inout [String], field: String) throws(AssociationGeneratorError) {
        guard !list.contains(value) else {
            throw .invalidValue(field: field, value: value, expected: "each value listed only once")
        }
        list.append(value)
    }

    private static func checkSize(_ bytes: [UInt8], file: String) throws(AssociationGeneratorError) {
        if bytes.count > maximumFileSize { throw .fileTooLarge(file: file, byteCount: bytes.count, limit: maximumFileSize) }
    }
}
