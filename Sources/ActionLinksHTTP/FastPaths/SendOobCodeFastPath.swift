import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksHeaders
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOFoundationCompat

/// Links issued (`POST /v1/accounts:sendOobCode`, also under `/identitytoolkit.googleapis.com/v1`),
/// answered from the event loop (``FastPathRoute``, ``FastPathRoute/answersLater``) when the code
/// store makes all of a link's writes in one (``LinkIssuingInOneWrite``: SQLite's group commit,
/// PostgreSQL's batched statement): the request is read and checked on the event loop, the write
/// joins the store's next batch, and the answer is written when that batch has committed, from its
/// completion, instead of handing the request to the router, the middleware and the async
/// responder and back, and waiting for three or four commits in a row.
///
/// The rules are the route's, by the same code: who calls (``APIAuthenticationMiddleware/caller(uri:headers:_:accessTokens:)``),
/// who the client is (``ClientIdentity``), the body (``SendOobCodeRequest``), the tenant
/// (``Caller/tenantID(body:token:)``, ``TenantDirectory/policyNow(for:)``) and the link
/// (``CodeIssuer/issueNow(_:caller:tenant:completion:)``, the route's ``CodeIssuer/issue(_:caller:tenant:)``
/// in one write). The answer, a link or a refusal of the write (a limit, a quota, an address
/// without an account, the store), is the route's, with the same headers in the same order.
///
/// Everything that cannot be settled on the event loop, or that is refused before anything is
/// written, goes on to the router untouched, with its body, and the router answers it: a request
/// with `Origin` (CORS is the middleware's), `Connection`, a body that is not JSON or is over 8 KiB,
/// or one that may name a project; a caller the gate refuses; a tenant that must be read (a stored
/// one); a verification or an email change (they read the signed-in user); any refusal of the
/// checks. A request that arrives while an earlier one on the connection is with the router goes
/// there too, and one that arrives while a link is being written waits for its answer (pipelined
/// answers stay in order).
package struct SendOobCodeFastPath: FastPathRoute {
    let issuer: CodeIssuer
    let tenants: TenantDirectory
    let settings: ServiceSettings
    let accessTokens: ServiceAccountTokens
    let logger: Logger

    /// What is answered: the link's JSON answer, or the refusal its write came to.
    package typealias Answer = RESTAnswer

    package func answersLater(_ claim: String) -> Bool { true }

    package func metricsRoute(for claim: String) -> ServerMetrics.Route { .api }

    /// The largest body the fast path reads (a request for a link is well under 1 KiB).
    package func maximumBody(for claim: String) -> Int? { min(8192, settings.server.maximumBodyBytes) }

    /// The paths of `accounts:sendOobCode`, without a project or tenant.
    static let paths = IdentityToolkitRoutes.prefixes.map { $0 + "/accounts:sendOobCode" }

    /// A request for a link: `POST` to one of ``paths`` (with or without a query), without `Origin`.
    /// The claim is the path.
    package func claim(_ head: HTTPRequest) -> String? {
        guard head.method == .post, let target = head.path, !head.headerFields.contains(.origin) else { return nil }
        return FastPathTarget.path(target, in: Self.paths)
    }

    package func answer(_ claim: String, head: HTTPRequest, body: ByteBuffer) -> Answer? { nil }

    package func start(
        _ claim: String, head: HTTPRequest, body: ByteBuffer, peer: String?,
        reply: @escaping @Sendable (@escaping @Sendable () -> Answer) -> Void
    ) -> Bool {
        let headers = head.headerFields
        guard let type = headers[.contentType].flatMap({ MediaType($0) }), type.matches("application", "json"),
            !RESTCall.mayNameTarget(body),
            let caller = try? APIAuthenticationMiddleware.caller(
                uri: URI(head.path ?? ""), headers: headers, settings, accessTokens: accessTokens),
            let fields = try? IdentityToolkitJSON.decode(SendOobCodeRequest.self, from: Data(buffer: body))
        else { return false }
        var apiKey: String?
        if case .client(let key) = caller { apiKey = key }
        let who = Caller(
            isAdmin: caller == .admin,
            clientAddress: ClientIdentity.resolve(peer: peer, headers: headers, settings: settings.server).address,
            locale: headers.firebaseLocale, apiKey: apiKey)
        guard let tenantID = try? who.tenantID(body: fields.tenantId), let tenant = tenants.policyNow(for: tenantID),
            (try? tenant.checkEnabled()) != nil
        else { return false }
        let returnLink = fields.returnOobLink?.value ?? false
        let (issuer, logger) = (issuer, logger)
        let started = try? issuer.issueNow(fields.issueRequest, caller: who, tenant: tenant) { written in
            reply {
                switch issuer.finish(written) {
                case .success(let issued): .ok(IdentityToolkitJSON.encode(SendOobCodeResponse(issued, returnLink: returnLink)))
                case .failure(let refusal): .refusal(refusal, route: claim, logger: logger)
                }
            }
        }
        return started ?? false
    }

    package func status(of answer: Answer) -> Int { answer.status }

    package func encoded(_ answer: Answer) -> ByteBuffer? { answer.encoded }

    package func parts(of answer: Answer) -> (head: HTTPResponse, body: ByteBuffer?) { answer.parts }

    package func logRoute(_ claim: String) -> String { claim }

    /// Makes the value from each of its fields.
    package init(
        issuer: CodeIssuer, tenants: TenantDirectory, settings: ServiceSettings, accessTokens: ServiceAccountTokens, logger: Logger
    ) {
        self.issuer = issuer
        self.tenants = tenants
        self.settings = settings
        self.accessTokens = accessTokens
        self.logger = logger
    }
}
