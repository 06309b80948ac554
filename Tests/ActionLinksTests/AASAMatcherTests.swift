import ActionLinks
import Testing

let aasaAppID = "ABCDE12345.com.example.app"
let aasaDomain = "example.com"

func aasaMatcher(_ json: String) throws -> AASAMatcher {
    AASAMatcher(association: try AppSiteAssociation(bytes: Array(json.utf8)))
}

/// One detail for `aasaAppID` holding `components`, optionally with `applinks`-level extras.
func aasaComponentsFile(_ components: String, appLinksExtras: String = "", detailExtras: String = "") -> String {
    """
    {"applinks": {\(appLinksExtras) "details": [{"appIDs": ["\(aasaAppID)"], \(detailExtras) "components": \(components)}]}}
    """
}

func aasaEvaluate(
    _ matcher: AASAMatcher, _ path: String, query: String? = nil, fragment: String? = nil, host: String = aasaDomain
) -> AASAMatchResult {
    matcher.evaluate(AssociatedURL(host: host, path: path, query: query, fragment: fragment), appID: aasaAppID, domain: aasaDomain)
}

@Suite("AASA matcher: Apple's documented examples", .timeLimit(.minutes(5)))
struct AASAMatcherAppleExampleTests {
    /// The `applinks` example from Apple's "applinks" reference page.
    static let appleApplinksExample = """
        {"applinks": {"details": [{
          "appIDs": ["ABCDE12345.com.example.app", "ABCDE12345.com.example.app2"],
          "components": [
            {"#": "no_universal_links", "exclude": true, "comment": "Matches any URL whose fragment equals no_universal_links"},
            {"/": "/buy/*", "comment": "Matches any URL whose path starts with /buy/"},
            {"/": "/help/website/*", "exclude": true, "comment": "Matches any URL whose path starts with /help/website/"},
            {"/": "/help/*", "?": {"articleNumber": "????"}, "comment": "articleNumber of exactly 4 characters"}
          ]}]}}
        """

    @Test func buyPathMatchesSecondComponentAfterExplainingTheFirst() throws {
        let result = aasaEvaluate(try aasaMatcher(Self.appleApplinksExample), "/buy/shoes")
        #expect(result.outcome == .match)
        #expect(result.decidingRule == .component(detail: 0, component: 1))
        #expect(result.misses.map(\.rule) == [.component(detail: 0, component: 0)])
        #expect(result.misses[0].reason == "fragment \"\" does not match \"no_universal_links\"")
        #expect(result.summary == "matched by applinks.details[0].components[1]")
    }

    @Test func fragmentExclusionWinsBecauseItComesFirst() throws {
        let result = aasaEvaluate(try aasaMatcher(Self.appleApplinksExample), "/buy/shoes", fragment: "no_universal_links")
        #expect(result.outcome == .exclude)
        #expect(result.decidingRule == .component(detail: 0, component: 0))
    }

    @Test func helpWebsiteIsExcludedBeforeTheGeneralHelpRule() throws {
        let result = aasaEvaluate(try aasaMatcher(Self.appleApplinksExample), "/help/website/faq", query: "articleNumber=1234")
        #expect(result.outcome == .exclude)
        #expect(result.decidingRule == .component(detail: 0, component: 2))
    }

    @Test(arguments: [
        ("articleNumber=1234" as String?, AASAMatchResult.Outcome.match),
        ("lang=en&articleNumber=abcd", .match),
        ("articleNumber=123", .noMatch),
        ("articleNumber=12345", .noMatch),
        (nil, .noMatch),
    ])
    func helpArticleNeedsAFourCharacterArticleNumber(query: String?, expected: AASAMatchResult.Outcome) throws {
        let result = aasaEvaluate(try aasaMatcher(Self.appleApplinksExample), "/help/topic", query: query)
        #expect(result.outcome == expected)
    }

    @Test func missingArticleNumberIsExplained() throws {
        let result = aasaEvaluate(try aasaMatcher(Self.appleApplinksExample), "/help/topic")
        #expect(result.misses.last?.reason == "query item \"articleNumber\" is missing and \"\" does not match \"????\"")
        #expect(result.summary == "no rule for app ID \"\(aasaAppID)\" matched")
    }

    /// The details example: `caseSensitive: false` in the detail's defaults applies to its components.
    @Test func detailDefaultsMakeMatchingCaseInsensitive() throws {
        let file = """
            {"applinks": {"details": [{"appIDs": ["\(aasaAppID)"],
              "components": [{"/": "/buy/*", "#": "my_great_product_123"}],
              "defaults": {"caseSensitive": false}}]}}
            """
        #expect(aasaEvaluate(try aasaMatcher(file), "/BUY/Thing", fragment: "MY_GREAT_PRODUCT_123").outcome == .match)
        #expect(aasaEvaluate(try aasaMatcher(file), "/buy/thing", fragment: "other").outcome == .noMatch)
    }

    /// The substitution variables example: `/$(lang)_$(region)/$(food)/`.
    @Test(arguments: [
        ("/en_US/pizza/", true),
        ("/en_US/pizza", true),
        ("/zh_CN/sushi/", true),
        ("/fr_CA/samosa/", true),
        ("/xx_US/pizza/", false),
        ("/en_UK/pizza/", false),
        ("/en_US/taco/", false),
        ("/EN_us/pizza/", false),
        ("/en-US/pizza/", false),
    ])
    func languageRegionAndFoodVariables(path: String, matches: Bool) throws {
        let file = aasaComponentsFile(
            #"[{"/": "/$(lang)_$(region)/$(food)/"}]"#,
            appLinksExtras: #""substitutionVariables": {"food": ["burrito", "pizza", "sushi", "samosa"]},"#)
        #expect((aasaEvaluate(try aasaMatcher(file), path).outcome == .match) == matches)
    }
}

@Suite("AASA matcher: wildcards and whole-component matching", .timeLimit(.minutes(5)))
struct AASAMatcherWildcardTests {
    @Test(arguments: [
        ("/a/*", "/a/b/c", true),
        ("/a*", "/a/b", true),
        ("/a?c", "/abc", true),
        ("/a?c", "/ac", false),
        ("/a?c", "/abbc", false),
        ("/a/?*", "/a/x", true),
        ("/a/?*", "/a/", false),
        ("/a/?*", "/a", false),
        ("/buy", "/buy/now", false),
        ("/buy", "/xbuy", false),
        ("/*/detail", "/one/two/detail", true),
        ("/*.html", "/a/b.html", true),
        ("/*.html", "/a/b.htm", false),
    ])
    func pathPatterns(pattern: String, path: String, matches: Bool) throws {
        let file = aasaComponentsFile(#"[{"/": "\#(pattern)"}]"#)
        #expect((aasaEvaluate(try aasaMatcher(file), path).outcome == .match) == matches, "\(pattern) vs \(path)")
    }

    @Test(arguments: [
        ("buy/*", "/buy/x", true),
        ("/buy/*", "//buy/x", true),
        ("/buy/*", "///buy/x", true),
        ("/a/", "/a", true),
        ("/a", "/a/", true),
        ("/a", "/a//", true),
        ("/a/*", "/a", true),
        ("/a/*", "/a/", true),
        ("/a/*", "/ab", false),
        ("/", "", true),
        ("/", "/", true),
        ("/", "/a", false),
        ("/a/b", "/ab", false),
        ("/ab", "/a/b", false),
    ])
    func pathQuirks(pattern: String, path: String, matches: Bool) throws {
        let file = aasaComponentsFile(#"[{"/": "\#(pattern)"}]"#)
        #expect((aasaEvaluate(try aasaMatcher(file), path).outcome == .match) == matches, "\(pattern) vs \(path)")
    }

    @Test func hostIsComparedCaseInsensitivelyAndMustBeTheDomain() throws {
        let file = aasaComponentsFile(#"[{"/": "/a"}]"#)
        #expect(aasaEvaluate(try aasaMatcher(file), "/a", host: "EXAMPLE.com").outcome == .match)
        let other = aasaEvaluate(try aasaMatcher(file), "/a", host: "www.example.com")
        #expect(other.outcome == .noMatch)
        #expect(other.summary.contains("www.example.com"))
    }

    @Test func pathologicalPatternFinishesWithoutBacktracking() throws {
        let pattern = String(repeating: "*a", count: 12) + "*b"
        let file = aasaComponentsFile(#"[{"/": "/\#(pattern)", "?": "\#(pattern)"}]"#)
        let longPath = "/" + String(repeating: "a", count: 10_000)
        #expect(aasaEvaluate(try aasaMatcher(file), longPath).outcome == .noMatch)
        #expect(aasaEvaluate(try aasaMatcher(file), longPath + "b", query: String(repeating: "a", count: 10_000) + "b").outcome == .match)
    }

    @Test func stringQueryPatternMatchesTheWholeRawQuery() throws {
        let file = aasaComponentsFile(#"[{"/": "*", "?": "a=1*"}]"#)
        #expect(aasaEvaluate(try aasaMatcher(file), "/x", query: "a=1&b=2").outcome == .match)
        #expect(aasaEvaluate(try aasaMatcher(file), "/x", query: "b=2&a=1").outcome == .noMatch)
        #expect(aasaEvaluate(try aasaMatcher(file), "/x").outcome == .noMatch, "a missing query reads as \"\"")
    }

    @Test func missingFragmentReadsAsEmpty() throws {
        let file = aasaComponentsFile(##"[{"#": ""}]"##)
        #expect(aasaEvaluate(try aasaMatcher(file), "/x").outcome == .match)
        #expect(aasaEvaluate(try aasaMatcher(file), "/x", fragment: "top").outcome == .noMatch)
    }
}

@Suite("AASA matcher: query dictionaries", .timeLimit(.minutes(5)))
struct AASAMatcherQueryDictionaryTests {
    @Test func itemWithoutEqualsHasAnEmptyValue() throws {
        let empty = aasaComponentsFile(#"[{"?": {"flag": ""}}]"#)
        #expect(aasaEvaluate(try aasaMatcher(empty), "/", query: "flag").outcome == .match)
        let nonEmpty = aasaComponentsFile(#"[{"?": {"flag": "?*"}}]"#)
        #expect(aasaEvaluate(try aasaMatcher(nonEmpty), "/", query: "flag").outcome == .noMatch)
    }

    @Test func everyOccurrenceOfARepeatedNameMustMatch() throws {
        let file = aasaComponentsFile(#"[{"?": {"id": "??"}}]"#)
        #expect(aasaEvaluate(try aasaMatcher(file), "/", query: "id=12&id=34").outcome == .match)
        let result = aasaEvaluate(try aasaMatcher(file), "/", query: "id=12&id=345")
        #expect(result.outcome == .noMatch)
        #expect(result.misses.first?.reason == "query item \"id\" value \"345\" does not match \"??\"")
    }

    @Test func onlyNamedItemsAreConstrainedAndOrderDoesNotMatter() throws {
        let file = aasaComponentsFile(#"[{"?": {"a": "1", "b": "2"}}]"#)
        #expect(aasaEvaluate(try aasaMatcher(file), "/", query: "z=9&b=2&x&a=1").outcome == .match)
        #expect(aasaEvaluate(try aasaMatcher(file), "/", query: "a=1").outcome == .noMatch)
    }

    @Test func missingItemMatchesWhenThePatternAcceptsEmpty() throws {
        let file = aasaComponentsFile(#"[{"?": {"optional": "*"}}]"#)
        #expect(aasaEvaluate(try aasaMatcher(file), "/").outcome == .match)
    }

    @Test func itemNamesFollowCaseSensitivity() throws {
        let sensitive = aasaComponentsFile(#"[{"?": {"Ref": "x"}}]"#)
        #expect(aasaEvaluate(try aasaMatcher(sensitive), "/", query: "ref=x").outcome == .noMatch)
        let insensitive = aasaComponentsFile(#"[{"?": {"Ref": "X"}, "caseSensitive": false}]"#)
        #expect(aasaEvaluate(try aasaMatcher(insensitive), "/", query: "ref=x").outcome == .match)
    }
}

@Suite("AASA matcher: percentEncoded and caseSensitive", .timeLimit(.minutes(5)))
struct AASAMatcherEncodingTests {
    @Test(arguments: [
        ("/caf%C3%A9", "/caf%C3%A9", true),
        ("/café", "/caf%C3%A9", false),
        ("/a%2f", "/a%2F", false),
        ("/a/b", "/a%2Fb", false),
        ("/a/*", "/a%2Fb", false),
    ])
    func encodedComparisonIsLiteral(pattern: String, path: String, matches: Bool) throws {
        let file = aasaComponentsFile(#"[{"/": "\#(pattern)"}]"#)
        #expect((aasaEvaluate(try aasaMatcher(file), path).outcome == .match) == matches, "\(pattern) vs \(path)")
    }

    @Test(arguments: [
        ("/café", "/caf%C3%A9", true),
        ("/哈哈/?*", "/%E5%93%88%E5%93%88/x", true),
        ("/a/b", "/a%2Fb", true),
        ("/caf%C3%A9", "/caf%C3%A9", false),
    ])
    func decodedComparison(pattern: String, path: String, matches: Bool) throws {
        let file = aasaComponentsFile(#"[{"/": "\#(pattern)", "percentEncoded": false}]"#)
        #expect((aasaEvaluate(try aasaMatcher(file), path).outcome == .match) == matches, "\(pattern) vs \(path)")
    }

    @Test func decodedQueryItemNamesAndValues() throws {
        let file = aasaComponentsFile(#"[{"?": {"é": "a b"}, "percentEncoded": false}]"#)
        #expect(aasaEvaluate(try aasaMatcher(file), "/", query: "%C3%A9=a%20b").outcome == .match)
        #expect(aasaEvaluate(try aasaMatcher(file), "/", query: "%C3%A9=a+b").outcome == .noMatch, "+ is not a space in URLs")
        let encoded = aasaComponentsFile(#"[{"?": {"é": "a b"}}]"#)
        #expect(aasaEvaluate(try aasaMatcher(encoded), "/", query: "%C3%A9=a%20b").outcome == .noMatch)
    }

    @Test func decodedFragment() throws {
        let file = aasaComponentsFile(##"[{"#": "a b", "percentEncoded": false}]"##)
        #expect(aasaEvaluate(try aasaMatcher(file), "/", fragment: "a%20b").outcome == .match)
    }

    @Test func caseInsensitivityFoldsAsciiOnly() throws {
        let file = aasaComponentsFile(#"[{"/": "/straße/é", "caseSensitive": false, "percentEncoded": false}]"#)
        #expect(aasaEvaluate(try aasaMatcher(file), "/STRAßE/%C3%A9").outcome == .match)
        #expect(aasaEvaluate(try aasaMatcher(file), "/STRAßE/%C3%89").outcome == .noMatch, "É is not folded to é")
    }

    @Test func caseSensitiveByDefault() throws {
        let file = aasaComponentsFile(#"[{"/": "/Buy"}]"#)
        #expect(aasaEvaluate(try aasaMatcher(file), "/buy").outcome == .noMatch)
    }
}

@Suite("AASA matcher: defaults, details and variables", .timeLimit(.minutes(5)))
struct AASAMatcherResolutionTests {
    @Test func defaultsResolveComponentOverDetailOverDomain() throws {
        let file = """
            {"applinks": {"defaults": {"caseSensitive": false, "#": "frag"},
              "details": [{"appIDs": ["\(aasaAppID)"], "defaults": {"caseSensitive": true},
                "components": [{"/": "/a"}, {"/": "/b", "caseSensitive": false}]}]}}
            """
        let matcher = try aasaMatcher(file)
        #expect(aasaEvaluate(matcher, "/A", fragment: "frag").outcome == .noMatch, "detail default beats aasaDomain default")
        #expect(aasaEvaluate(matcher, "/B", fragment: "frag").outcome == .match, "component beats detail default")
        #expect(aasaEvaluate(matcher, "/b").outcome == .noMatch, "aasaDomain default fragment still applies")
    }

    @Test func defaultsMayCarryExcludeAndPatterns() throws {
        let file = aasaComponentsFile(
            #"[{"/": "/private/*"}, {"/": "/public/*", "exclude": false}]"#, detailExtras: #""defaults": {"exclude": true, "?": "*"},"#)
        let matcher = try aasaMatcher(file)
        #expect(aasaEvaluate(matcher, "/private/x").outcome == .exclude)
        #expect(aasaEvaluate(matcher, "/public/x").outcome == .match)
    }

    @Test func onlyDetailsListingTheAppAreConsideredInOrder() throws {
        let file = """
            {"applinks": {"details": [
              {"appIDs": ["ZZZZZ99999.other.app"], "components": [{"/": "*", "exclude": true}]},
              {"appID": "\(aasaAppID)", "components": [{"/": "/first/*"}]},
              {"appIDs": ["\(aasaAppID)"], "components": [{"/": "*", "exclude": true}]}]}}
            """
        let matcher = try aasaMatcher(file)
        #expect(aasaEvaluate(matcher, "/first/x").decidingRule == .component(detail: 1, component: 0))
        #expect(aasaEvaluate(matcher, "/second").decidingRule == .component(detail: 2, component: 0))
        let stranger = matcher.evaluate(AssociatedURL(host: aasaDomain, path: "/"), appID: "QQQQQ11111.none", domain: aasaDomain)
        #expect(stranger.outcome == .noMatch)
        #expect(stranger.summary == "no applinks detail lists app ID \"QQQQQ11111.none\"")
    }

    /// Apple documents the predefined ASCII variables as lists of single characters, so each matches one.
    @Test(arguments: [
        ("$(digit)", "5", true), ("$(digit)", "55", false), ("$(digit)*", "2024", true),
        ("$(alpha)", "x", true), ("$(alpha)", "xy", false), ("$(upper)", "Q", true), ("$(upper)", "q", false),
        ("$(lower)", "q", true), ("$(alnum)", "7", true), ("$(alnum)", "-", false),
        ("$(xdigit)", "f", true), ("$(xdigit)", "F", true), ("$(xdigit)", "g", false),
        ("$(region)", "FR", true), ("$(region)", "UK", false), ("$(region)", "fr", false),
        ("$(lang)", "zh", true), ("$(lang)", "tl", true), ("$(lang)", "xx", false), ("$(lang)", "EN", false),
    ])
    func predefinedVariables(pattern: String, segment: String, matches: Bool) throws {
        let file = aasaComponentsFile(#"[{"/": "/\#(pattern)"}]"#)
        #expect((aasaEvaluate(try aasaMatcher(file), "/" + segment).outcome == .match) == matches, "\(pattern) vs \(segment)")
    }

    @Test func caseInsensitiveComponentsFoldVariableAlternatives() throws {
        let file = aasaComponentsFile(#"[{"/": "/$(upper)$(region)", "caseSensitive": false}]"#)
        #expect(aasaEvaluate(try aasaMatcher(file), "/afr").outcome == .match)
    }

    @Test func customVariablesShadowPredefinedOnes() throws {
        let file = aasaComponentsFile(#"[{"/": "/$(digit)"}]"#, appLinksExtras: #""substitutionVariables": {"digit": ["one"]},"#)
        #expect(aasaEvaluate(try aasaMatcher(file), "/one").outcome == .match)
        #expect(aasaEvaluate(try aasaMatcher(file), "/1").outcome == .noMatch)
    }

    @Test func customValuesMayContainWildcardsButNotVariables() throws {
        let file = aasaComponentsFile(
            #"[{"/": "/$(v)"}]"#, appLinksExtras: #""substitutionVariables": {"v": ["a*", "b?", "$(digit)"]},"#)
        let matcher = try aasaMatcher(file)
        #expect(aasaEvaluate(matcher, "/axyz").outcome == .match)
        #expect(aasaEvaluate(matcher, "/bc").outcome == .match)
        #expect(aasaEvaluate(matcher, "/b").outcome == .noMatch)
        #expect(aasaEvaluate(matcher, "/1").outcome == .noMatch, "a variable inside a value is literal text")
    }

    @Test func undefinedVariableNeverMatchesAndIsExplained() throws {
        let result = aasaEvaluate(try aasaMatcher(aasaComponentsFile(#"[{"/": "/$(nope)"}]"#)), "/x")
        #expect(result.outcome == .noMatch)
        #expect(result.misses.first?.reason.contains("$(nope) is not defined") == true)
    }

    @Test func mistypedPatternMakesTheComponentUnmatchable() throws {
        let result = aasaEvaluate(try aasaMatcher(aasaComponentsFile(#"[{"/": 5}, {"/": "*"}]"#)), "/5")
        #expect(result.decidingRule == .component(detail: 0, component: 1))
    }
}

@Suite("AASA matcher: legacy paths", .timeLimit(.minutes(5)))
struct AASAMatcherLegacyTests {
    @Test func notPrefixExcludesAndFirstHitDecides() throws {
        let file = #"{"applinks": {"apps": [], "details": [{"appID": "\#(aasaAppID)", "paths": ["NOT /private/*", "/*"]}]}}"#
        let matcher = try aasaMatcher(file)
        let excluded = aasaEvaluate(matcher, "/private/x")
        #expect(excluded.outcome == .exclude)
        #expect(excluded.decidingRule == .legacyPath(detail: 0, path: 0))
        let matched = aasaEvaluate(matcher, "/public")
        #expect(matched.outcome == .match)
        #expect(matched.decidingRule == .legacyPath(detail: 0, path: 1))
    }

    @Test func objectKeyedDetailsAreUnderstood() throws {
        let file = #"{"applinks": {"apps": [], "details": {"\#(aasaAppID)": {"paths": ["/videos/wwdc/2015/*"]}}}}"#
        #expect(aasaEvaluate(try aasaMatcher(file), "/videos/wwdc/2015/509").outcome == .match)
        #expect(aasaEvaluate(try aasaMatcher(file), "/videos/wwdc/2016/1").outcome == .noMatch)
    }

    @Test func legacyMatchesThePathOnlyAndCaseSensitively() throws {
        let file = #"{"applinks": {"details": [{"appID": "\#(aasaAppID)", "paths": ["/a"]}]}}"#
        #expect(aasaEvaluate(try aasaMatcher(file), "/a", query: "x=1", fragment: "f").outcome == .match)
        #expect(aasaEvaluate(try aasaMatcher(file), "/A").outcome == .noMatch)
    }

    @Test func componentsTakePrecedenceOverPaths() throws {
        let file = aasaComponentsFile(#"[{"/": "/new"}]"#, detailExtras: #""paths": ["/old"],"#)
        #expect(aasaEvaluate(try aasaMatcher(file), "/old").outcome == .noMatch)
        #expect(aasaEvaluate(try aasaMatcher(file), "/new").outcome == .match)
    }
}
