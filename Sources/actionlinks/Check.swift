import ActionLinks
import ArgumentParser
import AsyncHTTPClient
import Foundation

extension ActionLinksCommand {
    /// `actionlinks check`: fetches a domain's association files the way the platforms do and validates them.
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Fetch and validate a domain's apple-app-site-association and assetlinks.json the way iOS and Android do.",
            discussion: """
                Redirects are never followed (the platforms do not follow them either): a redirect is reported. \
                For iOS, Apple's CDN copy is fetched too and compared with the origin's. Exit 1 when a file has errors.
                """
        )

        @Argument(help: "A domain (links.example.com) or an https URL on it.")
        var target: String

        @Option(help: "Fetch from this origin instead of https://<domain> (e.g. http://127.0.0.1:8080 for a local server).")
        var origin: String?

        @Option(help: "Apple's CDN base, to which the domain is appended.")
        var appleCdn = "https://app-site-association.cdn-apple.com/a/v1/"

        @Flag(help: "Do not fetch Apple's CDN copy.")
        var skipAppleCdn = false

        @Option(help: "Seconds to wait for each response.")
        var timeout: Double = 10

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let domain = try Self.domain(of: target)
            let base = origin.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? "https://\(domain)"
            let fetcher = Fetcher(timeout: timeout)
            var apple = await FileCheck.run(
                file: "apple-app-site-association", url: base + "/.well-known/apple-app-site-association", fetcher: fetcher,
                validate: { AASAValidator().validate($0).diagnostics })
            if !skipAppleCdn, apple.fetched != nil {
                apple.cdn = await CDNCheck.run(url: appleCdn + domain, origin: apple.body, fetcher: fetcher)
            }
            let android = await FileCheck.run(
                file: "assetlinks.json", url: base + "/.well-known/assetlinks.json", fetcher: fetcher,
                validate: { AssetLinksValidator().validate($0).diagnostics })
            let report = CheckOutput(domain: domain, appleAppSiteAssociation: apple, assetLinks: android)
            if output.json {
                try printJSON(report)
            } else {
                print("Domain: \(domain)")
                for check in [apple, android] { print(check.humanDescription) }
            }
            if !report.ok { throw ExitCode.failure }
        }

        /// The host of `target`: a bare domain, or an http(s) URL's host.
        static func domain(of target: String) throws -> String {
            if target.contains("://") {
                guard let url = try? URLParts(target), let host = url.host, !host.isEmpty else {
                    throw ValidationError("'\(target)' is not a URL with a host; give a domain such as links.example.com")
                }
                return host.lowercased()
            }
            guard let domain = try? LinkDomain(target) else {
                throw ValidationError("'\(target)' is not a domain; give one such as links.example.com")
            }
            return domain.description
        }
    }
}

/// Fetches one URL, refusing redirects, and returns what came back.
struct Fetcher: Sendable {
    /// Seconds to connect, to wait for the answer, and to wait for each part of its body.
    let timeout: Double
    /// Far above Apple's 128 KB limit, so that a file too large is still read and reported as such.
    static let maximumBytes = 16 << 20

    func fetch(_ url: String) async -> Result<CommandHTTP.Answer, FetchError> {
        guard URL(string: url) != nil else { return .failure(FetchError(message: "'\(url)' is not a URL")) }
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "User-Agent", value: "actionlinks-check")
        do {
            let answer = try await CommandHTTP.exchange(
                request, timeout: .milliseconds(Int64(timeout * 1000)), followingRedirects: false, upTo: Self.maximumBytes)
            return .success(answer)
        } catch {
            return .failure(FetchError(message: Self.describe(error)))
        }
    }

    private static func describe(_ error: any Error) -> String {
        let message = CommandHTTP.describe(error)
        return CommandHTTP.isTLSFailure(error) ? message + " (the platforms need a valid certificate for the domain)" : message
    }
}

struct FetchError: Error {
    let message: String
}

/// One association file as fetched from the origin, with what is wrong with it.
struct FileCheck: Encodable {
    let file: String
    let url: String
    var fetched: Fetched?
    var problems: [String] = []
    /// Things worth knowing that are not wrong with the file.
    var notes: [String] = []
    var diagnostics: [ValidationOutput.Diagnostic] = []
    var cdn: CDNCheck?
    var body: Data? = nil

    struct Fetched: Encodable {
        let status: Int
        let redirect: String?
        let contentType: String?
        let bytes: Int
    }

    var ok: Bool { problems.isEmpty && !diagnostics.contains { $0.severity == "error" } && cdn?.problems.isEmpty != false }

    enum CodingKeys: String, CodingKey { case file, url, fetched, problems, notes, diagnostics, cdn, ok }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(file, forKey: .file)
        try container.encode(url, forKey: .url)
        try container.encode(fetched, forKey: .fetched)
        try container.encode(problems, forKey: .problems)
        try container.encode(notes, forKey: .notes)
        try container.encode(diagnostics, forKey: .diagnostics)
        if let cdn { try container.encode(cdn, forKey: .cdn) }
        try container.encode(ok, forKey: .ok)
    }

    static func run(file: String, url: String, fetcher: Fetcher, validate: ([UInt8]) -> [AssociationDiagnostic]) async -> FileCheck {
        var check = FileCheck(file: file, url: url)
        let response: CommandHTTP.Answer
        switch await fetcher.fetch(url) {
        case .failure(let error):
            check.problems.append("could not fetch \(url): \(error.message)")
            return check
        case .success(let value):
            response = value
        }
        let location = response.headers["location"]
        let contentType = response.headers["content-type"]
        check.fetched = Fetched(status: response.status, redirect: location, contentType: contentType, bytes: response.body.count)
        if (300..<400).contains(response.status) {
            check.problems.append(
                "answered \(response.status) redirecting to \(location ?? "(no Location)"): iOS and Android never follow redirects for this file; serve it directly with 200"
            )
            return check
        }
        guard response.status == 200 else {
            check.problems.append("answered \(response.status); the platforms need 200")
            return check
        }
        let mediaType = contentType?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if mediaType != "application/json" {
            check.problems.append("Content-Type is \(contentType.map { "'\($0)'" } ?? "missing"); serve it as application/json")
        }
        if !url.hasPrefix("https://") {
            check.notes.append("fetched over plain HTTP (--origin); the platforms fetch https only, so TLS was not checked")
        }
        check.body = response.body
        check.diagnostics = validate(Array(response.body)).map {
            .init(code: $0.code.rawValue, severity: $0.severity.rawValue, path: $0.path, message: $0.message)
        }
        return check
    }

    var humanDescription: String {
        var lines = ["\(file): \(url)"]
        if let fetched {
            lines.append("  \(fetched.status), \(fetched.contentType ?? "no Content-Type"), \(fetched.bytes) bytes")
        }
        for problem in problems { lines.append("  problem: \(problem)") }
        for note in notes { lines.append("  note: \(note)") }
        for diagnostic in diagnostics {
            lines.append("  \(diagnostic.severity)[\(diagnostic.code)] \(diagnostic.path): \(diagnostic.message)")
        }
        if let cdn {
            lines.append(
                "  Apple CDN: \(cdn.url)" + (cdn.matchesOrigin.map { $0 ? " — same as the origin" : " — differs from the origin" } ?? ""))
            for problem in cdn.problems { lines.append("  problem: \(problem)") }
        }
        lines.append(ok ? "  ok" : "  NOT OK")
        return lines.joined(separator: "\n")
    }
}

/// Apple's CDN copy of the AASA, which is what devices actually read, compared with the origin's.
struct CDNCheck: Encodable {
    let url: String
    let status: Int?
    let matchesOrigin: Bool?
    let problems: [String]

    enum CodingKeys: String, CodingKey { case url, status, matchesOrigin, problems }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(url, forKey: .url)
        try container.encode(status, forKey: .status)
        try container.encode(matchesOrigin, forKey: .matchesOrigin)
        try container.encode(problems, forKey: .problems)
    }

    static func run(url: String, origin: Data?, fetcher: Fetcher) async -> CDNCheck {
        switch await fetcher.fetch(url) {
        case .failure(let error):
            return CDNCheck(url: url, status: nil, matchesOrigin: nil, problems: ["could not fetch Apple's CDN copy: \(error.message)"])
        case .success(let response):
            guard response.status == 200 else {
                return CDNCheck(
                    url: url, status: response.status, matchesOrigin: nil,
                    problems: [
                        "Apple's CDN answered \(response.status): devices cannot get the file yet (the CDN refreshes within about a day)"
                    ])
            }
            guard let origin else { return CDNCheck(url: url, status: 200, matchesOrigin: nil, problems: []) }
            let same = Self.sameJSON(origin, response.body)
            return CDNCheck(
                url: url, status: 200, matchesOrigin: same,
                problems: same
                    ? []
                    : ["Apple's CDN serves a different file from the origin: devices still use the CDN's (it refreshes within about a day)"]
            )
        }
    }

    /// Compares the two documents as JSON values, so whitespace and key order do not count.
    static func sameJSON(_ a: Data, _ b: Data) -> Bool {
        guard let left = try? JSONValue.parse(Array(a)), let right = try? JSONValue.parse(Array(b)) else { return a == b }
        return left.serializedText(.compact) == right.serializedText(.compact)
    }
}

/// `{"domain", "appleAppSiteAssociation": {...}, "assetLinks": {...}, "ok"}`.
struct CheckOutput: Encodable {
    let domain: String
    let appleAppSiteAssociation: FileCheck
    let assetLinks: FileCheck
    var ok: Bool { appleAppSiteAssociation.ok && assetLinks.ok }

    enum CodingKeys: String, CodingKey { case domain, appleAppSiteAssociation, assetLinks, ok }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(domain, forKey: .domain)
        try container.encode(appleAppSiteAssociation, forKey: .appleAppSiteAssociation)
        try container.encode(assetLinks, forKey: .assetLinks)
        try container.encode(ok, forKey: .ok)
    }
}
