import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The landing pages answered on the event loop (SQLite) are byte for byte what the responder answers.
@Suite("Action page fast path", .timeLimit(.minutes(5)))
struct ActionPageFastPathTests {
    typealias Raw = AssociationFastPathTests

    /// The JSON body of a raw answer.
    static func json(_ answer: String) throws -> [String: Any] {
        let body = try #require(answer.components(separatedBy: "\r\n\r\n").last)
        return try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
    }

    /// A POST with a JSON body as the admin.
    static func admin(_ target: String, _ body: String) -> String {
        Raw.request(
            "POST", target, ["Authorization: Bearer owner", "Content-Type: application/json", "Content-Length: \(body.utf8.count)"])
            + body
    }

    /// The answer without what changes from one second to the next (`Date`, the form token's time and MAC).
    static func stable(_ answer: String) -> String {
        answer.replacing(/name="form" value="[^"]*"/, with: #"name="form" value="…""#)
    }

    @Test("every landing outcome (forms, refusals, the sign-in redirect, languages) is the responder's")
    func sameAnswers() async throws {
        try await AssociationFastPathTests().withServer { port in
            let setup = Raw.responses(
                try Raw.exchange(
                    port: port,
                    [
                        Self.admin("/v1/projects/demo-actionlinks/accounts", #"{"email":"fast@example.com"}"#),
                        Self.admin(
                            "/v1/accounts:sendOobCode", #"{"requestType":"PASSWORD_RESET","email":"fast@example.com","returnOobLink":true}"#
                        ),
                        Self.admin(
                            "/v1/accounts:sendOobCode", #"{"requestType":"VERIFY_EMAIL","email":"fast@example.com","returnOobLink":true}"#),
                        Self.admin(
                            "/v1/accounts:sendOobCode",
                            #"{"requestType":"EMAIL_SIGNIN","email":"new@example.com","continueUrl":"https://app.example.com/a?b=1#c","returnOobLink":true}"#
                        ),
                        // A sign-in link with no continue URL: its page, with the sign-in code.
                        Self.admin(
                            "/v1/accounts:sendOobCode", #"{"requestType":"EMAIL_SIGNIN","email":"fast@example.com","returnOobLink":true}"#),
                        Raw.request("GET", "/healthz", ["Connection: close"]),
                    ]))
            #expect(setup.count == 6)
            guard setup.count == 6 else { return }
            var targets: [String] = []
            for answer in setup[1...4] {
                let link = try #require(try Self.json(answer)["oobLink"] as? String)
                let target = "/" + link.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)[3]
                targets += [target, target + "&lang=ar", target + "&lang=ja-JP"]
            }
            let reset = targets[0]
            targets += [
                reset.replacingOccurrences(of: "apiKey=demo-api-key", with: "apiKey=another"),
                reset.replacingOccurrences(of: "mode=resetPassword", with: "mode=verifyEmail"),
                "/__/auth/action?mode=resetPassword&oobCode=" + String(repeating: "A", count: 43), "/__/auth/action", "/__/auth/action?",
                "/__/auth/action?mode=resetPassword&oobCode=%zz", reset + "&tenantId=other",
            ]
            for target in targets {
                for headers in [[], ["Accept-Language: ru-RU,ru;q=0.9"], ["Accept-Language: ar, ja;q=0.5"]] {
                    // Without a Connection header the fast path answers; with one, the responder does.
                    let answers = Raw.responses(
                        try Raw.exchange(
                            port: port,
                            [
                                Raw.request("GET", target, headers), Raw.request("GET", target, headers + ["Connection: keep-alive"]),
                                Raw.request("GET", "/healthz", ["Connection: close"]),
                            ]))
                    #expect(answers.count == 3, "\(target)")
                    guard answers.count == 3 else { continue }
                    #expect(Self.stable(answers[0]) == Self.stable(answers[1]), "\(target) \(headers)")
                }
            }
            // The sign-in page shows the code the admin's answer returned, on both paths.
            let signIn = try Self.json(setup[4])
            let code = try #require(signIn["signInCode"] as? String)
            let signInTarget =
                "/" + (try #require(signIn["oobLink"] as? String)).split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)[3]
            let grouped = String(code.prefix(3)) + " " + String(code.suffix(3))
            let pages = Raw.responses(
                try Raw.exchange(
                    port: port,
                    [Raw.request("GET", signInTarget, []), Raw.request("GET", signInTarget, ["Connection: close"])]))
            #expect(pages.count == 2 && pages.allSatisfy { $0.contains(#"<span dir="ltr">\#(grouped)</span>"#) }, "\(pages)")
            // The links still work: a GET consumes nothing.
            let again = Raw.responses(try Raw.exchange(port: port, [Raw.request("GET", reset, ["Connection: close"])]))
            #expect(again.first?.hasPrefix("HTTP/1.1 200 OK") == true)
        }
    }
}
