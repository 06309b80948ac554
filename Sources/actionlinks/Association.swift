import ActionLinks
import ActionLinksConfiguration
import ArgumentParser
import Foundation

extension ActionLinksCommand {
    /// `actionlinks aasa`: apple-app-site-association files.
    struct AASA: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "aasa",
            abstract: "Match URLs against, validate, or generate an apple-app-site-association file.",
            subcommands: [Match.self, Validate.self, Generate.self]
        )

        struct Match: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Say whether an app would open each URL, by which rule, and why earlier rules did not decide.")

            @Option(help: "The apple-app-site-association file.") var file: String
            @Option(help: "The app ID, TEAMID.bundle.id.") var app: String
            @Option(help: "The domain the file is served from (default: each URL's host).") var domain: String?
            @OptionGroup var output: OutputOptions
            @Argument(help: "URLs to match; - reads them from standard input.") var urls: [String] = []

            func validate() throws {
                if urls.isEmpty { throw ValidationError("Give at least one URL to match, or - to read URLs from standard input.") }
            }

            func run() async throws {
                let association = try readAssociation(file)
                let results = expandInputs(urls).map {
                    AASAMatchOutput.Result(url: $0, association: association, appID: app, domain: domain)
                }
                if output.json {
                    try printJSON(AASAMatchOutput(results: results))
                } else {
                    for result in results { print(result.humanDescription) }
                }
            }
        }

        struct Validate: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Validate an apple-app-site-association file (exit 1 when it has errors).")

            @Argument(help: "The file to validate.") var file: String
            @OptionGroup var output: OutputOptions

            func run() async throws {
                let report = AASAValidator().validate(try readFile(file))
                try printValidation(file: file, diagnostics: report.diagnostics, json: output.json)
                if !report.errors.isEmpty { throw ExitCode.failure }
            }
        }

        struct Generate: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print the apple-app-site-association generated from the configuration.")

            @Option(help: "The configuration file.") var config = ActionLinksConfiguration.defaultFile

            func run() async throws {
                let apps = try ActionLinksConfiguration.load(file: config).apps
                FileHandle.standardOutput.write(Data(try AssociationGenerator(configuration: apps).appleAppSiteAssociation()))
            }
        }
    }

    /// `actionlinks assetlinks`: Digital Asset Links statement lists.
    struct AssetLinksCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "assetlinks",
            abstract: "Match URLs against, validate, or generate an assetlinks.json file.",
            subcommands: [Match.self, Validate.self, Generate.self]
        )

        struct Match: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Say whether an Android app (package and signing certificate) would handle each URL, and why.")

            @Option(help: "The assetlinks.json file.") var file: String
            @Option(help: "The app's package name.") var package: String
            @Option(help: "The SHA-256 fingerprint of the app's signing certificate (AA:BB:...).") var fingerprint: String
            @Option(help: "The site the file is served from (default: each URL's host).") var domain: String?
            @OptionGroup var output: OutputOptions
            @Argument(help: "URLs to match; - reads them from standard input.") var urls: [String] = []

            func validate() throws {
                if urls.isEmpty { throw ValidationError("Give at least one URL to match, or - to read URLs from standard input.") }
            }

            func run() async throws {
                let assetLinks = try readAssetLinks(file)
                let results = expandInputs(urls).map {
                    AssetLinksMatchOutput.Result(
                        url: $0, assetLinks: assetLinks, package: package, fingerprint: fingerprint, domain: domain)
                }
                if output.json {
                    try printJSON(AssetLinksMatchOutput(results: results))
                } else {
                    for result in results { print(result.humanDescription) }
                }
            }
        }

        struct Validate: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Validate an assetlinks.json file (exit 1 when it has errors).")

            @Argument(help: "The file to validate.") var file: String
            @OptionGroup var output: OutputOptions

            func run() async throws {
                let report = AssetLinksValidator().validate(try readFile(file))
                try printValidation(file: file, diagnostics: report.diagnostics, json: output.json)
                if !report.errors.isEmpty { throw ExitCode.failure }
            }
        }

        struct Generate: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Print the assetlinks.json generated from the configuration.")

            @Option(help: "The configuration file.") var config = ActionLinksConfiguration.defaultFile

            func run() async throws {
                let apps = try ActionLinksConfiguration.load(file: config).apps
                FileHandle.standardOutput.write(Data(try AssociationGenerator(configuration: apps).assetLinks()))
            }
        }
    }
}

/// A file that cannot be used, named with what is wrong (exit 1).
struct FileProblem: Error, CustomStringConvertible {
    let description: String
}

func readFile(_ path: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw FileProblem(description: "\(path): cannot read the file (it does not exist or is not readable)")
    }
    return Array(data)
}

/// Reads an AASA file; refuses one that is not JSON at all, reporting where it breaks.
func readAssociation(_ path: String) throws -> AppSiteAssociation {
    let report = AASAValidator().validate(try readFile(path))
    guard let association = report.usable else {
        throw FileProblem(description: "\(path): " + (report.errors.first?.message ?? "not an apple-app-site-association file"))
    }
    return association
}

/// Reads an assetlinks.json file; refuses one that is not JSON at all, reporting where it breaks.
func readAssetLinks(_ path: String) throws -> AssetLinks {
    let report = AssetLinksValidator().validate(try readFile(path))
    guard let assetLinks = report.usable else {
        throw FileProblem(description: "\(path): " + (report.errors.first?.message ?? "not an assetlinks.json file"))
    }
    return assetLinks
}

func printValidation(file: String, diagnostics: [AssociationDiagnostic], json: Bool) throws {
    if json {
        try printJSON(ValidationOutput(file: file, diagnostics: diagnostics))
    } else if diagnostics.isEmpty {
        print("\(file): no problems found")
    } else {
        for diagnostic in diagnostics { print("\(file): \(diagnostic)") }
    }
}

/// `{"file", "valid", "diagnostics":[{"code","severity","path","message"}]}`.
struct ValidationOutput: Encodable {
    struct Diagnostic: Encodable {
        let code: String
        let severity: String
        let path: String
        let message: String
    }

    let file: String
    let valid: Bool
    let diagnostics: [Diagnostic]

    init(file: String, diagnostics: [AssociationDiagnostic]) {
        self.file = file
        valid = !diagnostics.contains { $0.severity == .error }
        self.diagnostics = diagnostics.map {
            .init(code: $0.code.rawValue, severity: $0.severity.rawValue, path: $0.path, message: $0.message)
        }
    }
}

/// `{"results":[{"url","decision":"match"|"exclude"|"no_match","rule","explanation","misses"}]}`.
struct AASAMatchOutput: Encodable {
    struct Miss: Encodable {
        let rule: String
        let reason: String
    }

    struct Result: Encodable {
        let url: String
        let decision: String?
        let rule: String?
        let explanation: String
        let misses: [Miss]

        init(url: String, association: AppSiteAssociation, appID: String, domain: String?) {
            self.url = url
            do {
                let target = try AssociatedURL(parsing: url)
                let result = AASAMatcher(association: association).evaluate(target, appID: appID, domain: domain ?? target.host)
                decision =
                    switch result.outcome {
                    case .match: "match"
                    case .exclude: "exclude"
                    case .noMatch: "no_match"
                    }
                rule = result.decidingRule?.description
                explanation = result.summary
                misses = result.misses.map { Miss(rule: $0.rule.description, reason: $0.reason) }
            } catch {
                decision = nil
                rule = nil
                explanation = "not a URL: \(error.message)"
                misses = []
            }
        }

        enum CodingKeys: String, CodingKey { case url, decision, rule, explanation, misses }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(url, forKey: .url)
            try container.encode(decision, forKey: .decision)
            try container.encode(rule, forKey: .rule)
            try container.encode(explanation, forKey: .explanation)
            try container.encode(misses, forKey: .misses)
        }

        var humanDescription: String {
            var lines = ["\(decision ?? "error")  \(url)", "  \(explanation)"]
            for miss in misses { lines.append("  - \(miss.rule): \(miss.reason)") }
            return lines.joined(separator: "\n")
        }
    }

    let results: [Result]
}

/// `{"results":[{"url","decision":"handled"|"excluded"|"not_authorized","statement","component","explanation"}]}`.
struct AssetLinksMatchOutput: Encodable {
    struct Result: Encodable {
        let url: String
        let decision: String?
        let statement: Int?
        let component: Int?
        let explanation: String
        let misses: [String]

        init(url: String, assetLinks: AssetLinks, package: String, fingerprint: String, domain: String?) {
            self.url = url
            do {
                let target = try AssociatedURL(parsing: url)
                let verdict = AssetLinksMatcher(assetLinks: assetLinks).evaluate(
                    target, packageName: package, certificateFingerprint: fingerprint, domain: domain ?? target.host)
                decision =
                    switch verdict.outcome {
                    case .handled: "handled"
                    case .excluded: "excluded"
                    case .notAuthorized: "not_authorized"
                    }
                statement = verdict.statement
                component = verdict.component
                explanation = verdict.summary
                misses = verdict.misses.map { "statement \($0.statement)\($0.component.map { " component \($0)" } ?? ""): \($0.reason)" }
            } catch {
                decision = nil
                statement = nil
                component = nil
                explanation = "not a URL: \(error.message)"
                misses = []
            }
        }

        enum CodingKeys: String, CodingKey { case url, decision, statement, component, explanation, misses }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(url, forKey: .url)
            try container.encode(decision, forKey: .decision)
            try container.encode(statement, forKey: .statement)
            try container.encode(component, forKey: .component)
            try container.encode(explanation, forKey: .explanation)
            try container.encode(misses, forKey: .misses)
        }

        var humanDescription: String {
            var lines = ["\(decision ?? "error")  \(url)", "  \(explanation)"]
            for miss in misses { lines.append("  - \(miss)") }
            return lines.joined(separator: "\n")
        }
    }

    let results: [Result]
}
