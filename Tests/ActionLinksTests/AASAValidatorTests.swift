import ActionLinks
import Testing

private func validate(_ text: String) -> AssociationValidationReport<AppSiteAssociation> {
    AASAValidator().validate(Array(text.utf8))
}

private func codes(_ report: AssociationValidationReport<AppSiteAssociation>) -> [AssociationDiagnostic.Code] {
    report.diagnostics.map(\.code)
}

private let validApp = "ABCDE12345.com.example.app"

@Suite("AASA validator", .timeLimit(.minutes(5)))
struct AASAValidatorTests {
    @Test func appleDocumentedExamplesAreClean() {
        #expect(validate(AASAMatcherAppleExampleTests.appleApplinksExample).isClean)
        let substitution = """
            {"applinks": {"substitutionVariables": {"food": ["burrito", "pizza", "sushi", "samosa"]},
              "details": [{"appIDs": ["\(validApp)"], "components": [{"/": "/$(lang)_$(region)/$(food)/"}]}]},
             "webcredentials": {"apps": ["\(validApp)"]}, "appclips": {"apps": ["ABCED12345.com.example.MyApp.Clip"]}}
            """
        let report = validate(substitution)
        #expect(report.isClean, "\(report.diagnostics)")
        #expect(report.usable?.appClipsApps == ["ABCED12345.com.example.MyApp.Clip"])
    }

    @Test func syntaxErrorsCarryLineAndColumn() throws {
        let report = validate("{\n  \"applinks\": {\"details\": [],}\n}")
        let diagnostic = try #require(report.diagnostics.first)
        #expect(diagnostic.code == .invalidJSON)
        #expect(diagnostic.severity == .error)
        #expect(diagnostic.message.contains("trailing comma before '}' at line 2 column 29"))
        #expect(report.usable == nil)
    }

    @Test func byteOrderMarkIsReportedAndTheRestStillChecked() {
        let report = AASAValidator().validate([0xEF, 0xBB, 0xBF] + Array(#"{"applinks": {"details": []}}"#.utf8))
        #expect(codes(report) == [.byteOrderMark, .aasaEmptyDetails])
        #expect(report.usable != nil)
    }

    @Test(arguments: ["[]", "\"applinks\"", "42", "null"])
    func topLevelMustBeAnObject(text: String) {
        #expect(codes(validate(text)) == [.aasaNotAnObject])
    }

    @Test func missingAppLinksIsAnErrorUnlessAnotherServiceIsPresent() throws {
        let empty = try #require(validate("{}").diagnostics.first)
        #expect(empty.code == .aasaMissingAppLinks)
        #expect(empty.severity == .error)
        let credentialsOnly = try #require(validate(#"{"webcredentials": {"apps": ["\#(validApp)"]}}"#).diagnostics.first)
        #expect(credentialsOnly.code == .aasaMissingAppLinks)
        #expect(credentialsOnly.severity == .warning)
    }

    @Test(arguments: [
        "abcde12345.com.example.app", "ABCDE1234.com.example.app", "ABCDE123456.com.example.app",
        "ABCDE12345", "ABCDE12345.", "ABCDE12345.com..app", "ABCDE-2345.com.example.app", "ABCDE12345.com.exa mple",
    ])
    func malformedAppIDs(appID: String) throws {
        let report = validate(#"{"applinks": {"details": [{"appIDs": ["\#(appID)"], "components": [{"/": "/*"}]}]}}"#)
        let diagnostic = try #require(report.diagnostics.first)
        #expect(diagnostic.code == .aasaInvalidAppID)
        #expect(diagnostic.path == "applinks.details[0].appIDs[0]")
    }

    @Test func duplicateAppIDsAreReportedWithTheEarlierLocation() throws {
        let report = validate(
            #"{"applinks": {"details": [{"appIDs": ["\#(validApp)"], "components": [{"/": "/a"}]}, {"appID": "\#(validApp)", "components": [{"/": "/b"}]}]}}"#
        )
        let diagnostic = try #require(report.diagnostics.first)
        #expect(diagnostic.code == .aasaDuplicateAppID)
        #expect(diagnostic.path == "applinks.details[1].appID")
        #expect(diagnostic.message.contains("applinks.details[0].appIDs[0]"))
    }

    @Test func pathsMixedWithComponentsWarns() {
        let report = validate(#"{"applinks": {"details": [{"appIDs": ["\#(validApp)"], "paths": ["/a"], "components": [{"/": "/b"}]}]}}"#)
        #expect(codes(report) == [.aasaPathsWithComponents])
        #expect(report.diagnostics[0].path == "applinks.details[0].paths")
    }

    @Test func nonStringQueryPredicateIsAnErrorAtItsExactPath() throws {
        let report = validate(
            #"{"applinks": {"details": [{"appIDs": ["\#(validApp)"], "components": [{"/": "/a"}, {"/": "/b"}, {"/": "/c", "?": {"ref": 1}}]}]}}"#
        )
        let diagnostic = try #require(report.diagnostics.first)
        #expect(diagnostic.code == .nonStringQueryPredicate)
        #expect(diagnostic.severity == .error)
        #expect(diagnostic.path == #"applinks.details[0].components[2]["?"]["ref"]"#)
        #expect(diagnostic.message.contains("the whole dictionary is void and this component matches any query"))
    }

    @Test(arguments: ["1", "true", "false", "null", "[]", #"["a"]"#, "{}", #"{"x": "y"}"#])
    func everyNonStringQueryValueIsReportedOnce(value: String) {
        let report = validate(
            #"{"applinks": {"details": [{"appIDs": ["\#(validApp)"], "components": [{"/": "/c", "?": {"a": "1", "ref": \#(value), "b": "2"}}]}]}}"#
        )
        #expect(codes(report) == [.nonStringQueryPredicate])
        #expect(report.diagnostics.first?.path == #"applinks.details[0].components[0]["?"]["ref"]"#)
    }

    @Test func aVoidedDictionaryMakesACatchAllLikeTheMatcher() {
        let report = validate(
            ##"{"applinks": {"details": [{"appIDs": ["\##(validApp)"], "components": [{"/": "*", "?": {"a": "1", "n": 2}}, {"/": "/b"}]}]}}"##
        )
        #expect(codes(report) == [.nonStringQueryPredicate, .unreachableRule])
        #expect(report.diagnostics.map(\.path) == [#"applinks.details[0].components[0]["?"]["n"]"#, "applinks.details[0].components[1]"])
    }

    @Test(arguments: [
        (#"{"applinks": {"details": [{"appIds": ["\#(validApp)"]}]}}"#, "applinks.details[0].appIds", "appIDs"),
        (
            #"{"applinks": {"details": [{"appIDs": ["\#(validApp)"], "components": [{"/": "/a", "excluded": true}]}]}}"#,
            "applinks.details[0].components[0].excluded", "exclude"
        ),
        (#"{"applinks": {"details": [{"appIDs": ["\#(validApp)"], "compnents": []}]}}"#, "applinks.details[0].compnents", "components"),
        (#"{"appLinks": {}}"#, "appLinks", "applinks"),
        (#"{"applinks": {"details": [], "substitutionVariable": {}}}"#, "applinks.substitutionVariable", "substitutionVariables"),
    ])
    func misspeltKeysSuggestTheNearestKnownKey(text: String, path: String, suggestion: String) throws {
        let diagnostic = try #require(validate(text).diagnostics.first { $0.code == .unknownKey })
        #expect(diagnostic.path == path)
        #expect(diagnostic.message.contains("Did you mean \"\(suggestion)\"?"))
    }

    @Test func unrelatedUnknownKeyListsTheKnownKeys() throws {
        let report = validate(#"{"applinks": {"details": [{"appIDs": ["\#(validApp)"], "components": [{"/": "/a", "priority": 1}]}]}}"#)
        let diagnostic = try #require(report.diagnostics.first)
        #expect(diagnostic.code == .unknownKey)
        #expect(diagnostic.message.contains("Known keys:"))
    }

    @Test func everyRuleAfterACatchAllIsUnreachable() {
        let report = validate(
            ##"{"applinks": {"details": [{"appIDs": ["\##(validApp)"], "components": [{"/": "/a"}, {"/": "/*", "comment": "all"}, {"/": "/b"}, {"#": "x"}]}]}}"##
        )
        #expect(codes(report) == [.unreachableRule, .unreachableRule])
        #expect(report.diagnostics.map(\.path) == ["applinks.details[0].components[2]", "applinks.details[0].components[3]"])
    }

    @Test func constrainedWildcardsAreNotCatchAlls() {
        let report = validate(
            ##"{"applinks": {"details": [{"appIDs": ["\##(validApp)"], "components": [{"/": "*", "?": {"a": "?*"}}, {"/": "*", "#": "x"}, {"/": "/?*"}, {"/": "/b"}]}]}}"##
        )
        #expect(report.isClean, "\(report.diagnostics)")
    }

    @Test func defaultsCanTurnACatchAllIntoAConstrainedRule() {
        let report = validate(
            ##"{"applinks": {"defaults": {"#": "app"}, "details": [{"appIDs": ["\##(validApp)"], "components": [{"/": "*"}, {"/": "/b"}]}]}}"##
        )
        #expect(report.isClean)
    }

    @Test func legacyCatchAllMakesLaterPathsUnreachable() {
        let report = validate(#"{"applinks": {"apps": [], "details": [{"appID": "\#(validApp)", "paths": ["NOT /x", "*", "/y"]}]}}"#)
        #expect(codes(report) == [.unreachableRule])
        #expect(report.diagnostics[0].path == "applinks.details[0].paths[2]")
    }

    @Test func fileOverOneHundredTwentyEightKilobytesIsAnError() {
        let components = (0..<5_000).map { #"{"/": "/path/number/\#($0)/*"}"# }.joined(separator: ",")
        let text = #"{"applinks": {"details": [{"appIDs": ["\#(validApp)"], "components": [\#(components)]}]}}"#
        #expect(text.utf8.count > AASAValidator.maximumFileSize)
        let report = validate(text)
        #expect(codes(report) == [.fileTooLarge])
        #expect(report.usable?.appLinks?.details.first?.components?.count == 5_000)
    }

    @Test func emptyDetailsAndDetailsWithoutRulesWarn() {
        #expect(codes(validate(#"{"applinks": {"details": []}}"#)) == [.aasaEmptyDetails])
        #expect(codes(validate(#"{"applinks": {"details": [{"appIDs": ["\#(validApp)"]}]}}"#)) == [.aasaDetailWithoutRules])
        #expect(codes(validate(#"{"applinks": {"details": [{"components": []}]}}"#)) == [.aasaDetailWithoutAppID])
        #expect(codes(validate(#"{"applinks": {}}"#)) == [.aasaMissingDetails])
    }

    @Test func substitutionVariableProblems() {
        let undefined = validate(#"{"applinks": {"details": [{"appIDs": ["\#(validApp)"], "components": [{"/": "/$(food)"}]}]}}"#)
        #expect(codes(undefined) == [.aasaUndefinedVariable])
        #expect(undefined.diagnostics[0].path == #"applinks.details[0].components[0]["/"]"#)
        let shadowed = validate(#"{"applinks": {"substitutionVariables": {"lang": ["en"]}, "details": []}}"#)
        #expect(codes(shadowed) == [.aasaShadowedVariable, .aasaEmptyDetails])
        let nested = validate(#"{"applinks": {"substitutionVariables": {"x": ["$(lang)"], "a(b": ["1"]}, "details": []}}"#)
        #expect(codes(nested) == [.aasaInvalidVariable, .aasaInvalidVariable, .aasaEmptyDetails])
    }

    @Test func wrongTypesAreErrors() {
        let report = validate(
            ##"{"applinks": {"details": [{"appIDs": "\##(validApp)", "components": [{"/": "/a", "exclude": "true", "caseSensitive": 0, "#": 1}]}]}}"##
        )
        #expect(codes(report) == [.wrongType, .aasaDetailWithoutAppID, .wrongType, .wrongType, .wrongType])
    }

    @Test func duplicateKeysWarn() {
        let report = validate(#"{"applinks": {"details": [{"appIDs": ["\#(validApp)"], "components": [{"/": "/a", "/": "/b"}]}]}}"#)
        #expect(codes(report) == [.duplicateKey])
        #expect(report.diagnostics[0].path == #"applinks.details[0].components[0]["/"]"#)
    }

    @Test func appListServicesAreChecked() {
        let report = validate(#"{"applinks": {"details": []}, "webcredentials": {"apps": ["bad", 3]}, "appclips": {"app": []}}"#)
        #expect(
            codes(report) == [.aasaInvalidAppID, .wrongType, .unknownKey, .wrongType, .aasaEmptyDetails])
    }

    @Test func diagnosticsPrintCodeSeverityAndPath() {
        let diagnostic = AssociationDiagnostic(.aasaInvalidAppID, .error, at: "applinks.details[0].appIDs[1]", "bad")
        #expect(diagnostic.description == "error[aasa.invalid-app-id] applinks.details[0].appIDs[1]: bad")
        #expect(AssociationDiagnostic.Code("custom.check") == AssociationDiagnostic.Code("custom.check"))
    }
}
