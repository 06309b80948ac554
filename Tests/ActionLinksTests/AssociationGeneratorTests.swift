import ActionLinks
import Testing

private let fingerprint = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"

private let minimal = AppsConfiguration(
    appleApps: [.init(teamID: "ABCDE12345", bundleID: "com.example.app", appStoreID: "123456789")],
    androidApps: [.init(packageName: "com.example.app", sha256Fingerprints: [fingerprint], minimumVersion: 12)])

private let full = AppsConfiguration(
    appleApps: [
        .init(teamID: "ABCDE12345", bundleID: "com.example.app"), .init(teamID: "ABCDE12345", bundleID: "com.example.app2"),
    ],
    androidApps: [
        .init(packageName: "com.example.app", sha256Fingerprints: [fingerprint.lowercased().replacing(":", with: "")]),
        .init(packageName: "com.example.lite", sha256Fingerprints: [fingerprint]),
    ],
    extraRules: [
        .init(path: "/__/*", exclude: true, comment: "Everything else under /__/ stays on the web"),
        .init(path: "/invite/*", query: [.init(name: "code", pattern: "?*")]),
        .init(path: "/promo", fragment: "app"),
    ],
    webCredentialsAppIDs: ["ABCDE12345.com.example.app"],
    appClipAppIDs: ["ABCDE12345.com.example.app.Clip"])

private let claimed = {
    var configuration = full
    configuration.claimActionLinks = true
    return configuration
}()

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

@Suite("association generator", .timeLimit(.minutes(5)))
struct AssociationGeneratorTests {
    @Test func minimalAASAIsExactlyAsExpected() throws {
        let expected = """
            {
              "applinks": {
                "details": [
                  {
                    "appIDs": [
                      "ABCDE12345.com.example.app"
                    ],
                    "components": [
                      {
                        "/": "/__/auth/links*",
                        "comment": "Mobile auth links (handleCodeInApp) open the app"
                      }
                    ]
                  }
                ]
              }
            }

            """
        #expect(text(try AssociationGenerator(configuration: minimal).appleAppSiteAssociation()) == expected)
    }

    @Test func minimalAssetLinksIsExactlyAsExpected() throws {
        let expected = """
            [
              {
                "relation": [
                  "delegate_permission/common.handle_all_urls"
                ],
                "target": {
                  "namespace": "android_app",
                  "package_name": "com.example.app",
                  "sha256_cert_fingerprints": [
                    "\(fingerprint)"
                  ]
                },
                "relation_extensions": {
                  "delegate_permission/common.handle_all_urls": {
                    "dynamic_app_link_components": [
                      {
                        "/": "/__/auth/links*",
                        "comment": "Mobile auth links (handleCodeInApp) open the app"
                      }
                    ]
                  }
                }
              }
            ]

            """
        #expect(text(try AssociationGenerator(configuration: minimal).assetLinks()) == expected)
    }

    @Test func claimingActionLinksAddsThemAfterTheMobileLinks() throws {
        var configuration = minimal
        configuration.claimActionLinks = true
        let generator = AssociationGenerator(configuration: configuration)
        let association = try AppSiteAssociation(bytes: try generator.appleAppSiteAssociation())
        #expect(association.appLinks?.details.first?.components?.map(\.path) == ["/__/auth/links*", "/__/auth/action*"])
        let generated = text(try generator.assetLinks())
        #expect(!generated.contains("relation_extensions"), "claiming every auth path leaves the paths to the app's intent filters")
        #expect(!generated.contains("get_login_creds"))
    }

    @Test(arguments: [minimal, full, claimed])
    func outputIsDeterministicAndPassesOurValidatorsWithoutWarnings(configuration: AppsConfiguration) throws {
        let generator = AssociationGenerator(configuration: configuration)
        let aasa = try generator.appleAppSiteAssociation()
        #expect(try AssociationGenerator(configuration: configuration).appleAppSiteAssociation() == aasa)
        let aasaReport = AASAValidator().validate(aasa)
        #expect(aasaReport.isClean, "\(aasaReport.diagnostics)")
        let assetLinks = try generator.assetLinks()
        #expect(try AssociationGenerator(configuration: configuration).assetLinks() == assetLinks)
        let assetReport = AssetLinksValidator().validate(assetLinks)
        #expect(assetReport.isClean, "\(assetReport.diagnostics)")
        #expect(aasa.count < AssociationGenerator.maximumFileSize)
        #expect(assetLinks.count < AssociationGenerator.maximumFileSize)
    }

    @Test(arguments: [
        ("/__/auth/links", false, true), ("/__/auth/links/", false, true), ("/__/auth/action", false, false),
        ("/__/auth/action/x", false, false), ("/__/auth/links", true, true), ("/__/auth/action", true, true),
        ("/__/auth/action/x", true, true),
    ])
    func claimedAuthPathsOpenTheAppsEvenWithBroadExclusions(path: String, claimActionLinks: Bool, opens: Bool) throws {
        let configuration = claimActionLinks ? claimed : full
        let generator = AssociationGenerator(configuration: configuration)
        let url = AssociatedURL(host: "links.example.com", path: path, query: "mode=signIn&oobCode=abc")
        let association = try AppSiteAssociation(bytes: try generator.appleAppSiteAssociation())
        for app in configuration.appleApps {
            let result = AASAMatcher(association: association).evaluate(url, appID: app.appID, domain: "links.example.com")
            #expect((result.outcome == .match) == opens, "\(app.appID) \(path): \(result.summary)")
        }
        let assetLinks = try AssetLinks(bytes: try generator.assetLinks())
        for app in configuration.androidApps {
            let verdict = AssetLinksMatcher(assetLinks: assetLinks).evaluate(
                url, packageName: app.packageName, certificateFingerprint: fingerprint, domain: "links.example.com")
            #expect((verdict.outcome == .handled) == opens, "\(app.packageName) \(path): \(verdict.summary)")
        }
    }

    @Test(
        "fronting a Firebase project, only sign-in action links open the app (mode=signIn component), before any exclusion",
        arguments: [
            ("mode=signIn&oobCode=abc&apiKey=k", true), ("oobCode=abc&mode=signIn", true), ("mode=resetPassword&oobCode=abc", false),
            ("mode=verifyEmail&oobCode=abc", false), ("mode=signin&oobCode=abc", false), ("oobCode=abc", false),
        ])
    func signInActionLinksOpenTheApp(query: String, opens: Bool) throws {
        var configuration = full
        configuration.claimSignInActionLinks = true
        let bytes = try AssociationGenerator(configuration: configuration).appleAppSiteAssociation()
        #expect(AASAValidator().validate(bytes).isClean)
        let association = AASAMatcher(association: try AppSiteAssociation(bytes: bytes))
        let url = AssociatedURL(host: "links.example.com", path: "/__/auth/action", query: query)
        for app in configuration.appleApps {
            let result = association.evaluate(url, appID: app.appID, domain: "links.example.com")
            #expect((result.outcome == .match) == opens, "\(query): \(result.summary)")
        }
        // Android 15's dynamic rules claim the same links.
        let links = try AssociationGenerator(configuration: configuration).assetLinks()
        #expect(AssetLinksValidator().validate(links).isClean)
        let assetLinks = AssetLinksMatcher(assetLinks: try AssetLinks(bytes: links))
        for app in configuration.androidApps {
            let verdict = assetLinks.evaluate(
                url, packageName: app.packageName, certificateFingerprint: fingerprint, domain: "links.example.com")
            #expect((verdict.outcome == .handled) == opens, "\(app.packageName) \(query): \(verdict.summary)")
        }
    }

    @Test func extraRulesApplyOnBothPlatforms() throws {
        let generator = AssociationGenerator(configuration: full)
        let association = AASAMatcher(association: try AppSiteAssociation(bytes: try generator.appleAppSiteAssociation()))
        let assetLinks = AssetLinksMatcher(assetLinks: try AssetLinks(bytes: try generator.assetLinks()))
        let cases: [(AssociatedURL, AASAMatchResult.Outcome, AssetLinksVerdict.Outcome)] = [
            (AssociatedURL(host: "example.com", path: "/__/other"), .exclude, .excluded),
            (AssociatedURL(host: "example.com", path: "/invite/team", query: "code=XYZ"), .match, .handled),
            (AssociatedURL(host: "example.com", path: "/invite/team"), .noMatch, .excluded),
            (AssociatedURL(host: "example.com", path: "/promo", fragment: "app"), .match, .handled),
            (AssociatedURL(host: "example.com", path: "/elsewhere"), .noMatch, .excluded),
        ]
        for (url, appleOutcome, androidOutcome) in cases {
            #expect(association.evaluate(url, appID: "ABCDE12345.com.example.app", domain: "example.com").outcome == appleOutcome, "\(url)")
            let verdict = assetLinks.evaluate(
                url, packageName: "com.example.lite", certificateFingerprint: fingerprint, domain: "example.com")
            #expect(verdict.outcome == androidOutcome, "\(url)")
        }
    }

    @Test func fullConfigurationWritesEveryService() throws {
        let generator = AssociationGenerator(configuration: full)
        let association = try AppSiteAssociation(bytes: try generator.appleAppSiteAssociation())
        #expect(association.appLinks?.details.first?.appIDs == ["ABCDE12345.com.example.app", "ABCDE12345.com.example.app2"])
        #expect(association.webCredentialsApps == ["ABCDE12345.com.example.app"])
        #expect(association.appClipsApps == ["ABCDE12345.com.example.app.Clip"])
        let components = try #require(association.appLinks?.details.first?.components)
        #expect(components.map(\.path) == ["/__/auth/links*", "/__/*", "/invite/*", "/promo"])
        #expect(components[2].query == .items([.init(name: "code", predicate: .pattern("?*"))]))

        let assetLinks = try AssetLinks(bytes: try generator.assetLinks())
        guard case .statement(let first)?? = assetLinks.entries.first else {
            Issue.record("expected a statement")
            return
        }
        #expect(first.relations == [AssetLinks.handleAllURLs, AssetLinks.getLoginCredentials])
        #expect(
            first.target == .androidApp(packageName: "com.example.app", sha256Fingerprints: [fingerprint]), "fingerprints are normalised")
        guard case .components(let rules)? = first.dynamicRules else {
            Issue.record("extra rules must produce dynamic_app_link_components")
            return
        }
        #expect(rules.map(\.path) == ["/__/auth/links*", "/__/*", "/invite/*", "/promo"])
    }

    @Test(arguments: [
        (AppsConfiguration(appleApps: [.init(teamID: "abcde12345", bundleID: "com.x")]), "teamID of com.x", "abcde12345"),
        (AppsConfiguration(appleApps: [.init(teamID: "ABCDE1234", bundleID: "com.x")]), "teamID of com.x", "ABCDE1234"),
        (AppsConfiguration(appleApps: [.init(teamID: "ABCDE12345", bundleID: "com..x")]), "bundleID", "com..x"),
        (
            AppsConfiguration(appleApps: [.init(teamID: "ABCDE12345", bundleID: "com.x")], webCredentialsAppIDs: ["com.x"]),
            "webcredentials app ID", "com.x"
        ),
        (
            AppsConfiguration(appleApps: [.init(teamID: "ABCDE12345", bundleID: "com.x"), .init(teamID: "ABCDE12345", bundleID: "com.x")]),
            "Apple app", "ABCDE12345.com.x"
        ),
        (
            AppsConfiguration(appleApps: [.init(teamID: "ABCDE12345", bundleID: "com.x")], extraRules: [.init(path: "promo")]),
            "extra rule path", "promo"
        ),
    ])
    func invalidAppleValuesNameTheFieldAndValue(configuration: AppsConfiguration, field: String, value: String) throws {
        let error = try #require(throws: AssociationGeneratorError.self) {
            try AssociationGenerator(configuration: configuration).appleAppSiteAssociation()
        }
        guard case .invalidValue(let reportedField, let reportedValue, let expected) = error else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(reportedField == field)
        #expect(reportedValue == value)
        #expect(!expected.isEmpty)
        #expect(error.description.hasPrefix("\(field) \"\(value)\" is invalid: expected "))
    }

    @Test(arguments: [
        (AppsConfiguration(androidApps: [.init(packageName: "nodots", sha256Fingerprints: [fingerprint])]), "packageName", "nodots"),
        (
            AppsConfiguration(androidApps: [.init(packageName: "com.x", sha256Fingerprints: ["AB:CD"])]), "SHA-256 fingerprint of com.x",
            "AB:CD"
        ),
        (AppsConfiguration(androidApps: [.init(packageName: "com.x", sha256Fingerprints: [])]), "sha256Fingerprints of com.x", "[]"),
        (
            AppsConfiguration(androidApps: [.init(packageName: "com.x", sha256Fingerprints: [fingerprint, fingerprint.lowercased()])]),
            "fingerprint of com.x", fingerprint
        ),
    ])
    func invalidAndroidValuesNameTheFieldAndValue(configuration: AppsConfiguration, field: String, value: String) throws {
        let error = try #require(throws: AssociationGeneratorError.self) {
            try AssociationGenerator(configuration: configuration).assetLinks()
        }
        #expect(error == .invalidValue(field: field, value: value, expected: expectedText(error)))
    }

    @Test func missingAppsAreReported() {
        #expect(throws: AssociationGeneratorError.noApps(file: "apple-app-site-association")) {
            try AssociationGenerator(configuration: AppsConfiguration()).appleAppSiteAssociation()
        }
        #expect(throws: AssociationGeneratorError.noApps(file: "assetlinks.json")) {
            try AssociationGenerator(configuration: AppsConfiguration()).assetLinks()
        }
    }

    @Test func oversizedOutputThrowsAClearError() throws {
        let rules = (0..<4_000).map { AppsConfiguration.PathRule(path: "/campaigns/2024/spring/landing-page-\($0)/*") }
        var configuration = minimal
        configuration.extraRules = rules
        let error = try #require(throws: AssociationGeneratorError.self) {
            try AssociationGenerator(configuration: configuration).appleAppSiteAssociation()
        }
        guard case .fileTooLarge(let file, let byteCount, let limit) = error else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(file == "apple-app-site-association")
        #expect(byteCount > limit)
        #expect(limit == 131_072)
    }

    @Test func unreachableExtraRulesAreRejectedByOurOwnValidator() throws {
        var configuration = minimal
        configuration.extraRules = [.init(path: "/*"), .init(path: "/never")]
        let error = try #require(throws: AssociationGeneratorError.self) {
            try AssociationGenerator(configuration: configuration).appleAppSiteAssociation()
        }
        guard case .generatedFileRejected(_, let diagnostics) = error else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(diagnostics.map(\.code) == [.unreachableRule])
    }
}

private func expectedText(_ error: AssociationGeneratorError) -> String {
    if case .invalidValue(_, _, let expected) = error { return expected }
    return ""
}
