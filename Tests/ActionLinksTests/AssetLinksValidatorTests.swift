import ActionLinks
import Testing

private let fingerprint = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"

private func validate(_ text: String) -> AssociationValidationReport<AssetLinks> {
    AssetLinksValidator().validate(Array(text.utf8))
}

private func webStatement(relation: String = #"["delegate_permission/common.get_login_creds"]"#, site: String) -> String {
    #"[{"relation": \#(relation), "target": {"namespace": "web", "site": "\#(site)"}}]"#
}

private func androidStatement(packageName: String = #""org.digitalassetlinks.test""#, fingerprints: String = #"["\#(fingerprint)"]"#)
    -> String
{
    #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "package_name": \#(packageName), "sha256_cert_fingerprints": \#(fingerprints)}}]"#
}

@Suite("assetlinks validator: Digital Asset Links compatibility rules", .timeLimit(.minutes(5)))
struct AssetLinksValidatorTests {
    @Test func validMultiStatementListIsClean() throws {
        let text = """
            [{"relation": ["delegate_permission/common.handle_all_urls", "delegate_permission/common.get_user_location"],
              "target": {"namespace": "android_app", "package_name": "org.digitalassetlinks.comptest2001",
                         "sha256_cert_fingerprints": ["\(fingerprint)"]}},
             {"relation": ["delegate_permission/common.get_login_creds"],
              "target": {"namespace": "web", "site": "https://target-comptest2001.digitalassetlinks.org"}}]
            """
        let report = validate(text)
        #expect(report.isClean, "\(report.diagnostics)")
        #expect(report.usable?.entries.count == 2)
        #expect(report.usable?.entries.allSatisfy { $0 != nil } == true)
    }

    @Test func emptyListIsAnError() {
        #expect(validate("[]").diagnostics.map(\.code) == [.assetLinksEmptyList])
    }

    @Test func oneBadStatementDoesNotVoidTheGoodOnes() throws {
        let text = """
            [{"target": {"namespace": "web", "site": "https://a.example"}, "relation": ["delegate_permission/common.get_login_creds"]},
             {},
             {"relation": ["delegate_permission/common.handle_all_urls"],
              "target": {"namespace": "android_app", "package_name": "org.example.app", "sha256_cert_fingerprints": ["\(fingerprint)"]}}]
            """
        let report = validate(text)
        #expect(report.diagnostics.map(\.code) == [.assetLinksMissingRelation, .assetLinksMissingTarget])
        #expect(report.diagnostics.map(\.path) == ["[1]", "[1]"])
        let usable = try #require(report.usable)
        #expect(usable.entries.count == 3)
        #expect(usable.entries[0] != nil)
        #expect(usable.entries[1] == nil)
        #expect(usable.entries[2] != nil)
    }

    @Test func includeMayNotCarryStandardFields() throws {
        let report = validate(#"[{"target": {"namespace": "web", "site": "https://a.example"}, "include": "https://a.example/more.json"}]"#)
        #expect(report.diagnostics.map(\.code) == [.assetLinksIncludeWithOtherFields])
        #expect(report.usable?.entries == [nil])
    }

    @Test func includeMayCarryNonStandardFields() {
        let report = validate(#"[{"magicfield": {"foo": "bar"}, "include": "https://a.example/includefile.json"}]"#)
        #expect(report.isClean)
        #expect(report.usable?.entries == [.include("https://a.example/includefile.json")])
    }

    @Test func includeMustBeAnHTTPSURL() {
        #expect(validate(#"[{"include": 5}]"#).diagnostics.map(\.code) == [.assetLinksInvalidInclude])
        #expect(validate(#"[{"include": "http://a.example/x.json"}]"#).diagnostics.map(\.code) == [.assetLinksInvalidInclude])
    }

    @Test func strictJSONRejectsTruncationAndTrailingCommasWithPosition() throws {
        #expect(validate("[{").diagnostics.map(\.code) == [.invalidJSON])
        let trailing = try #require(
            validate(
                #"[{"relation": [ "delegate_permission/common.handle_all_urls", ], "target": {"namespace": "web", "site": "https://a.example"}}]"#
            )
            .diagnostics.first)
        #expect(trailing.code == .invalidJSON)
        #expect(trailing.message.contains("trailing comma before ']' at line 1 column 61"))
    }

    @Test(arguments: [
        "42", #""foo""#,
        #"{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "web", "site": "https://a.example"}}"#,
    ])
    func topLevelMustBeASingleArray(text: String) {
        let report = validate(text)
        #expect(report.diagnostics.map(\.code) == [.assetLinksNotAnArray])
        #expect(report.usable == nil)
    }

    @Test func targetMustBeAnObjectWithAKnownNamespace() {
        #expect(
            validate(#"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": "https://a.example"}]"#).diagnostics.map(
                \.code)
                == [.assetLinksTargetNotObject])
        let unknown = validate(
            #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "internets", "site": "https://a.example"}}]"#
        )
        #expect(unknown.diagnostics.map(\.code) == [.assetLinksUnknownNamespace])
        #expect(unknown.diagnostics[0].path == "[0].target.namespace")
    }

    @Test(arguments: [
        "delegate_permission/common.handle_all_urls", "delegate_permission/write_on_the_walls",
        "delegate_permission/org.digitalassetlinks.write_on_the_walls", "navigate/yellow_brick_road",
        "delegate_permission/get_login_creds",
    ])
    func validRelationStrings(relation: String) {
        #expect(validate(webStatement(relation: #"["\#(relation)"]"#, site: "https://a.example")).isClean)
    }

    @Test(arguments: [
        (#"[""]"#, AssociationDiagnostic.Code.assetLinksInvalidRelation),
        (#""delegate_permission/common.handle_all_urls""#, .assetLinksRelationNotArray),
        (#"[{}]"#, .assetLinksInvalidRelation),
        (#"["delegate_permission/*"]"#, .assetLinksInvalidRelation),
        (#"["INVALID_KIND/write_on_the_walls"]"#, .assetLinksInvalidRelation),
        (#"["/write_on_the_walls"]"#, .assetLinksInvalidRelation),
        (#"["/"]"#, .assetLinksInvalidRelation),
        (#"["write_on_the_walls"]"#, .assetLinksInvalidRelation),
        (#"["delegate_permission"]"#, .assetLinksInvalidRelation),
        (#"["delegate_permission/write_on_the_walls/foo"]"#, .assetLinksInvalidRelation),
        (#"["delegate_permission,write_on_the_walls"]"#, .assetLinksInvalidRelation),
        (#"["delegate_permission/"]"#, .assetLinksInvalidRelation),
        (#"["delegate_permission/write on the walls"]"#, .assetLinksInvalidRelation),
        (#"["delegate_permission/write+on+the+walls"]"#, .assetLinksInvalidRelation),
        (#"["delegate_permission/write_on_the_walls!"]"#, .assetLinksInvalidRelation),
        (#"["delegate_permission/write_on_the_WALLS"]"#, .assetLinksInvalidRelation),
        (#"["delegate_permission/write_on_the_walls "]"#, .assetLinksInvalidRelation),
        (#"[" delegate_permission/write_on_the_walls"]"#, .assetLinksInvalidRelation),
        (#"["delegate_permission / write_on_the_walls"]"#, .assetLinksInvalidRelation),
        ("[]", .assetLinksMissingRelation),
    ])
    func invalidRelations(relation: String, code: AssociationDiagnostic.Code) {
        let report = validate(webStatement(relation: relation, site: "https://a.example"))
        #expect(report.diagnostics.map(\.code) == [code], "\(relation)")
        #expect(report.usable?.entries == [nil])
    }

    @Test func invalidKindAndDetailAreNamed() throws {
        let kind = try #require(validate(webStatement(relation: #"["INVALID_KIND/x"]"#, site: "https://a.example")).diagnostics.first)
        #expect(kind.message.contains("invalid 'kind' field"))
        #expect(kind.path == "[0].relation[0]")
        let detail = try #require(
            validate(webStatement(relation: #"["delegate_permission/X"]"#, site: "https://a.example")).diagnostics.first)
        #expect(detail.message.contains("invalid 'detail' field"))
    }

    @Test(arguments: ["https://a.example", "https://a.example.", "HtTpS://a.example", "http://a.example:8080"])
    func validSites(site: String) {
        #expect(validate(webStatement(site: site)).isClean, "\(site)")
    }

    @Test(arguments: [
        ("https://a.example:999999", AssociationDiagnostic.Code.assetLinksInvalidSite),
        ("mailto://user@a.example", .assetLinksInvalidSite),
        ("https://x:y@a.example", .assetLinksSiteHasUserInfo),
        ("https://a.example?bar", .assetLinksSiteHasQuery),
        ("https://a.example#bar", .assetLinksSiteHasFragment),
        ("https://a.example/", .assetLinksSiteHasPath),
        ("https://a.example/XXX", .assetLinksSiteHasPath),
        ("https://a.example/XXX/", .assetLinksSiteHasPath),
        ("https://a.example/*", .assetLinksSiteHasPath),
        ("a.example", .assetLinksInvalidSite),
        ("https://", .assetLinksInvalidSite),
    ])
    func invalidSites(site: String, code: AssociationDiagnostic.Code) {
        let report = validate(webStatement(site: site))
        #expect(report.diagnostics.map(\.code) == [code], "\(site)")
        #expect(report.usable?.entries == [nil])
    }

    @Test func webTargetNeedsASite() {
        #expect(
            validate(#"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "web"}}]"#).diagnostics.map(
                \.code)
                == [.assetLinksMissingSite])
    }

    @Test func validAndroidTargetWithTwoCertificates() {
        let two = #"["11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11", "\#(fingerprint)"]"#
        #expect(validate(androidStatement(fingerprints: two)).isClean)
    }

    @Test(arguments: [
        (#""""#, AssociationDiagnostic.Code.assetLinksInvalidPackageName),
        (#""B A D""#, .assetLinksInvalidPackageName),
        (#""nodots""#, .assetLinksInvalidPackageName),
        (#""com.1example""#, .assetLinksInvalidPackageName),
        (#"7"#, .assetLinksInvalidPackageName),
    ])
    func invalidPackageNames(packageName: String, code: AssociationDiagnostic.Code) {
        #expect(validate(androidStatement(packageName: packageName)).diagnostics.map(\.code) == [code], "\(packageName)")
    }

    @Test func androidTargetNeedsAPackageNameAndFingerprints() {
        let noPackage =
            #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "sha256_cert_fingerprints": ["\#(fingerprint)"]}}]"#
        #expect(validate(noPackage).diagnostics.map(\.code) == [.assetLinksMissingPackageName])
        let noFingerprints =
            #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "package_name": "a.b"}}]"#
        #expect(validate(noFingerprints).diagnostics.map(\.code) == [.assetLinksMissingFingerprints])
    }

    @Test(arguments: [
        (#""\#(fingerprint)""#, AssociationDiagnostic.Code.assetLinksFingerprintsNotArray),
        ("[]", .assetLinksEmptyFingerprints),
        ("[{}]", .assetLinksMalformedFingerprint),
        (#"[""]"#, .assetLinksMalformedFingerprint),
        (#"["B A D"]"#, .assetLinksMalformedFingerprint),
        (#"["\#(fingerprint.lowercased())"]"#, .assetLinksLowercaseFingerprint),
        (
            #"["GG:HH:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"]"#,
            .assetLinksMalformedFingerprint
        ),
        (
            #"["6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"]"#,
            .assetLinksMalformedFingerprint
        ),
        (#"["146DE983C5730650D8EEB9952F34FC6416A08342E61DBEA88A0496B23FCF44E5"]"#, .assetLinksMalformedFingerprint),
    ])
    func invalidFingerprints(fingerprints: String, code: AssociationDiagnostic.Code) {
        let report = validate(androidStatement(fingerprints: fingerprints))
        #expect(report.diagnostics.map(\.code) == [code])
        #expect(report.usable?.entries == [nil])
    }

    @Test func lowercaseFingerprintMessageShowsTheFix() throws {
        let diagnostic = try #require(validate(androidStatement(fingerprints: #"["\#(fingerprint.lowercased())"]"#)).diagnostics.first)
        #expect(diagnostic.message.contains(fingerprint))
        #expect(diagnostic.path == "[0].target.sha256_cert_fingerprints[0]")
    }

    @Test func byteOrderMarkIsReported() {
        let report = AssetLinksValidator().validate([0xEF, 0xBB, 0xBF] + Array(webStatement(site: "https://a.example").utf8))
        #expect(report.diagnostics.map(\.code) == [.byteOrderMark])
    }
}

@Suite("assetlinks validator: Dynamic App Links rules", .timeLimit(.minutes(5)))
struct AssetLinksDynamicRulesValidatorTests {
    private func statement(components: String) -> String {
        #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "package_name": "com.example.app", "sha256_cert_fingerprints": ["\#(fingerprint)"]}, "relation_extensions": {"delegate_permission/common.handle_all_urls": {"dynamic_app_link_components": \#(components)}}}]"#
    }

    @Test func androidDocumentationExampleIsClean() throws {
        let report = validate(
            statement(
                components:
                    ##"[{"?": {"dl": "*"}}, {"#": "app"}, {"/": "/products/*"}, {"/": "/shoes", "?": {"in_app": "true"}}, {"/": "*", "exclude": true}]"##
            ))
        #expect(report.isClean, "\(report.diagnostics)")
        guard case .statement(let parsed)?? = report.usable?.entries.first,
            case .components(let components)? = parsed.dynamicRules
        else {
            Issue.record("expected parsed dynamic rules")
            return
        }
        #expect(components.count == 5)
        #expect(components[3].query == [.init(name: "in_app", pattern: "true")])
    }

    @Test func nonStringQueryValueDiscardsDynamicRulesButKeepsTheStatement() throws {
        let report = validate(statement(components: #"[{"/": "/a", "?": {"n": 1}}]"#))
        #expect(report.diagnostics.map(\.code) == [.nonStringQueryPredicate])
        #expect(
            report.diagnostics[0].path
                == #"[0].relation_extensions["delegate_permission/common.handle_all_urls"].dynamic_app_link_components[0]["?"]["n"]"#)
        guard case .statement(let parsed)?? = report.usable?.entries.first, case .discarded? = parsed.dynamicRules else {
            Issue.record("statement must stay usable with discarded rules")
            return
        }
    }

    @Test(arguments: ["[]", #"{"/": "*"}"#, #"[{"/": 1}]"#, #"[{"exclude": "yes"}]"#, #"[{"?": "dl=*"}]"#, "[3]"])
    func malformedDynamicRulesAreErrors(components: String) {
        let report = validate(statement(components: components))
        #expect(report.diagnostics.map(\.code) == [.assetLinksInvalidDynamicRules], "\(components)")
        #expect(report.usable?.entries.first != nil)
    }

    @Test func rulesAfterACatchAllAreUnreachable() {
        let report = validate(statement(components: #"[{"/": "*", "exclude": true}, {"/": "/path1"}]"#))
        #expect(report.diagnostics.map(\.code) == [.unreachableRule])
    }

    @Test func unknownComponentKeySuggestsTheIntendedOne() throws {
        let diagnostic = try #require(validate(statement(components: #"[{"/": "/a", "excluded": true}]"#)).diagnostics.first)
        #expect(diagnostic.code == .unknownKey)
        #expect(diagnostic.message.contains("\"exclude\""))
    }

    @Test func repeatedDynamicRulesForOneAppWarn() {
        let one = statement(components: #"[{"/": "/a"}]"#)
        let twice = "[" + one.dropFirst().dropLast() + "," + one.dropFirst().dropLast() + "]"
        #expect(validate(twice).diagnostics.map(\.code) == [.assetLinksRepeatedDynamicRules])
    }
}
