import ActionLinksTestSupport
import Foundation
import GRDB
import Mustache
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// Sign-in codes end to end (docs/SIGN-IN-CODES.md): the code in the mail, on the
/// landing page and in the admin's answer, the exchange for the link as mailed, its refusals and
/// limits, and what the store keeps.
@Suite("Sign-in codes", .timeLimit(.minutes(5)))
struct SignInCodeTests {
    /// The code in a mail's text: the line of digit groups (bidi isolates dropped).
    static func code(in message: MailMessage) throws -> String {
        for line in message.text.split(separator: "\n") {
            let visible = line.filter { $0 != "\u{2066}" && $0 != "\u{2069}" }
            if visible.count >= 6, visible.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == " ") }) { return String(visible) }
        }
        throw TestSupportError("no sign-in code in the mail to \(message.to): \(message.text)")
    }

    /// A client's `signInCodes:exchange` call.
    static func exchange(
        _ app: some LinkDomainClient, email: String, code: String, tenant: String? = nil, prefix: String = "/v1",
        headers: [String: String] = [:]
    ) async throws -> HTTPReply {
        var fields = ["email": email, "code": code]
        if let tenant { fields["tenantId"] = tenant }
        return try await app.post("\(prefix)/signInCodes:exchange?key=\(TestProject.apiKey)", fields, headers: headers)
    }

    /// A client asks for a sign-in link for `email` (mailed); returns the mail's link and code.
    static func send(_ app: TestApp, _ email: String, tenant: String? = nil, language: String? = nil) async throws -> (
        link: String, code: String
    ) {
        let reply = try await app.api(
            "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": email], tenant: tenant,
            headers: language.map { ["X-Firebase-Locale": $0] } ?? [:])
        guard reply.status == 200 else { throw TestSupportError("sendOobCode: \(reply.text)") }
        let message = try await app.mailbox.next(to: email.lowercased())
        return (try Mailbox.link(in: message), try code(in: message))
    }

    /// The `oobCode` of a link.
    static func oobCode(_ link: String) throws -> String {
        try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "oobCode" }?.value)
    }

    /// Another six-digit code: `code`'s number plus `step`, modulo a million, with its leading zeros.
    static func shifted(_ code: String, by step: Int) -> String {
        let number = (Int(code.filter(\.isNumber))! + step) % 1_000_000
        let text = String(number)
        return String(repeating: "0", count: 6 - text.count) + text
    }

    static let refusal = #"{"error":{"code":400,"errors":[{"domain":"global","message":"INVALID_SIGN_IN_CODE"#

    @Test("the mail carries the code beside the link; the exchange gives back that link, once, and signInWithEmailLink completes with it")
    func exchangeOnce() async throws {
        try await TestApp.router { app in
            let (link, code) = try await Self.send(app, "Ann@Example.com")
            #expect(code.count == 7 && code.split(separator: " ").map(\.count) == [3, 3], "grouped: \(code)")
            let exchanged = try await Self.exchange(app, email: "ANN@example.com", code: code)
            #expect(exchanged.status == 200, "\(exchanged.text)")
            #expect(exchanged.json["emailLink"] as? String == link && exchanged.json["email"] as? String == "ann@example.com")
            #expect(Set(exchanged.json.keys) == ["emailLink", "email"])
            let again = try await Self.exchange(app, email: "ann@example.com", code: code)
            #expect(again.isError("INVALID_SIGN_IN_CODE"), "a code works once: \(again.text)")
            let signedIn = try await app.api("signInWithEmailLink", ["email": "ann@example.com", "oobCode": try Self.oobCode(link)])
            #expect(signedIn.status == 200 && signedIn.json["email"] as? String == "ann@example.com", "\(signedIn.text)")

            // Typed with a dash, under Google's host as a path; a newer link replaces the code.
            let older = try await Self.send(app, "bob@example.com")
            let newer = try await Self.send(app, "bob@example.com")
            #expect(
                try await Self.exchange(app, email: "bob@example.com", code: older.code).isError("INVALID_SIGN_IN_CODE")
                    || older.code == newer.code)
            let dashed = try await Self.exchange(
                app, email: "bob@example.com", code: newer.code.replacingOccurrences(of: " ", with: "-"),
                prefix: "/identitytoolkit.googleapis.com/v1")
            #expect(dashed.status == 200 && dashed.json["emailLink"] as? String == newer.link, "\(dashed.text)")
        }
    }

    @Test("the landing page shows the code its mail shows, while the code lives; the admin's returned link comes with it")
    func landingPage() async throws {
        let clock = ManualClock()
        try await TestApp.router(clock: clock) { app in
            try await app.createAccount(email: "page@example.com")
            let reply = try await app.api(
                "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "page@example.com", "returnOobLink": true], admin: true)
            let link = try #require(reply.json["oobLink"] as? String)
            let code = try #require(reply.json["signInCode"] as? String, "\(reply.text)")
            #expect(code.count == 6 && code.allSatisfy(\.isNumber))
            let page = try await app.request("GET", try app.local(link))
            #expect(page.status == 200)
            #expect(
                page.text.contains(#"<p class="sign-in-code"><span dir="ltr">\#(SignInCodes.grouped(code))</span></p>"#), "\(page.text)")
            #expect(page.text.contains("Type this code into the app that asked for the link:"))
            // The page and the mail of a link mailed to the same address show the same code.
            let mailed = try await Self.send(app, "page@example.com", language: "ja")
            let mailedPage = try await app.request("GET", try app.local(mailed.link))
            #expect(mailedPage.text.contains(">\(mailed.code)</span>"), "\(mailedPage.text)")
            #expect(mailedPage.text.contains("このコードを入力してください"))
            // Other modes show none.
            let reset = try await app.link("PASSWORD_RESET", email: "page@example.com")
            #expect(!(try await app.request("GET", try app.local(reset.link))).text.contains("sign-in-code"))
            // Past the code's lifetime the link still works, and its page shows no code.
            clock.advance(seconds: 15 * 60)
            let late = try await app.request("GET", try app.local(mailed.link))
            #expect(late.status == 200 && !late.text.contains("sign-in-code") && late.text.contains(#"name="oobCode""#), "\(late.text)")
        }
    }

    @Test("brute force: five wrong codes, and the sixth try is refused even with the right code, the same way")
    func bruteForce() async throws {
        // Ten wrong codes in all: within the address's day, so that only each code's tries count here.
        try await TestApp.router(environment: ["ACTIONLINKS_LIMITS_SIGN_IN_CODE_FAILURES_PER_ADDRESS_PER_DAY": "20"]) { app in
            let (link, code) = try await Self.send(app, "target@example.com")
            var bodies: Set<String> = []
            for step in 1...5 {
                let reply = try await Self.exchange(app, email: "target@example.com", code: Self.shifted(code, by: step))
                #expect(reply.isError("INVALID_SIGN_IN_CODE"), "\(reply.text)")
                bodies.insert(reply.text)
            }
            let right = try await Self.exchange(app, email: "target@example.com", code: code)
            #expect(right.isError("INVALID_SIGN_IN_CODE"), "the code is dead: \(right.text)")
            bodies.insert(right.text)
            #expect(bodies.count == 1 && bodies.first?.hasPrefix(Self.refusal) == true, "\(bodies)")
            // The link itself still works.
            let signedIn = try await app.api("signInWithEmailLink", ["email": "target@example.com", "oobCode": try Self.oobCode(link)])
            #expect(signedIn.status == 200, "\(signedIn.text)")
            // Four wrong tries leave the fifth to the right code.
            let next = try await Self.send(app, "target@example.com")
            for step in 1...4 {
                #expect(
                    try await Self.exchange(app, email: "target@example.com", code: Self.shifted(next.code, by: step)).isError(
                        "INVALID_SIGN_IN_CODE"))
            }
            #expect(try await Self.exchange(app, email: "target@example.com", code: next.code).status == 200)
        }
    }

    @Test("by the test clock: a code works until its lifetime is over, and never past its link's")
    func expiry() async throws {
        let clock = ManualClock()
        try await TestApp.router(clock: clock) { app in
            let early = try await Self.send(app, "early@example.com")
            let late = try await Self.send(app, "late@example.com")
            clock.advance(seconds: 15 * 60 - 1)
            #expect(try await Self.exchange(app, email: "early@example.com", code: early.code).status == 200)
            clock.advance(seconds: 1)
            #expect(try await Self.exchange(app, email: "late@example.com", code: late.code).isError("INVALID_SIGN_IN_CODE"))
        }
        // A link that lives ten minutes: so does its code (the default is shortened to fit).
        let short = ManualClock()
        try await TestApp.router(environment: ["ACTIONLINKS_CODES_LIFETIMES_SIGN_IN": "10m"], clock: short) { app in
            let sent = try await Self.send(app, "short@example.com")
            short.advance(seconds: 10 * 60)
            #expect(try await Self.exchange(app, email: "short@example.com", code: sent.code).isError("INVALID_SIGN_IN_CODE"))
        }
    }

    @Test("a code of another tenant, or of the project when a tenant is named, is refused as a wrong one")
    func otherTenant() async throws {
        try await TestApp.router { app in
            let tenant = try await app.registerEnabledTenant()
            let other = try await app.registerEnabledTenant()
            let sent = try await Self.send(app, "tenant@example.com", tenant: tenant)
            let wrong = try await Self.exchange(app, email: "tenant@example.com", code: Self.shifted(sent.code, by: 1), tenant: tenant)
            for refused in [
                try await Self.exchange(app, email: "tenant@example.com", code: sent.code, tenant: other),
                try await Self.exchange(app, email: "tenant@example.com", code: sent.code),
            ] {
                #expect(refused.isError("INVALID_SIGN_IN_CODE") && refused.text == wrong.text, "\(refused.text)")
            }
            let right = try await Self.exchange(app, email: "tenant@example.com", code: sent.code, tenant: tenant)
            #expect(right.status == 200 && right.json["emailLink"] as? String == sent.link, "\(right.text)")
            #expect(sent.link.contains("tenantId=\(tenant)"))
        }
    }

    @Test("an address that was sent nothing is answered as a wrong code is, byte for byte")
    func unknownAddress() async throws {
        try await TestApp.router { app in
            let sent = try await Self.send(app, "known@example.com")
            let known = try await Self.exchange(app, email: "known@example.com", code: Self.shifted(sent.code, by: 1))
            let unknown = try await Self.exchange(app, email: "unknown@example.com", code: sent.code)
            #expect(known.status == 400 && unknown.status == 400)
            #expect(known.text == unknown.text && known.text.hasPrefix(Self.refusal), "\(known.text) / \(unknown.text)")
            #expect(known.headers == unknown.headers)
        }
    }

    @Test("past the per-address or per-IP limit: 429 TOO_MANY_ATTEMPTS_TRY_LATER with Retry-After until the hour is over")
    func limits() async throws {
        // Ten seconds before an hour's window ends.
        let clock = ManualClock(start: Timestamp(seconds: 1_800_003_600 - 10))
        try await TestApp.live(
            environment: [
                "ACTIONLINKS_LIMITS_SIGN_IN_CODE_EXCHANGES_PER_ADDRESS_PER_HOUR": "3",
                "ACTIONLINKS_LIMITS_SIGN_IN_CODE_EXCHANGES_PER_IP_PER_HOUR": "5",
            ], clock: clock
        ) { app in
            let sent = try await Self.send(app, "limited@example.com")
            for _ in 0..<3 {
                #expect(try await Self.exchange(app, email: "limited@example.com", code: "000 000").status == 400)
            }
            let limited = try await Self.exchange(app, email: "limited@example.com", code: sent.code)
            #expect(limited.status == 429 && limited.errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER", "\(limited.text)")
            #expect(limited.header("Retry-After") == "10", "\(limited.headers)")
            // Another address from the same client: the client's fifth, then its limit.
            #expect(try await Self.exchange(app, email: "other@example.com", code: "000 000").status == 400)
            let perIP = try await Self.exchange(app, email: "other@example.com", code: "000 000")
            #expect(perIP.status == 429 && perIP.header("Retry-After") == "10", "\(perIP.text)")
            // The next hour: the limited tries were not counted against the code, which still works.
            clock.advance(seconds: 10)
            let right = try await Self.exchange(app, email: "limited@example.com", code: sent.code)
            #expect(right.status == 200 && right.json["emailLink"] as? String == sent.link, "\(right.text)")
        }
    }

    @Test("CORS: a page on an allowed origin may call the exchange, and read Retry-After")
    func cors() async throws {
        try await TestApp.router(
            environment: ["ACTIONLINKS_LIMITS_SIGN_IN_CODE_EXCHANGES_PER_ADDRESS_PER_HOUR": "1"], clock: ManualClock.midHour()
        ) {
            app in
            let origin = ["Origin": "https://app.example.com"]
            let preflight = try await app.request(
                "OPTIONS", "/v1/signInCodes:exchange?key=\(TestProject.apiKey)",
                headers: origin.merging(["Access-Control-Request-Method": "POST"]) { $1 })
            #expect(preflight.header("Access-Control-Allow-Origin") == "https://app.example.com")
            _ = try await Self.exchange(app, email: "cors@example.com", code: "123456", headers: origin)
            let limited = try await Self.exchange(app, email: "cors@example.com", code: "123456", headers: origin)
            #expect(limited.status == 429 && limited.header("Access-Control-Allow-Origin") == "https://app.example.com")
            #expect(limited.header("Access-Control-Expose-Headers") == "Retry-After")
            let foreign = try await Self.exchange(
                app, email: "cors@example.com", code: "123456", headers: ["Origin": "https://evil.example"])
            #expect(foreign.header("Access-Control-Allow-Origin") == nil)
            let keyless = try await app.request(
                "POST", "/v1/signInCodes:exchange", body: Data(#"{"email":"a@example.com","code":"123456"}"#.utf8),
                headers: ["Content-Type": "application/json"])
            #expect(keyless.status != 200)
        }
    }

    @Test("the mail in en, ru, ja and ar: the code grouped, with the line in the mail's language, left to right in Arabic too")
    func mailLanguages() async throws {
        let templates = try await PageTemplates(www: Repository.www)
        try await TestApp.router { app in
            for language in ["en", "ru", "ja", "ar"] {
                let email = "\(language)@example.com"
                _ = try await app.api(
                    "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": email], headers: ["X-Firebase-Locale": language])
                let message = try await app.mailbox.next(to: email)
                let code = try Self.code(in: message)
                let line = templates.text("signInCode.line", language)
                #expect(line != templates.text("signInCode.line", "en") || language == "en")
                let shown = language == "ar" ? "\u{2066}" + code + "\u{2069}" : code
                #expect(message.text.contains("\n\n" + line + "\n" + shown + "\n\n"), "\(language): \(message.text)")
                #expect(message.html.contains("<p>\(line)</p>"), "\(language)")
                #expect(message.html.contains(#"<span dir="ltr">\#(shown)</span>"#), "\(language)")
                #expect(message.html.contains(#"<html lang="\#(language)" dir="\#(language == "ar" ? "rtl" : "ltr")">"#))
            }
        }
    }

    @Test("digits: 0 sends today's mail byte for byte, shows no code, returns none, and has no exchange")
    func codesOff() async throws {
        let templates = try await PageTemplates(www: Repository.www)
        // Today's templates: the shipped ones without the sign-in code's section.
        func withoutCode(_ name: String) throws -> MustacheTemplate {
            let text = try String(contentsOfFile: Repository.www + "/mail/" + name, encoding: .utf8)
            let start = try #require(text.range(of: "{{#signInCode}}\n"))
            let end = try #require(text.range(of: "{{/signInCode}}\n"))
            return try MustacheTemplate(string: text.replacingCharacters(in: start.lowerBound..<end.upperBound, with: ""))
        }
        let html = try withoutCode("message.html.mustache")
        let text = try withoutCode("message.txt.mustache")
        #expect(text.render(["body": "B", "link": "L", "ignore": "I"]) == "B\n\nL\n\nI\n", "the text template before sign-in codes")
        try await TestApp.router(environment: ["ACTIONLINKS_CODES_SIGN_IN_CODE_DIGITS": "0"]) { app in
            for language in ["en", "ar"] {
                let email = "off-\(language)@example.com"
                _ = try await app.api(
                    "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": email], headers: ["X-Firebase-Locale": language])
                let message = try await app.mailbox.next(to: email)
                let link = try Mailbox.link(in: message)
                let values = ["appName": "Example App", "email": email]
                let names: [String: Any] = [
                    "lang": language, "dir": templates.direction(language), "link": link,
                    "subject": templates.text("mail.signIn.subject", language, values),
                    "body": templates.text("mail.signIn.body", language, values),
                    "button": templates.text("mail.signIn.button", language, values),
                    "ignore": templates.text("mail.ignore", language, values),
                ]
                #expect(message.text == text.render(names), "\(message.text)")
                #expect(message.html == html.render(names), "\(message.html)")
                #expect((try? Self.code(in: message)) == nil)
            }
            let returned = try await app.api(
                "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "off-en@example.com", "returnOobLink": true], admin: true)
            #expect(returned.status == 200 && returned.json["signInCode"] == nil, "\(returned.text)")
            let page = try await app.request("GET", try app.local(try #require(returned.json["oobLink"] as? String)))
            #expect(page.status == 200 && !page.text.contains("sign-in-code"))
            let exchange = try await Self.exchange(app, email: "off-en@example.com", code: "123456")
            #expect(exchange.isError("OPERATION_NOT_ALLOWED"), "\(exchange.text)")
        }
    }

    @Test("the store holds neither the code nor the link in clear", arguments: StoreFactory.kinds)
    func nothingInClear(kind: String) async throws {
        // Ten digits: a number that long does not turn up in the files by chance.
        var environment = ["ACTIONLINKS_CODES_SIGN_IN_CODE_DIGITS": "10"]
        let url = kind == "postgres" ? try await PostgresTestServer.freshDatabaseURL() : nil
        if let url { environment["ACTIONLINKS_STORE"] = url }
        try await TestApp.live(environment: environment) { app in
            var secrets: [String] = []
            for index in 0..<3 {
                let sent = try await Self.send(app, "secret\(index)@example.com")
                secrets += [sent.code, sent.code.filter(\.isNumber), sent.link, try Self.oobCode(sent.link)]
                if index == 2 { #expect(try await Self.exchange(app, email: "secret2@example.com", code: sent.code).status == 200) }
            }
            var stored: [Data] = []
            if let url {
                // Every row of every table, bytea as its bytes.
                let tables = try await PostgresTestServer.column(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()", url: url)
                #expect(tables.contains("sign_in_codes"))
                for table in tables {
                    stored += try await PostgresTestServer.column("SELECT row_to_json(t)::text FROM \(table) t", url: url).map {
                        Data($0.utf8)
                    }
                }
                let rows = try await PostgresTestServer.column(
                    "SELECT encode(mac, 'hex') || encode(sealed_link, 'hex') FROM sign_in_codes", url: url)
                // The two codes never exchanged are there; the used one too, unless the server has
                // been up a minute on a loaded machine and its purge (a minute after start) took it.
                let unused = try await PostgresTestServer.column("SELECT count(*)::text FROM sign_in_codes WHERE used_at IS NULL", url: url)
                #expect(unused == ["2"] && (2...3).contains(rows.count), "\(unused) \(rows.count)")
                stored += rows.map { Self.bytes(hex: $0) }
            } else {
                for name in ["actionlinks.sqlite", "actionlinks.sqlite-wal"] {
                    if let data = FileManager.default.contents(atPath: app.dataDirectory.appendingPathComponent(name).path) {
                        stored.append(data)
                    }
                }
                #expect(stored.reduce(0) { $0 + $1.count } > 0)
                let database = try DatabaseQueue(path: app.dataDirectory.appendingPathComponent("actionlinks.sqlite").path)
                #expect(try await database.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM sign_in_codes") } == 3)
            }
            for data in stored {
                for secret in secrets { #expect(data.range(of: Data(secret.utf8)) == nil, "\(kind) stores \(secret) in clear") }
            }
        }
    }

    static func bytes(hex: String) -> Data {
        var data = Data()
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            data.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return data
    }
}
