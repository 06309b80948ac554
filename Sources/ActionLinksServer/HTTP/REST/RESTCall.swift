import ActionLinks
import ActionLinksHeaders
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// One call of the REST API, as the router and ``APIAuthenticationMiddleware`` resolved it: who
/// calls, the tenant named in the path, the body, and what the handlers read of the request.
struct RESTCall: Sendable {
    /// The admin (Firebase's "privileged" request) or a client with the API key.
    var caller: APICaller
    /// The tenant in the path (`/projects/<p>/tenants/<t>/...`), if any.
    var pathTenant: String?
    /// Whether the path names the project (`/projects/<p>/...`): only the admin may.
    var namesProject: Bool
    /// The JSON (or, for the token endpoint, form) body.
    var body: ByteBuffer
    /// The query parameters (`accounts:batchGet`, tenant listing).
    var query: [String: String]
    /// The path's parameters (the v2 API's `tenantID`).
    var parameters: [String: String] = [:]
    /// `X-Firebase-Locale`: the language of the links and mail a call sends.
    var locale: String?
    /// The client's IP address (rate limits, and who consumed a code).
    var clientAddress: String?
    /// The HTTP method.
    var method: HTTPRequest.Method
    /// Whether the body is a form (`application/x-www-form-urlencoded`, as the JS SDK sends to
    /// the token endpoint) rather than JSON.
    var isForm = false

    /// Whether the admin calls.
    var isAdmin: Bool { caller == .admin }

    /// Who consumed a code, for the store.
    var consumer: String { "api " + (clientAddress ?? "?") }

    /// The body decoded as `T` (see ``IdentityToolkitJSON/decode(_:from:)``).
    func decode<T: Decodable>(_ type: T.Type) throws(ActionError) -> T {
        guard isForm else { return try IdentityToolkitJSON.decode(type, from: Data(buffer: body)) }
        // A form's fields are strings: read as a JSON object of them, so the same types decode both.
        let fields: [String: String]
        do {
            fields = try URLEncodedFormDecoder().decode([String: String].self, from: String(buffer: body))
        } catch {
            throw ActionError.invalidArgument("the form body cannot be read")
        }
        return try IdentityToolkitJSON.decode(type, from: IdentityToolkitJSON.encode(fields))
    }

    /// The tenant of the call: the path's, else the body's, else the ID token's (two that differ
    /// are `TENANT_ID_MISMATCH`), checked by `tenants`.
    func tenant(body bodyTenant: String?, token tokenTenant: String? = nil, tenants: TenantDirectory) async throws(ActionError)
        -> TenantPolicy
    {
        let given = [pathTenant, bodyTenant, tokenTenant].compactMap { $0?.isEmpty == false ? $0 : nil }
        if let first = given.first, given.contains(where: { $0 != first }) { throw ActionError(.tenantIDMismatch) }
        return try await tenants.policy(for: given.first ?? "")
    }
}

extension Request {
    /// `X-Firebase-Locale`, trimmed to a language tag's length.
    var firebaseLocale: String? {
        headers[.firebaseLocale].flatMap { $0.isEmpty ? nil : String($0.prefix(35)) }
    }
}
