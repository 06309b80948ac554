import ActionLinks
import Foundation
import Mustache

/// The page and email templates of `www/` (Mustache, HTML-escaped by default) and their strings
/// (`www/strings/<language>.json`), loaded once at start.
public struct PageTemplates: Sendable {
    let library: MustacheLibrary
    let mailHTML: MustacheTemplate
    let mailText: MustacheTemplate
    /// Strings per language code; `en` is always there.
    let strings: [String: [String: String]]

    /// Loads `<www>/templates/*.mustache`, `<www>/mail/` and `<www>/strings/*.json`.
    public init(www: String) async throws {
        let templates = (www as NSString).appendingPathComponent("templates")
        do {
            library = try await MustacheLibrary(directory: templates)
        } catch {
            throw PageTemplatesError(path: templates, message: "cannot load the templates: \(error)")
        }
        for name in ["layout", "action", "result", "links"] where library.getTemplate(named: name) == nil {
            throw PageTemplatesError(path: (templates as NSString).appendingPathComponent(name + ".mustache"), message: "the template is missing")
        }
        let mail = (www as NSString).appendingPathComponent("mail")
        mailHTML = try Self.template(at: (mail as NSString).appendingPathComponent("message.html.mustache"))
        mailText = try Self.template(at: (mail as NSString).appendingPathComponent("message.txt.mustache"))
        let stringsDirectory = (www as NSString).appendingPathComponent("strings")
        var strings: [String: [String: String]] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: stringsDirectory)) ?? [] where name.hasSuffix(".json") {
            let path = (stringsDirectory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path),
                let table = try? JSONSerialization.jsonObject(with: data) as? [String: String]
            else { throw PageTemplatesError(path: path, message: "expected a JSON object of string keys to string values") }
            strings[String(name.dropLast(5))] = table
        }
        guard strings["en"] != nil else {
            throw PageTemplatesError(path: (stringsDirectory as NSString).appendingPathComponent("en.json"), message: "the English strings are missing")
        }
        self.strings = strings
    }

    static func template(at path: String) throws -> MustacheTemplate {
        guard let data = FileManager.default.contents(atPath: path) else { throw PageTemplatesError(path: path, message: "the template is missing") }
        do {
            return try MustacheTemplate(string: String(decoding: data, as: UTF8.self))
        } catch {
            throw PageTemplatesError(path: path, message: "not a valid Mustache template: \(error)")
        }
    }

    /// The language to use: `requested` if there are strings for it (or for its base language), else English.
    func language(_ requested: String?) -> String {
        guard let requested = requested?.lowercased(), !requested.isEmpty else { return "en" }
        if strings[requested] != nil { return requested }
        let base = String(requested.split(separator: "-").first ?? "")
        return strings[base] != nil ? base : "en"
    }

    /// The string `key` in `language`, with `{{name}}` placeholders filled in (escaping happens when
    /// the template renders it).
    func text(_ key: String, _ language: String, _ values: [String: String] = [:]) -> String {
        let template = strings[language]?[key] ?? strings["en"]?[key] ?? key
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
            text += values[name] ?? "{{\(name)}}"
            rest = rest[close.upperBound...]
        }
        return text + rest
    }

    /// Renders the page `name` with `context` plus the language's `lang` and `dir`.
    func page(_ name: String, language: String, context: [String: Any]) -> String {
        var context = context
        context["lang"] = language
        context["dir"] = strings[language]?["direction"] ?? "ltr"
        return library.render(context, withTemplate: name) ?? ""
    }

    /// The email for a link.
    func mail(mode: ActionCodeLink.Mode, link: String, email: String, appName: String, languageCode: String?, from: String) -> MailMessage {
        let language = language(languageCode)
        let values = ["appName": appName, "email": email]
        let context: [String: Any] = [
            "lang": language, "dir": strings[language]?["direction"] ?? "ltr", "link": link,
            "subject": text("mail.\(mode.rawValue).subject", language, values), "body": text("mail.\(mode.rawValue).body", language, values),
            "button": text("mail.\(mode.rawValue).button", language, values), "ignore": text("mail.ignore", language, values),
        ]
        return MailMessage(
            to: email, from: from, subject: context["subject"] as! String, text: mailText.render(context), html: mailHTML.render(context), mode: mode)
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
