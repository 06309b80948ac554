import ActionLinks
import Benchmark

/// A 100-rule AASA of the shape large sites publish: many path prefixes, some query constraints,
/// a few excludes, and the auth paths last so most URLs walk far down the list.
func association(usingVariables: Bool) -> AppSiteAssociation {
    var components: [AppSiteAssociation.Component] = []
    for index in 0..<97 {
        switch index % 4 {
        case 0: components.append(.init(path: "/section\(index)/*"))
        case 1: components.append(.init(path: "/product/\(index)/?*", query: .items([.init(name: "ref", predicate: .pattern("?*"))])))
        case 2: components.append(.init(path: "/private\(index)/*", exclude: true))
        default:
            components.append(.init(path: usingVariables ? "/$(lang)_$(region)/page\(index)/*" : "/en_US/page\(index)/*"))
        }
    }
    components.append(.init(path: "/__/auth/links*"))
    components.append(.init(path: "/__/auth/action*"))
    components.append(.init(path: "*", fragment: "no_universal_links", exclude: true))
    return AppSiteAssociation(appLinks: .init(details: [.init(appIDs: ["ABCDE12345.com.example.app"], components: components)]))
}

let urls: [AssociatedURL] = [
    "https://links.example.com/__/auth/action?mode=signIn&oobCode=abc&apiKey=K",
    "https://links.example.com/__/auth/links?link=https%3A%2F%2Flinks.example.com%2F__%2Fauth%2Faction",
    "https://links.example.com/section40/deep/path/here",
    "https://links.example.com/product/41/shoes?ref=mail&utm=x",
    "https://links.example.com/private42/secret",
    "https://links.example.com/fr_FR/page95/x",
    "https://links.example.com/en_US/page3/x",
    "https://links.example.com/nothing/matches/this/one",
].map { try! AssociatedURL(parsing: $0) }

let plain = AASAMatcher(association: association(usingVariables: false))
let withVariables = AASAMatcher(association: association(usingVariables: true))

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock], scalingFactor: .kilo, maxDuration: .seconds(3), maxIterations: 1_000_000)

    Benchmark("AASA match, 100 rules (per URL)") { benchmark in
        var index = 0
        for _ in benchmark.scaledIterations {
            blackHole(plain.evaluate(urls[index], appID: "ABCDE12345.com.example.app", domain: "links.example.com"))
            index = index == urls.count - 1 ? 0 : index + 1
        }
    }

    Benchmark("AASA decide (no explanations), 100 rules (per URL)") { benchmark in
        var index = 0
        for _ in benchmark.scaledIterations {
            blackHole(plain.decide(urls[index], appID: "ABCDE12345.com.example.app", domain: "links.example.com"))
            index = index == urls.count - 1 ? 0 : index + 1
        }
    }

    Benchmark("AASA decide, 100 rules, 24 with $(lang)_$(region) (per URL)") { benchmark in
        var index = 0
        for _ in benchmark.scaledIterations {
            blackHole(withVariables.decide(urls[index], appID: "ABCDE12345.com.example.app", domain: "links.example.com"))
            index = index == urls.count - 1 ? 0 : index + 1
        }
    }

    Benchmark("AASA match, 100 rules, 24 with $(lang)_$(region) (per URL)") { benchmark in
        var index = 0
        for _ in benchmark.scaledIterations {
            blackHole(withVariables.evaluate(urls[index], appID: "ABCDE12345.com.example.app", domain: "links.example.com"))
            index = index == urls.count - 1 ? 0 : index + 1
        }
    }
}
