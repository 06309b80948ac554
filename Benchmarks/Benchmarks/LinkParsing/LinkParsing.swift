import ActionLinks
import Benchmark
import Foundation

/// Real-shaped links: web links with and without continue URLs, mobile links, legacy Dynamic Links
/// wrappers, custom-scheme callbacks, and links that are not action links at all. Built once,
/// deterministically, so every run measures the same corpus.
let corpus: [String] = {
    let domain = try! LinkDomain("auth.example-app.com")
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    var state: UInt64 = 42
    func next() -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int(truncatingIfNeeded: state >> 33)
    }
    let continueURLs = [
        nil, "https://app.example.com/", "https://app.example.com/welcome?ref=email&campaign=spring%202026",
        "https://shop.example.com/cart?id=7&ref=mail#top", "com.example.app://callback/done",
    ]
    var links: [String] = []
    for index in 0..<1000 {
        let code = String((0..<43).map { _ in alphabet[next() % alphabet.count] })
        let link = ActionCodeLink(
            mode: ActionCodeLink.Mode.allCases[next() % 4], oobCode: code, apiKey: "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
            continueURL: continueURLs[next() % continueURLs.count], languageCode: ["en", "ru", "ja", "ar"][next() % 4],
            tenantID: next() % 5 == 0 ? "tenant-42" : nil)
        switch index % 10 {
        case 0..<5: links.append(link.webLink(on: domain))
        case 5..<8: links.append(link.mobileLink(on: domain))
        case 8:
            links.append(
                "https://demo.page.link/?link=" + PercentEncoding.encodeComponent(link.webLink(on: domain))
                    + "&apn=com.example.android&ibi=com.example.ios")
        default: links.append("https://www.example.com/articles/\(index)?utm_source=newsletter&utm_medium=email&utm_campaign=weekly")
        }
    }
    return links
}()

/// The same job done the usual way: Foundation's `URLComponents` and `queryItems`, unwrapping
/// `deep_link_id` and `link` like the library does.
func parseWithURLComponents(_ link: String) -> ActionCodeLink? {
    guard var components = URLComponents(string: link) else { return nil }
    func items(_ components: URLComponents) -> [String: String] {
        var items: [String: String] = [:]
        for item in components.queryItems ?? [] { items[item.name] = item.value ?? "" }
        return items
    }
    var query = items(components)
    for _ in 0..<LinkUnwrapper.maximumDepth {
        guard let inner = query["deep_link_id"] ?? query["link"], !inner.isEmpty, let next = URLComponents(string: inner) else { break }
        components = next
        query = items(components)
    }
    guard let mode = query["mode"].flatMap(ActionCodeLink.Mode.init(rawValue:)), let code = query["oobCode"], !code.isEmpty else {
        return nil
    }
    return ActionCodeLink(
        mode: mode, oobCode: code, apiKey: query["apiKey"], continueURL: query["continueUrl"], languageCode: query["lang"],
        tenantID: query["tenantId"])
}

// MARK: - The committed floor

/// The floor this suite enforces: a ratio to `URLComponents` timed in the same passes, so that it
/// holds on a slower or busier machine (an absolute rate would read as a regression there). A run
/// below it fails, so `swift package benchmark` exits non-zero; the unit tests never time anything.
/// `scripts/bench.sh` checks its own floors (Benchmarks/thresholds.txt) on the line this prints.
enum Floor {
    /// How many times faster than the `URLComponents` parser, the two timed in alternation.
    static let speedUpOverURLComponents = 6.5
}

/// The calling thread's CPU time: other processes on a busy machine do not count against us.
func threadCPUNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// CPU nanoseconds per link for one pass of `parse` over the corpus.
func nanosecondsPerLink<R>(_ parse: (String) -> R) -> Double {
    let start = threadCPUNanoseconds()
    for link in corpus { blackHole(parse(link)) }
    return Double(threadCPUNanoseconds() - start) / Double(corpus.count)
}

/// The zero-copy reading, as a caller that checks a link uses it: which mode it is and the code's
/// bytes, no strings made. (The mode is switched on, as a caller routes it; `mode.hashValue`, used
/// before, hashed the raw value's string with SipHash, about 300 instructions per link that no
/// caller spends.)
@inline(never)
func viewParse(_ link: String) -> Int? {
    ActionCodeLink.withView(of: link) { view in view.oobCode.raw.count &+ modeNumber(view.mode) }
}

/// A number for each mode, as a caller's `switch` on it would route the link.
@inline(__always)
func modeNumber(_ mode: ActionCodeLink.Mode) -> Int {
    switch mode {
    case .signIn: 1
    case .resetPassword: 2
    case .verifyEmail: 3
    case .recoverEmail: 4
    case .verifyAndChangeEmail: 5
    case .revertSecondFactorAddition: 6
    }
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

let continueURLCorpus = [
    "https://app.example.com/welcome?ref=email", "/done?x=1", "https://a.example.org/path/../x", "javascript:alert(1)",
    "https://evil.example.net/", "https://app.example.com@evil.com/", "http://127.0.0.1:5173/cb", "https://app.example.com:443/a/./b",
]
let policy = try! ContinueURLPolicy(
    allow: ["https://app.example.com/", "*.example.org", "http://127.0.0.1"], defaultOrigin: "https://app.example.com")

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal], scalingFactor: .kilo, maxDuration: .seconds(3), maxIterations: 1_000_000)

    precondition(corpus.allSatisfy { ActionCodeLink.parse($0) == parseWithURLComponents($0) }, "the two parsers disagree on the corpus")
    precondition(corpus.allSatisfy { ActionCodeLink.withView(of: $0) { $0.link } == ActionCodeLink.parse($0) }, "the view disagrees")

    Benchmark("ActionLinks parse (per link)") { benchmark in
        var index = 0
        for _ in benchmark.scaledIterations {
            blackHole(ActionCodeLink.parse(corpus[index]))
            index = index == corpus.count - 1 ? 0 : index + 1
        }
    }

    Benchmark("ActionLinks zero-copy view (per link)") { benchmark in
        var index = 0
        for _ in benchmark.scaledIterations {
            blackHole(viewParse(corpus[index]))
            index = index == corpus.count - 1 ? 0 : index + 1
        }
    }

    Benchmark("URLComponents parse (per link)") { benchmark in
        var index = 0
        for _ in benchmark.scaledIterations {
            blackHole(parseWithURLComponents(corpus[index]))
            index = index == corpus.count - 1 ? 0 : index + 1
        }
    }

    // Both parsers timed in alternation, pass after pass, so that a change of load hits both; the
    // medians are checked against the floors and reported as two custom metrics.
    Benchmark(
        "Floors: links per second and speed-up over URLComponents",
        configuration: .init(
            metrics: [
                .custom("links per CPU second (K)", polarity: .prefersLarger, useScalingFactor: false),
                .custom("speed-up over URLComponents (x100)", polarity: .prefersLarger, useScalingFactor: false),
            ],
            warmupIterations: 1, maxDuration: .seconds(30), maxIterations: 3)
    ) { benchmark in
        var ours: [Double] = []
        var ratios: [Double] = []
        var views: [Double] = []
        var viewRatios: [Double] = []
        for _ in 0..<31 {
            let actionLinks = nanosecondsPerLink(ActionCodeLink.parse)
            let foundation = nanosecondsPerLink(parseWithURLComponents)
            let view = nanosecondsPerLink(viewParse)
            ours.append(actionLinks)
            ratios.append(foundation / actionLinks)
            views.append(view)
            viewRatios.append(foundation / view)
        }
        let linksPerSecond = 1e9 / median(ours)
        let speedUp = median(ratios)
        let viewLinksPerSecond = 1e9 / median(views)
        let viewSpeedUp = median(viewRatios)
        benchmark.measurement(
            .custom("links per CPU second (K)", polarity: .prefersLarger, useScalingFactor: false), Int(linksPerSecond / 1000))
        benchmark.measurement(
            .custom("speed-up over URLComponents (x100)", polarity: .prefersLarger, useScalingFactor: false), Int(speedUp * 100))
        // One plain line whatever the numbers, for scripts/bench.sh (the table is for people), in the
        // file ACTIONLINKS_PARSER_MEDIANS names: package-benchmark keeps a suite's own output to itself.
        let line =
            "parser medians: links_per_cpu_second=\(Int(linksPerSecond)) speed_up=\(speedUp.formatted(.number.precision(.fractionLength(1))))"
            + " view_links_per_cpu_second=\(Int(viewLinksPerSecond)) view_speed_up=\(viewSpeedUp.formatted(.number.precision(.fractionLength(1))))\n"
        if let path = ProcessInfo.processInfo.environment["ACTIONLINKS_PARSER_MEDIANS"] {
            FileManager.default.createFile(atPath: path, contents: Data(line.utf8))
        }
        if speedUp < Floor.speedUpOverURLComponents {
            // `benchmark.error` alone only prints in a plain run; a benchmark process that exits with a
            // failure makes `swift package benchmark` itself exit non-zero.
            let message =
                "error: ActionCodeLink.parse regressed: \(speedUp.formatted(.number.precision(.fractionLength(1))))x URLComponents "
                + "(floor \(Floor.speedUpOverURLComponents)x; \(Int(linksPerSecond)) links per CPU second)\n"
            FileHandle.standardError.write(Data(message.utf8))
            exit(1)
        }
    }

    Benchmark("ContinueURLPolicy evaluate (per URL)") { benchmark in
        var index = 0
        for _ in benchmark.scaledIterations {
            blackHole(policy.evaluate(continueURLCorpus[index]))
            index = index == continueURLCorpus.count - 1 ? 0 : index + 1
        }
    }
}
