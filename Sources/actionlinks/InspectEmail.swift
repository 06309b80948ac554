import ActionLinks
import ActionLinksEmail
import ArgumentParser
import Foundation

/// `--format-in`: how `inspect` reads its inputs.
enum InputFormat: String, ExpressibleByArgument, CaseIterable {
    /// Links stay links; existing files are read and recognised by name and content; `-` is either.
    case auto
    /// Every input is a link; `-` gives one link per line.
    case url
    /// Every input is a file (or `-`) holding a whole message.
    case eml
    /// Every input is an HTML file (or `-`).
    case html
    /// Every input is a plain-text file (or `-`).
    case text

    var emailFormat: EmailInspection.Format? {
        switch self {
        case .auto, .url: nil
        case .eml: .eml
        case .html: .html
        case .text: .text
        }
    }
}

/// One thing to inspect: a link, or a document whose links are inspected.
enum InspectInput {
    case link(String)
    case document(name: String, bytes: [UInt8], format: EmailInspection.Format)

    /// Files larger than this are refused: an email is at most tens of megabytes.
    static let maximumFileSize = 100 * 1024 * 1024

    /// Sorts the command-line inputs into links and documents.
    static func read(_ arguments: [String], format: InputFormat) throws -> [InspectInput] {
        var items: [InspectInput] = []
        for argument in arguments {
            if argument == "-" {
                items.append(contentsOf: try standardInput(format: format))
                continue
            }
            switch format {
            case .url:
                items.append(.link(argument))
            case .eml, .html, .text:
                items.append(.document(name: argument, bytes: try readDocument(argument), format: format.emailFormat!))
            case .auto:
                var isDirectory: ObjCBool = false
                let isFile = FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) && !isDirectory.boolValue
                let fileExtension = (argument as NSString).pathExtension.lowercased()
                if isFile, !argument.contains("://") {
                    let bytes = try readDocument(argument)
                    items.append(
                        .document(name: argument, bytes: bytes, format: EmailInspection.Format.detect(bytes, fileExtension: fileExtension)))
                } else if !argument.contains(":"), ["eml", "html", "htm", "txt", "mbox", "mht"].contains(fileExtension) {
                    throw FileProblem(description: "\(argument): no such file (give a link, an existing .eml/.html/.txt file, or -)")
                } else {
                    items.append(.link(argument))
                }
            }
        }
        return items
    }

    private static func readDocument(_ path: String) throws -> [UInt8] {
        if let attributes = try? FileManager.default.attributesOfItem(atPath: path), let size = attributes[.size] as? Int,
            size > maximumFileSize
        {
            throw FileProblem(description: "\(path): the file is \(size) bytes; inspect reads at most \(maximumFileSize)")
        }
        return try readFile(path)
    }

    /// Standard input is a list of links (one per line, blank lines skipped) unless it reads as a
    /// message or HTML, or has lines with spaces (text), or `--format-in` says what it is.
    private static func standardInput(format: InputFormat) throws -> [InspectInput] {
        let bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
        guard bytes.count <= maximumFileSize else {
            throw FileProblem(description: "standard input is \(bytes.count) bytes; inspect reads at most \(maximumFileSize)")
        }
        if let emailFormat = format.emailFormat { return [.document(name: "-", bytes: bytes, format: emailFormat)] }
        let lines = String(decoding: bytes, as: UTF8.self)
            // "\r\n" is one Character in Swift, so it is a separator of its own.
            .split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
            .map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
            .filter { !$0.allSatisfy(\.isWhitespace) }
        if format == .url { return lines.map { .link($0) } }
        let detected = EmailInspection.Format.detect(bytes)
        if detected == .text, lines.allSatisfy({ !$0.contains(" ") && !$0.contains("\t") }) { return lines.map { .link($0) } }
        return [.document(name: "-", bytes: bytes, format: detected)]
    }
}

/// Decides whether the apps given on the command line open a link, layer by layer.
struct AppOpeningChecker {
    let association: AppSiteAssociation?
    let appID: String?
    let assetLinks: AssetLinks?
    let package: String?
    let fingerprint: String?

    var isActive: Bool { (association != nil && appID != nil) || (assetLinks != nil && package != nil) }

    /// The decisions for each of `urls`, against files served by `domain` (each URL's own host when `nil`).
    func opening(for urls: [String], domain: String?) -> AppOpening {
        AppOpening(
            apple: association.flatMap { association in
                appID.map { appID in urls.map { AASAMatchOutput.Result(url: $0, association: association, appID: appID, domain: domain) } }
            },
            android: assetLinks.flatMap { links in
                package.map { package in
                    let certificate = fingerprint ?? ActionLinksCommand.Inspect.firstFingerprint(of: package, in: links) ?? ""
                    return urls.map {
                        AssetLinksMatchOutput.Result(url: $0, assetLinks: links, package: package, fingerprint: certificate, domain: domain)
                    }
                }
            })
    }
}

/// An inspected email or page, with what the command line adds: app opening and output.
struct EmailReport {
    let name: String
    let email: EmailInspection
    let links: [EmailLinkReport]

    init(name: String, email: EmailInspection, checker: AppOpeningChecker) {
        self.name = name
        self.email = email
        // The association files belong to the link domain: the host of the first action link found. A link
        // whose target is hidden is judged against the same domain, since that is where it should lead.
        let linkDomain = email.links.lazy.compactMap { link in
            link.inspection.action != nil ? link.inspection.layers.last.flatMap { try? URLParts($0.url) }?.host.map { String($0) } : nil
        }.first
        links = email.links.enumerated().map {
            EmailLinkReport(document: name, index: $0.offset, link: $0.element, linkDomain: linkDomain, checker: checker)
        }
    }

    var documentOutput: EmailDocumentOutput {
        EmailDocumentOutput(
            input: name, format: email.format.rawValue, subject: email.headers?["Subject"],
            parts: email.parts.map { part in
                EmailDocumentOutput.Part(
                    part: part.path, contentType: part.contentType, charset: part.charset, line: part.bodyLine, size: part.decodedSize,
                    attachment: part.isAttachment, read: part.text != nil,
                    links: email.links.count { $0.part == part.path && part.text != nil })
            },
            problems: email.problems.map { EmailDocumentOutput.Problem(part: $0.part, message: $0.message) },
            summary: Summary(email.links), signInCodes: email.signInCodes)
    }

    /// What a sign-in code line is for, for people.
    static let signInCodeExplanation = [
        "the sign-in code ActionLinks puts beside every email sign-in link (codes.signInCode): the person types it into the app",
        "that asked for the link, on whatever device it runs; the app sends it with the address to",
        "POST /v1/signInCodes:exchange?key=<API key> and gets this mail's link back, once, for signInWithEmailLink.",
        "It works for codes.signInCode.lifetime (15 minutes by default, never longer than the link) and allows",
        "codes.signInCode.attempts wrong tries (5); the link itself works on its own until it expires. It cannot be checked",
        "from the mail alone: the server derives it from the link's oobCode under a key of its own and stores only a MAC.",
    ]

    /// Counts of links by verdict.
    struct Summary: Encodable {
        let links: Int
        let validActionLinks: Int
        let invalidActionLinks: Int
        let hiddenByRewriter: Int
        let otherLinks: Int

        init(_ links: [InspectedLink]) {
            self.links = links.count
            validActionLinks = links.count { $0.verdict == .validActionLink }
            invalidActionLinks = links.count { $0.verdict == .invalidActionLink }
            hiddenByRewriter = links.count { $0.verdict == .hiddenByRewriter }
            otherLinks = links.count { $0.verdict == .notAnActionLink }
        }

        var sentence: String {
            var pieces: [String] = []
            if validActionLinks > 0 { pieces.append("\(validActionLinks) valid action link\(validActionLinks == 1 ? "" : "s")") }
            if invalidActionLinks > 0 { pieces.append("\(invalidActionLinks) broken action link\(invalidActionLinks == 1 ? "" : "s")") }
            if hiddenByRewriter > 0 { pieces.append("\(hiddenByRewriter) hidden by a rewriter") }
            if otherLinks > 0 { pieces.append("\(otherLinks) other link\(otherLinks == 1 ? "" : "s")") }
            return "\(links) link\(links == 1 ? "" : "s")" + (pieces.isEmpty ? "" : ": " + pieces.joined(separator: ", "))
        }
    }

    /// The text for people: the document, then each link.
    func describe(checkedPolicy: Bool, describeLink: (LinkInspection, Bool, AppOpening) -> String) -> String {
        var lines = ["Email: \(name) (\(email.format.rawValue))"]
        if let headers = email.headers {
            for field in ["From", "To", "Subject", "Date"] {
                if let value = headers[field] { lines.append("  \(field): \(value)") }
            }
        }
        if !email.parts.isEmpty {
            lines.append("  parts")
            for part in email.parts {
                var line = "    \(part.path.isEmpty ? "(root)" : part.path)  \(part.contentType)"
                if let charset = part.charset { line += ", \(charset)" }
                if part.isAttachment { line += ", attachment" }
                if part.text != nil {
                    let count = email.links.count { $0.part == part.path }
                    line += ": \(count) link\(count == 1 ? "" : "s"), from line \(part.bodyLine)"
                } else if !part.isContainer {
                    line += ": not text, not read"
                }
                lines.append(line)
            }
        }
        if !email.problems.isEmpty {
            lines.append("  problems")
            for problem in email.problems { lines.append("    - \(problem)") }
        }
        lines.append("  summary  \(Summary(email.links).sentence)")
        var blocks = [lines.joined(separator: "\n")]
        for found in email.signInCodes {
            var place = found.part.map { ["part \($0) (\(found.contentType))"] } ?? []
            place.append("line \(found.line)")
            var block = ["Sign-in code  \(found.shown) (\(found.code.count) digits) — " + place.joined(separator: ", ")]
            if let sentence = found.sentence { block.append("  after    \"\(sentence)\"") }
            block.append("  what     " + Self.signInCodeExplanation[0])
            block += Self.signInCodeExplanation.dropFirst().map { "           " + $0 }
            blocks.append(block.joined(separator: "\n"))
        }
        for link in links {
            blocks.append(link.describe(total: links.count, checkedPolicy: checkedPolicy, describeLink: describeLink))
        }
        return blocks.joined(separator: "\n\n")
    }
}

/// One link of an email, with the app-opening decisions for the URL a person would tap.
struct EmailLinkReport {
    let document: String
    let index: Int
    let link: InspectedLink
    /// Every URL the link goes through: the rewriters', then the inspection's layers.
    let urls: [String]
    let opening: AppOpening
    let checksApps: Bool

    init(document: String, index: Int, link: InspectedLink, linkDomain: String?, checker: AppOpeningChecker) {
        self.document = document
        self.index = index
        self.link = link
        urls = link.rewriting.layers.map(\.url) + (link.rewriting.target == nil ? [] : link.inspection.layers.map(\.url))
        // Judged against this link's own action domain, else the document's, else each URL's own host.
        let ownDomain =
            link.inspection.action != nil ? link.inspection.layers.last.flatMap { try? URLParts($0.url) }?.host.map { String($0) } : nil
        opening = checker.opening(for: urls, domain: ownDomain ?? linkDomain)
        checksApps = checker.isActive
    }

    /// Whether the tapped URL (the first) opens each app.
    var opensApp: EmailLinkOutput.OpensApp? {
        guard checksApps else { return nil }
        return EmailLinkOutput.OpensApp(
            ios: opening.apple?.first.map { $0.decision == "match" }, android: opening.android?.first.map { $0.decision == "handled" })
    }

    static func verdictText(_ verdict: InspectedLink.Verdict) -> String {
        switch verdict {
        case .validActionLink: "valid action link"
        case .invalidActionLink: "BROKEN action link"
        case .hiddenByRewriter: "hidden by a rewriter: cannot tell whether it is an action link"
        case .notAnActionLink: "not an action link"
        }
    }

    func describe(total: Int, checkedPolicy: Bool, describeLink: (LinkInspection, Bool, AppOpening) -> String) -> String {
        var header = "Link \(index + 1) of \(total)"
        if let text = link.found.text { header += "  \"\(text)\"" }
        var place: [String] = []
        if let part = link.part { place.append("part \(part) (\(link.contentType))") }
        place.append("line \(link.found.line)")
        place.append(Self.originText(link.found.origin))
        header += " — " + place.joined(separator: ", ")
        var lines = [header]
        lines.append("  href     \(link.found.url)")
        for (number, layer) in link.rewriting.layers.enumerated() {
            let how =
                layer.innerParameter.map { $0 == "path" ? "the target is in its path" : "the target is in its '\($0)' parameter" }
                ?? "the target is hidden"
            lines.append("  rewriter \(number + 1): \(layer.service); \(how)")
            lines.append("           \(layer.note)")
        }
        if let target = link.rewriting.target, !link.rewriting.layers.isEmpty { lines.append("  target   \(target)") }
        lines.append("  verdict  \(Self.verdictText(link.verdict))")
        if link.verdict == .notAnActionLink, link.rewriting.layers.isEmpty {
            if let failure = link.inspection.failure { lines.append("  (\(failure.message))") }
        } else if link.rewriting.target != nil {
            // The inspection's own explanation, without its "Link:" line (the href and target say it).
            var explanation = describeLink(link.inspection, checkedPolicy, AppOpening(apple: nil, android: nil)).split(separator: "\n")
                .dropFirst()
            // A single layer repeats the href (or target) just printed: keep only what it adds.
            if link.inspection.layers.count == 1 { explanation = explanation.dropFirst(2) }
            lines.append(contentsOf: explanation.map(String.init))
        }
        if let apple = opening.apple?.first {
            lines.append("  iOS      \(apple.decision == "match" ? "opens the app" : "does not open the app"): \(apple.explanation)")
        }
        if let android = opening.android?.first {
            lines.append("  Android  \(android.decision == "handled" ? "opens the app" : "does not open the app"): \(android.explanation)")
        }
        if !link.notes.isEmpty {
            lines.append("  notes")
            for note in link.notes { lines.append("    - \(note)") }
        }
        return lines.joined(separator: "\n")
    }

    static func originText(_ origin: FoundLink.Origin) -> String {
        switch origin {
        case .anchor: "<a href>"
        case .area: "<area href>"
        case .outlookConditional: "Outlook-only button (<!--[if mso]>)"
        case .htmlText: "URL in the HTML text"
        case .plainText: "URL in the text"
        }
    }

    func output(checkedPolicy: Bool) -> EmailLinkOutput {
        var base = InspectOutput.Result(link.inspection, checkedPolicy: checkedPolicy, opening: opening)
        base.input = link.found.url
        base.chain = urls.isEmpty ? [link.found.url] : urls
        if link.verdict == .hiddenByRewriter, let layer = link.rewriting.layers.last {
            base.error = .init(code: "hiddenByRewriter", message: ([layer.note] + link.rewriting.problems).joined(separator: "; "))
        }
        return EmailLinkOutput(
            base: base, text: link.found.text,
            source: .init(
                input: document, part: link.part, contentType: link.contentType, line: link.found.line, partLine: link.partLine,
                origin: link.found.origin.rawValue),
            rewriting: link.rewriting.layers.map {
                .init(
                    url: $0.url, kind: $0.kind.rawValue, service: $0.service, innerParameter: $0.innerParameter, opaque: $0.isOpaque,
                    note: $0.note)
            },
            target: link.rewriting.target, verdict: link.verdict.rawValue, notes: link.notes, opensApp: opensApp)
    }
}

/// The JSON of a link found in an email: the keys of a link result, plus where it was found and
/// what rewrote it.
struct EmailLinkOutput: Encodable {
    let base: InspectOutput.Result
    let text: String?
    let source: Source
    let rewriting: [Rewriter]
    let target: String?
    let verdict: String
    let notes: [String]
    let opensApp: OpensApp?

    struct Source: Encodable {
        let input: String
        let part: String?
        let contentType: String
        let line: Int
        let partLine: Int
        let origin: String

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(input, forKey: .input)
            try container.encode(part, forKey: .part)
            try container.encode(contentType, forKey: .contentType)
            try container.encode(line, forKey: .line)
            try container.encode(partLine, forKey: .partLine)
            try container.encode(origin, forKey: .origin)
        }

        enum CodingKeys: String, CodingKey { case input, part, contentType, line, partLine, origin }
    }

    struct Rewriter: Encodable {
        let url: String
        let kind: String
        let service: String
        let innerParameter: String?
        let opaque: Bool
        let note: String

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(url, forKey: .url)
            try container.encode(kind, forKey: .kind)
            try container.encode(service, forKey: .service)
            try container.encode(innerParameter, forKey: .innerParameter)
            try container.encode(opaque, forKey: .opaque)
            try container.encode(note, forKey: .note)
        }

        enum CodingKeys: String, CodingKey { case url, kind, service, innerParameter, opaque, note }
    }

    /// Whether the URL as tapped opens each app given (`null` for a platform not asked about).
    struct OpensApp: Encodable {
        let ios: Bool?
        let android: Bool?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(ios, forKey: .ios)
            try container.encode(android, forKey: .android)
        }

        enum CodingKeys: String, CodingKey { case ios, android }
    }

    enum CodingKeys: String, CodingKey { case text, source, rewriting, target, verdict, notes, opensApp }

    func encode(to encoder: any Encoder) throws {
        try base.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(text, forKey: .text)
        try container.encode(source, forKey: .source)
        try container.encode(rewriting, forKey: .rewriting)
        try container.encode(target, forKey: .target)
        try container.encode(verdict, forKey: .verdict)
        try container.encode(notes, forKey: .notes)
        if let opensApp { try container.encode(opensApp, forKey: .opensApp) }
    }
}

/// The JSON of one file read by `inspect`: its format, parts, problems and a count of its links.
struct EmailDocumentOutput: Encodable {
    let input: String
    let format: String
    let subject: String?
    let parts: [Part]
    let problems: [Problem]
    let summary: EmailReport.Summary
    /// The sign-in code lines of a sign-in mail.
    let signInCodes: [FoundSignInCode]

    struct Part: Encodable {
        let part: String
        let contentType: String
        let charset: String?
        let line: Int
        let size: Int
        let attachment: Bool
        let read: Bool
        let links: Int

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(part, forKey: .part)
            try container.encode(contentType, forKey: .contentType)
            try container.encode(charset, forKey: .charset)
            try container.encode(line, forKey: .line)
            try container.encode(size, forKey: .size)
            try container.encode(attachment, forKey: .attachment)
            try container.encode(read, forKey: .read)
            try container.encode(links, forKey: .links)
        }

        enum CodingKeys: String, CodingKey { case part, contentType, charset, line, size, attachment, read, links }
    }

    struct Problem: Encodable {
        let part: String?
        let message: String

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(part, forKey: .part)
            try container.encode(message, forKey: .message)
        }

        enum CodingKeys: String, CodingKey { case part, message }
    }

    enum CodingKeys: String, CodingKey { case input, format, subject, parts, problems, summary, signInCodes }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(input, forKey: .input)
        try container.encode(format, forKey: .format)
        try container.encode(subject, forKey: .subject)
        try container.encode(parts, forKey: .parts)
        try container.encode(problems, forKey: .problems)
        try container.encode(summary, forKey: .summary)
        try container.encode(signInCodes, forKey: .signInCodes)
    }
}
