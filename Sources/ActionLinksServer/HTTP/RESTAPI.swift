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
    let issuer: CodeIssuer
    let completer: ActionCompleter
    let accounts: AccountService
    let tenants: Tenants
    let settings: ServiceSettings
    let origins: WebOrigins
    let listing: IssuedLinkListing?

    init(services: LinkDomainServices) {
        issuer = services.issuer
        completer = services.completer
        accounts = services.accounts
        tenants = services.tenants
        settings = services.settings
        origins = services.origins
        listing = services.listing
    }

    /// One routed call: the operation (`sendOobCode`, or `create` for `.../accounts`) and the tenant
    /// named in the path (the project was checked by ``APIAuthenticationMiddleware``).
    struct Call: Sendable {
        var operation: String
        var tenantID: String?
    }

    /// Answers a call the router matched, once ``APIAuthenticationMiddleware`` has put the caller in
    /// the context. CORS headers are added by ``APICORSMiddleware``.
    func respond(to call: Call, request: Request, context: ServerRequestContext) async throws(ActionError) -> Response {
        if request.method == .options {
            return preflight(request, allowed: request.headers[.origin].map { origins.allowsAPI($0) } ?? false)
        }
        guard let caller = context.caller else { throw ActionError(.unauthenticated) }
        if let type = request.headers[.contentType], MediaType(type)?.matches("application", "json") != true {
            throw ActionError(.invalidContentType, "expected Content-Type: application/json, got '\(type.prefix(100))'")
        }
        return json(try await perform(call, caller: caller, body: Data(buffer: context.body), request: request, context: context))
    }

    func perform(_ call: Call, caller: APICaller, body: Data, request: Request, context: ServerRequestContext) async throws(ActionError)
        -> Data
    {
        // Only configured tenants exist; the one in the path (if any) is the one a code must belong to.
        var pathTenant: String?
        if let named = call.tenantID { pathTenant = try tenants.resolve(named) }
        let tenantID: String
        if let pathTenant {
            tenantID = pathTenant
        } else {
            tenantID = try tenants.resolve(try IdentityToolkitJSON.decode(TenantField.self, from: body).tenantId)
        }
        let admin = caller == .admin
        switch call.operation {
        case "sendOobCode":
            let fields = try IdentityToolkitJSON.decode(SendOobCodeRequest.self, from: body)
            guard let type = fields.requestType?.name, !type.isEmpty else { throw ActionError(.missingRequestType) }
            guard let mode = ActionCodeLink.Mode(requestType: type) else {
                throw ActionError(.invalidRequestType, "unknown requestType '\(type.prefix(100))'")
            }
            var issue = CodeIssuer.IssueRequest(mode: mode)
            issue.email = fields.email
            issue.newEmail = fields.newEmail
            issue.idToken = fields.idToken
            issue.tenantID = tenantID
            issue.continueURL = fields.continueUrl
            issue.canHandleCodeInApp = fields.canHandleCodeInApp?.value ?? false
            issue.iOSBundleID = fields.iOSBundleId ?? fields.iosBundleId
            issue.androidPackageName = fields.androidPackageName
            issue.androidInstallApp = fields.androidInstallApp?.value ?? false
            issue.androidMinimumVersion = fields.androidMinimumVersion?.digits ?? fields.androidMinimumVersionCode?.digits
            issue.linkDomain = fields.linkDomain ?? fields.dynamicLinkDomain
            issue.languageCode = request.headers[.firebaseLocale].flatMap { $0.isEmpty ? nil : String($0.prefix(35)) }
            issue.isAdmin = admin
            issue.returnLink = fields.returnOobLink?.value ?? false
            issue.clientAddress = context.clientAddress
            let issued = try await issuer.issue(issue)
            // The same bytes whether or not the address has an account: the canonical address either way.
            let returned = issue.returnLink && issued.delivered
            return IdentityToolkitJSON.encode(
                SendOobCodeResponse(email: issued.email, oobLink: returned ? issued.link : nil, oobCode: returned ? issued.code : nil))

        case "resetPassword":
            let fields = try IdentityToolkitJSON.decode(OobCodeRequest.self, from: body)
            guard let code = fields.oobCode, !code.isEmpty else { throw ActionError.missingCode }
            if let newPassword = fields.newPassword {
                let done = try await completer.resetPassword(
                    code: code, newPassword: newPassword, tenantID: pathTenant, consumer: consumer(context))
                return IdentityToolkitJSON.encode(ResetPasswordResponse(email: done.record.email, requestType: "PASSWORD_RESET"))
            }
            let record = try await completer.check(code: code, tenantID: pathTenant)
            // As Firebase does, an email sign-in code does not tell whom it was sent to: whoever holds a
            // forwarded link must still type the address.
            guard record.mode != .signIn else {
                return IdentityToolkitJSON.encode(ResetPasswordResponse(requestType: record.mode.requestType))
            }
            return IdentityToolkitJSON.encode(
                ResetPasswordResponse(email: record.email, newEmail: record.newEmail, requestType: record.mode.requestType))

        case "update":
            let fields = try IdentityToolkitJSON.decode(OobCodeRequest.self, from: body)
            guard let code = fields.oobCode, !code.isEmpty else {
                throw ActionError.invalidArgument(
                    "this server applies action codes with accounts:update (oobCode); other account updates are not supported")
            }
            let done = try await completer.apply(code: code, tenantID: pathTenant, consumer: consumer(context))
            return IdentityToolkitJSON.encode(UserInfo(done.account, kind: "identitytoolkit#SetAccountInfoResponse"))

        case "signInWithEmailLink":
            let fields = try IdentityToolkitJSON.decode(OobCodeRequest.self, from: body)
            guard let code = fields.oobCode, !code.isEmpty else { throw ActionError.missingCode }
            let done = try await completer.signIn(code: code, email: fields.email ?? "", tenantID: pathTenant, consumer: consumer(context))
            return IdentityToolkitJSON.encode(
                EmailLinkSignInResponse(
                    idToken: done.idToken ?? "", refreshToken: done.refreshToken ?? "", email: done.account.email ?? "",
                    localId: done.account.localID, expiresIn: String(TokenIssuer.lifetime), isNewUser: done.isNewUser))

        case "lookup":
            let fields = try IdentityToolkitJSON.decode(LookupRequest.self, from: body)
            var found: [Account] = []
            if let idToken = fields.idToken {
                found.append(try await accounts.account(fromIDToken: idToken, tenantID: tenantID, now: accounts.clock.now))
            } else {
                guard admin else { throw ActionError(.missingIDToken) }
                found = try await accounts.lookup(ids: fields.localId?.values ?? [], emails: fields.email?.values ?? [], tenantID: tenantID)
            }
            return IdentityToolkitJSON.encode(LookupResponse(users: found.isEmpty ? nil : found.map { UserInfo($0) }))

        case "create":
            guard admin else { throw ActionError.insufficientPermission }
            let fields = try IdentityToolkitJSON.decode(CreateAccountRequest.self, from: body)
            let account = try await accounts.createAccount(
                email: fields.email, password: fields.password, emailVerified: fields.emailVerified?.value ?? false,
                displayName: fields.displayName, localID: fields.localId, tenantID: tenantID)
            return IdentityToolkitJSON.encode(CreateAccountResponse(localId: account.localID, email: account.email))

        default:
            throw ActionError(.notFound, "accounts:\(call.operation.prefix(100)) is not part of this server's API")
        }
    }

    /// `GET /emulator/v1/projects/<id>/oobCodes`: the links this process issued (when enabled).
    func listing(project: String, _ request: Request) throws(ActionError) -> Response {
        let expected = "/emulator/v1/projects/\(settings.project.id)/oobCodes"
        guard project == settings.project.id, let listing = listing else {
            throw ActionError(.notFound, "no method at \(request.uri.path)")
        }
        guard request.method == .get else { throw ActionError(.notFound, "use GET \(expected)") }
        let codes = listing.all.map {
            OobCodeListing.Entry(email: $0.email, oobCode: $0.code, oobLink: $0.link, requestType: $0.mode.requestType)
        }
        return json(IdentityToolkitJSON.encode(OobCodeListing(oobCodes: codes)))
    }

    func consumer(_ context: ServerRequestContext) -> String { "api " + (context.clientAddress ?? "?") }

    /// A JSON answer, 200.
    func json(_ body: Data) -> Response {
        Response(status: .ok, headers: Self.headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// JSON, never cached; `respond` adds CORS headers for an allowed origin.
    static let headers: HTTPFields = [
        .contentType: "application/json; charset=utf-8", .cacheControl: "no-store", .xContentTypeOptions: "nosniff",
    ]

    /// The headers a web app's Firebase SDK sends; a preflight allows these and no others.
    static let allowedRequestHeaders =
        "authorization, content-type, x-goog-api-key, x-firebase-locale, x-client-version, x-firebase-gmpid, x-firebase-client, x-firebase-appcheck"

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
