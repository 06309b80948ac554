import ActionLinksTestSupport
import Foundation
import Testing

/// `actionlinks inspect` on whole emails: files, standard input, formats, exit status and JSON.
@Suite("inspect on emails", .timeLimit(.minutes(5)))
struct InspectEmailCLITests {
    static func fixture(_ name: String) -> String {
        Repository.root.appendingPathComponent("Tests/ActionLinksEmailTests/Fixtures/\(name)").path
    }

    @Test("an .eml file: one result per link with its source, and a document summary")
    func emlJSON() async throws {
        let run = try await Command.run([
            "inspect", "--json", "--config", Repository.configFile, Self.fixture("multipart-alternative-ru.eml"),
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.results.count == 2)
        let sources = run.results.compactMap { $0["source"] as? [String: Any] }
        #expect(sources.map { $0["part"] as? String } == ["1", "2"])
        #expect(sources.map { $0["line"] as? Int } == [4, 3])
        #expect(sources.map { $0["contentType"] as? String } == ["text/plain", "text/html"])
        #expect(sources.map { $0["origin"] as? String } == ["plainText", "anchor"])
        #expect(run.results.map { $0["verdict"] as? String } == ["validActionLink", "validActionLink"])
        #expect(run.results.map { $0["continueUrlAllowed"] as? Bool } == [true, true])
        #expect(run.results[1]["text"] as? String == "Подтвердить адрес")
        #expect(run.results[0]["text"] is NSNull)
        #expect((run.results[0]["action"] as? [String: Any])?["mode"] as? String == "verifyEmail")
        let documents = try #require(run.json?["documents"] as? [[String: Any]])
        #expect(documents.first?["format"] as? String == "eml")
        #expect(documents.first?["subject"] as? String == "Подтвердите адрес электронной почты")
        #expect((documents.first?["summary"] as? [String: Any])?["validActionLinks"] as? Int == 2)
    }

    @Test("rewriting layers: the chain starts at the link as found, the target is the unwrapped link")
    func rewritingJSON() async throws {
        let run = try await Command.run(["inspect", "--json", Self.fixture("safelinks-signin.eml")])
        #expect(run.status == 0, "\(run.stderr)")
        let result = try #require(run.results.first)
        let rewriting = try #require(result["rewriting"] as? [[String: Any]])
        #expect(rewriting.map { $0["kind"] as? String } == ["safeLinks"])
        #expect(rewriting.first?["innerParameter"] as? String == "url")
        #expect(rewriting.first?["opaque"] as? Bool == false)
        let chain = try #require(result["chain"] as? [String])
        #expect(chain.first == result["input"] as? String)
        #expect(chain.last == result["target"] as? String)
        #expect((result["target"] as? String)?.hasPrefix("https://links.example.com/__/auth/action?mode=signIn") == true)
    }

    @Test("an opaque click tracker is reported as hiding the target, with the reason")
    func opaqueTracker() async throws {
        let json = try await Command.run(["inspect", "--json", Self.fixture("sendgrid-tracked.html")])
        #expect(json.status == 0, "\(json.stderr)")
        let first = try #require(json.results.first)
        #expect(first["verdict"] as? String == "hiddenByRewriter")
        #expect(first["target"] is NSNull)
        #expect((first["error"] as? [String: Any])?["code"] as? String == "hiddenByRewriter")
        let notes = first["notes"] as? [String] ?? []
        #expect(notes.contains { $0.contains("does not open the app") })

        let human = try await Command.run(["inspect", Self.fixture("sendgrid-tracked.html")])
        #expect(human.stdout.contains("rewriter 1: SendGrid click tracking; the target is hidden"))
        #expect(human.stdout.contains("summary  3 links: 1 valid action link, 1 hidden by a rewriter, 1 other link"))
    }

    @Test("with --aasa and --app, each link says whether the URL as tapped opens the app")
    func opensApp() async throws {
        let aasa = TestProject.temporaryDirectory("actionlinks").appendingPathExtension("json")
        defer { try? FileManager.default.removeItem(at: aasa) }
        let generated = try await Command.run(["aasa", "generate", "--config", Repository.configFile])
        try generated.stdout.write(to: aasa, atomically: true, encoding: .utf8)
        let app = ["--aasa", aasa.path, "--app", "ABCDE12345.com.example.app"]

        let wrapped = try await Command.run(["inspect", "--json"] + app + [Self.fixture("safelinks-signin.eml")])
        #expect((wrapped.results.first?["opensApp"] as? [String: Any])?["ios"] as? Bool == false)
        let direct = try await Command.run(["inspect", "--json"] + app + [Self.fixture("postmark-bulletproof.html")])
        #expect(direct.results.prefix(2).map { ($0["opensApp"] as? [String: Any])?["ios"] as? Bool } == [true, true])
        #expect((direct.results.first?["appleAppSiteAssociation"] as? [[String: Any]])?.count == 2)
        let human = try await Command.run(["inspect"] + app + [Self.fixture("safelinks-signin.eml")])
        #expect(
            human.stdout.contains(
                "iOS      does not open the app: URL host \"eur02.safelinks.protection.outlook.com\" is not \"links.example.com\""))
    }

    @Test("a broken action link or a refused continue URL in an email exits 1")
    func exitStatus() async throws {
        let bad = try await Command.run(["inspect", "--config", Repository.configFile, Self.fixture("invalid-links.html")])
        #expect(bad.status == 1)
        #expect(bad.stdout.contains("verdict  BROKEN action link"))
        #expect(bad.stdout.contains("mode 'signin' is not known"))
        let good = try await Command.run(["inspect", "--config", Repository.configFile, Self.fixture("firebase-default.html")])
        #expect(good.status == 0, "\(good.stderr)")
    }

    @Test("standard input: a whole email is recognised; --format-in overrides; a list of links stays a list")
    func standardInput() async throws {
        let email = try String(contentsOfFile: Self.fixture("iso-2022-jp-base64.eml"), encoding: .utf8)
        let detected = try await Command.run(["inspect", "--json", "-"], stdin: email)
        #expect(detected.status == 0, "\(detected.stderr)")
        #expect(detected.results.count == 1)
        #expect((detected.results.first?["source"] as? [String: Any])?["input"] as? String == "-")
        #expect((detected.json?["documents"] as? [[String: Any]])?.first?["format"] as? String == "eml")

        let html = "<p>Reset: <a href=\"https://links.example.com/__/auth/action?mode=resetPassword&amp;oobCode=R1\">here</a></p>"
        let forced = try await Command.run(["inspect", "--json", "--format-in", "text", "-"], stdin: html)
        #expect(forced.results.first?["input"] as? String == "https://links.example.com/__/auth/action?mode=resetPassword&amp;oobCode=R1")
        let asHTML = try await Command.run(["inspect", "--json", "--format-in", "html", "-"], stdin: html)
        #expect(asHTML.results.first?["input"] as? String == "https://links.example.com/__/auth/action?mode=resetPassword&oobCode=R1")
        #expect(asHTML.results.first?["text"] as? String == "here")

        let list = try await Command.run(["inspect", "--json", "-"], stdin: "https://a.example.com/x\nhttps://b.example.com/y\n")
        #expect(list.results.map { $0["input"] as? String } == ["https://a.example.com/x", "https://b.example.com/y"])
        #expect(list.json?["documents"] == nil)
    }

    @Test("links and files mix; a missing email file is an error that names it")
    func mixed() async throws {
        let run = try await Command.run(["inspect", "--json", "https://x.example.com/", Self.fixture("firebase-default.html")])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.results.count == 2)
        #expect(run.results[0]["source"] == nil)
        #expect(run.results[1]["source"] is [String: Any])

        let missing = try await Command.run(["inspect", "no-such-message.eml"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no-such-message.eml: no such file"))
        let forcedMissing = try await Command.run(["inspect", "--format-in", "eml", "no-such-file"])
        #expect(forcedMissing.status == 1)
        #expect(forcedMissing.stderr.contains("no-such-file: cannot read the file"))
    }
}

/// `inspect` on a sign-in mail exactly as the server sends it (its sendmail backend's message).
@Suite("inspect on a sign-in mail", .timeLimit(.minutes(5)))
struct InspectSignInCodeTests {
    @Test("the code line is found in the text and the HTML part, explained, and is the code the server exchanges", arguments: ["en", "ar"])
    func signInCodeLine(language: String) async throws {
        let folder = TestProject.temporaryDirectory("actionlinks-sendmail")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let script = folder.appendingPathComponent("fake-sendmail")
        try "#!/bin/sh\ncat > \"$(dirname \"$0\")/message.eml\"\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let file = folder.appendingPathComponent("message.eml")
        try await TestApp.router(
            environment: ["ACTIONLINKS_MAIL_BACKEND": "sendmail", "ACTIONLINKS_MAIL_SENDMAIL_COMMAND": script.path + " -t -i"],
            mail: .configuredBackend
        ) { app in
            let sent = try await app.api(
                "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "pia@example.com"], headers: ["X-Firebase-Locale": language])
            #expect(sent.status == 200)
            try await Eventually.wait(for: "sendmail to write the message") {
                // The whole message: it ends with the closing boundary.
                ((try? String(contentsOf: file, encoding: .utf8)) ?? "").hasSuffix("--\r\n")
            }
            let json = try await Command.run(["inspect", "--json", file.path])
            #expect(json.status == 0, "\(json.stderr)")
            let document = try #require((json.json?["documents"] as? [[String: Any]])?.first)
            let codes = try #require(document["signInCodes"] as? [[String: Any]])
            #expect(codes.map { $0["contentType"] as? String } == ["text/plain", "text/html"], "\(codes)")
            let code = try #require(codes.first?["code"] as? String)
            let shown = try #require(codes.first?["shown"] as? String)
            #expect(code.count == 6 && shown == String(code.prefix(3)) + " " + String(code.suffix(3)))
            #expect(codes.allSatisfy { $0["code"] as? String == code && $0["shown"] as? String == shown })
            let sentence = try #require(codes.first?["sentence"] as? String)
            #expect(sentence.hasSuffix(":") && (language == "en") == sentence.hasPrefix("Signing in on another device?"), "\(sentence)")

            let human = try await Command.run(["inspect", file.path])
            #expect(human.status == 0)
            #expect(human.stdout.contains("Sign-in code  \(shown) (6 digits) — part 1 (text/plain), line "), "\(human.stdout)")
            #expect(human.stdout.contains("POST /v1/signInCodes:exchange?key=<API key>"))
            #expect(human.stdout.contains("  after    \"\(sentence)\""))

            // It is the code: the server exchanges it for the mail's link.
            let exchange = try await app.post(
                "/v1/signInCodes:exchange?key=\(TestProject.apiKey)", ["email": "pia@example.com", "code": code])
            #expect(exchange.status == 200, "\(exchange.text)")
            let link = try #require(exchange.json["emailLink"] as? String)
            #expect(json.results.first?["input"] as? String == link)
        }
    }

    @Test("a mail without a sign-in link has no code line, whatever digits it holds")
    func otherMails() async throws {
        let text = "Your order 123 456 is on its way.\n\nhttps://links.example.com/__/auth/action?mode=resetPassword&oobCode=abc&apiKey=k\n"
        let run = try await Command.run(["inspect", "--json", "--format-in", "text", "-"], stdin: text)
        #expect(run.status == 0, "\(run.stderr)")
        #expect((run.json?["documents"] as? [[String: Any]])?.first?["signInCodes"] as? [Any] != nil)
        #expect(((run.json?["documents"] as? [[String: Any]])?.first?["signInCodes"] as? [Any])?.isEmpty == true)
    }
}
