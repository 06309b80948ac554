import ActionLinks
import ActionLinksHeaders
import Foundation
import Mustache
import NIOCore

/// The page and email templates of `www/` (Mustache, HTML-escaped by default) and their strings
/// (`www/strings/<language>.json`), loaded once at start and compiled for their views
/// (``CompiledPage``).
public struct PageTemplates: Sendable {
    let library: MustacheLibrary
    package let action: CompiledPage<ActionFormView>
    let result: CompiledPage<ResultView>
    let links: CompiledPage<MobileLinkView>
    let mailHTML: CompiledPage<MailView>
    let mailText: CompiledPage<MailView>
    /// Strings per language code (the file name, lower-cased); `en` is always there.
    package let strings: [String: [String: String]]
    /// The strings of each language, English where it has none, split at their placeholders.
    let texts: [String: [String: PageText]]
    /// The right-to-left languages (`"direction": "rtl"` in their strings).
    let rightToLeft: Set<String>
    /// The language when nothing else names one with strings (`pages.defaultLanguage`).
    let defaultLanguage: String

    /// Loads `<www>/templates/*.mustache`, `<www>/mail/` and `<www>/strings/*.json`; `defaultLanguage`
    /// must have a strings file.
    public init(www: String, defaultLanguage: String = "en") async throws {
        let templates = (www as NSString).appendingPathComponent("templates")
        let library: MustacheLibrary
        do {
            library = try await MustacheLibrary(directory: templates)
        } catch {
            throw PageTemplatesError(path: templates, message: "cannot load the templates: \(error)")
        }
        for name in ["layout", "action", "result", "links"] where library.getTemplate(named: name) == nil {
            throw PageTemplatesError(
                path: (templates as NSString).appendingPathComponent(name + ".mustache"), message: "the template is missing")
        }
        let mail = (www as NSString).appendingPathComponent("mail")
        let html = try Self.template(at: (mail as NSString).appendingPathComponent("message.html.mustache"))
        let text = try Self.template(at: (mail as NSString).appendingPathComponent("message.txt.mustache"))
        self.library = library
        action = CompiledPage(slots: ActionFormView.slots) { library.render($0, withTemplate: ActionFormView.template) ?? "" }
        result = CompiledPage(slots: ResultView.slots) { library.render($0, withTemplate: ResultView.template) ?? "" }
        links = CompiledPage(slots: MobileLinkView.slots) { library.render($0, withTemplate: MobileLinkView.template) ?? "" }
        mailHTML = CompiledPage(slots: MailView.slots) { html.render($0) }
        mailText = CompiledPage(slots: MailView.slots) { text.render($0) }
        let stringsDirectory = (www as NSString).appendingPathComponent("strings")
        var strings: [String: [String: String]] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: stringsDirectory)) ?? [] where name.hasSuffix(".json") {
            let path = (stringsDirectory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path),
                let table = try? JSONDecoder().decode([String: String].self, from: data)
            else { throw PageTemplatesError(path: path, message: "expected a JSON object of string keys to string values") }
            strings[String(name.dropLast(5)).lowercased()] = table
        }
        guard let english = strings["en"] else {
            throw PageTemplatesError(
                path: (stringsDirectory as NSString).appendingPathComponent("en.json"), message: "the English strings are missing")
        }
        // A language file with a missing key would show English in the middle of a page: refuse it at start.
        for (language, table) in strings where language != "en" {
            if let missing = english.keys.sorted().first(where: { table[$0] == nil }) {
                throw PageTemplatesError(
                    path: (stringsDirectory as NSString).appendingPathComponent(language + ".json"),
                    message: "the key '\(missing)' is missing (every key of en.json is needed)")
            }
        }
        guard strings[defaultLanguage.lowercased()] != nil else {
            throw PageTemplatesError(
                path: (stringsDirectory as NSString).appendingPathComponent(defaultLanguage + ".json"),
                message:
                    "pages.defaultLanguage is '\(defaultLanguage)' but there are no strings for it (languages: \(strings.keys.sorted().joined(separator: ", ")))"
            )
        }
        self.strings = strings
        texts = strings.mapValues { table in english.merging(table) { $1 }.mapValues(PageText.init) }
        rightToLeft = Set(strings.filter { $0.value["direction"] == "rtl" }.keys)
        self.defaultLanguage = defaultLanguage.lowercased()
    }

    static func template(at path: String) throws -> MustacheTemplate {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PageTemplatesError(path: path, message: "the template is missing")
        }
        do {
            return try MustacheTemplate(string: String(decoding: data, as: UTF8.self))
        } catch {
            throw PageTemplatesError(path: path, message: "not a valid Mustache template: \(error)")
        }
    }

    /// The language there are strings for that best fits a language tag (`ru-RU` and `ru_RU` → `ru`,
    /// `zh-Hant-TW` → `zh-hant` or `zh`), or `nil`.
    func match(_ tag: some StringProtocol) -> String? {
        // A language tag is short (BCP 47 advises 35 characters); a longer one names nothing we have,
        // and trimming it dash by dash would cost time quadratic in its length.
        guard tag.utf8.count <= 35 else { return nil }
        var candidate = tag.lowercased().replacingOccurrences(of: "_", with: "-")
        while !candidate.isEmpty {
            if strings[candidate] != nil { return candidate }
            guard let dash = candidate.lastIndex(of: "-") else { return nil }
            candidate = String(candidate[..<dash])
        }
        return nil
    }

    /// The language to use: `requested` if there are strings for it (or for its base language), else the default.
    func language(_ requested: String?) -> String {
        requested.flatMap { match($0) } ?? defaultLanguage
    }

    /// The language for a page: the link's or form's `lang`, then the best of `Accept-Language`
    /// (by q-value, `q=0` refused, the first of equals), then the default.
    package func language(requested: String?, acceptLanguage: String?) -> String {
        if let requested, let chosen = match(requested) { return chosen }
        if let header = acceptLanguage, let best = AcceptLanguage.best(header, available: { match($0) }) { return best }
        return defaultLanguage
    }

    /// The string `key` in `language`, with `{{name}}` placeholders filled in (escaping happens when
    /// the template renders it). In a right-to-left language each value is a bidi isolate, so an
    /// address or an app name written left to right keeps its order inside the sentence.
    package func text(_ key: String, _ language: String, _ values: [String: String] = [:]) -> String {
        let isolate = rightToLeft.contains(language)
        guard let text = texts[language]?[key] ?? texts["en"]?[key] else { return Self.fill(key, values, isolate: isolate) }
        return text.filled(values, isolate: isolate)
    }

    /// `template` with its placeholders filled, in one pass (what ``PageText`` does with a split string).
    static func fill(_ template: String, _ values: [String: String], isolate: Bool) -> String {
        // One pass over the template: a value (an address may contain "{{appName}}") is never scanned again.
        var text = ""
        var rest = template[...]
        while let open = rest.range(of: "{{") {
            text += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                rest = rest[open.lowerBound...]
                break
            }
            let name = String(rest[open.upperBound..<close.lowerBound])
            if let value = values[name] {
                text += isolate ? "\u{2068}" + value + "\u{2069}" : value
            } else {
                text += "{{\(name)}}"
            }
            rest = rest[close.upperBound...]
        }
        return text + rest
    }

    /// The text direction of `language`.
    func direction(_ language: String) -> String { rightToLeft.contains(language) ? "rtl" : "ltr" }

    /// The layout's values for a page in `language` titled `title`.
    package func frame(_ language: String, title: String, appName: String) -> PageFrame {
        PageFrame(language: language, direction: direction(language), title: title, appName: appName)
    }

    /// Renders a page from its view.
    func page(_ view: some PageView) -> String {
        String(buffer: render(view))
    }

    /// The page for a view, as the response body.
    package func render<View: PageView>(_ view: View) -> ByteBuffer {
        var buffer = ByteBuffer()
        View.compiled(in: self).render(view, into: &buffer)
        return buffer
    }

    /// The email for a link (its closing line the mode's own, `mail.<mode>.ignore`, when the strings
    /// have one), with the sign-in code beside it when one is given (its digits; shown
    /// grouped, a left-to-right isolate in a right-to-left language, with `signInCode.line`).
    func mail(
        mode: ActionCodeLink.Mode, link: String, email: String, appName: String, languageCode: String?, from: String,
        signInCode: String? = nil
    ) -> MailMessage {
        let language = language(languageCode)
        let values = ["appName": appName, "email": email]
        let ignore = texts["en"]?["mail.\(mode.rawValue).ignore"] != nil ? "mail.\(mode.rawValue).ignore" : "mail.ignore"
        var view = MailView(
            language: language, direction: direction(language), link: link,
            subject: text("mail.\(mode.rawValue).subject", language, values),
            body: text("mail.\(mode.rawValue).body", language, values), button: text("mail.\(mode.rawValue).button", language, values),
            ignore: text(ignore, language, values))
        if let signInCode {
            let grouped = SignInCodes.grouped(signInCode)
            view.signInCode = (
                line: text("signInCode.line", language), code: rightToLeft.contains(language) ? "\u{2066}" + grouped + "\u{2069}" : grouped
            )
        }
        var text = ByteBuffer()
        var html = ByteBuffer()
        mailText.render(view, into: &text)
        mailHTML.render(view, into: &html)
        return MailMessage(to: email, from: from, subject: view.subject, text: String(buffer: text), html: String(buffer: html), mode: mode)
    }
}

/// A string of `www/strings/`, split once at its `{{name}}` placeholders.
struct PageText: Sendable {
    enum Part: Sendable {
        case literal(String)
        case placeholder(String)
    }

    /// The string itself when it has no placeholder.
    let plain: String?
    let parts: [Part]

    /// Splits `template` as ``PageTemplates/fill(_:_:isolate:)`` reads it: a `{{` with no `}}` after
    /// it is text.
    init(_ template: String) {
        var parts: [Part] = []
        var rest = template[...]
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            if open.lowerBound > rest.startIndex { parts.append(.literal(String(rest[..<open.lowerBound]))) }
            parts.append(.placeholder(String(rest[open.upperBound..<close.lowerBound])))
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        self.parts = parts
        plain = parts.contains { if case .placeholder = $0 { true } else { false } } ? nil : template
    }

    /// The string with `values` filled in (each a bidi isolate when `isolate`); a name with no value
    /// stays `{{name}}`.
    func filled(_ values: [String: String], isolate: Bool) -> String {
        if let plain { return plain }
        var text = ""
        for part in parts {
            switch part {
            case .literal(let literal): text += literal
            case .placeholder(let name):
                if let value = values[name] {
                    text += isolate ? "\u{2068}" + value + "\u{2069}" : value
                } else {
                    text += "{{\(name)}}"
                }
            }
        }
        return text
    }
}

/// A template or strings file that cannot be used.
public struct PageTemplatesError: Error, CustomStringConvertible {
    /// The file.
    public let path: String
    /// What is wrong.
    public let message: String
    /// `path: message`.
    public var description: String { "\(path): \(message)" }

    /// Makes the value from each of its fields.
    package init(path: String, message: String) {
        self.path = path
        self.message = message
    }
}
