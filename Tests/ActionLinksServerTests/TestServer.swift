import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real `actionlinks serve` process on a free loopback port, with its own data directory.
final class TestServer: Sendable {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let apiKey = "demo-api-key"
    static let project = "demo-actionlinks"

    let process: Process
    let base: String
    let dataDirectory: URL
    private let output = TextBuffer()
    private let errors = TextBuffer()

    /// Starts the server with the shipped config plus `environment` overrides, and waits until it listens.
    init(environment: [String: String] = [:], config: String = "config/actionlinks.yaml") async throws {
        dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("actionlinks-e2e-\(UUID().uuidString)")
        let process = Process()
        process.executableURL = try Self.binary()
        process.arguments = ["serve", "--config", config, "--log-level", "info"]
        process.currentDirectoryURL = Self.root
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ACTIONLINKS_") }
        env["ACTIONLINKS_SERVER_PORT"] = "0"
        env["ACTIONLINKS_DATA_DIRECTORY"] = dataDirectory.path
        env["ACTIONLINKS_STORE"] = "sqlite:" + dataDirectory.appendingPathComponent("actionlinks.sqlite").path
        env["ACTIONLINKS_LINK_DOMAINS"] = "links.test.example"
        env["ACTIONLINKS_EMULATOR_LISTING"] = "true"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let output = self.output, errors = self.errors
        out.fileHandleForReading.readabilityHandler = { handle in output.append(handle.availableData) }
        err.fileHandleForReading.readabilityHandler = { handle in errors.append(handle.availableData) }
        try process.run()
        self.process = process
        var found: String?
        for _ in 0..<400 {
            let text = errors.text
            if let range = text.range(of: "] serving ") {
                found = String(text[range.upperBound...].prefix { !$0.isWhitespace })
                break
            }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        guard let found else {
            process.terminate()
            throw TestServerError(message: "the server did not start:\n" + errors.text)
        }
        base = found
    }

    deinit {
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(at: dataDirectory)
    }

    /// Everything the server wrote to standard output (the `log` mail backend's messages).
    var standardOutput: String { output.text }
    /// Everything the server logged.
    var standardError: String { errors.text }

    static func binary() throws -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("actionlinks")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw TestServerError(message: "the actionlinks binary was not built next to the tests")
    }

    // MARK: HTTP

    struct Reply {
        let status: Int
        let headers: [String: String]
        let body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        /// The Firebase error code name (before `" : "`), if the body is an error.
        var errorCode: String? {
            ((json["error"] as? [String: Any])?["message"] as? String).map { String($0.split(separator: " : ", maxSplits: 1)[0]) }
        }
        func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name.lowercased() }?.value }
    }

    func request(_ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:]) async throws -> Reply {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await Self.session.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (key, value) in http.allHeaderFields { fields["\(key)"] = "\(value)" }
        return Reply(status: http.statusCode, headers: fields, body: data)
    }

    /// No redirects followed and no cookies kept: a test sends exactly the cookies it means to.
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        return URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }()

    /// A REST call: as the admin (`Bearer owner`), or as a client with the API key.
    func api(_ operation: String, _ fields: [String: Any], admin: Bool = false, tenant: String? = nil, headers: [String: String] = [:])
        async throws -> Reply
    {
        var path = "/v1/"
        if admin || tenant != nil { path += "projects/\(Self.project)/" }
        if let tenant { path += "tenants/\(tenant)/" }
        path += operation == "create" ? "accounts" : "accounts:" + operation
        if !admin { path += "?key=" + Self.apiKey }
        var all = ["Content-Type": "application/json"]
        if admin { all["Authorization"] = "Bearer owner" }
        for (name, value) in headers { all[name] = value }
        return try await request("POST", path, body: try JSONSerialization.data(withJSONObject: fields), headers: all)
    }

    /// The path and query of a link on the test link domain, to request from this server.
    func local(_ link: String) throws -> String {
        let prefix = "https://links.test.example"
        guard link.hasPrefix(prefix) else { throw TestServerError(message: "not a link on the test domain: \(link)") }
        return String(link.dropFirst(prefix.count))
    }

    /// Admin: a link for `email`, returned rather than mailed.
    func link(_ requestType: String, email: String, extra: [String: Any] = [:]) async throws -> (link: String, code: String) {
        var fields: [String: Any] = ["requestType": requestType, "email": email, "returnOobLink": true]
        for (key, value) in extra { fields[key] = value }
        let reply = try await api("sendOobCode", fields, admin: true)
        guard reply.status == 200, let link = reply.json["oobLink"] as? String, let code = reply.json["oobCode"] as? String else {
            throw TestServerError(message: "sendOobCode failed: \(reply.status) \(reply.text)")
        }
        return (link, code)
    }

    /// Admin: creates an account.
    @discardableResult
    func createAccount(email: String, password: String? = nil, verified: Bool = false) async throws -> String {
        var fields: [String: Any] = ["email": email, "emailVerified": verified]
        if let password { fields["password"] = password }
        let reply = try await api("create", fields, admin: true)
        guard reply.status == 200, let id = reply.json["localId"] as? String else {
            throw TestServerError(message: "create failed: \(reply.text)")
        }
        return id
    }

    /// Admin: the account with `email`, as `accounts:lookup` returns it.
    func lookup(email: String) async throws -> [String: Any]? {
        (try await api("lookup", ["email": [email]], admin: true).json["users"] as? [[String: Any]])?.first
    }

    /// Submits the form of a landing page with extra fields, as a browser on the link domain would
    /// (`Origin: https://links.test.example` unless `headers` says otherwise).
    func submitForm(of page: Reply, _ fields: [String: String], headers: [String: String] = [:]) async throws -> Reply {
        var values = Self.hiddenFields(page.text)
        for (key, value) in fields { values[key] = value }
        let body = values.map { "\(Self.formEncode($0.key))=\(Self.formEncode($0.value))" }.joined(separator: "&")
        var all = ["Content-Type": "application/x-www-form-urlencoded", "Origin": "https://links.test.example"]
        for (name, value) in headers { all[name] = value }
        return try await request("POST", "/__/auth/action", body: Data(body.utf8), headers: all)
    }

    static func hiddenFields(_ html: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in html.split(separator: "\n") where line.contains("type=\"hidden\"") {
            guard let name = line.range(of: "name=\""), let value = line.range(of: "value=\"") else { continue }
            let fieldName = line[name.upperBound...].prefix { $0 != "\"" }
            let fieldValue = line[value.upperBound...].prefix { $0 != "\"" }
            fields[String(fieldName)] = String(fieldValue)
        }
        return fields
    }

    static func formEncode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

/// Text a child process writes, collected as it arrives.
final class TextBuffer: Sendable {
    private let storage = Mutex("")
    func append(_ data: Data) { storage.withLock { $0 += String(decoding: data, as: UTF8.self) } }
    var text: String { storage.withLock { $0 } }
}

struct TestServerError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Redirects are part of what the tests check, so they are never followed.
final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

/// The suites that load the whole machine (several servers, kills, an outage, a browser, thousands
/// of connections) run one after another, beside the light ones, so that none of them times out
/// because the others are running.
@Suite("Heavy suites, one at a time", .serialized)
enum HeavyTests {}
