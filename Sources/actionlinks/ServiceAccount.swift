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

    /// `actionlinks keys rotate`: a new ID-token signing key.
    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Manage the keys that sign ID tokens, and revoke service-account keys.",
            subcommands: [Rotate.self, Speed.self, Revoke.self]
        )

        /// `<dataDirectory>/keys/<name>` for the configuration file `config`.
        static func folder(_ name: String, config: String) throws -> String {
            let configuration = try ActionLinksConfiguration.load(file: config, environment: ProcessInfo.processInfo.environment)
            return ((configuration.service.dataDirectory as NSString).appendingPathComponent("keys") as NSString).appendingPathComponent(
                name)
        }

        /// `actionlinks keys revoke <key id>`: a service-account key that must stop working now.
        struct Revoke: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Revoke a service-account key: its custom tokens, assertions and access tokens stop working.",
                discussion: """
                    The key ID is the private_key_id of the service-account file (and the kid of its tokens). The \
                    public key moves to <dataDirectory>/keys/service-accounts/revoked/, where a marker keeps it revoked \
                    even if the file comes back. Running servers that share the data directory refuse the key, the \
                    custom tokens and assertions it signed and the access tokens granted for it within two seconds; \
                    no restart is needed. Then delete the service-account file wherever it was copied.
                    """
            )

            @Argument(help: "The key's ID (private_key_id).")
            var keyID: String

            @Option(name: .long, help: "The configuration file (for the data directory).")
            var config: String = ActionLinksConfiguration.defaultFile

            func run() async throws {
                let directory = try Keys.folder("service-accounts", config: config)
                let done = try ServiceAccountKeys.revoke(keyID, in: directory)
                if done.movedFiles.isEmpty {
                    print("key \(keyID) was revoked already")
                } else {
                    print("revoked key \(keyID): moved \(done.movedFiles.joined(separator: ", "))")
                }
            }
        }

        /// `actionlinks keys speed`: how fast this machine makes the signature of an ID token.
        struct Speed: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Measure the CPU time of one RSA-2048 ID-token signature, as the server makes it.",
                discussion: """
                    Signs SHA-256 digests with a new 2048-bit key (PKCS #1 v1.5, RS256's signature, with the \
                    library the server signs with) for about --seconds of this thread's CPU time, and prints the \
                    rate and the time per signature. scripts/bench.sh compares a token refresh's CPU time with it.
                    """
            )

            @Option(name: .long, help: "Seconds of CPU time to sign for.")
            var seconds: Double = 2

            func run() async throws {
                let (perSecond, microseconds) = try SigningKeys.signatureSpeed(cpuSeconds: seconds)
                print("rsa2048 sign: \(Int(perSecond)) per CPU second, \(Int(microseconds.rounded())) us each")
            }
        }

        struct Rotate: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Make a new ID-token signing key; running servers sign with it within ten minutes.",
                discussion: """
                    The older keys stay published in /.well-known/jwks.json (and accepted) until every token they \
                    signed has expired. With several instances, copy keys/id-tokens/ to every one of them.
                    """
            )

            @Option(name: .long, help: "The configuration file (for the data directory).")
            var config: String = ActionLinksConfiguration.defaultFile

            func run() async throws {
                let directory = try Keys.folder("id-tokens", config: config)
                let id = try SigningKeys(directory: directory).rotate(now: .now)
                print("new signing key \(id) in \(directory)")
            }
        }
    }
}
