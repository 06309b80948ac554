import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore

extension ActionLinksCommand {
    /// `actionlinks users`: moving users in and out, in the format `firebase auth:export` writes.
    struct Users: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import users exported from Firebase, or export this server's users in the same format.",
            subcommands: [Import.self, Export.self]
        )
    }
}

/// Where the server is and how to be its admin.
struct ServerOptions: ParsableArguments {
    @Option(help: "The server's base URL.")
    var server: String = "http://127.0.0.1:8080"

    @Option(help: "The admin token (default: $ACTIONLINKS_ADMIN_TOKEN; 'owner' on a development server).")
    var adminToken: String?

    @Option(help: "The project ID in the server's configuration.")
    var project: String = "demo-actionlinks"

    @Option(help: "The tenant to import into or export from.")
    var tenant: String?

    func validate() throws {
        guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ValidationError("--server must be an http(s) URL such as http://127.0.0.1:8080; got '\(server)'")
        }
        if token == nil { throw ValidationError("give the admin token with --admin-token or ACTIONLINKS_ADMIN_TOKEN") }
    }

    var token: String? { adminToken ?? ProcessInfo.processInfo.environment["ACTIONLINKS_ADMIN_TOKEN"] }

    /// `<server>/v1/projects/<p>[/tenants/<t>]/accounts:<operation>`.
    func url(_ operation: String, query: String = "") -> URL {
        let base = server.hasSuffix("/") ? String(server.dropLast()) : server
        let tenantPath = tenant.map { "/tenants/\($0)" } ?? ""
        return URL(string: "\(base)/v1/projects/\(project)\(tenantPath)/accounts:\(operation)\(query)")!
    }

    /// Calls the server as the admin; throws with the server's own message when it refuses.
    func call(_ url: URL, method: String, body: Data? = nil) async throws -> Data {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .init(rawValue: method)
        request.headers.add(name: "Authorization", value: "Bearer " + (token ?? ""))
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let answer: CommandHTTP.Answer
        do {
            // A page of accounts:batchGet is 1000 users.
            answer = try await CommandHTTP.exchange(request, timeout: .seconds(120), followingRedirects: true, upTo: 64 << 20)
        } catch {
            printError("error: cannot reach \(server): \(CommandHTTP.describe(error))")
            throw ExitCode(1)
        }
        let data = answer.body
        guard answer.status == 200 else {
            let message =
                (try? JSONDecoder().decode(ServerError.self, from: data))?.error.message
                ?? String(decoding: data.prefix(500), as: UTF8.self)
            printError("error: the server refused: \(message)")
            throw ExitCode(1)
        }
        return data
    }

    struct ServerError: Decodable {
        struct Detail: Decodable { var message: String }
        var error: Detail
    }
}

/// The file `firebase auth:export --format=json` writes (and `actionlinks users export`).
struct ExportedUsers: Codable {
    struct User: Codable {
        struct Provider: Codable {
            var providerId: String
            var rawId: String?
            var email: String?
            var displayName: String?
            var photoUrl: String?
        }
        var localId: String
        var email: String?
        var emailVerified: Bool?
        var passwordHash: String?
        var salt: String?
        var displayName: String?
        var photoUrl: String?
        var phoneNumber: String?
        var disabled: Bool?
        var customAttributes: String?
        var createdAt: String?
        var lastSignedInAt: String?
        var providerUserInfo: [Provider]?
    }
    var users: [User]
}

extension ActionLinksCommand.Users {
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import the users of a `firebase auth:export` JSON file, passwords included.",
            discussion: """
                Password hashes stay Firebase's scrypt hashes until each user's next sign-in, when the server \
                replaces them with its own. Give the project's hash parameters from the Firebase console \
                (Authentication → Users → ⋮ → Password hash parameters). Users go to the server's \
                accounts:batchCreate 1000 at a time; every user the server refuses is printed with the reason, and \
                the exit status is 1 when any was refused.
                """
        )

        @Argument(help: "The exported JSON file.")
        var file: String

        @OptionGroup var server: ServerOptions

        @Option(help: "base64_signer_key of the project's hash parameters.")
        var hashKey: String?

        @Option(help: "base64_salt_separator of the project's hash parameters.")
        var saltSeparator: String = ""

        @Option(help: "rounds of the project's hash parameters (1 to 8).")
        var rounds: Int = 8

        @Option(help: "mem_cost of the project's hash parameters (1 to 14).")
        var memCost: Int = 14

        func run() async throws {
            let exported: ExportedUsers
            do {
                exported = try JSONDecoder().decode(ExportedUsers.self, from: try Data(contentsOf: URL(fileURLWithPath: file)))
            } catch {
                printError("error: \(file): expected the JSON that `firebase auth:export` writes ({\"users\": [...]}): \(error)")
                throw ExitCode(1)
            }
            let firebaseHashes = exported.users.contains { ($0.passwordHash.map { !$0.hasPrefix("$scrypt$") }) ?? false }
            if firebaseHashes, hashKey == nil {
                printError("error: the file has Firebase password hashes: give --hash-key (and --salt-separator, --rounds, --mem-cost)")
                throw ExitCode(64)
            }
            var refused = 0
            for start in stride(from: 0, to: exported.users.count, by: 1000) {
                let batch = Array(exported.users[start..<min(start + 1000, exported.users.count)])
                var body: [String: AnyEncodable] = ["users": AnyEncodable(batch.map(Self.request))]
                if firebaseHashes, let hashKey {
                    body["hashAlgorithm"] = AnyEncodable("SCRYPT")
                    body["signerKey"] = AnyEncodable(hashKey)
                    body["saltSeparator"] = AnyEncodable(saltSeparator)
                    body["rounds"] = AnyEncodable(rounds)
                    body["memoryCost"] = AnyEncodable(memCost)
                }
                let data = try await server.call(server.url("batchCreate"), method: "POST", body: try JSONEncoder().encode(body))
                let answer = try JSONDecoder().decode(BatchAnswer.self, from: data)
                for failure in answer.error ?? [] {
                    refused += 1
                    printError(
                        "refused: \(batch[failure.index].localId) (\(batch[failure.index].email ?? "no address")): \(failure.message)")
                }
            }
            print("imported \(exported.users.count - refused) of \(exported.users.count) users")
            if refused > 0 { throw ExitCode(1) }
        }

        struct BatchAnswer: Decodable {
            struct Failure: Decodable {
                var index: Int
                var message: String
            }
            var error: [Failure]?
        }

        /// A user as `accounts:batchCreate` takes it.
        static func request(_ user: ExportedUsers.User) -> [String: AnyEncodable] {
            var fields: [String: AnyEncodable] = ["localId": AnyEncodable(user.localId)]
            func set(_ name: String, _ value: (some Encodable)?) { if let value { fields[name] = AnyEncodable(value) } }
            set("email", user.email)
            set("emailVerified", user.emailVerified)
            set("passwordHash", user.passwordHash)
            set("salt", user.salt)
            set("displayName", user.displayName)
            set("photoUrl", user.photoUrl)
            set("phoneNumber", user.phoneNumber)
            set("disabled", user.disabled)
            set("customAttributes", user.customAttributes)
            set("createdAt", user.createdAt)
            set("lastLoginAt", user.lastSignedInAt)
            set("providerUserInfo", user.providerUserInfo)
            return fields
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the server's users to a JSON file in the format `firebase auth:export` writes.",
            discussion: """
                Passwords imported from Firebase and not used since keep their Firebase scrypt hash; the others \
                are this server's scrypt hashes ($scrypt$...), which `actionlinks users import` reads back but \
                Firebase does not. The file holds password hashes: it is written with mode 0600.
                """
        )

        @Argument(help: "The file to write.")
        var file: String

        @OptionGroup var server: ServerOptions

        func run() async throws {
            var users: [ExportedUsers.User] = []
            var token: String?
            repeat {
                let query =
                    "?maxResults=1000"
                    + (token.map { "&nextPageToken=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) } ?? "")
                let data = try await server.call(server.url("batchGet", query: query), method: "GET")
                let page = try Self.decoder.decode(Page.self, from: data)
                // The password and phone "providers" are fields of the user in the file.
                users += (page.users ?? []).map { user in
                    var user = user
                    user.providerUserInfo = user.providerUserInfo?.filter {
                        !["password", "phone"].contains($0.providerId) && $0.rawId != nil
                    }
                    return user
                }
                token = page.nextPageToken.flatMap { $0.isEmpty ? nil : $0 }
            } while token != nil
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            let data = try encoder.encode(ExportedUsers(users: users))
            guard FileManager.default.createFile(atPath: file, contents: data, attributes: [.posixPermissions: 0o600]) else {
                throw FileProblem(description: "\(file): cannot write the file (check that its folder exists and is writable)")
            }
            print("exported \(users.count) users to \(file)")
        }

        /// A page of `accounts:batchGet`: its users are the export file's, but for the name of the last
        /// sign-in (see ``decoder``).
        struct Page: Decodable {
            var users: [ExportedUsers.User]?
            var nextPageToken: String?
        }

        /// Reads the API's `lastLoginAt` as the export file's `lastSignedInAt`.
        static var decoder: JSONDecoder {
            struct Key: CodingKey {
                var stringValue: String
                var intValue: Int? { nil }
                init(stringValue: String) { self.stringValue = stringValue }
                init?(intValue: Int) { nil }
            }
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .custom { path in
                path.last?.stringValue == "lastLoginAt" ? Key(stringValue: "lastSignedInAt") : path.last ?? Key(stringValue: "")
            }
            return decoder
        }
    }
}

/// Any encodable value, for request bodies built from optional fields.
struct AnyEncodable: Encodable {
    let encodeValue: (any Encoder) throws -> Void
    init(_ value: some Encodable) { encodeValue = value.encode(to:) }
    func encode(to encoder: any Encoder) throws { try encodeValue(encoder) }
}
