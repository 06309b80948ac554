import ActionLinks
import Testing

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
        let decision = matcher.decide(AssociatedURL(host: aasaDomain, path: path, query: query), appID: aasaAppID, domain: aasaDomain)
        return (decision.outcome, decision.rule)
    }

    @Test(arguments: nonStrings)
    func aLoneNonStringValueLeavesTheComponentMatchingAnyQuery(value: String) throws {
        let file = aasaComponentsFile(#"[{"/": "/x", "?": {"b": \#(value)}}, {"/": "/x", "exclude": true}]"#)
        let matcher = try aasaMatcher(file)
        for query in [nil, "", "b=1", "b=", "b", "other=2&b=%20", "a=1"] as [String?] {
            let result = aasaEvaluate(matcher, "/x", query: query)
            #expect(result.outcome == .match, "\(value) with query \(query ?? "nil"): \(result.summary)")
            #expect(result.decidingRule == .component(detail: 0, component: 0))
            #expect(result.misses.isEmpty)
            #expect(decide(matcher, "/x", query: query) == (.match, .component(detail: 0, component: 0)))
        }
        let explained = aasaEvaluate(matcher, "/x", query: "b=1")
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
            let matcher = try aasaMatcher(aasaComponentsFile(#"[{"/": "/x", "?": \#(dictionary)}, {"/": "/x", "exclude": true}]"#))
            // `a=2` and a missing `c` fail the string predicates; they are void with the dictionary.
            for query in ["a=1&c=z", "a=2", "c=", nil] as [String?] {
                let result = aasaEvaluate(matcher, "/x", query: query)
                #expect(result.outcome == .match, "\(dictionary) with query \(query ?? "nil"): \(result.summary)")
                #expect(result.summary.contains(#"query item "b" has"#))
                #expect(decide(matcher, "/x", query: query) == (.match, .component(detail: 0, component: 0)))
            }
        }
    }

    @Test(arguments: nonStrings)
    func thePathAndFragmentStillDecide(value: String) throws {
        let file = aasaComponentsFile(##"[{"/": "/x", "#": "f", "?": {"a": "1", "b": \##(value)}}, {"/": "/y", "exclude": true}]"##)
        let matcher = try aasaMatcher(file)
        let wrongPath = aasaEvaluate(matcher, "/z", query: "a=1")
        #expect(wrongPath.outcome == .noMatch)
        #expect(wrongPath.misses.first?.reason.hasPrefix(#"path "/z" does not match "/x" (its "?" dictionary is ignored"#) == true)
        #expect(decide(matcher, "/z", query: "a=1") == (.noMatch, nil))
        let excluded = matcher.evaluate(
            AssociatedURL(host: aasaDomain, path: "/y", query: "a=1", fragment: "f"), appID: aasaAppID, domain: aasaDomain)
        #expect(excluded.outcome == .exclude)
        #expect(excluded.misses.first?.reason.hasPrefix(#"path "/y" does not match "/x""#) == true)
        let noFragment = aasaEvaluate(matcher, "/x", query: "a=1")
        #expect(noFragment.outcome == .noMatch)
        #expect(noFragment.misses.first?.reason.hasPrefix(#"fragment "" does not match "f""#) == true)
        let both = matcher.evaluate(
            AssociatedURL(host: aasaDomain, path: "/x", query: "a=9", fragment: "f"), appID: aasaAppID, domain: aasaDomain)
        #expect(both.outcome == .match)
        #expect(
            matcher.decide(AssociatedURL(host: aasaDomain, path: "/x", query: "a=9", fragment: "f"), appID: aasaAppID, domain: aasaDomain)
                .outcome
                == .match)
    }

    @Test(arguments: nonStrings)
    func anExcludingComponentWithAVoidedDictionaryExcludesEveryQuery(value: String) throws {
        let matcher = try aasaMatcher(
            aasaComponentsFile(#"[{"/": "/x", "?": {"keep": "yes", "n": \#(value)}, "exclude": true}, {"/": "*"}]"#))
        for query in ["keep=yes", "keep=no", nil] as [String?] {
            #expect(aasaEvaluate(matcher, "/x", query: query).outcome == .exclude)
            #expect(decide(matcher, "/x", query: query) == (.exclude, .component(detail: 0, component: 0)))
        }
        #expect(decide(matcher, "/elsewhere", query: nil) == (.match, .component(detail: 0, component: 1)))
    }

    @Test func aValidDictionaryStillConstrains() throws {
        let matcher = try aasaMatcher(aasaComponentsFile(#"[{"/": "/x", "?": {"a": "1", "b": "*"}}]"#))
        #expect(decide(matcher, "/x", query: "a=1&b=true") == (.match, .component(detail: 0, component: 0)))
        #expect(decide(matcher, "/x", query: "a=2") == (.noMatch, nil))
        #expect(aasaEvaluate(matcher, "/x", query: "a=1").summary == "matched by applinks.details[0].components[0]")
    }

    @Test func aStringThatSpellsAnotherTypeIsAPattern() throws {
        let matcher = try aasaMatcher(aasaComponentsFile(#"[{"/": "/x", "?": {"n": "1", "t": "true", "z": "null"}}]"#))
        #expect(decide(matcher, "/x", query: "n=1&t=true&z=null").outcome == .match)
        #expect(decide(matcher, "/x", query: "n=2&t=true&z=null").outcome == .noMatch)
    }

    @Test(arguments: nonStrings)
    func aVoidedComponentDictionaryFallsBackToTheDefaults(value: String) throws {
        let file = aasaComponentsFile(#"[{"/": "/x", "?": {"b": \#(value)}}]"#, detailExtras: #""defaults": {"?": {"a": "1"}},"#)
        let matcher = try aasaMatcher(file)
        #expect(decide(matcher, "/x", query: "a=1") == (.match, .component(detail: 0, component: 0)))
        let refused = aasaEvaluate(matcher, "/x", query: "a=2")
        #expect(refused.outcome == .noMatch)
        #expect(
            refused.misses.first?.reason.hasPrefix(#"query item "a" value "2" does not match "1" (its "?" dictionary is ignored"#) == true)
    }

    @Test(arguments: nonStrings)
    func aVoidedDefaultsDictionaryConstrainsNothing(value: String) throws {
        let file = aasaComponentsFile(#"[{"/": "/x"}]"#, appLinksExtras: #""defaults": {"?": {"a": "1", "b": \#(value)}},"#)
        let matcher = try aasaMatcher(file)
        #expect(decide(matcher, "/x", query: "a=2") == (.match, .component(detail: 0, component: 0)))
        #expect(aasaEvaluate(matcher, "/x", query: "a=2").summary.contains(#"(applinks.defaults' "?" dictionary is ignored"#))
    }

    @Test func aValidComponentDictionaryHidesAVoidedDefaultsOne() throws {
        let file = aasaComponentsFile(#"[{"/": "/x", "?": {"a": "1"}}]"#, appLinksExtras: #""defaults": {"?": {"b": false}},"#)
        let matcher = try aasaMatcher(file)
        #expect(decide(matcher, "/x", query: "a=2") == (.noMatch, nil))
        #expect(aasaEvaluate(matcher, "/x", query: "a=1").summary == "matched by applinks.details[0].components[0]")
    }
}
