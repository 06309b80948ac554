import ActionLinks
import ActionLinksConfiguration
import ArgumentParser

extension ActionLinksCommand {
    /// `actionlinks policy`: checks continue URLs against the configured allow-list.
    struct Policy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check continue URLs against the configured allow-list (exit 1 if any is rejected).",
            discussion: "Allowed URLs are printed re-serialised: that is the URL the link domain would redirect to."
        )

        @Option(name: .long, help: "The configuration file whose continueUrls section is used (e.g. config/actionlinks.yaml).")
        var config: String

        @OptionGroup var output: OutputOptions

        @Argument(help: "Continue URLs to check; - reads them from standard input, one per line.")
        var urls: [String] = []

        func validate() throws {
            if urls.isEmpty {
                throw ValidationError("Give at least one continue URL to check, or - to read them from standard input.")
            }
        }

        func run() async throws {
            let policy = try ActionLinksConfiguration.load(file: config).continueURLs
            let decisions = expandInputs(urls).map { ($0, policy.evaluate($0)) }
            if output.json {
                try printJSON(PolicyOutput(results: decisions.map { ContinueURLDecision($0.1, input: $0.0) }))
            } else {
                for (input, decision) in decisions {
                    switch decision {
                    case .allowed(let url): print("allowed   \(input)\n          as \(url)")
                    case .rejected(let rejection): print("rejected  \(input)\n          \(rejection.message) [\(rejection.code)]")
                    }
                }
            }
            if decisions.contains(where: { !$0.1.isAllowed }) { throw ExitCode.failure }
        }
    }
}

/// The JSON form of `policy`: `{"results":[{"input","allowed","url","reason","code"}]}`.
struct PolicyOutput: Encodable {
    let results: [ContinueURLDecision]
}
