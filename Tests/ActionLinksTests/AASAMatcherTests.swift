import ActionLinks
import Testing

private let appID = "ABCDE12345.com.example.app"
private let domain = "example.com"

private func matcher(_ json: String) throws -> AASAMatcher {
    AASAMatcher(association: try AppSiteAssociation(bytes: Array(json.utf8)))
}

/// One detail for `appID` holding `components`, optionally with `applinks`-level extras.
private func componentsFile(_ components: String, appLinksExtras: String = "", detailExtras: String = "") -> String {
    """
    {"applinks": {\(appLinksExtras) "details": [{"appIDs": ["\(appID)"], \(detailExtras) "components": \(components)}]}}
    """
}

private func evaluate(
    _ matcher: AASAMatcher, _ path: String, query: String? = nil, fragment: String? = nil, host: String = domain
) -> AASAMatchResult {
    matcher.evaluate(AssociatedURL(host: host, path: path, query: query, fragment: fragment), appID: appID, domain: domain)
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
        let result = evaluate(try matcher(Self.appleApplinksExample), "/buy/shoes")
        #expect(result.outcome == .match)
        #expect(result.decidingRule == .component(detail: 0, component: 1))
        #expect(result.misses.map(\.rule) == [.component(detail: 0, component: 0)])
        #expect(result.misses[0].reason == "fragment \"\" does not match \"no_universal_links\"")
        #expect(result.summary == "matched by applinks.details[0].components[1]")
    }

    @Test func fragmentExclusionWinsBecauseItComesFirst() throws {
        let result = evaluate(try matcher(Self.appleApplinksExample), "/buy/shoes", fragment: "no_universal_links")
        #expect(result.outcome == .exclude)
        #expect(result.decidingRule == .component(detail: 0, component: 0))
    }

    @Test func helpWebsiteIsExcludedBeforeTheGeneralHelpRule() throws {
        let result = evaluate(try matcher(Self.appleApplinksExample), "/help/website/faq", query: "articleNumber=1234")
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
        let result = evaluate(try matcher(Self.appleApplinksExample), "/help/topic", query: query)
        #expect(result.outcome == expected)
    }

    @Test func missingArticleNumberIsExplained() throws {
        let result = evaluate(try matcher(Self.appleApplinksExample), "/help/topic")
        #expect(result.misses.last?.reason == "query item \"articleNumber\" is missing and \"\" does not match \"????\"")
        #expect(result.summary == "no rule for app ID \"\(appID)\" matched")
    }

    /// The details example: `caseSensitive: false` in the detail's defaults applies to its components.
    @Test func detailDefaultsMakeMatchingCaseInsensitive() throws {
        let file = """
            {"applinks": {"details": [{"appIDs": ["\(appID)"],
              "components": [{"/": "/buy/*", "#": "my_great_product_123"}],
              "defaults": {"caseSensitive": false}}]}}
            """
        #expect(evaluate(try matcher(file), "/BUY/Thing", fragment: "MY_GREAT_PRODUCT_123").outcome == .match)
        #expect(evaluate(try matcher(file), "/buy/thing", fragment: "other").outcome == .noMatch)
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
        let file = componentsFile(
            #"[{"/": "/$(lang)_$(region)/$(food)/"}]"#,
            appLinksExtras: #""substitutionVariables": {"food": ["burrito", "pizza", "sushi", "samosa"]},"#)
        #expect((evaluate(try matcher(file), path).outcome == .match) == matches)
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
        let file = componentsFile(#"[{"/": "\#(pattern)"}]"#)
        #expect((evaluate(try matcher(file), path).outcome == .match) == matches, "\(pattern) vs \(path)")
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
        let file = componentsFile(#"[{"/": "\#(pattern)"}]"#)
        #expect((evaluate(try matcher(file), path).outcome == .match) == matches, "\(pattern) vs \(path)")
    }

    @Test func hostIsComparedCaseInsensitivelyAndMustBeTheDomain() throws {
        let file = componentsFile(#"[{"/": "/a"}]"#)
        #expect(evaluate(try matcher(file), "/a", host: "EXAMPLE.com").outcome == .match)
        let other = evaluate(try matcher(file), "/a", host: "www.example.com")
        #expect(other.outcome == .noMatch)
        #expect(other.summary.contains("www.example.com"))
    }

    @Test func pathologicalPatternFinishesWithoutBacktracking() throws {
        let pattern = String(repeating: "*a", count: 12) + "*b"
        let file = componentsFile(#"[{"/": "/\#(pattern)", "?": "\#(pattern)"}]"#)
        let longPath = "/" + String(repeating: "a", count: 10_000)
        #expect(evaluate(try matcher(file), longPath).outcome == .noMatch)
        #expect(evaluate(try matcher(file), longPath + "b", query: String(repeating: "a", count: 10_000) + "b").outcome == .match)
    }

    @Test func stringQueryPatternMatchesTheWholeRawQuery() throws {
        let file = componentsFile(#"[{"/": "*", "?": "a=1*"}]"#)
        #expect(evaluate(try matcher(file), "/x", query: "a=1&b=2").outcome == .match)
        #expect(evaluate(try matcher(file), "/x", query: "b=2&a=1").outcome == .noMatch)
        #expect(evaluate(try matcher(file), "/x").outcome == .noMatch, "a missing query reads as \"\"")
    }

    @Test func missingFragmentReadsAsEmpty() throws {
        let file = componentsFile(##"[{"#": ""}]"##)
        #expect(evaluate(try matcher(file), "/x").outcome == .match)
        #expect(evaluate(try matcher(file), "/x", fragment: "top").outcome == .noMatch)
    }
}

@Suite("AASA matcher: query dictionaries", .timeLimit(.minutes(5)))
struct AASAMatcherQueryDictionaryTests {
    @Test func itemWithoutEqualsHasAnEmptyValue() throws {
        let empty = componentsFile(#"[{"?": {"flag": ""}}]"#)
        #expect(evaluate(try matcher(empty), "/", query: "flag").outcome == .match)
        let nonEmpty = componentsFile(#"[{"?": {"flag": "?*"}}]"#)
        #expect(evaluate(try matcher(nonEmpty), "/", query: "flag").outcome == .noMatch)
    }

    @Test func everyOccurrenceOfARepeatedNameMustMatch() throws {
        let file = componentsFile(#"[{"?": {"id": "??"}}]"#)
        #expect(evaluate(try matcher(file), "/", query: "id=12&id=34").outcome == .match)
        let result = evaluate(try matcher(file), "/", query: "id=12&id=345")
        #expect(result.outcome == .noMatch)
        #expect(result.misses.first?.reason == "query item \"id\" value \"345\" does not match \"??\"")
    }

    @Test func onlyNamedItemsAreConstrainedAndOrderDoesNotMatter() throws {
        let file = componentsFile(#"[{"?": {"a": "1", "b": "2"}}]"#)
        #expect(evaluate(try matcher(file), "/", query: "z=9&b=2&x&a=1").outcome == .match)
        #expect(evaluate(try matcher(file), "/", query: "a=1").outcome == .noMatch)
    }

    @Test func missingItemMatchesWhenThePatternAcceptsEmpty() throws {
        let file = componentsFile(#"[{"?": {"optional": "*"}}]"#)
        #expect(evaluate(try matcher(file), "/").outcome == .match)
    }

    @Test func itemNamesFollowCaseSensitivity() throws {
        let sensitive = componentsFile(#"[{"?": {"Ref": "x"}}]"#)
        #expect(evaluate(try matcher(sensitive), "/", query: "ref=x").outcome == .noMatch)
        let insensitive = componentsFile(#"[{"?": {"Ref": "X"}, "caseSensitive": false}]"#)
        #expect(evaluate(try matcher(insensitive), "/", query: "ref=x").outcome == .match)
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
        let file = componentsFile(#"[{"/": "\#(pattern)"}]"#)
        #expect((evaluate(try matcher(file), path).outcome == .match) == matches, "\(pattern) vs \(path)")
    }

    @Test(arguments: [
        ("/café", "/caf%C3%A9", true),
        ("/哈哈/?*", "/%E5%93%88%E5%93%88/x", true),
        ("/a/b", "/a%2Fb", true),
        ("/caf%C3%A9", "/caf%C3%A9", false),
    ])
    func decodedComparison(pattern: String, path: String, matches: Bool) throws {
        let file = componentsFile(#"[{"/": "\#(pattern)", "percentEncoded": false}]"#)
        #expect((evaluate(try matcher(file), path).outcome == .match) == matches, "\(pattern) vs \(path)")
    }

    @Test func decodedQueryItemNamesAndValues() throws {
        let file = componentsFile(#"[{"?": {"é": "a b"}, "percentEncoded": false}]"#)
        #expect(evaluate(try matcher(file), "/", query: "%C3%A9=a%20b").outcome == .match)
        #expect(evaluate(try matcher(file), "/", query: "%C3%A9=a+b").outcome == .noMatch, "+ is not a space in URLs")
        let encoded = componentsFile(#"[{"?": {"é": "a b"}}]"#)
        #expect(evaluate(try matcher(encoded), "/", query: "%C3%A9=a%20b").outcome == .noMatch)
    }

    @Test func decodedFragment() throws {
        let file = componentsFile(##"[{"#": "a b", "percentEncoded": false}]"##)
        #expect(evaluate(try matcher(file), "/", fragment: "a%20b").outcome == .match)
    }

    @Test func caseInsensitivityFoldsAsciiOnly() throws {
        let file = componentsFile(#"[{"/": "/straße/é", "caseSensitive": false, "percentEncoded": false}]"#)
        #expect(evaluate(try matcher(file), "/STRAßE/%C3%A9").outcome == .match)
        #expect(evaluate(try matcher(file), "/STRAßE/%C3%89").outcome == .noMatch, "É is not folded to é")
    }

    @Test func caseSensitiveByDefault() throws {
        let file = componentsFile(#"[{"/": "/Buy"}]"#)
        #expect(evaluate(try matcher(file), "/buy").outcome == .noMatch)
    }
}

@Suite("AASA matcher: defaults, details and variables", .timeLimit(.minutes(5)))
struct AASAMatcherResolutionTests {
    @Test func defaultsResolveComponentOverDetailOverDomain() throws {
        let file = """
            {"applinks": {"defaults": {"caseSensitive": false, "#": "frag"},
              "details": [{"appIDs": ["\(appID)"], "defaults": {"caseSensitive": true},
                "components": [{"/": "/a"}, {"/": "/b", "caseSensitive": false}]}]}}
            """
        let matcher = try matcher(file)
        #expect(evaluate(matcher, "/A", fragment: "frag").outcome == .noMatch, "detail default beats domain default")
        #expect(evaluate(matcher, "/B", fragment: "frag").outcome == .match, "component beats detail default")
        #expect(evaluate(matcher, "/b").outcome == .noMatch, "domain default fragment still applies")
    }

    @Test func defaultsMayCarryExcludeAndPatterns() throws {
        let file = componentsFile(
            #"[{"/": "/private/*"}, {"/": "/public/*", "exclude": false}]"#, detailExtras: #""defaults": {"exclude": true, "?": "*"},"#)
        let matcher = try matcher(file)
        #expect(evaluate(matcher, "/private/x").outcome == .exclude)
        #expect(evaluate(matcher, "/public/x").outcome == .match)
    }

    @Test func onlyDetailsListingTheAppAreConsideredInOrder() throws {
        let file = """
            {"applinks": {"details": [
              {"appIDs": ["ZZZZZ99999.other.app"], "components": [{"/": "*", "exclude": true}]},
              {"appID": "\(appID)", "components": [{"/": "/first/*"}]},
              {"appIDs": ["\(appID)"], "components": [{"/": "*", "exclude": true}]}]}}
            """
        let matcher = try matcher(file)
        #expect(evaluate(matcher, "/first/x").decidingRule == .component(detail: 1, component: 0))
        #expect(evaluate(matcher, "/second").decidingRule == .component(detail: 2, component: 0))
        let stranger = matcher.evaluate(AssociatedURL(host: domain, path: "/"), appID: "QQQQQ11111.none", domain: domain)
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
        let file = componentsFile(#"[{"/": "/\#(pattern)"}]"#)
        #expect((evaluate(try matcher(file), "/" + segment).outcome == .match) == matches, "\(pattern) vs \(segment)")
    }

    @Test func caseInsensitiveComponentsFoldVariableAlternatives() throws {
        let file = componentsFile(#"[{"/": "/$(upper)$(region)", "caseSensitive": false}]"#)
        #expect(evaluate(try matcher(file), "/afr").outcome == .match)
    }

    @Test func customVariablesShadowPredefinedOnes() throws {
        let file = componentsFile(#"[{"/": "/$(digit)"}]"#, appLinksExtras: #""substitutionVariables": {"digit": ["one"]},"#)
        #expect(evaluate(try matcher(file), "/one").outcome == .match)
        #expect(evaluate(try matcher(file), "/1").outcome == .noMatch)
    }

    @Test func customValuesMayContainWildcardsButNotVariables() throws {
        let file = componentsFile(
            #"[{"/": "/$(v)"}]"#, appLinksExtras: #""substitutionVariables": {"v": ["a*", "b?", "$(digit)"]},"#)
        let matcher = try matcher(file)
        #expect(evaluate(matcher, "/axyz").outcome == .match)
        #expect(evaluate(matcher, "/bc").outcome == .match)
        #expect(evaluate(matcher, "/b").outcome == .noMatch)
        #expect(evaluate(matcher, "/1").outcome == .noMatch, "a variable inside a value is literal text")
    }

    @Test func undefinedVariableNeverMatchesAndIsExplained() throws {
        let result = evaluate(try matcher(componentsFile(#"[{"/": "/$(nope)"}]"#)), "/x")
        #expect(result.outcome == .noMatch)
        #expect(result.misses.first?.reason.contains("$(nope) is not defined") == true)
    }

    @Test func mistypedPatternMakesTheComponentUnmatchable() throws {
        let result = evaluate(try matcher(componentsFile(#"[{"/": 5}, {"/": "*"}]"#)), "/5")
        #expect(result.decidingRule == .component(detail: 0, component: 1))
    }
}

@Suite("AASA matcher: legacy paths", .timeLimit(.minutes(5)))
struct AASAMatcherLegacyTests {
    @Test func notPrefixExcludesAndFirstHitDecides() throws {
        let file = #"{"applinks": {"apps": [], "details": [{"appID": "\#(appID)", "paths": ["NOT /private/*", "/*"]}]}}"#
        let matcher = try matcher(file)
        let excluded = evaluate(matcher, "/private/x")
        #expect(excluded.outcome == .exclude)
        #expect(excluded.decidingRule == .legacyPath(detail: 0, path: 0))
        let matched = evaluate(matcher, "/public")
        #expect(matched.outcome == .match)
        #expect(matched.decidingRule == .legacyPath(detail: 0, path: 1))
    }

    @Test func objectKeyedDetailsAreUnderstood() throws {
        let file = #"{"applinks": {"apps": [], "details": {"\#(appID)": {"paths": ["/videos/wwdc/2015/*"]}}}}"#
        #expect(evaluate(try matcher(file), "/videos/wwdc/2015/509").outcome == .match)
        #expect(evaluate(try matcher(file), "/videos/wwdc/2016/1").outcome == .noMatch)
    }

    @Test func legacyMatchesThePathOnlyAndCaseSensitively() throws {
        let file = #"{"applinks": {"details": [{"appID": "\#(appID)", "paths": ["/a"]}]}}"#
        #expect(evaluate(try matcher(file), "/a", query: "x=1", fragment: "f").outcome == .match)
        #expect(evaluate(try matcher(file), "/A").outcome == .noMatch)
    }

    @Test func componentsTakePrecedenceOverPaths() throws {
        let file = componentsFile(#"[{"/": "/new"}]"#, detailExtras: #""paths": ["/old"],"#)
        #expect(evaluate(try matcher(file), "/old").outcome == .noMatch)
        #expect(evaluate(try matcher(file), "/new").outcome == .match)
    }
}

/// docs/LINK-RULES.md §7.2: one non-string value voids the whole `?` dictionary, which then counts as
/// absent (Apple's default for a missing `?` is `*`): the component is decided by its path and
/// fragment alone.
@Suite("AASA matcher: a non-string query value voids the dictionary", .timeLimit(.minutes(5)))
struct AASAMatcherVoidedQueryTests {
    /// Every JSON type that is not a string, in the forms a hand-written file has.
    static let nonStrings = [
        "0", "1", "-2.5", "1e3", "true", "false", "null", "[]", #"["a"]"#, #"[1, "b"]"#, "{}", #"{"x": "y"}"#,
    ]

    private static let typeNames: [String: String] = [
        "0": "a number", "1": "a number", "-2.5": "a number", "1e3": "a number", "true": "a boolean", "false": "a boolean",
        "null": "null", "[]": "an array", #"["a"]"#: "an array", #"[1, "b"]"#: "an array", "{}": "an object",
        #"{"x": "y"}"#: "an object",
    ]

    private func decide(_ matcher: AASAMatcher, _ path: String, query: String?) -> (
        outcome: AASAMatchResult.Outcome, rule: AASAMatchResult.Rule?
    ) {
        let decision = matcher.decide(AssociatedURL(host: domain, path: path, query: query), appID: appID, domain: domain)
        return (decision.outcome, decision.rule)
    }

    @Test(arguments: nonStrings)
    func aLoneNonStringValueLeavesTheComponentMatchingAnyQuery(value: String) throws {
        let file = componentsFile(#"[{"/": "/x", "?": {"b": \#(value)}}, {"/": "/x", "exclude": true}]"#)
        let matcher = try matcher(file)
        for query in [nil, "", "b=1", "b=", "b", "other=2&b=%20", "a=1"] as [String?] {
            let result = evaluate(matcher, "/x", query: query)
            #expect(result.outcome == .match, "\(value) with query \(query ?? "nil"): \(result.summary)")
            #expect(result.decidingRule == .component(detail: 0, component: 0))
            #expect(result.misses.isEmpty)
            #expect(decide(matcher, "/x", query: query) == (.match, .component(detail: 0, component: 0)))
        }
        let explained = evaluate(matcher, "/x", query: "b=1")
        let kind = try #require(Self.typeNames[value])
        #expect(
            explained.summary
                == #"matched by applinks.details[0].components[0] (its "?" dictionary is ignored: query item "b" has \#(kind) instead of a string pattern, which voids the whole dictionary)"#
        )
    }

    @Test(arguments: nonStrings)
    func theStringPredicatesBesideItAreVoidedToo(value: String) throws {
        for dictionary in [
            #"{"a": "1", "b": \#(value), "c": "?*"}"#, #"{"b": \#(value), "a": "1", "c": "?*"}"#, #"{"a": "1", "c": "?*", "b": \#(value)}"#,
        ] {
            let matcher = try matcher(componentsFile(#"[{"/": "/x", "?": \#(dictionary)}, {"/": "/x", "exclude": true}]"#))
            // `a=2` and a missing `c` fail the string predicates; they are void with the dictionary.
            for query in ["a=1&c=z", "a=2", "c=", nil] as [String?] {
                let result = evaluate(matcher, "/x", query: query)
                #expect(result.outcome == .match, "\(dictionary) with query \(query ?? "nil"): \(result.summary)")
                #expect(result.summary.contains(#"query item "b" has"#))
                #expect(decide(matcher, "/x", query: query) == (.match, .component(detail: 0, component: 0)))
            }
        }
    }

    @Test(arguments: nonStrings)
    func thePathAndFragmentStillDecide(value: String) throws {
        let file = componentsFile(##"[{"/": "/x", "#": "f", "?": {"a": "1", "b": \##(value)}}, {"/": "/y", "exclude": true}]"##)
        let matcher = try matcher(file)
        let wrongPath = evaluate(matcher, "/z", query: "a=1")
        #expect(wrongPath.outcome == .noMatch)
        #expect(wrongPath.misses.first?.reason.hasPrefix(#"path "/z" does not match "/x" (its "?" dictionary is ignored"#) == true)
        #expect(decide(matcher, "/z", query: "a=1") == (.noMatch, nil))
        let excluded = matcher.evaluate(AssociatedURL(host: domain, path: "/y", query: "a=1", fragment: "f"), appID: appID, domain: domain)
        #expect(excluded.outcome == .exclude)
        #expect(excluded.misses.first?.reason.hasPrefix(#"path "/y" does not match "/x""#) == true)
        let noFragment = evaluate(matcher, "/x", query: "a=1")
        #expect(noFragment.outcome == .noMatch)
        #expect(noFragment.misses.first?.reason.hasPrefix(#"fragment "" does not match "f""#) == true)
        let both = matcher.evaluate(AssociatedURL(host: domain, path: "/x", query: "a=9", fragment: "f"), appID: appID, domain: domain)
        #expect(both.outcome == .match)
        #expect(
            matcher.decide(AssociatedURL(host: domain, path: "/x", query: "a=9", fragment: "f"), appID: appID, domain: domain).outcome
                == .match)
    }

    @Test(arguments: nonStrings)
    func anExcludingComponentWithAVoidedDictionaryExcludesEveryQuery(value: String) throws {
        let matcher = try matcher(componentsFile(#"[{"/": "/x", "?": {"keep": "yes", "n": \#(value)}, "exclude": true}, {"/": "*"}]"#))
        for query in ["keep=yes", "keep=no", nil] as [String?] {
            #expect(evaluate(matcher, "/x", query: query).outcome == .exclude)
            #expect(decide(matcher, "/x", query: query) == (.exclude, .component(detail: 0, component: 0)))
        }
        #expect(decide(matcher, "/elsewhere", query: nil) == (.match, .component(detail: 0, component: 1)))
    }

    @Test func aValidDictionaryStillConstrains() throws {
        let matcher = try matcher(componentsFile(#"[{"/": "/x", "?": {"a": "1", "b": "*"}}]"#))
        #expect(decide(matcher, "/x", query: "a=1&b=true") == (.match, .component(detail: 0, component: 0)))
        #expect(decide(matcher, "/x", query: "a=2") == (.noMatch, nil))
        #expect(evaluate(matcher, "/x", query: "a=1").summary == "matched by applinks.details[0].components[0]")
    }

    @Test func aStringThatSpellsAnotherTypeIsAPattern() throws {
        let matcher = try matcher(componentsFile(#"[{"/": "/x", "?": {"n": "1", "t": "true", "z": "null"}}]"#))
        #expect(decide(matcher, "/x", query: "n=1&t=true&z=null").outcome == .match)
        #expect(decide(matcher, "/x", query: "n=2&t=true&z=null").outcome == .noMatch)
    }

    @Test(arguments: nonStrings)
    func aVoidedComponentDictionaryFallsBackToTheDefaults(value: String) throws {
        let file = componentsFile(#"[{"/": "/x", "?": {"b": \#(value)}}]"#, detailExtras: #""defaults": {"?": {"a": "1"}},"#)
        let matcher = try matcher(file)
        #expect(decide(matcher, "/x", query: "a=1") == (.match, .component(detail: 0, component: 0)))
        let refused = evaluate(matcher, "/x", query: "a=2")
        #expect(refused.outcome == .noMatch)
        #expect(
            refused.misses.first?.reason.hasPrefix(#"query item "a" value "2" does not match "1" (its "?" dictionary is ignored"#) == true)
    }

    @Test(arguments: nonStrings)
    func aVoidedDefaultsDictionaryConstrainsNothing(value: String) throws {
        let file = componentsFile(#"[{"/": "/x"}]"#, appLinksExtras: #""defaults": {"?": {"a": "1", "b": \#(value)}},"#)
        let matcher = try matcher(file)
        #expect(decide(matcher, "/x", query: "a=2") == (.match, .component(detail: 0, component: 0)))
        #expect(evaluate(matcher, "/x", query: "a=2").summary.contains(#"(applinks.defaults' "?" dictionary is ignored"#))
    }

    @Test func aValidComponentDictionaryHidesAVoidedDefaultsOne() throws {
        let file = componentsFile(#"[{"/": "/x", "?": {"a": "1"}}]"#, appLinksExtras: #""defaults": {"?": {"b": false}},"#)
        let matcher = try matcher(file)
        #expect(decide(matcher, "/x", query: "a=2") == (.noMatch, nil))
        #expect(evaluate(matcher, "/x", query: "a=1").summary == "matched by applinks.details[0].components[0]")
    }
}
