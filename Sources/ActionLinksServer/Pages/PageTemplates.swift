import ActionLinks
import ActionLinksHeaders
import Foundation
import Mustache

/// The page and email templates of `www/` (Mustache, HTML-escaped by default) and their strings
/// (`www/strings/<language>.json`), loaded once at start.
public struct PageTemplates: Sendable {
    let library: MustacheLibrary
    let mailHTML: MustacheTemplate
    let mailText: MustacheTemplate
    /// Strings per language code (the file name, lower-cased); `en` is always there.
    let strings: [String: [String: String]]
    /// The right-to-left languages (`"direction": "rtl"` in their strings).
    let rightToLeft: Set<String>
    /// The language when nothing else names one with strings (`pages.defaultLanguage`).
    let defaultLanguage: String

    /// Loads `<www>/templates/*.mustache`, `<www>/mail/` and `<www>/strings/*.json`; `defaultLanguage`
    /// must have a strings file.
    public init(www: String, defaultLanguage: String = "en") async throws {
        let templates = (www as NSString).appendingPathComponent("templates")
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
        mailHTML = try Self.template(at: (mail as NSString).appendingPathComponent("message.html.mustache"))
        mailText = try Self.template(at: (mail as NSString).appendingPathComponent("message.txt.mustache"))
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
    func language(requested: String?, acceptLanguage: String?) -> String {
        if let requested, let chosen = match(requested) { return chosen }
        if let header = acceptLanguage, let best = AcceptLanguage.best(header, available: { match($0) }) { return best }
        return defaultLanguage
    }

    /// The string `key` in `language`, with `{{name}}` placeholders filled in (escaping happens when
    /// the template renders it). In a right-to-left language each value is a bidi isolate, so an
    /// address or an app name written left to right keeps its order inside the sentence.
    func text(_ key: String, _ language: String, _ values: [String: String] = [:]) -> String {
        let template = strings[language]?[key] ?? strings["en"]?[key] ?? key
        let isolate = rightToLeft.contains(language)
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
    func frame(_ language: String, title: String, appName: String) -> PageFrame {
        PageFrame(language: language, direction: direction(language), title: title, appName: appName)
    }

    /// Renders a page from its view.
    func page(_ view: some PageView) -> String {
        library.render(view, withTemplate: type(of: view).template) ?? ""
    }

    /// The email for a link.
    func mail(mode: ActionCodeLink.Mode, link: String, email: String, appName: String, languageCode: String?, from: String) -> MailMessage {
        let language = language(languageCode)
        let values = ["appName": appName, "email": email]
        let view = MailView(
            language: language, direction: direction(language), link: link,
            subject: text("mail.\(mode.rawValue).subject", language, values),
            body: text("mail.\(mode.rawValue).body", language, values), button: text("mail.\(mode.rawValue).button", language, values),
            ignore: text("mail.ignore", language, values))
        return MailMessage(
            to: email, from: from, subject: view.subject, text: mailText.render(view), html: mailHTML.render(view), mode: mode)
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
}
