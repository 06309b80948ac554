import ActionLinks
import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore

extension ActionLinksCommand {
    /// `actionlinks generate`: asks a running server for a link, as an admin.
    struct Generate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a link on a running server (as the admin) and print it.",
            discussion: """
                Calls accounts:sendOobCode with returnOobLink, so nothing is emailed. The admin token is \
                --admin-token or ACTIONLINKS_ADMIN_TOKEN ('owner' on a development server). \
                Exit status: 0 when a link was issued, 1 when the server refused (its error is printed).
                """
        )

        @Option(help: "The server's base URL.")
        var server: String = "http://127.0.0.1:8080"

        @Option(help: "The admin token (default: $ACTIONLINKS_ADMIN_TOKEN).")
        var adminToken: String?

        @Option(help: "The mode: signIn, resetPassword, verifyEmail or verifyAndChangeEmail.")
        var mode: String

        @Option(help: "The account's email address.")
        var email: String

        @Option(help: "The new address (verifyAndChangeEmail).")
        var newEmail: String?

        @Option(help: "The continue URL (required for signIn; checked against the server's allow-list).")
        var continueUrl: String?

        @Option(help: "The tenant.")
        var tenant: String?

        @Option(help: "An iOS bundle ID: ask for a mobile link the app handles.")
        var iosBundleId: String?

        @Option(help: "An Android package name: ask for a mobile link the app handles.")
        var androidPackageName: String?

        @Option(help: "The language of the link (X-Firebase-Locale).")
        var lang: String?

        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard let mode = ActionCodeLink.Mode(rawValue: mode),
                [.signIn, .resetPassword, .verifyEmail, .verifyAndChangeEmail].contains(mode)
            else { throw ValidationError("--mode must be signIn, resetPassword, verifyEmail or verifyAndChangeEmail; got '\(mode)'") }
            if mode == .verifyAndChangeEmail, newEmail == nil { throw ValidationError("--mode verifyAndChangeEmail needs --new-email") }
            guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ValidationError("--server must be an http(s) URL such as http://127.0.0.1:8080; got '\(server)'")
            }
            if (adminToken ?? ProcessInfo.processInfo.environment["ACTIONLINKS_ADMIN_TOKEN"]) == nil {
                throw ValidationError(
                    "give the admin token with --admin-token or ACTIONLINKS_ADMIN_TOKEN ('owner' on a development server)")
            }
        }

        /// What `--json` prints.
        struct Output: Codable {
            var link: String
            var oobCode: String
            var email: String
            var mode: String
        }

        func run() async throws {
            let mode = ActionCodeLink.Mode(rawValue: mode)!
            var fields: [String: Any] = ["requestType": mode.requestType, "email": email, "returnOobLink": true]
            if let newEmail { fields["newEmail"] = newEmail }
            if let continueUrl { fields["continueUrl"] = continueUrl }
            if let iosBundleId { fields["iOSBundleId"] = iosBundleId }
            if let androidPackageName { fields["androidPackageName"] = androidPackageName }
            if iosBundleId != nil || androidPackageName != nil { fields["canHandleCodeInApp"] = true }
            if let tenant { fields["tenantId"] = tenant }
            let base = server.hasSuffix("/") ? String(server.dropLast()) : server
            var request = HTTPClientRequest(url: base + "/v1/accounts:sendOobCode")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(
                name: "Authorization",
                value: "Bearer " + (adminToken ?? ProcessInfo.processInfo.environment["ACTIONLINKS_ADMIN_TOKEN"] ?? ""))
            if let lang { request.headers.add(name: "X-Firebase-Locale", value: lang) }
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: fields)))
            let answer: CommandHTTP.Answer
            do {
                answer = try await CommandHTTP.exchange(request, timeout: .seconds(30), followingRedirects: true, upTo: 1 << 20)
            } catch {
                printError("error: cannot reach \(base): \(CommandHTTP.describe(error))")
                throw ExitCode(1)
            }
            let body = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any] ?? [:]
            guard answer.status == 200, let link = body["oobLink"] as? String,
                let code = body["oobCode"] as? String
            else {
                let message =
                    (body["error"] as? [String: Any])?["message"] as? String ?? String(decoding: answer.body.prefix(500), as: UTF8.self)
                printError("error: the server refused: \(message)")
                throw ExitCode(1)
            }
            if output.json {
                try printJSON(Output(link: link, oobCode: code, email: body["email"] as? String ?? email, mode: mode.rawValue))
            } else {
                print(link)
            }
        }
    }
}
