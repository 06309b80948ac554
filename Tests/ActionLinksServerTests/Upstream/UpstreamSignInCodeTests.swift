import ActionLinksEmail
import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// Sign-in codes in front of a Firebase project (docs/SIGN-IN-CODES.md): the front's
/// `sendOobCode` mails a sign-in link with a code derived from Google's `oobCode`, the front's
/// `signInCodes:exchange` hands the link back once, and the link completes with the upstream: a
/// production server as strict as Google (``StrictUpstream``), with the project's unrestricted key.
@Suite("Upstream mode: sign-in codes", .timeLimit(.minutes(5)))
struct UpstreamSignInCodeTests {
    typealias Upstream = UpstreamModeTests
    /// The key the app calls the front and the upstream with.
    static let key = StrictUpstream.unrestrictedKey

    /// The code in the last mail to `address` the front printed, read as `inspect` reads a mail.
    static func mailedCode(_ front: TestServer, to address: String) throws -> String {
        let mail = try #require(front.standardOutput.components(separatedBy: "--- mail to \(address):").last)
        let text = mail.components(separatedBy: "\n---\n").first ?? ""
        let found = SignInCodeFinder.codes(inText: text, part: nil, contentType: "text/plain")
        return try #require(found.first?.code, "no sign-in code in the mail: \(text)")
    }

    /// A client's exchange on the front.
    static func exchange(_ front: TestServer, email: String, code: String) async throws -> HTTPReply {
        try await front.post("/v1/signInCodes:exchange?key=\(key)", ["email": email, "code": code])
    }

    @Test(
        "the front's sign-in mail carries a code derived from Google's oobCode; the front's exchange gives the link as mailed once, and the link signs in upstream; a wrong code, a used one and another project's key are refused"
    )
    func frontExchange() async throws {
        let upstream = try await StrictUpstream.start()
        let front = try await Upstream.front(
            for: upstream, serviceAccount: try await Upstream.serviceAccount(of: upstream),
            environment: ["ACTIONLINKS_UPSTREAM_API_KEYS": Self.key])
        let email = "cody-upstream@example.com"

        let asked = try await front.api(
            "sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": email, "continueUrl": "https://app.example.com/finish"], key: Self.key)
        #expect(asked.status == 200 && asked.json["signInCode"] == nil, "a client is never answered the code: \(asked.text)")
        let link = try await Upstream.mailedLink(front, to: email)
        let code = try Self.mailedCode(front, to: email)
        #expect(code.count == 6 && code.allSatisfy(\.isNumber), "\(code)")

        let wrong = String(code.map { $0 == "9" ? "0" : Character(String(($0.wholeNumberValue ?? 0) + 1)) })
        let refused = try await Self.exchange(front, email: email, code: wrong)
        #expect(refused.status == 400 && refused.errorCode == "INVALID_SIGN_IN_CODE", "\(refused.text)")
        let unknown = try await Self.exchange(front, email: "nobody-upstream@example.com", code: code)
        #expect(unknown.status == 400 && unknown.errorCode == "INVALID_SIGN_IN_CODE", "\(unknown.text)")

        let exchanged = try await Self.exchange(front, email: email, code: String(code.prefix(3)) + " " + String(code.dropFirst(3)))
        #expect(exchanged.status == 200, "\(exchanged.text)")
        #expect(exchanged.json["emailLink"] as? String == link && exchanged.json["email"] as? String == email, "\(exchanged.text)")
        let again = try await Self.exchange(front, email: email, code: code)
        #expect(again.status == 400 && again.errorCode == "INVALID_SIGN_IN_CODE", "the code works once: \(again.text)")

        // The link completes with the upstream, which issued its oobCode: the SDK's signInWithEmailLink.
        let oobCode = try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "oobCode" }?.value)
        let signedIn = try await upstream.api("signInWithEmailLink", ["email": email, "oobCode": oobCode], key: Self.key)
        #expect(signedIn.status == 200 && signedIn.json["email"] as? String == email, "\(signedIn.text)")

        // The admin's returnOobLink gets the code with the link; another project's key no exchange.
        let admin = try await front.api(
            "sendOobCode",
            ["requestType": "EMAIL_SIGNIN", "email": email, "returnOobLink": true, "continueUrl": "https://app.example.com/finish"],
            admin: true)
        let adminCode = try #require(admin.json["signInCode"] as? String, "\(admin.text)")
        let adminLink = try #require(admin.json["oobLink"] as? String)
        let foreign = try await front.post("/v1/signInCodes:exchange?key=AIzaOther", ["email": email, "code": adminCode])
        #expect(foreign.status == 400 && foreign.text.contains("API key not valid"), "\(foreign.text)")
        let form = try await front.request(
            "POST", "/v1/signInCodes:exchange?key=\(Self.key)", body: Data("email=\(email)&code=\(adminCode)".utf8),
            headers: ["Content-Type": "application/x-www-form-urlencoded"])
        #expect(form.status == 415, "\(form.text)")
        let byAdmin = try await Self.exchange(front, email: email, code: adminCode)
        #expect(byAdmin.json["emailLink"] as? String == adminLink, "\(byAdmin.text)")
        #expect(!front.standardError.contains(oobCode), "codes never reach the log")
    }

    @Test(
        "a front's sign-in code dies with Google's link: once the link signed in upstream, the exchange is refused and the code is spent; while the link lives, the code gives it"
    )
    func diesWithGooglesLink() async throws {
        let upstream = try await StrictUpstream.start()
        let front = try await Upstream.front(
            for: upstream, serviceAccount: try await Upstream.serviceAccount(of: upstream),
            environment: ["ACTIONLINKS_UPSTREAM_API_KEYS": Self.key])
        let email = "dana-upstream@example.com"
        func signInCode() async throws -> (link: String, code: String) {
            let admin = try await front.api(
                "sendOobCode",
                ["requestType": "EMAIL_SIGNIN", "email": email, "returnOobLink": true, "continueUrl": "https://app.example.com/finish"],
                admin: true)
            return (try #require(admin.json["oobLink"] as? String, "\(admin.text)"), try #require(admin.json["signInCode"] as? String))
        }
        let first = try await signInCode()
        // The app signs in with the link itself, at Google, which the front never sees.
        let oobCode = try #require(URLComponents(string: first.link)?.queryItems?.first { $0.name == "oobCode" }?.value)
        let signedIn = try await upstream.api("signInWithEmailLink", ["email": email, "oobCode": oobCode], key: Self.key)
        #expect(signedIn.status == 200, "\(signedIn.text)")
        let dead = try await Self.exchange(front, email: email, code: first.code)
        #expect(dead.status == 400 && dead.errorCode == "INVALID_SIGN_IN_CODE", "\(dead.text)")
        // A live link's code still gives the link.
        let second = try await signInCode()
        let live = try await Self.exchange(front, email: email, code: second.code)
        #expect(live.json["emailLink"] as? String == second.link, "\(live.text)")
        // The dead one stays dead even if its link were checked no more.
        #expect(try await Self.exchange(front, email: email, code: first.code).errorCode == "INVALID_SIGN_IN_CODE")
    }
}
