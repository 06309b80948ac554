import ActionLinksConfiguration
import ActionLinksDomain
import ArgumentParser
import Foundation

extension ActionLinksCommand {
    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make the keys instances share, rotate the keys that sign ID tokens, and revoke service-account keys.",
            subcommands: [Init.self, Rotate.self, Speed.self, Revoke.self]
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

        /// `actionlinks keys init`: the key set every instance of a deployment shares.
        struct Init: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Make the one secret every instance shares: the code, form and ID-token keys, as JSON.",
                discussion: """
                    Prints a new key set (or, with --from-data-directory, the keys a data directory already holds, \
                    so that links, forms and tokens in flight stay valid). Store it as one secret and point keys.file \
                    at where it is mounted (or put it in ACTIONLINKS_KEYS_JSON):
                      actionlinks keys init --output keys.json
                      gcloud secrets create actionlinks-keys --data-file=keys.json
                      kubectl create secret generic actionlinks-keys --from-file=keys.json
                    Then delete keys.json: whoever reads it can forge links, forms and ID tokens.
                    """
            )

            @Option(name: .long, help: "Pack the keys under this data directory instead of making new ones.")
            var fromDataDirectory: String?

            @Option(name: .long, help: "Write the set to this file (made 0600) instead of standard output.")
            var output: String?

            func run() async throws {
                let set = try fromDataDirectory.map { try KeySet.read(dataDirectory: $0) } ?? KeySet.make(now: .now)
                try Keys.write(set, to: output)
            }
        }

        /// Writes `set` to `path` (a new file, 0600), or to standard output.
        static func write(_ set: KeySet, to path: String?) throws {
            let json = try set.json() + Data("\n".utf8)
            guard let path else {
                FileHandle.standardOutput.write(json)
                return
            }
            guard try PrivateFiles.createFile(path, contents: json) else {
                throw ValidationError("\(path) exists: the set is written to a new file only, so a secret is never overwritten")
            }
        }

        /// `actionlinks keys rotate`: a new ID-token signing key.
        struct Rotate: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Make a new ID-token signing key; running servers sign with it within ten minutes.",
                discussion: """
                    The older keys stay published in /.well-known/jwks.json (and accepted) until every token they \
                    signed has expired. With --key-set, reads a shared key set and prints it with the new key (keys \
                    no longer needed left out): store that as the secret's new version; every instance re-reads \
                    keys.file when it changes and signs with the new key.
                    """
            )

            @Option(name: .long, help: "The configuration file (for the data directory).")
            var config: String = ActionLinksConfiguration.defaultFile

            @Option(name: .long, help: "A key set file (keys init) to rotate instead of the data directory's keys.")
            var keySet: String?

            @Option(name: .long, help: "With --key-set: write the new set to this file (made 0600) instead of standard output.")
            var output: String?

            func run() async throws {
                if let keySet {
                    try Keys.write(try KeySetSource.file(keySet).read().rotated(now: .now), to: output)
                    return
                }
                let directory = try Keys.folder("id-tokens", config: config)
                let id = try SigningKeys.rotate(in: directory, now: .now)
                print("new signing key \(id) in \(directory)")
            }
        }
    }
}
