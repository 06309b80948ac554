import ActionLinks
import ActionLinksDomain
import ActionLinksHeaders
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOFoundationCompat

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
    /// Whether the request said its body is JSON (`Content-Type: application/json`); a body with
    /// no type is read as JSON too, except by an operation that requires ``IdentityToolkitAPI/Requirement/jsonBody``.
    var declaresJSON = false

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
        // The token endpoint's usual form (`grant_type=refresh_token&refresh_token=...`) is read
        // directly; anything the plain reading cannot settle goes the general way below.
        if let formType = type as? any PlainFormDecodable.Type, let fields = PlainForm.fields(body),
            let value = formType.init(plainForm: fields) as? T
        {
            return value
        }
        return try decodeForm(type)
    }

    /// A form body decoded the general way: Hummingbird's form decoder, then JSON.
    func decodeForm<T: Decodable>(_ type: T.Type) throws(ActionError) -> T {
        // A form's fields are strings: read as a JSON object of them, so the same types decode both.
        let fields: [String: String]
        do {
            fields = try URLEncodedFormDecoder().decode([String: String].self, from: String(buffer: body))
        } catch {
            throw ActionError.invalidArgument("the form body cannot be read")
        }
        return try IdentityToolkitJSON.decode(type, from: IdentityToolkitJSON.encode(fields))
    }

    /// Whether the body could hold `targetProjectId` (or `target_project_id`, as the decoder maps
    /// names): it spells "target" in some case, or has an escape (`\u0074`, `%74`) that could. A
    /// body that cannot is not decoded a second time to find out.
    var mayNameTarget: Bool { Self.mayNameTarget(body) }

    /// Whether `body` could hold `targetProjectId` (``mayNameTarget``).
    static func mayNameTarget(_ body: ByteBuffer) -> Bool {
        body.withUnsafeReadableBytes { bytes in
            let target: [UInt8] = Array("target".utf8)
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "%") { return true }
                if byte | 0x20 == UInt8(ascii: "t"), index + target.count <= bytes.count,
                    (1..<target.count).allSatisfy({ bytes[index + $0] | 0x20 == target[$0] })
                {
                    return true
                }
                index += 1
            }
            return false
        }
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
    var firebaseLocale: String? { headers.firebaseLocale }
}

extension HTTPFields {
    /// `X-Firebase-Locale`, trimmed to a language tag's length.
    var firebaseLocale: String? {
        self[.firebaseLocale].flatMap { $0.isEmpty ? nil : String($0.prefix(35)) }
    }
}

/// A body type that can be read from a plain form (see ``PlainForm``) without the JSON detour.
protocol PlainFormDecodable {
    /// The value `fields` (names as ``IdentityToolkitJSON/decoder`` maps them) decode to, as the
    /// general path would decode them.
    init(plainForm fields: [String: String])
}

/// A form body in the token endpoint's everyday shape: `name=value` items, names of letters, digits
/// and `_`, values of unreserved characters (letters, digits, `-._~`, as refresh tokens are): no escapes, no `+`, no
/// brackets, no empty item, no name given twice (also after
/// `snake_case` names are mapped to `camelCase`, as the API's JSON decoder maps them). Such a body
/// decodes to exactly what ``RESTCall/decode(_:)``'s general path (Hummingbird's form decoder, then
/// JSON) makes of it; any other body is left to that path.
enum PlainForm {
    /// The snake-case names the plain reading maps (every other name with `_` is left to the general path).
    static let snakeNames = ["grant_type": "grantType", "refresh_token": "refreshToken", "target_project_id": "targetProjectId"]

    static func fields(_ body: ByteBuffer) -> [String: String]? {
        var fields: [String: String] = [:]
        var ok = true
        body.withUnsafeReadableBytes { bytes in
            var start = 0
            while start <= bytes.count, ok {
                let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.count
                let item = bytes[start..<end]
                start = end + 1
                guard let equals = item.firstIndex(of: UInt8(ascii: "=")), equals > item.startIndex else { ok = false; return }
                let nameBytes = item[item.startIndex..<equals]
                let valueBytes = item[(equals + 1)...]
                guard nameBytes.allSatisfy(isNameByte), valueBytes.allSatisfy(isUnreserved) else { ok = false; return }
                var name = String(decoding: nameBytes, as: UTF8.self)
                if name.utf8.contains(UInt8(ascii: "_")) {
                    guard let mapped = snakeNames[name] else { ok = false; return }
                    name = mapped
                }
                guard fields.updateValue(String(decoding: valueBytes, as: UTF8.self), forKey: name) == nil else { ok = false; return }
            }
        }
        return ok ? fields : nil
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"):
            true
        default: false
        }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
