import ActionLinks
import ActionLinksConfiguration
import ActionLinksTestSupport
import Foundation
import HTTPTypes
import Logging
import NIOCore
import Synchronization
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// What the pages keep between requests (``PageCache``): the same bytes as rendering each time, and
/// never a page from before a code's state changed.
@Suite("Page cache", .timeLimit(.minutes(5)))
struct PageCacheTests {
    /// The pages of a server with the shipped configuration, templates and strings.
    static func pages() async throws -> ActionPages {
        let directory = TestProject.temporaryDirectory("page-cache")
        let configuration = try ActionLinksConfiguration.load(
            file: Repository.configFile, environment: TestProject.overrides(dataDirectory: directory))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let database = try SQLiteDatabase(path: directory.appendingPathComponent("actionlinks.sqlite").path)
        let templates = try await PageTemplates(www: Repository.www)
        let logger = Logger(label: "page-cache-tests")
        let keys = try ServerKeys(directory: directory.path)
        let services = LinkDomainServices(
            configuration: configuration, codes: database.codes, accounts: database.accounts, tenants: database.tenants,
            flows: database.federatedFlows, signInCodes: database.signInCodes, keys: keys,
            mailer: Mailer(
                settings: configuration.service.mail, templates: templates, outbox: database.outbox, formKey: keys.formKey, logger: logger),
            logger: logger)
        return ActionPages(services: services, templates: templates)
    }

    /// Addresses and codes with everything HTML escapes, a placeholder, a combining mark after a
    /// quote, right-to-left text, and the compiler's own marker.
    static let addresses = [
        "ann@example.com", #"a"b'<c>&d@example.com"#, "{{appName}}@example.com", "\"\u{301}x@example.com", "مريم@example.com",
        PageMarker.text(2) + "@example.com",
    ]

    @Test("a first-shown form from its compiled program is the form rendered from its view, in every mode, language and variant")
    func compiledForms() async throws {
        let pages = try await Self.pages()
        var compared = 0
        // A revert's form shows its factor: it is always rendered from its view, never kept.
        let kept = ActionPages.pageModes.subtracting([.revertSecondFactorAddition])
        for mode in kept.sorted(by: { $0.rawValue < $1.rawValue }) {
            for language in pages.templates.strings.keys.sorted() {
                for remembered in [false, true] {
                    for (index, email) in Self.addresses.enumerated() {
                        let variants: [(newEmail: String?, signInCode: String?)] = [
                            (nil, nil), (Self.addresses[(index + 1) % Self.addresses.count], nil), (nil, "123 45<\(index)>"),
                        ]
                        for (newEmail, signInCode) in variants {
                            let values = FormValues(
                                code: index % 2 == 0 ? "AbC-_" + String(index) : "<\(index)&>", formToken: "123.\(email)", email: email,
                                shownEmail: EmailAddress.masked(email), shownNewEmail: newEmail, signInCode: signInCode)
                            let state = ActionPages.FormState(remembered: remembered)
                            let expected = pages.templates.render(
                                pages.formView(mode: mode, values: values, language: language, state: state))
                            let cached = try #require(
                                pages.cachedForm(mode: mode, language: language, remembered: remembered, values: values),
                                "the shipped \(mode) form compiles")
                            #expect(
                                cached == expected,
                                "\(mode) \(language) remembered: \(remembered) \(email) \(newEmail ?? "-"):\n\(String(buffer: cached))\n\(String(buffer: expected))"
                            )
                            compared += 1
                        }
                    }
                }
            }
        }
        #expect(compared == 5 * 4 * 2 * 6 * 3)
        #expect(pages.cache.counts.forms == 5 * 4 * 2 * 3, "one program per mode, language, remembered, new address and sign-in code")
    }

    @Test("a new-password form is kept per password policy: each policy's form is its own rendering, in every language")
    func formsPerPolicy() async throws {
        let pages = try await Self.pages()
        let policies = [
            PasswordSettings(),
            PasswordSettings(
                minimumLength: 12, maximumLength: 64, requireUppercase: true, requireNonAlphanumeric: true, enforcement: .enforce),
            PasswordSettings(minimumLength: 10, requireLowercase: true, requireNumeric: true, enforcement: .off),
        ]
        for language in pages.templates.strings.keys.sorted() {
            for passwords in policies {
                let values = FormValues(
                    code: "AbC-_1", formToken: "123.x", email: "ann@example.com", shownEmail: "ann@example.com", shownNewEmail: nil)
                let state = ActionPages.FormState()
                let expected = pages.templates.render(
                    pages.formView(mode: .resetPassword, values: values, language: language, state: state, passwords: passwords))
                let cached = try #require(
                    pages.cachedForm(mode: .resetPassword, language: language, remembered: false, passwords: passwords, values: values))
                #expect(cached == expected, "\(language) \(passwords)")
                let text = String(buffer: cached)
                #expect(text.contains(#"id="password-rules""#) == (passwords.enforcement == .enforce), "\(language): \(text)")
                #expect(text.contains(#"minlength="\#(passwords.minimumLength)""#))
            }
        }
        #expect(pages.cache.counts.forms == pages.templates.strings.count * policies.count)
    }

    @Test("a form shown again with what was typed and what was wrong is rendered for that request, not taken from the cache")
    func formsWithStateAreRendered() async throws {
        let pages = try await Self.pages()
        let record = ActionCodeRecord(
            hash: Data("h".utf8), mode: .resetPassword, tenantID: "", accountID: "a", email: "ann@example.com", createdAt: .epoch,
            expiresAt: .epoch)
        let plain = pages.formPage(for: record, code: "CODE", language: "en", state: .init())
        var state = ActionPages.FormState()
        state.passwordError = "That password is far too short"
        let again = pages.formPage(for: record, code: "CODE", language: "en", state: state, status: .badRequest)
        #expect(again.status == .badRequest)
        #expect(String(buffer: try #require(again.body)).contains("That password is far too short"))
        #expect(!String(buffer: try #require(plain.body)).contains("That password is far too short"))
        var signIn = record
        signIn.mode = .signIn
        var typed = ActionPages.FormState()
        typed.emailValue = "typed@example.com"
        #expect(
            String(buffer: try #require(pages.formPage(for: signIn, code: "CODE", language: "en", state: typed).body)).contains(
                "typed@example.com"))
    }

    @Test("outcome pages are the result page rendered for each request, with the status asked for; an unknown language is not kept")
    func outcomePages() async throws {
        let pages = try await Self.pages()
        let outcomes: [ActionPages.Outcome] = [.expired, .used, .invalid, .unavailable, .form, .notFound, .maybeDone, .disabled, .tooMany]
        for language in pages.templates.strings.keys.sorted() {
            for outcome in outcomes {
                let expected = pages.resultPage(
                    status: .ok, language: language, title: "error.\(outcome.rawValue).title", body: "error.\(outcome.rawValue).body",
                    values: ["appName": pages.settings.project.appName])
                for status in [HTTPResponse.Status.badRequest, .gone] {
                    let page = pages.outcomePage(outcome, language, status: status)
                    #expect(page.status == status && page.headers.isEmpty)
                    #expect(page.body == expected.body, "\(outcome) \(language)")
                }
            }
        }
        #expect(pages.cache.counts.outcomes == outcomes.count * pages.templates.strings.count)
        let unknown = pages.outcomePage(.invalid, "xx-not-a-language")
        #expect(String(buffer: try #require(unknown.body)).contains("<html lang=\"xx-not-a-language\""))
        #expect(pages.cache.counts.outcomes == outcomes.count * pages.templates.strings.count)
    }

    @Test("an answer written from the prebuilt page headers is what the HTTP encoder writes for its head and body")
    func encodedAnswers() async throws {
        let pages = try await Self.pages()
        let record = ActionCodeRecord(
            hash: Data("h".utf8), mode: .verifyEmail, tenantID: "", accountID: "a", email: "ann@example.com", createdAt: .epoch,
            expiresAt: .epoch)
        let date = HTTPDate.format(1_795_000_000)
        let answers = [
            pages.formPage(for: record, code: "CODE", language: "ar", state: .init()), pages.outcomePage(.invalid, "en"),
            pages.failurePage(ActionError(.expiredOOBCode), "ja"), pages.failurePage(ActionError(.unavailable), "ru"),
            pages.outcomePage(.notFound, "en", status: .notFound),
            PageAnswer(status: .seeOther, headers: [.location: "https://app.example.com/?a=1"], body: nil),
            PageAnswer(status: .ok, body: ByteBuffer()),
        ]
        for answer in answers {
            var head = answer.head
            head.headerFields[.date] = date
            let expected = HTTP1Answer.encode(head, body: answer.body.flatMap { $0.readableBytes > 0 ? $0 : nil })
            #expect(answer.encoded(date: date) == expected, "\(String(buffer: answer.encoded(date: date)))")
        }
        let first = String(buffer: answers[0].encoded(date: date))
        for header in PageHeadersMiddleware.headers {
            #expect(first.contains("\r\n\(header.name.rawName): \(header.value)\r\n"), "\(header.name)")
        }
    }

    @Test(
        "the landing page shows each code's state at the moment of the request: a code that expired or was used a moment ago never gets the form again, on the event loop or from the responder"
    )
    func neverStale() async throws {
        typealias Raw = AssociationFastPathTests
        let clock = ManualClock()
        try await TestApp.live(environment: ["ACTIONLINKS_CODES_LIFETIMES_RESET_PASSWORD": "1h"], clock: clock) { app in
            try await app.createAccount(email: "stale@example.com", password: "an old password")
            /// The answers to a GET of `target` on the event loop, then from the responder.
            func get(_ target: String) throws -> [String] {
                let answers = Raw.responses(
                    try Raw.exchange(
                        port: app.port,
                        [
                            Raw.request("GET", target), Raw.request("GET", target, ["Connection: keep-alive"]),
                            Raw.request("GET", "/healthz", ["Connection: close"]),
                        ]))
                #expect(answers.count == 3, "\(target)")
                return Array(answers.prefix(2))
            }
            func status(_ answers: [String]) -> [String] { answers.map { String($0.prefix(15)) } }
            let live = ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"]
            // An error page first, so that one is kept before a live code's page is asked for.
            #expect(
                status(try get("/__/auth/action?mode=resetPassword&oobCode=" + String(repeating: "A", count: 43))) == [
                    "HTTP/1.1 400 Ba", "HTTP/1.1 400 Ba",
                ])

            let expiring = try await PageTests().link(app, "PASSWORD_RESET", "stale@example.com", "en")
            for target in [expiring, expiring + "&lang=ar"] {
                let answers = try get(target)
                #expect(status(answers) == live, "\(target)")
                #expect(answers.allSatisfy { $0.contains("name=\"password\"") })
            }
            clock.advance(seconds: 3601)
            for target in [expiring, expiring + "&lang=ar"] {
                #expect(status(try get(target)) == ["HTTP/1.1 410 Go", "HTTP/1.1 410 Go"], "expired a second ago: \(target)")
            }

            let used = try await PageTests().link(app, "PASSWORD_RESET", "stale@example.com", "en")
            let code = try #require(ActionCodeLink.parse("https://links.test.example" + used)?.oobCode)
            #expect(status(try get(used)) == live)
            let reset = try await app.api("resetPassword", ["oobCode": code, "newPassword": "a brand new password"])
            #expect(reset.status == 200, "\(reset.text)")
            let after = try get(used)
            #expect(status(after) == ["HTTP/1.1 400 Ba", "HTTP/1.1 400 Ba"], "used a moment ago")
            #expect(after.allSatisfy { !$0.contains("name=\"password\"") && !$0.contains(code) })

            // Another live code of the same mode and language still gets its own form, with its own code.
            let next = try await PageTests().link(app, "PASSWORD_RESET", "stale@example.com", "en")
            let nextCode = try #require(ActionCodeLink.parse("https://links.test.example" + next)?.oobCode)
            let answers = try get(next)
            #expect(status(answers) == live)
            #expect(answers.allSatisfy { $0.contains("value=\"\(nextCode)\"") && !$0.contains(code) })
        }
    }

    @Test(
        "a code issued a moment ago gets its form, and one used a moment ago gets none, on many connections at once (every reader connection of the event loops sees the last commit)"
    )
    func freshOnEveryConnection() async throws {
        typealias Raw = AssociationFastPathTests
        try await TestApp.live { app in
            try await app.createAccount(email: "fresh@example.com", password: "an old password")
            /// The status lines and bodies of a GET of `target` on each of `connections` connections at once.
            func getAtOnce(_ target: String, connections: Int = 16) async throws -> [String] {
                try await Self.offThePool {
                    try Self.concurrently(connections) { _ in
                        let answers = Raw.responses(
                            try Raw.exchange(
                                port: app.port, [Raw.request("GET", target), Raw.request("GET", "/healthz", ["Connection: close"])]))
                        return answers.first ?? ""
                    }
                }
            }
            for round in 0..<4 {
                let link = try await PageTests().link(app, "PASSWORD_RESET", "fresh@example.com", "en")
                let code = try #require(ActionCodeLink.parse("https://links.test.example" + link)?.oobCode)
                // Issued a moment ago: every connection gets the form with this code.
                let issued = try await getAtOnce(link)
                #expect(issued.count == 16)
                #expect(
                    issued.allSatisfy {
                        $0.hasPrefix("HTTP/1.1 200 OK") && $0.contains("name=\"password\"") && $0.contains("value=\"\(code)\"")
                    },
                    "round \(round): issued \(issued.map { $0.prefix(15) })")
                let reset = try await app.api("resetPassword", ["oobCode": code, "newPassword": "a brand new password \(round)"])
                #expect(reset.status == 200, "\(reset.text)")
                // Used a moment ago: no connection gets the form.
                let used = try await getAtOnce(link)
                #expect(used.count == 16)
                #expect(
                    used.allSatisfy { $0.hasPrefix("HTTP/1.1 400 ") && !$0.contains("name=\"password\"") && !$0.contains(code) },
                    "round \(round): used \(used.map { $0.prefix(15) })")
            }
        }
    }

    /// `body` on a thread of its own: blocking sockets never hold one of the pool's threads, which the
    /// server's own tasks need.
    static func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<T, any Error>) in
            Thread { done.resume(with: Result { try body() }) }.start()
        }
    }

    /// `body(index)` for each index below `count`, each on a thread of its own, all at once; the results in order.
    static func concurrently<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) throws -> T) throws -> [T] {
        let results = Mutex<[Int: Result<T, any Error>]>([:])
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread {
                let result = Result { try body(index) }
                results.withLock { $0[index] = result }
                group.leave()
            }.start()
        }
        group.wait()
        return try results.withLock { all in try (0..<count).map { try all[$0]!.get() } }
    }
}
