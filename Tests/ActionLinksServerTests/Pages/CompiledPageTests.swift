import ActionLinks
import ActionLinksTestSupport
import Foundation
import Mustache
import NIOCore
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The compiled pages give, byte for byte, what Mustache renders from the same names: every shape of
/// every page and email, in every language, with values that need escaping; and a template whose
/// output depends on its values in a way the compiled form cannot follow is rendered by Mustache.
@Suite("Compiled pages", .timeLimit(.minutes(5)))
struct CompiledPageTests {
    static let www = Repository.www

    /// Values that exercise escaping, placeholders that must stay text, newlines and bidi isolates.
    static let values = [
        "ann@example.com", "<b>\"Tom\" & 'Jerry'</b>", "", "{{appName}}", "line\nbreak", "日本語のテキスト", "\u{2068}x@y.z\u{2069}", "a & b",
    ]

    /// What the views answered Mustache before: their names, as a dictionary (nil values left out).
    static func names<View: TemplateView>(_ view: View) -> [String: Any] {
        var names: [String: Any] = [:]
        for (name, slot) in View.slots where names[name] == nil {
            switch slot {
            case .text(let read): if let value = read(view) { names[name] = value }
            case .flag(let read): names[name] = read(view)
            }
        }
        return names
    }

    static func forms(_ templates: PageTemplates, language: String, value: String) -> [ActionFormView] {
        var views: [ActionFormView] = []
        let optionals: [String?] = [nil, value]
        for remembered in [false, true] {
            var emailFields: [ActionFormView.EmailField?] = [nil]
            for emailValue in optionals {
                for error in optionals { emailFields.append(.init(label: "L", help: value, value: emailValue, error: error)) }
            }
            var passwordFields: [ActionFormView.PasswordFields?] = [nil]
            for error in optionals {
                for again in optionals {
                    for rules in optionals {
                        passwordFields.append(
                            .init(label: value, help: "H", againLabel: "A", error: error, againError: again, rules: rules))
                    }
                }
            }
            for emailField in emailFields {
                for passwordField in passwordFields {
                    for signInCode in [nil, (line: value, code: "123 \(value)")] {
                        var view = ActionFormView(
                            frame: templates.frame(language, title: value, appName: "App <\(value)>"), intro: value, button: "Go",
                            mode: "signIn",
                            oobCode: "code-\(value)", formToken: "1.token", email: value, minimumLength: "8", errorLabel: "Error")
                        view.remembered = remembered
                        view.emailField = emailField
                        view.passwordFields = passwordField
                        view.signInCode = signInCode
                        views.append(view)
                    }
                }
            }
        }
        return views
    }

    static func results(_ templates: PageTemplates, language: String, value: String) -> [ResultView] {
        [nil, (url: "https://app.example.com/?a=1&b=\(value)", label: value)].map {
            ResultView(frame: templates.frame(language, title: value, appName: value), body: value, continueLink: $0)
        }
    }

    static func links(_ templates: PageTemplates, language: String, value: String) -> [MobileLinkView] {
        var views: [MobileLinkView] = []
        for mask in 0..<32 {
            var view = MobileLinkView(
                frame: templates.frame(language, title: value, appName: "App"), intro: value, webLink: "https://l.example/?a=1&b=2",
                continueWeb: "Web", openApp: value, appStore: "App Store", playStore: "Play")
            if mask & 1 != 0 { view.appLink = "intent://x?\(value)" }
            if mask & 2 != 0 { view.appStoreLink = "https://apps.apple.com/app/id1" }
            if mask & 4 != 0 { view.playStoreLink = "https://play.google.com/store/apps/details?id=\(value)" }
            if mask & 8 != 0 { view.smartBanner = "app-id=1, app-argument=\(value)" }
            if mask & 16 != 0 { view.update = ("https://play.google.com/u", value) }
            views.append(view)
        }
        return views
    }

    @Test("every shape of every page, in every language, is what Mustache renders from the same names")
    func pagesAsMustache() async throws {
        let templates = try await PageTemplates(www: Self.www)
        var compared = 0
        for language in templates.strings.keys.sorted() {
            for value in Self.values {
                for view in Self.forms(templates, language: language, value: value) {
                    #expect(
                        templates.page(view) == templates.library.render(Self.names(view), withTemplate: "action"), "\(language) \(value)")
                    compared += 1
                }
                for view in Self.results(templates, language: language, value: value) {
                    #expect(templates.page(view) == templates.library.render(Self.names(view), withTemplate: "result"))
                    compared += 1
                }
                for view in Self.links(templates, language: language, value: value) {
                    #expect(templates.page(view) == templates.library.render(Self.names(view), withTemplate: "links"))
                    compared += 1
                }
            }
        }
        #expect(compared > 2500)
        // The shipped templates compile in every shape met: none falls back to Mustache.
        for programs in [templates.action.compiledShapes, templates.result.compiledShapes, templates.links.compiledShapes] {
            #expect(!programs.isEmpty && programs.allSatisfy { $0 })
        }
    }

    @Test("emails in every language are what Mustache renders from the same names")
    func mailAsMustache() async throws {
        let templates = try await PageTemplates(www: Self.www)
        let html = try MustacheTemplate(string: String(contentsOfFile: Self.www + "/mail/message.html.mustache", encoding: .utf8))
        let text = try MustacheTemplate(string: String(contentsOfFile: Self.www + "/mail/message.txt.mustache", encoding: .utf8))
        for language in templates.strings.keys.sorted() {
            for value in Self.values {
                let message = templates.mail(
                    mode: .resetPassword, link: "https://l.example/__/auth/action?a=1&b=\(value)", email: value, appName: value,
                    languageCode: language, from: "x@example.com")
                let view = MailView(
                    language: language, direction: templates.direction(language), link: "https://l.example/__/auth/action?a=1&b=\(value)",
                    subject: message.subject,
                    body: templates.text("mail.resetPassword.body", language, ["appName": value, "email": value]),
                    button: templates.text("mail.resetPassword.button", language, ["appName": value, "email": value]),
                    ignore: templates.text("mail.ignore", language, ["appName": value, "email": value]))
                #expect(message.html == html.render(Self.names(view)))
                #expect(message.text == text.render(Self.names(view)))
                // A sign-in mail with its code.
                let signIn = templates.mail(
                    mode: .signIn, link: "https://l.example/?a=\(value)", email: value, appName: value, languageCode: language,
                    from: "x@example.com", signInCode: "1234567")
                var withCode = MailView(
                    language: language, direction: templates.direction(language), link: "https://l.example/?a=\(value)",
                    subject: signIn.subject, body: templates.text("mail.signIn.body", language, ["appName": value, "email": value]),
                    button: templates.text("mail.signIn.button", language, ["appName": value, "email": value]),
                    ignore: templates.text("mail.ignore", language, ["appName": value, "email": value]))
                let grouped = language == "ar" ? "\u{2066}123 4567\u{2069}" : "123 4567"
                withCode.signInCode = (line: templates.text("signInCode.line", language), code: grouped)
                #expect(signIn.html == html.render(Self.names(withCode)))
                #expect(signIn.text == text.render(Self.names(withCode)))
                #expect(signIn.text.contains("\n" + grouped + "\n"))
            }
        }
        for programs in [templates.mailHTML.compiledShapes, templates.mailText.compiledShapes] {
            #expect(programs.count == 2 && programs.allSatisfy { $0 }, "both shapes of each mail template compile")
        }
    }

    @Test("a quote that a combining mark follows is escaped too (Mustache compares whole characters and left it)")
    func escapesEveryQuote() {
        var buffer = ByteBuffer()
        HTMLEscaping.write("a\"\u{301}b'\u{301}<>&", into: &buffer)
        #expect(String(buffer: buffer) == "a&quot;\u{301}b&#39;\u{301}&lt;&gt;&amp;")
    }

    @Test("a template whose output depends on its values (transforms) is rendered by Mustache, the same as before")
    func transformsFallBack() async throws {
        let www = FileManager.default.temporaryDirectory.appendingPathComponent("actionlinks-compiled-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: www) }
        try FileManager.default.copyItem(atPath: Self.www, toPath: www)
        let result = try String(contentsOfFile: www + "/templates/result.mustache", encoding: .utf8)
            .replacingOccurrences(
                of: "<p>{{body}}</p>",
                with:
                    "<p>{{uppercased(body)}}</p>{{#empty(title)}}<p>no title</p>{{/empty(title)}}{{^empty(body)}}[{{body}}]{{/empty(body)}}"
            )
        try result.write(toFile: www + "/templates/result.mustache", atomically: true, encoding: .utf8)
        let templates = try await PageTemplates(www: www)
        for value in Self.values {
            for view in Self.results(templates, language: "en", value: value) {
                #expect(templates.page(view) == templates.library.render(Self.names(view), withTemplate: "result"), "\(value)")
            }
        }
        #expect(templates.result.compiledShapes.contains(false), "the transforms were noticed")
    }
}
