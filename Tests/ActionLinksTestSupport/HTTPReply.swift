import ActionLinks
import Foundation

/// One HTTP answer, however it was fetched (router, live socket or the binary).
public struct HTTPReply: Sendable {
    /// The status code.
    public let status: Int
    /// The header fields; a field sent several times is joined with `, `.
    public let headers: [String: String]
    /// The body.
    public let body: Data

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
    /// The body as a JSON object (empty when it is not one).
    public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    /// The Firebase error code name (before `" : "`), if the body is an error.
    public var errorCode: String? {
        ((json["error"] as? [String: Any])?["message"] as? String).map { String($0.split(separator: " : ", maxSplits: 1)[0]) }
    }
    /// The value of the header `name`, whatever its case.
    public func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name.lowercased() }?.value }
}

/// The API key and the admin token the REST helpers use with a server unless told otherwise.
public struct TestCredentials: Sendable {
    public var apiKey: String
    public var adminToken: String

    public init(apiKey: String, adminToken: String) {
        self.apiKey = apiKey
        self.adminToken = adminToken
    }

    /// The test project's (`TestProject.apiKey`, `TestProject.adminToken`).
    public static let project = TestCredentials(apiKey: TestProject.apiKey, adminToken: TestProject.adminToken)
}

/// Anything that answers the link domain's HTTP requests: the application in process or the binary.
/// The REST and form helpers are written once on top of ``HTTPTarget/request(_:_:body:headers:)``.
public protocol LinkDomainClient: HTTPTarget {
    /// The key and admin token the REST helpers use by default (the test project's unless the
    /// server was started with others, as ``StrictUpstream`` is).
    var credentials: TestCredentials { get }
}

extension LinkDomainClient {
    public var credentials: TestCredentials { .project }

    /// A REST call: as the admin (`Bearer <adminToken>`), or as a client with the API key `key`
    /// (by default, the server's ``credentials``).
    public func api(
        _ operation: String, _ fields: [String: Any], admin: Bool = false, tenant: String? = nil, headers: [String: String] = [:],
        key: String? = nil, adminToken: String? = nil
    )
        async throws -> HTTPReply
    {
        let key = key ?? credentials.apiKey
        let adminToken = adminToken ?? credentials.adminToken
        // The admin names the project (and tenant) in the path, as firebase-admin does; a client
        // names its tenant in the body, as the SDKs do.
        var path = "/v1/"
        var fields = fields
        if admin {
            path += "projects/\(TestProject.id)/"
            if let tenant { path += "tenants/\(tenant)/" }
        } else if let tenant {
            fields["tenantId"] = tenant
        }
        path += operation == "create" ? "accounts" : "accounts:" + operation
        if !admin { path += "?key=" + key }
        var all: [String: String] = [:]
        if admin { all["Authorization"] = "Bearer \(adminToken)" }
        for (name, value) in headers { all[name] = value }
        return try await post(path, fields, headers: all)
    }

    /// The path and query of a link on the test link domain, to request from this server.
    public func local(_ link: String) throws -> String {
        guard link.hasPrefix(TestProject.linkOrigin) else { throw TestSupportError("not a link on the test domain: \(link)") }
        return String(link.dropFirst(TestProject.linkOrigin.count))
    }

    /// Admin: a link for `email`, returned rather than mailed.
    public func link(_ requestType: String, email: String, extra: [String: Any] = [:]) async throws -> (link: String, code: String) {
        var fields: [String: Any] = ["requestType": requestType, "email": email, "returnOobLink": true]
        for (key, value) in extra { fields[key] = value }
        let reply = try await api("sendOobCode", fields, admin: true)
        guard reply.status == 200, let link = reply.json["oobLink"] as? String, let code = reply.json["oobCode"] as? String else {
            throw TestSupportError("sendOobCode failed: \(reply.status) \(reply.text)")
        }
        return (link, code)
    }

    /// Admin: creates an account.
    @discardableResult
    public func createAccount(email: String, password: String? = nil, verified: Bool = false) async throws -> String {
        var fields: [String: Any] = ["email": email, "emailVerified": verified]
        if let password { fields["password"] = password }
        let reply = try await api("create", fields, admin: true)
        guard reply.status == 200, let id = reply.json["localId"] as? String else {
            throw TestSupportError("create failed: \(reply.text)")
        }
        return id
    }

    /// Admin: the account with `email`, as `accounts:lookup` returns it.
    public func lookup(email: String) async throws -> [String: Any]? {
        (try await api("lookup", ["email": [email]], admin: true).json["users"] as? [[String: Any]])?.first
    }

    /// The links this server issued, as the emulator listing shows them (newest last).
    public func issuedLinks() async throws -> [[String: Any]] {
        try await request("GET", "/emulator/v1/projects/\(TestProject.id)/oobCodes").json["oobCodes"] as? [[String: Any]] ?? []
    }

    /// Submits the form of a landing page with extra fields, as a browser on the link domain would
    /// (`Origin: https://links.test.example` unless `headers` says otherwise).
    public func submitForm(of page: HTTPReply, _ fields: [String: String], headers: [String: String] = [:]) async throws -> HTTPReply {
        var values = HTMLForm.hiddenFields(page.text)
        for (key, value) in fields { values[key] = value }
        var all = ["Content-Type": "application/x-www-form-urlencoded", "Origin": TestProject.linkOrigin]
        for (name, value) in headers { all[name] = value }
        return try await request("POST", "/__/auth/action", body: Data(HTMLForm.encode(values).utf8), headers: all)
    }
}

/// The forms of the pages, read and posted the way a browser does.
public enum HTMLForm {
    /// The hidden fields of the page's form, by name.
    public static func hiddenFields(_ html: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in html.split(separator: "\n") where line.contains("type=\"hidden\"") {
            guard let name = line.range(of: "name=\""), let value = line.range(of: "value=\"") else { continue }
            let fieldName = line[name.upperBound...].prefix { $0 != "\"" }
            let fieldValue = line[value.upperBound...].prefix { $0 != "\"" }
            fields[String(fieldName)] = String(fieldValue)
        }
        return fields
    }

    /// `fields` as an `application/x-www-form-urlencoded` body.
    public static func encode(_ fields: [String: String]) -> String {
        fields.map { "\(encode(component: $0.key))=\(encode(component: $0.value))" }.joined(separator: "&")
    }

    /// `fields`, in this order, as a form body or a query, each name and value percent-encoded as
    /// the server's own ``PercentEncoding/encodeComponent(_:)`` does.
    public static func encode(pairs fields: [(String, String)]) -> String {
        fields.map { "\(PercentEncoding.encodeComponent($0.0))=\(PercentEncoding.encodeComponent($0.1))" }.joined(separator: "&")
    }

    /// One name or value, percent-encoded for a form body or a query.
    public static func encode(component text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
