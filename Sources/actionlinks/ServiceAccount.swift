import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksServer
import ArgumentParser
import Foundation

extension ActionLinksCommand {
    /// `actionlinks service-account`: a key pair for custom tokens.
    struct ServiceAccount: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "service-account",
            abstract: "Make a service-account key whose custom tokens the server accepts.",
            discussion: """
                Writes a Google service-account JSON file (--out, mode 0600) that firebase-admin loads with \
                credentials.Certificate(...) so that auth.create_custom_token(uid) mints RS256 tokens, and keeps the \
                public half in <dataDirectory>/keys/service-accounts/, where a running server finds it without a \
                restart. Keep the file secret: whoever has it signs in as any user. \
                Its token_uri is Google's unless --token-uri names this server's (https://<link domain>/token): \
                the server then grants access tokens for the key (the JWT-bearer grant), each an admin credential \
                for an hour, so one ActionLinks can be another's upstream.
                """
        )

        @Option(name: .long, help: "The configuration file (for the data directory and the project ID).")
        var config: String = ActionLinksConfiguration.defaultFile

        @Option(name: .long, help: "Where to write the service-account file.")
        var out: String

        @Option(name: .long, help: "The account's name (the part of its address before @).")
        var name: String = "actionlinks"

        @Option(name: .customLong("token-uri"), help: "The file's token_uri: where google-auth exchanges the key for access tokens.")
        var tokenURI: String = ServiceAccountFile.googleTokenURI

        func validate() throws {
            guard UpstreamSettings.checkedURL(tokenURI) != nil else {
                throw ValidationError(
                    "--token-uri must be an https URL (http only for a loopback host), such as https://links.example.com/token; got '\(tokenURI)'"
                )
            }
            guard name.range(of: "^[a-z][a-z0-9-]{2,29}$", options: .regularExpression) != nil else {
                throw ValidationError(
                    "--name must be 3 to 30 lower-case letters, digits and hyphens, starting with a letter; got '\(name)'")
            }
        }

        func run() async throws {
            let configuration = try ActionLinksConfiguration.load(file: config, environment: ProcessInfo.processInfo.environment)
            let settings = configuration.service
            let made = try ServiceAccountFile.make(
                dataDirectory: settings.dataDirectory, projectID: settings.project.id, name: name, output: out, tokenURI: tokenURI)
            print("wrote \(out) (key \(made.keyID), \(made.clientEmail)); public key kept in \(made.publicKeyPath)")
        }
    }
}
