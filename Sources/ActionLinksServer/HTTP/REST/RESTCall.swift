import ActionLinks
import ActionLinksHeaders
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// One call of the REST API, as the router and ``APIAuthenticationMiddleware`` resolved it: who
/// calls (``Caller``, what the services see), the body, and what the handlers read of the request.
struct RESTCall: Sendable {
    /// Who calls: the admin or a client, the tenant in the path, the client's address, the locale.
    var caller: Caller
    /// Whether the path names the project (`/projects/<p>/...`): only the admin may.
    var namesProject: Bool
    /// The JSON (or, for the token endpoint, form) body.
    var body: ByteBuffer
    /// The query parameters (`accounts:batchGet`, tenant listing).
    var query: [String: String]
    /// The path's parameters (the v2 API's `tenantID`).
    var parameters: [String: String] = [:]
    /// The HTTP method.
    var method: HTTPRequest.Method
    /// Whether the body is a form (`application/x-www-form-urlencoded`, as the JS SDK sends to
    /// the token endpoint) rather than JSON.
    var isForm = false

    /// Whether the admin calls.
    var isAdmin: Bool { caller.isAdmin }
    /// The tenant in the path, if any.
    var pathTenant: String? { caller.pathTenant }
    /// `X-Firebase-Locale`.
    var locale: String? { caller.locale }
    /// Who consumed a code, for the store.
    var consumer: String { caller.consumer }

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

    /// The tenant of the call (``Caller/tenant(body:token:tenants:)``).
    func tenant(body bodyTenant: String?, token tokenTenant: String? = nil, tenants: TenantDirectory) async throws(ActionError)
        -> TenantPolicy
    {
        try await caller.tenant(body: bodyTenant, token: tokenTenant, tenants: tenants)
    }
}

extension Request {
    /// `X-Firebase-Locale`, trimmed to a language tag's length.
    var firebaseLocale: String? {
        headers[.firebaseLocale].flatMap { $0.isEmpty ? nil : String($0.prefix(35)) }
    }
}
