import ActionLinks
import ActionLinksConfiguration
import ActionLinksEmail
import ArgumentParser

extension ActionLinksCommand {
    /// `actionlinks inspect`: explains links layer by layer.
    struct Inspect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Explain links layer by layer: wrappers, mode, code, continue URL, and how each Firebase SDK reads them.",
            discussion: """
                Give links as arguments, or - to read one link per line from standard input. Give an email (.eml), an HTML \
                page or a text file (or pipe one into -) to explain every link in it, rewriters (Safe Links, Proofpoint, \
                click tracking) included; inspect then exits 1 when an action link in it is broken or its continue URL \
                is not allowed.
                """
        )

        @Option(name: .long, help: "A configuration file whose continueUrls allow-list is checked (e.g. config/actionlinks.yaml).")
        var config: String?

        @Option(help: "An apple-app-site-association file: say whether the app given with --app opens each layer.")
        var aasa: String?

        @Option(help: "The app ID (TEAMID.bundle.id) to match against --aasa.")
        var app: String?

        @Option(help: "An assetlinks.json file: say whether the app given with --package handles each layer.")
        var assetlinks: String?

        @Option(help: "The Android package name to match against --assetlinks.")
        var package: String?

        @Option(help: "The signing-certificate SHA-256 fingerprint for --package (default: the first the file lists for it).")
        var fingerprint: String?

        @Option(
            name: .customLong("format-in"),
            help: "How to read the inputs: auto (links, or files recognised by name and content), url, eml, html or text.")
        var formatIn: InputFormat = .auto

        @OptionGroup var output: OutputOptions

        @Argument(help: "Links, or email/HTML/text files, to inspect; - reads standard input (links one per line, or a whole email).")
        var inputs: [String] = []

        func validate() throws {
            if inputs.isEmpty {
                throw ValidationError("Give at least one link or file to inspect, or - to read standard input.")
            }
            if (aasa == nil) != (app == nil) { throw ValidationError("--aasa and --app go together: give both or neither.") }
            if (assetlinks == nil) != (package == nil) {
                throw ValidationError("--assetlinks and --package go together: give both or neither.")
            }
            if fingerprint != nil, assetlinks == nil { throw ValidationError("--fingerprint needs --assetlinks and --package.") }
        }

        func run() async throws {
            let policy = try config.map { try ActionLinksConfiguration.load(file: $0).continueURLs }
            let apple = try aasa.map { try readAssociation($0) }
            let android = try assetlinks.map { try readAssetLinks($0) }
            let checker = AppOpeningChecker(association: apple, appID: app, assetLinks: android, package: package, fingerprint: fingerprint)
            var results: [InspectOutput.Entry] = []
            var documents: [EmailDocumentOutput] = []
            var blocks: [String] = []
            var everyActionLinkValid = true
            for item in try InspectInput.read(inputs, format: formatIn) {
                switch item {
                case .link(let input):
                    let inspection = LinkInspection(input, policy: policy)
                    let opening = checker.opening(for: inspection.layers.map(\.url), domain: nil)
                    if output.json {
                        results.append(.link(.init(inspection, checkedPolicy: policy != nil, opening: opening)))
                    } else {
                        blocks.append(describe(inspection, checkedPolicy: policy != nil, opening: opening))
                    }
                case .document(let name, let bytes, let format):
                    let email = EmailInspection(bytes, format: format, policy: policy)
                    if !email.allActionLinksValid { everyActionLinkValid = false }
                    let report = EmailReport(name: name, email: email, checker: checker)
                    if output.json {
                        documents.append(report.documentOutput)
                        results.append(contentsOf: report.links.map { .email($0.output(checkedPolicy: policy != nil)) })
                    } else {
                        blocks.append(report.describe(checkedPolicy: policy != nil, describeLink: describe))
                    }
                }
            }
            if output.json {
                try printJSON(InspectOutput(results: results, documents: documents))
            } else {
                print(blocks.joined(separator: "\n\n"))
            }
            if !everyActionLinkValid { throw ExitCode.failure }
        }

        static func firstFingerprint(of package: String, in links: AssetLinks) -> String? {
            for case .statement(let statement)? in links.entries {
                if case .androidApp(let name, let fingerprints) = statement.target, name == package, let first = fingerprints.first {
                    return first
                }
            }
            return nil
        }

        func describe(_ inspection: LinkInspection, checkedPolicy: Bool, opening: AppOpening) -> String {
            var lines = ["Link: \(inspection.input)"]
            for (index, layer) in inspection.layers.enumerated() {
                var what: String
                switch layer.kind {
                case .mobileLinkWrapper: what = "mobile link wrapper (\(ActionCodeLink.mobileLinkPath))"
                case .dynamicLinkWrapper: what = "Firebase Dynamic Link wrapper"
                case .deepLinkCarrier: what = "link carrying another link"
                case .target: what = inspection.action != nil ? "action link" : "innermost URL"
                }
                if let parameter = layer.innerParameter { what += "; the next layer is its '\(parameter)' parameter" }
                lines.append("  layer \(index + 1)  \(what)")
                lines.append("           \(layer.url)")
            }
            if let action = inspection.action {
                lines.append("  action   \(action.mode.rawValue): handled by \(action.mode.handlerDescription)")
                lines.append("    oobCode      \(action.oobCode)")
                lines.append("    apiKey       \(action.apiKey ?? "(none)")")
                var continueLine = "    continueUrl  \(action.continueURL ?? "(none)")"
                switch inspection.continueURLDecision {
                case .allowed(let url)?: continueLine += "  [allowed as \(url)]"
                case .rejected(let rejection)?: continueLine += "  [not allowed: \(rejection.message)]"
                case nil: if checkedPolicy, action.continueURL != nil { continueLine += "  [not checked]" }
                }
                lines.append(continueLine)
                lines.append("    lang         \(action.languageCode ?? "(none)")")
                lines.append("    tenantId     \(action.tenantID ?? "(none)")")
            } else if let failure = inspection.failure {
                lines.append("  not an action link: \(failure.message)")
            }
            if let apple = opening.apple {
                lines.append("  iOS app \(app ?? "")")
                for (index, result) in apple.enumerated() {
                    lines.append("    layer \(index + 1): \(result.decision ?? "error") — \(result.explanation)")
                }
            }
            if let android = opening.android {
                lines.append("  Android app \(package ?? "")")
                for (index, result) in android.enumerated() {
                    lines.append("    layer \(index + 1): \(result.decision ?? "error") — \(result.explanation)")
                }
            }
            let clients = inspection.clients.map { "\($0.client.displayName): \($0.accepts ? "accepts" : "rejects")" }
            lines.append("  clients  " + clients.joined(separator: "; "))
            if !inspection.warnings.isEmpty {
                lines.append("  warnings")
                for warning in inspection.warnings { lines.append("    - \(warning)") }
            }
            return lines.joined(separator: "\n")
        }
    }
}

/// The JSON form of `inspect`: `{"results":[...]}`, one object per link given or found in a file,
/// and `documents` (one object per file) when files were read.
struct InspectOutput: Encodable {
    let results: [Entry]
    let documents: [EmailDocumentOutput]

    /// A result: a link given as such, or a link found in an email.
    enum Entry: Encodable {
        case link(Result)
        case email(EmailLinkOutput)

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .link(let result): try result.encode(to: encoder)
            case .email(let result): try result.encode(to: encoder)
            }
        }
    }

    enum CodingKeys: String, CodingKey { case results, documents }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(results, forKey: .results)
        if !documents.isEmpty { try container.encode(documents, forKey: .documents) }
    }

    struct Result: Encodable {
        var input: String
        var chain: [String]
        let layers: [Layer]
        let action: Action?
        let handler: String?
        var error: Failure?
        let clients: [Client]
        let warnings: [String]
        let checkedPolicy: Bool
        let continueURL: ContinueURLDecision?
        let opening: AppOpening

        init(_ inspection: LinkInspection, checkedPolicy: Bool, opening: AppOpening) {
            self.opening = opening
            input = inspection.input
            chain = inspection.layers.map(\.url)
            layers = inspection.layers.map { Layer(url: $0.url, kind: $0.kind.rawValue, innerParameter: $0.innerParameter) }
            action = inspection.action.map(Action.init)
            handler = inspection.action?.mode.handlerDescription
            error = inspection.failure.map { Failure(code: $0.code.rawValue, message: $0.message) }
            clients = inspection.clients.map { Client(client: $0.client.rawValue, accepts: $0.accepts, problems: $0.problems) }
            warnings = inspection.warnings
            self.checkedPolicy = checkedPolicy
            continueURL = inspection.continueURLDecision.map { ContinueURLDecision($0) }
        }

        enum CodingKeys: String, CodingKey {
            case input, chain, layers, action, handler, error, clients, warnings, continueUrlAllowed, continueUrlPolicy
            case appleAppSiteAssociation, assetLinks
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(input, forKey: .input)
            try container.encode(chain, forKey: .chain)
            try container.encode(layers, forKey: .layers)
            try container.encode(action, forKey: .action)
            try container.encode(handler, forKey: .handler)
            try container.encode(error, forKey: .error)
            try container.encode(clients, forKey: .clients)
            try container.encode(warnings, forKey: .warnings)
            if checkedPolicy {
                try container.encode(continueURL?.allowed, forKey: .continueUrlAllowed)
                try container.encode(continueURL, forKey: .continueUrlPolicy)
            }
            if let apple = opening.apple { try container.encode(apple, forKey: .appleAppSiteAssociation) }
            if let android = opening.android { try container.encode(android, forKey: .assetLinks) }
        }
    }

    struct Layer: Encodable {
        let url: String
        let kind: String
        let innerParameter: String?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(url, forKey: .url)
            try container.encode(kind, forKey: .kind)
            try container.encode(innerParameter, forKey: .innerParameter)
        }

        enum CodingKeys: String, CodingKey { case url, kind, innerParameter }
    }

    struct Action: Encodable {
        let link: ActionCodeLink

        init(_ link: ActionCodeLink) { self.link = link }

        enum CodingKeys: String, CodingKey { case mode, oobCode, apiKey, continueUrl, lang, tenantId }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(link.mode.rawValue, forKey: .mode)
            try container.encode(link.oobCode, forKey: .oobCode)
            try container.encode(link.apiKey, forKey: .apiKey)
            try container.encode(link.continueURL, forKey: .continueUrl)
            try container.encode(link.languageCode, forKey: .lang)
            try container.encode(link.tenantID, forKey: .tenantId)
        }
    }

    struct Failure: Encodable {
        let code: String
        let message: String
    }

    struct Client: Encodable {
        let client: String
        let accepts: Bool
        let problems: [String]
    }
}

/// Whether the given apps open each layer of a link (one result per layer, outermost first).
struct AppOpening {
    let apple: [AASAMatchOutput.Result]?
    let android: [AssetLinksMatchOutput.Result]?
}

/// A continue-URL decision as JSON: `{"allowed":…, "url":…, "reason":…, "code":…}`.
struct ContinueURLDecision: Encodable {
    let input: String?
    let allowed: Bool
    let url: String?
    let reason: String?
    let code: String?

    init(_ decision: ContinueURLPolicy.Decision, input: String? = nil) {
        self.input = input
        allowed = decision.isAllowed
        url = decision.url
        reason = decision.rejection?.message
        code = decision.rejection?.code.rawValue
    }

    enum CodingKeys: String, CodingKey { case input, allowed, url, reason, code }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if let input { try container.encode(input, forKey: .input) }
        try container.encode(allowed, forKey: .allowed)
        try container.encode(url, forKey: .url)
        try container.encode(reason, forKey: .reason)
        try container.encode(code, forKey: .code)
    }
}
