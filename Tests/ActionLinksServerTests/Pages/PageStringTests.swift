import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// Page strings: every language has every key with the same placeholders, filled in one pass, and
/// the language is chosen by `lang`, then `Accept-Language`, then the configured default.
@Suite("Page strings", .timeLimit(.minutes(5)))
struct PageStringTests {
    static let www = Repository.root.appendingPathComponent("www")

    static func table(_ language: String) throws -> [String: String] {
        let data = try Data(contentsOf: www.appendingPathComponent("strings/\(language).json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: String], "\(language).json is an object of strings")
    }

    static func placeholders(_ text: String) -> [String] {
        var names: [String] = []
        var rest = text[...]
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            names.append(String(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return names.sorted()
    }

    static let languages =
        (try? FileManager.default.contentsOfDirectory(atPath: www.appendingPathComponent("strings").path))?
        .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted() ?? []

    @Test("English, Russian, Japanese and Arabic are there")
    func languagesPresent() {
        #expect(Set(["en", "ru", "ja", "ar"]).isSubset(of: Set(Self.languages)))
    }

    @Test("each language file has exactly the keys of en.json, the same placeholders, and no empty string", arguments: languages)
    func sameKeys(language: String) throws {
        let english = try Self.table("en"), table = try Self.table(language)
        #expect(
            Set(table.keys).subtracting(english.keys).isEmpty, "keys not in en.json: \(Set(table.keys).subtracting(english.keys).sorted())")
        #expect(Set(english.keys).subtracting(table.keys).isEmpty, "keys missing: \(Set(english.keys).subtracting(table.keys).sorted())")
        for (key, text) in english {
            guard let translated = table[key] else { continue }
            #expect(Self.placeholders(translated) == Self.placeholders(text), "\(language).json \(key): placeholders differ from en.json")
            #expect(!translated.trimmingCharacters(in: .whitespaces).isEmpty, "\(language).json \(key) is empty")
        }
        #expect(table["language"] == language)
        #expect(table["direction"] == (language == "ar" ? "rtl" : "ltr"))
    }

    @Test("a value that looks like a placeholder is left as it is")
    func onePass() async throws {
        let templates = try await PageTemplates(www: Self.www.path)
        let text = templates.text("verifyEmail.done.body", "en", ["email": "{{appName}}@example.com", "appName": "Example"])
        #expect(text == "{{appName}}@example.com is now verified for Example.")
    }

    @Test("in Arabic, filled-in values are bidi isolates; the page says dir=rtl")
    func rightToLeft() async throws {
        let templates = try await PageTemplates(www: Self.www.path)
        #expect(templates.text("verifyEmail.intro", "ar", ["email": "ann@example.com"]).contains("\u{2068}ann@example.com\u{2069}"))
        #expect(templates.direction("ar") == "rtl" && templates.direction("ja") == "ltr")
        let view = ResultView(frame: templates.frame("ar", title: "x", appName: "Example"), body: "y")
        #expect(templates.page(view).contains(#"<html lang="ar" dir="rtl">"#))
    }

    @Test("lang first, then Accept-Language by q-value with prefix matching, then the default")
    func languageChoice() async throws {
        let templates = try await PageTemplates(www: Self.www.path)
        #expect(templates.language(requested: "ru", acceptLanguage: "ja") == "ru")
        #expect(templates.language(requested: "ar-EG", acceptLanguage: nil) == "ar")
        #expect(templates.language(requested: "ja_JP", acceptLanguage: nil) == "ja")
        #expect(templates.language(requested: "xx", acceptLanguage: "ru-RU,ru;q=0.9,en;q=0.8") == "ru", "an unknown lang falls through")
        #expect(templates.language(requested: nil, acceptLanguage: "fr-FR, ja;q=0.5, ar;q=0.7") == "ar", "the highest q with strings")
        #expect(templates.language(requested: nil, acceptLanguage: "ru;q=0, ja;q=0.1") == "ja", "q=0 means not this one")
        #expect(templates.language(requested: nil, acceptLanguage: "ja, ru") == "ja", "the first of equals")
        #expect(templates.language(requested: nil, acceptLanguage: "*, fr") == "en")
        #expect(templates.language(requested: "", acceptLanguage: nil) == "en")
        let russian = try await PageTemplates(www: Self.www.path, defaultLanguage: "ru")
        #expect(russian.language(requested: nil, acceptLanguage: "de-DE") == "ru", "the configured default")
        #expect(russian.language(nil) == "ru")
        await #expect(throws: PageTemplatesError.self) { _ = try await PageTemplates(www: Self.www.path, defaultLanguage: "xx") }
    }

    @Test("emails use the same strings, in the link's language", arguments: ["en", "ru", "ja", "ar"])
    func mailLanguage(language: String) async throws {
        let templates = try await PageTemplates(www: Self.www.path)
        let message = templates.mail(
            mode: .resetPassword, link: "https://links.example.com/__/auth/action?mode=resetPassword&oobCode=X", email: "ann@example.com",
            appName: "Example", languageCode: language + "-XX", from: "x@example.com")
        let expected = templates.text("mail.resetPassword.subject", language, ["appName": "Example"])
        #expect(message.subject == expected)
        #expect(message.html.contains(#"<html lang="\#(language)" dir="\#(language == "ar" ? "rtl" : "ltr")">"#))
        #expect(message.text.contains(templates.text("mail.ignore", language)))
    }
}
