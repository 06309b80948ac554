import ActionLinks
import ActionLinksConfiguration
import ActionLinksHeaders
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The Identity-Toolkit-compatible REST subset (DESIGN §4), mounted at `/v1/...` and under
/// `/identitytoolkit.googleapis.com/v1/...`, with the project (and tenant) in the path or not.
struct RESTAPI: Sendable {
    let service: ActionService

    /// Who is calling.
    enum Caller {
        /// The admin credential (`Authorization: Bearer owner` on a development server, else the admin token).
        case admin
        /// A client with the project's API key.
        case client
    }

    /// One routed call: the operation (`sendOobCode`, or `create` for `.../accounts`), the project
    /// and the tenant named in the path.
    struct Call: Sendable {
        var operation: String
        var project: String?
        var tenantID: String?
    }

    /// Answers a call the router matched. CORS headers are added by ``APICORSMiddleware``.
    func respond(to call: Call, request: Request, context: ServerRequestContext) async throws(ActionError) -> Response {
        let origin = request.headers[.origin]
        if request.method == .options { return preflight(request, allowed: origin.map { service.origins.allowsAPI($0) } ?? false) }
        if let project = call.project, project != service.settings.project.id {
            throw ActionError(.projectNotFound, "this server serves project '\(service.settings.project.id)', not '\(project.prefix(100))'")
        }
        guard request.method == .post else { throw ActionError(.notFound, "\(request.method) \(request.uri.path) is not a method of this API") }
        let caller = try authenticate(request)
        // A browser page on an origin we do not know never gets to use the admin credential
        // (on a developer's machine, `Bearer owner` would otherwise be one fetch away).
        if caller == .admin, let origin, !service.origins.allowsAPI(origin) {
            throw ActionError(.insufficientPermission, "the admin credential is not accepted from a browser page on \(origin.prefix(100))")
        }
        var request = request
        let fields = try await body(&request)
        return json(try await perform(call, caller: caller, fields: fields, request: request, context: context), status: .ok)
    }

    func authenticate(_ request: Request) throws(ActionError) -> Caller {
        // A bearer token claims the admin credential and must be it; any other scheme (a browser's
        // `Basic`, say) is no claim at all, and the call is a client's.
        if let authorization = request.headers[.authorization], AuthorizationHeader(authorization)?.bearerToken != nil {
            guard Self.isAdmin(authorization, service.settings.server) else {
                throw ActionError(.unauthenticated, "Request had invalid authentication credentials.")
            }
            return .admin
        }
        let key = request.uri.queryParameters["key"].map(String.init) ?? request.headers[.googAPIKey]
        guard let key, !key.isEmpty else {
            throw ActionError(.permissionDenied, "The request is missing a valid API key (?key= or x-goog-api-key).")
        }
        guard ConstantTime.equal(Array(key.utf8), Array(service.settings.project.apiKey.utf8)) else {
            throw ActionError(.invalidAPIKey)
        }
        return .client
    }

    /// Whether an `Authorization` header carries the admin credential: `Bearer owner` on a development
    /// server, else `Bearer <server.adminToken>` (compared in constant time).
    static func isAdmin(_ authorization: String, _ settings: ServerSettings) -> Bool {
        guard let bearer = AuthorizationHeader(authorization)?.bearerToken else { return false }
        let token = Array(bearer.utf8)
        if settings.development, token == Array("owner".utf8) { return true }
        return settings.adminToken.map { ConstantTime.equal(token, Array($0.utf8)) } ?? false
    }

    func body(_ request: inout Request) async throws(ActionError) -> Fields {
        let limit = service.settings.server.maximumBodyBytes
        if let type = request.headers[.contentType], !type.lowercased().hasPrefix("application/json") {
            throw ActionError(.invalidContentType, "expected Content-Type: application/json, got '\(type)'")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch {
            throw ActionError(.payloadTooLarge, "the request body is larger than \(limit) bytes")
        }
        guard buffer.readableBytes > 0 else { return Fields([:]) }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(buffer: buffer))
        } catch {
            throw ActionError(.invalidJSON, "Invalid JSON payload received: the body is not valid JSON")
        }
        guard let dictionary = object as? [String: Any] else { throw ActionError(.invalidJSON, "Invalid JSON payload received: expected a JSON object") }
        return Fields(dictionary)
    }

    func perform(_ call: Call, caller: Caller, fields: Fields, request: Request, context: ServerRequestContext) async throws(ActionError)
        -> [String: Any]
    {
        let bodyTenant = try fields.string("tenantId")
        // Only configured tenants exist; the one in the path (if any) is the one a code must belong to.
        var pathTenant: String?
        if let named = call.tenantID { pathTenant = try service.knownTenant(named) }
        let tenantID: String
        if let pathTenant { tenantID = pathTenant } else { tenantID = try service.knownTenant(bodyTenant) }
        let admin = caller == .admin
        switch call.operation {
        case "sendOobCode":
            guard let type = try fields.string("requestType"), !type.isEmpty else { throw ActionError(.missingRequestType) }
            guard let mode = ActionCodeLink.Mode(requestType: type) else { throw ActionError(.invalidRequestType, "unknown requestType '\(type)'") }
            var issue = ActionService.IssueRequest(mode: mode)
            issue.email = try fields.string("email")
            issue.newEmail = try fields.string("newEmail")
            issue.idToken = try fields.string("idToken")
            issue.tenantID = tenantID
            issue.continueURL = try fields.string("continueUrl")
            issue.canHandleCodeInApp = try fields.bool("canHandleCodeInApp") ?? false
            issue.iOSBundleID = try fields.firstString("iOSBundleId", "iosBundleId")
            issue.androidPackageName = try fields.string("androidPackageName")
            issue.androidInstallApp = try fields.bool("androidInstallApp") ?? false
            issue.androidMinimumVersion = try fields.version("androidMinimumVersion")
            if issue.androidMinimumVersion == nil { issue.androidMinimumVersion = try fields.version("androidMinimumVersionCode") }
            issue.linkDomain = try fields.firstString("linkDomain", "dynamicLinkDomain")
            issue.languageCode = request.headers[.firebaseLocale].flatMap { $0.isEmpty ? nil : String($0.prefix(35)) }
            issue.isAdmin = admin
            issue.returnLink = try fields.bool("returnOobLink") ?? false
            issue.clientAddress = context.clientAddress
            let issued = try await service.issue(issue)
            // The same bytes whether or not the address has an account: the canonical address either way.
            var response: [String: Any] = ["kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": issued.email]
            if issue.returnLink, issued.delivered {
                response["oobLink"] = issued.link
                response["oobCode"] = issued.code
            }
            return response

        case "resetPassword":
            guard let code = try fields.string("oobCode"), !code.isEmpty else { throw ActionError.missingCode }
            if let newPassword = try fields.string("newPassword") {
                let done = try await service.resetPassword(code: code, newPassword: newPassword, tenantID: pathTenant, consumer: consumer(context))
                return ["kind": "identitytoolkit#ResetPasswordResponse", "email": done.record.email, "requestType": "PASSWORD_RESET"]
            }
            let record = try await service.check(code: code, tenantID: pathTenant)
            var response: [String: Any] = ["kind": "identitytoolkit#ResetPasswordResponse", "requestType": record.mode.requestType]
            // As Firebase does, an email sign-in code does not tell whom it was sent to: whoever holds a
            // forwarded link must still type the address.
            guard record.mode != .signIn else { return response }
            response["email"] = record.email
            if let newEmail = record.newEmail { response["newEmail"] = newEmail }
            return response

        case "update":
            guard let code = try fields.string("oobCode"), !code.isEmpty else {
                throw ActionError.invalidArgument("this server applies action codes with accounts:update (oobCode); other account updates are not supported")
            }
            let done = try await service.apply(code: code, tenantID: pathTenant, consumer: consumer(context))
            var response = user(done.account)
            response["kind"] = "identitytoolkit#SetAccountInfoResponse"
            return response

        case "signInWithEmailLink":
            guard let code = try fields.string("oobCode"), !code.isEmpty else { throw ActionError.missingCode }
            let done = try await service.signIn(code: code, email: try fields.string("email") ?? "", tenantID: pathTenant, consumer: consumer(context))
            return [
                "kind": "identitytoolkit#EmailLinkSigninResponse", "idToken": done.idToken ?? "", "refreshToken": done.refreshToken ?? "",
                "email": done.account.email ?? "", "localId": done.account.localID, "expiresIn": String(TokenIssuer.lifetime),
                "isNewUser": done.isNewUser,
            ]

        case "lookup":
            var found: [Account] = []
            if let idToken = try fields.string("idToken") {
                found.append(try await service.account(fromIDToken: idToken, tenantID: tenantID, now: .now))
            } else {
                guard admin else { throw ActionError(.missingIDToken) }
                for id in try fields.strings("localId") {
                    if let account = try await service.storeCall({ try await self.service.accounts.account(id: id, tenantID: tenantID) }) {
                        found.append(account)
                    }
                }
                for email in try fields.strings("email") {
                    guard let canonical = ActionService.canonicalEmail(email) else { continue }
                    if let account = try await service.storeCall({ try await self.service.accounts.account(email: canonical, tenantID: tenantID) }),
                        !found.contains(where: { $0.localID == account.localID })
                    {
                        found.append(account)
                    }
                }
            }
            var response: [String: Any] = ["kind": "identitytoolkit#GetAccountInfoResponse"]
            if !found.isEmpty { response["users"] = found.map(user) }
            return response

        case "create":
            guard admin else { throw ActionError.insufficientPermission }
            let account = try await service.createAccount(
                email: try fields.string("email"), password: try fields.string("password"), emailVerified: try fields.bool("emailVerified") ?? false,
                displayName: try fields.string("displayName"), localID: try fields.string("localId"), tenantID: tenantID)
            var response: [String: Any] = ["kind": "identitytoolkit#SignupNewUserResponse", "localId": account.localID]
            if let email = account.email { response["email"] = email }
            return response

        default:
            throw ActionError(.notFound, "accounts:\(call.operation) is not part of this server's API")
        }
    }

    /// `GET /emulator/v1/projects/<id>/oobCodes`: the links this process issued (when enabled).
    func listing(project: String, _ request: Request) throws(ActionError) -> Response {
        let expected = "/emulator/v1/projects/\(service.settings.project.id)/oobCodes"
        guard project == service.settings.project.id, let listing = service.listing else {
            throw ActionError(.notFound, "no method at \(request.uri.path)")
        }
        guard request.method == .get else { throw ActionError(.notFound, "use GET \(expected)") }
        let codes: [[String: Any]] = listing.all.map {
            ["email": $0.email, "oobCode": $0.code, "oobLink": $0.link, "requestType": $0.mode.requestType]
        }
        return json(["oobCodes": codes], status: .ok)
    }

    /// An account as `accounts:lookup` shows it (the password hash is never returned).
    func user(_ account: Account) -> [String: Any] {
        var user: [String: Any] = [
            "localId": account.localID, "emailVerified": account.emailVerified, "disabled": account.disabled,
            "createdAt": String(account.createdAt), "validSince": String(account.validSince),
        ]
        if let email = account.email { user["email"] = email }
        if let name = account.displayName { user["displayName"] = name }
        if let last = account.lastLoginAt { user["lastLoginAt"] = String(last) }
        if !account.tenantID.isEmpty { user["tenantId"] = account.tenantID }
        if account.passwordHash != nil {
            user["passwordHash"] = "UkVEQUNURUQ="
            if let updated = account.passwordUpdatedAt { user["passwordUpdatedAt"] = updated }
            if let email = account.email {
                user["providerUserInfo"] = [["providerId": "password", "federatedId": email, "email": email, "rawId": email]]
            }
        } else {
            user["providerUserInfo"] = [[String: Any]]()
        }
        return user
    }

    func consumer(_ context: ServerRequestContext) -> String { "api " + (context.clientAddress ?? "?") }

    func json(_ object: [String: Any], status: HTTPResponse.Status) -> Response {
        if let bytes = Self.stringObjectJSON(object) {
            return Response(status: status, headers: Self.headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return Response(status: status, headers: Self.headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The bytes `JSONSerialization` writes with `[.sortedKeys, .withoutEscapingSlashes]` for an
    /// object whose keys are ASCII letters (distinct ignoring case) and whose values are strings, as
    /// most answers are (`sendOobCode`'s on every request); `nil` for anything else. Foundation's
    /// bridging and locale-aware key sorting cost more than the rest of issuing a link.
    static func stringObjectJSON(_ object: [String: Any]) -> [UInt8]? {
        var members: [(key: String, folded: [UInt8], value: String)] = []
        members.reserveCapacity(object.count)
        for (key, value) in object {
            guard let text = value as? String else { return nil }
            var folded: [UInt8] = []
            folded.reserveCapacity(key.utf8.count)
            for byte in key.utf8 {
                guard (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) else { return nil }
                folded.append(byte | 0x20)
            }
            members.append((key, folded, text))
        }
        // Case-insensitive order, as Foundation sorts keys; two keys equal but for case go to Foundation.
        members.sort { $0.folded.lexicographicallyPrecedes($1.folded) }
        for index in members.indices.dropFirst() where members[index].folded == members[index - 1].folded { return nil }
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        for (index, member) in members.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendJSONString(member.key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            appendJSONString(member.value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    static let hexDigits = Array("0123456789abcdef".utf8)

    /// A JSON string as `JSONSerialization` escapes it (without escaping slashes).
    static func appendJSONString(_ text: String, to bytes: inout [UInt8]) {
        let hex = Self.hexDigits
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x08: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x00..<0x10: bytes += Array("\\u000".utf8) + [hex[Int(byte)]]
            case 0x10..<0x20: bytes += Array("\\u001".utf8) + [hex[Int(byte - 0x10)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    func failure(_ error: ActionError) -> Response {
        Response(status: error.status, headers: Self.headers, body: .init(byteBuffer: ByteBuffer(bytes: error.body)))
    }

    /// JSON, never cached; `respond` adds CORS headers for an allowed origin.
    static let headers: HTTPFields = [
        .contentType: "application/json; charset=utf-8", .cacheControl: "no-store", .xContentTypeOptions: "nosniff",
    ]

    /// The headers a web app's Firebase SDK sends; a preflight allows these and no others.
    static let allowedRequestHeaders = "authorization, content-type, x-goog-api-key, x-firebase-locale, x-client-version, x-firebase-gmpid, x-firebase-client, x-firebase-appcheck"

    /// A CORS preflight: allowed (for `respond` to add the origin) only for an allowed origin.
    func preflight(_ request: Request, allowed: Bool) -> Response {
        guard allowed else { return Response(status: .noContent, headers: [.vary: "Origin"]) }
        return Response(
            status: .noContent,
            headers: [
                .accessControlAllowMethods: "POST, GET, OPTIONS", .accessControlMaxAge: "3600",
                .accessControlAllowHeaders: Self.allowedRequestHeaders,
            ])
    }
}

/// The fields of a JSON request body; a field of the wrong type is an error, an unknown one is ignored.
struct Fields {
    let values: [String: Any]

    init(_ values: [String: Any]) { self.values = values }

    func string(_ name: String) throws(ActionError) -> String? {
        guard let value = values[name], !(value is NSNull) else { return nil }
        guard let text = value as? String else { throw ActionError.invalidArgument("'\(name)' must be a string") }
        return text
    }

    func firstString(_ names: String...) throws(ActionError) -> String? {
        for name in names { if let value = try string(name) { return value } }
        return nil
    }

    func bool(_ name: String) throws(ActionError) -> Bool? {
        guard let value = values[name], !(value is NSNull) else { return nil }
        if !(value is String), let flag = value as? Bool { return flag }
        if let text = value as? String, text == "true" || text == "false" { return text == "true" }
        throw ActionError.invalidArgument("'\(name)' must be true or false")
    }

    /// An Android version code given as a string or a number (`androidMinimumVersion` is either,
    /// depending on the SDK): a whole number from 0 to 2100000000 (Play's largest versionCode). It
    /// is shown on a page, so nothing else is accepted.
    func version(_ name: String) throws(ActionError) -> String? {
        guard let value = values[name], !(value is NSNull) else { return nil }
        let problem = ActionError.invalidArgument("'\(name)' must be an Android version code: a whole number from 0 to 2100000000")
        var text: String
        if let string = value as? String {
            text = string
        } else if let number = value as? NSNumber {
            text = number.stringValue
        } else {
            throw problem
        }
        if text.isEmpty { return nil }
        guard text.utf8.count <= 10, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let code = Int(text), code <= 2_100_000_000 else {
            throw problem
        }
        text = String(code)
        return text
    }

    func strings(_ name: String) throws(ActionError) -> [String] {
        guard let value = values[name], !(value is NSNull) else { return [] }
        if let text = value as? String { return [text] }
        guard let list = value as? [Any], let texts = list as? [String] else { throw ActionError.invalidArgument("'\(name)' must be a list of strings") }
        return texts
    }
}
