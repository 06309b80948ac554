import ActionLinks
import ActionLinksConfiguration
import AsyncHTTPClient
import Foundation
import JWTKit
import Logging
import NIOCore
import NIOFoundationCompat
import NIOPosix
import ServiceLifecycle
import Synchronization

/// The Identity Toolkit of the project this server fronts (`upstream`), over async-http-client,
/// answering in this server's terms: upstream's refusal as the ``ActionError`` of its code, no answer
/// as `UNAVAILABLE` (``Failure/actionError``).
///
/// Every call about a code carries the link's API key and tenant (and the headers the configured
/// apps' SDKs send with their keys, so a key restricted to one of them passes Google's API front
/// end), connects within 3 seconds, is answered (head and body) within 10, and is refused at once
/// when `upstream.poolSize` calls to its host are in flight. Nothing about a code is kept here; logs never see a code or a password.
package final class UpstreamClient: Service, Sendable {
    /// Why a call did not get an answer from upstream's accounts, or upstream's refusal (inside the
    /// client: its callers get ``actionError``).
    enum Failure: Error, Sendable {
        /// Firebase's error code (`EXPIRED_OOB_CODE`) and the detail after ` : `, if any.
        case refused(code: String, detail: String?)
        /// Upstream could not be reached: nothing was sent, so nothing was changed.
        case unreachable
        /// The request went out and no answer came back in time: upstream may have applied it.
        case noAnswer

        /// The failure as this server's error: upstream's refusal as the same Firebase code and
        /// detail (a code this server does not know: `INTERNAL_ERROR` naming it), no answer as
        /// `UNAVAILABLE` saying whether anything was sent.
        var actionError: ActionError {
            switch self {
            case .unreachable:
                ActionError(.unavailable, Self.unreachableDetail)
            case .noAnswer:
                ActionError(.unavailable, Self.noAnswerDetail)
            case .refused(let code, let detail):
                ActionError.Code(rawValue: code).map { ActionError($0, detail) }
                    ?? ActionError(.internalError, "the project refused the request (\(code.prefix(60)))")
            }
        }

        /// `UNAVAILABLE`'s detail when nothing was sent.
        static let unreachableDetail = "the project's Identity Toolkit cannot be reached; nothing was sent"
        /// `UNAVAILABLE`'s detail when the request went out and no answer came.
        static let noAnswerDetail = "the project's Identity Toolkit did not answer in time"
    }

    /// What upstream says about a code (`accounts:resetPassword` with only the code, or the answer
    /// of applying it).
    package struct CodeAnswer: Decodable, Sendable {
        package var requestType: String?
        package var email: String?
        package var newEmail: String?

        package init(requestType: String?, email: String? = nil, newEmail: String? = nil) {
            self.requestType = requestType
            self.email = email
            self.newEmail = newEmail
        }
    }

    package let settings: UpstreamSettings
    /// How long a call waits for upstream's answer (`upstream.answerTimeout`).
    let answerTimeout: TimeAmount
    let client: HTTPClient
    /// The exchanges in flight with each host (`upstream.poolSize`).
    let slots: ExchangeSlots
    private let token = Mutex<(value: String, until: Int64)?>(nil)
    private let lastAnswered = Mutex<ContinuousClock.Instant?>(nil)
    /// The headers sent with a link's API key, one set per try (``platformHeaders(apps:referer:)``).
    let keyHeaders: [[(String, String)]]
    /// Where each call is counted and timed (`actionlinks_upstream_*`).
    let metrics: ServerMetrics?
    /// Where a failed call is told, one warning line each.
    let logger: Logger?

    package init(
        settings: UpstreamSettings, apps: AppsConfiguration = AppsConfiguration(), referer: String? = nil, metrics: ServerMetrics? = nil,
        logger: Logger? = nil
    ) {
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
        keyHeaders = Self.platformHeaders(apps: apps, referer: referer)
        answerTimeout = .seconds(Int64(settings.answerTimeout))
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(Int64(settings.connectTimeout)), read: answerTimeout))
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = settings.poolSize
        slots = ExchangeSlots(capacity: settings.poolSize)
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }

    /// Closes the client's connections when the server stops.
    package func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }

    /// The code's mode and address, without consuming it (what the JS SDK's `checkActionCode` asks).
    package func check(code: String, apiKey: String, tenantID: String?) async throws(ActionError) -> CodeAnswer {
        try await mapped { () throws(Failure) in
            try await call("accounts:resetPassword", ["oobCode": code, "tenantId": tenantID], apiKey: apiKey)
        }
    }

    /// Whether the project still accepts the action link `link` (its code checked, never
    /// consumed): `false` once the code was used, voided or expired, or for a link that is not an
    /// action link with a key; a failure to ask is thrown.
    package func accepts(link: String) async throws(ActionError) -> Bool {
        guard let action = ActionCodeLink.parse(link), let apiKey = action.apiKey else { return false }
        do {
            _ = try await check(code: action.oobCode, apiKey: apiKey, tenantID: action.tenantID)
            return true
        } catch {
            switch error.code {
            case .invalidOOBCode, .expiredOOBCode: return false
            default: throw error
            }
        }
    }

    /// Sets a new password with a reset code.
    package func resetPassword(code: String, newPassword: String, apiKey: String, tenantID: String?) async throws(ActionError) -> CodeAnswer
    {
        try await mapped { () throws(Failure) in
            try await call("accounts:resetPassword", ["oobCode": code, "newPassword": newPassword, "tenantId": tenantID], apiKey: apiKey)
        }
    }

    /// Applies a verify, recover or verify-and-change code (`accounts:update` with the code).
    package func apply(code: String, apiKey: String, tenantID: String?) async throws(ActionError) -> CodeAnswer {
        try await mapped { () throws(Failure) in try await call("accounts:update", ["oobCode": code, "tenantId": tenantID], apiKey: apiKey)
        }
    }

    /// What upstream answers when asked for a code (`accounts:sendOobCode` with `returnOobLink`).
    struct IssuedCode: Decodable, Sendable {
        var email: String?
        var oobCode: String?
    }

    /// Asks upstream, as the service account, for a code (never mailed by upstream: `returnOobLink`),
    /// in `locale` (`X-Firebase-Locale`, as the SDKs send the app's language).
    func issueCode(_ fields: [String: String], locale: String? = nil, now: Int64) async throws(ActionError) -> IssuedCode {
        try await mapped { () throws(Failure) in
            let token = try await accessToken(now: now)
            var body: [String: Any] = fields
            body["returnOobLink"] = true
            var headers = [("Authorization", "Bearer " + token)]
            if let locale { headers.append(("X-Firebase-Locale", locale)) }
            return try await call("projects/\(settings.projectID)/accounts:sendOobCode", body, headers: headers)
        }
    }

    /// Asks upstream, as a client with the link's API key, to mail a password reset (what Firebase's
    /// hosted page does after an address is recovered): upstream's own mail.
    package func sendPasswordReset(email: String, apiKey: String, tenantID: String?) async throws(ActionError) {
        try await mapped { () throws(Failure) in
            let _: IssuedCode = try await call(
                "accounts:sendOobCode", ["requestType": "PASSWORD_RESET", "email": email, "tenantId": tenantID], apiKey: apiKey)
        }
    }

    /// The address of the user an ID token names, as upstream (which checks the token) answers.
    func email(idToken: String, apiKey: String, tenantID: String?) async throws(ActionError) -> String? {
        struct Users: Decodable {
            struct User: Decodable { var email: String? }
            var users: [User]?
        }
        let answer: Users = try await mapped { () throws(Failure) in
            try await call("accounts:lookup", ["idToken": idToken, "tenantId": tenantID], apiKey: apiKey)
        }
        return answer.users?.first?.email
    }

    /// The project's (or a tenant's) password policy, as the JS SDK reads it:
    /// `GET /v2/passwordPolicy?key=<the link's key>[&tenantId=]`.
    func passwordPolicy(apiKey: String, tenantID: String?) async throws(ActionError) -> PasswordPolicyResponse {
        try await mapped { () throws(Failure) in try await readPasswordPolicy(apiKey: apiKey, tenantID: tenantID) }
    }

    private func readPasswordPolicy(apiKey: String, tenantID: String?) async throws(Failure) -> PasswordPolicyResponse {
        func escaped(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "" }
        var query = "key=" + escaped(apiKey)
        if let tenantID, !tenantID.isEmpty { query += "&tenantId=" + escaped(tenantID) }
        return try await withKeyHeaders { headers throws(Failure) in
            var request = HTTPClientRequest(url: settings.identityToolkitURL + "/v2/passwordPolicy?" + query)
            request.method = .GET
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            return try await observed(.passwordPolicy) { (answered: inout UInt?) throws(Failure) in
                let (status, data) = try await send(request)
                answered = status
                return try Self.answer(status: status, data: data)
            }
        }
    }

    private func call<Answer: Decodable>(_ operation: String, _ fields: [String: String?], apiKey: String) async throws(Failure)
        -> Answer
    {
        try await withKeyHeaders { headers throws(Failure) in
            try await call(operation, fields.compactMapValues { $0 }, headers: [("X-Goog-Api-Key", apiKey)] + headers)
        }
    }

    // MARK: API keys restricted to an app

    /// Runs `attempt` with each set of ``keyHeaders`` in turn while Google's API front end refuses
    /// the key for an application restriction (`API_KEY_IOS_APP_BLOCKED`,
    /// `API_KEY_ANDROID_APP_BLOCKED`, `API_KEY_HTTP_REFERRER_BLOCKED`): a 403 from the front end means
    /// the call reached nothing, so the next set is as safe to send as the first. Usually there is
    /// one set.
    private func withKeyHeaders<Answer>(_ attempt: ([(String, String)]) async throws(Failure) -> Answer) async throws(Failure) -> Answer {
        var refusal = Failure.unreachable
        for headers in keyHeaders {
            do throws(Failure) {
                return try await attempt(headers)
            } catch .refused(let code, let detail) where Self.isKeyRestriction(code) {
                refusal = .refused(code: code, detail: detail)
            }
        }
        throw refusal
    }

    /// Whether upstream refused a key for an application restriction the request did not meet.
    static func isKeyRestriction(_ code: String) -> Bool {
        ["API_KEY_IOS_APP_BLOCKED", "API_KEY_ANDROID_APP_BLOCKED", "API_KEY_HTTP_REFERRER_BLOCKED"].contains(code)
    }

    /// The headers the apps' SDKs send with their API keys, as sets to try in turn: in each, the
    /// browser's `Referer` (the link domain's origin, for a key restricted to websites), one iOS
    /// app's `X-Ios-Bundle-Identifier`, and one Android app's `X-Android-Package` with one of its
    /// `sha1CertFingerprints` as `X-Android-Cert` (upper-case hex without colons, as the Android
    /// SDK sends it). A key is restricted to one kind of app, so one set passes any key restricted
    /// to one of the first apps of each kind; the next sets carry the next apps.
    static func platformHeaders(apps: AppsConfiguration, referer: String?) -> [[(String, String)]] {
        var bundles: [String] = []
        for app in apps.appleApps where !bundles.contains(app.bundleID) { bundles.append(app.bundleID) }
        var androids: [[(String, String)]] = []
        for app in apps.androidApps {
            if app.sha1Fingerprints.isEmpty { androids.append([("X-Android-Package", app.packageName)]) }
            for fingerprint in app.sha1Fingerprints {
                let hex = fingerprint.filter { $0 != ":" }.uppercased()
                androids.append([("X-Android-Package", app.packageName), ("X-Android-Cert", hex)])
            }
        }
        return (0..<max(1, bundles.count, androids.count)).map { index in
            var headers: [(String, String)] = referer.map { [("Referer", $0)] } ?? []
            if index < bundles.count { headers.append(("X-Ios-Bundle-Identifier", bundles[index])) }
            if index < androids.count { headers += androids[index] }
            return headers
        }
    }

    private func call<Answer: Decodable>(_ operation: String, _ fields: [String: Any], headers: [(String, String)]) async throws(Failure)
        -> Answer
    {
        var request = HTTPClientRequest(url: settings.identityToolkitURL + "/v1/" + operation)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let body = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data()
        request.body = .bytes(ByteBuffer(bytes: body))
        let name = operation.split(separator: "/").last.map(String.init) ?? operation
        return try await observed(ServerMetrics.UpstreamCall(rawValue: name) ?? .update) { (answered: inout UInt?) throws(Failure) in
            let (status, data) = try await send(request)
            answered = status
            return try Self.answer(status: status, data: data)
        }
    }

    /// Runs one call to upstream, counting and timing it (`actionlinks_upstream_requests_total`,
    /// `actionlinks_upstream_request_seconds`), and logs one warning line when it fails: the
    /// operation, the outcome, the HTTP status upstream answered with (`none` when it did not) and
    /// Google's error code (an upper-case name, else `other`); never a code, a key, a token or an
    /// address. `body` sets the status it got. A call that gets its answer marks upstream as
    /// answering (``lastAnswer``).
    private func observed<Answer>(_ call: ServerMetrics.UpstreamCall, _ body: (inout UInt?) async throws(Failure) -> Answer)
        async throws(Failure) -> Answer
    {
        let start = ContinuousClock.now
        var status: UInt?
        do throws(Failure) {
            let answer = try await body(&status)
            metrics?.upstreamCall(call, outcome: .ok, duration: .now - start)
            lastAnswered.withLock { $0 = .now }
            return answer
        } catch {
            let outcome: ServerMetrics.UpstreamOutcome
            var fields: Logger.Metadata = ["operation": "\(call.rawValue)", "status": "\(status.map(String.init) ?? "none")"]
            switch error {
            case .refused(let code, _):
                outcome = .refused
                let named = !code.isEmpty && code.utf8.allSatisfy { $0 == UInt8(ascii: "_") || (0x41...0x5A).contains($0) }
                fields["code"] = "\(named ? code : "other")"
            case .unreachable: outcome = .unreachable
            case .noAnswer: outcome = .noAnswer
            }
            fields["outcome"] = "\(outcome.rawValue)"
            metrics?.upstreamCall(call, outcome: outcome, duration: .now - start)
            logger?.warning("a call to the fronted project failed", metadata: fields)
            throw error
        }
    }

    /// When upstream last answered a call of this server's (any call that succeeded), if ever.
    var lastAnswer: ContinuousClock.Instant? { lastAnswered.withLock { $0 } }

    /// Asks upstream something cheap that it answers whenever it works for this project: the
    /// project's password policy with the first API key (no quota of the project's is spent) and,
    /// with a service account, its access token (a call only when the kept one is near its end).
    func probe(now: Int64) async throws(ActionError) {
        try await mapped { () throws(Failure) in
            _ = try await readPasswordPolicy(apiKey: settings.apiKeys.first ?? "", tenantID: nil)
            if settings.hasServiceAccount { _ = try await accessToken(now: now) }
        }
    }

    /// `body`'s answer, or its failure in this server's terms (``Failure/actionError``).
    private func mapped<Answer>(_ body: () async throws(Failure) -> Answer) async throws(ActionError) -> Answer {
        do throws(Failure) {
            return try await body()
        } catch {
            throw error.actionError
        }
    }

    /// Upstream's answer as `Answer`, or its refusal (Firebase's code and detail).
    private static func answer<Answer: Decodable>(status: UInt, data: Data) throws(Failure) -> Answer {
        if status == 200, let answer = try? JSONDecoder().decode(Answer.self, from: data) { return answer }
        guard let body = try? JSONDecoder().decode(FirebaseErrorBody.self, from: data) else {
            // A gateway's page, or a 5xx without Firebase's body: upstream is not answering for its accounts.
            throw status >= 500 ? .noAnswer : .refused(code: "UNKNOWN", detail: nil)
        }
        // Google's API front end refusing a key says why in a google.rpc.ErrorInfo, not in the message.
        if let reason = body.error.details?.lazy.compactMap(\.reason).first(where: { $0.hasPrefix("API_KEY_") }) {
            throw .refused(code: reason, detail: body.error.message)
        }
        let parts = body.error.message.components(separatedBy: " : ")
        throw .refused(code: parts[0], detail: parts.count > 1 ? parts.dropFirst().joined(separator: " : ") : nil)
    }

    /// One exchange, head and body within `upstream.answerTimeout` (``exchange(_:upTo:)``); a host
    /// whose slots are all taken is `.unreachable` at once (nothing was sent).
    private func send(_ request: HTTPClientRequest) async throws(Failure) -> (UInt, Data) {
        let reply = try await answer(to: request, upTo: 1 << 20)
        return (reply.status, Data(buffer: reply.body))
    }

    /// The whole answer (``exchange(_:upTo:)``), or why there is none: `.unreachable` when nothing
    /// was sent (no connection, or no free slot), `.noAnswer` otherwise.
    private func answer(to request: HTTPClientRequest, upTo maximumBytes: Int) async throws(Failure) -> Answer {
        do throws(ExchangeFailure) {
            return try await exchange(request, upTo: maximumBytes)
        } catch .busy {
            throw .unreachable
        } catch .failed(let error) where Self.isConnectFailure(error) {
            throw .unreachable
        } catch {
            throw .noAnswer
        }
    }

    // MARK: The service account's access token

    /// The scopes asked for, as firebase-admin asks for them.
    static let scopes = [
        "https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/firebase",
        "https://www.googleapis.com/auth/identitytoolkit",
    ]

    /// An access token for the service account (RFC 7523's JWT-bearer grant at its `token_uri`),
    /// kept until a minute before it expires. The assertion names Google's token URL whatever the
    /// `token_uri`, as google-auth signs it (an ActionLinks token endpoint takes that audience too).
    /// With `upstream.metadataServer`, the token comes from there instead (``metadataToken(from:now:)``).
    func accessToken(now: Int64) async throws(Failure) -> String {
        if let cached = token.withLock({ $0 }), cached.until > now { return cached.value }
        if let metadataServer = settings.metadataServer { return try await metadataToken(from: metadataServer, now: now) }
        guard let account = settings.serviceAccount else { throw .refused(code: "NO_SERVICE_ACCOUNT", detail: nil) }
        let assertion: String
        do {
            let keys = JWTKeyCollection()
            let kid = JWKIdentifier(string: account.privateKeyID)
            await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: account.privateKeyPEM), digestAlgorithm: .sha256, kid: kid)
            assertion = try await keys.sign(
                GrantAssertion(
                    iss: account.clientEmail, scope: Self.scopes.joined(separator: " "), aud: ServiceAccountTokens.googleTokenURL, iat: now,
                    exp: now + 3600),
                kid: kid)
        } catch {
            throw .refused(code: "INVALID_SERVICE_ACCOUNT_KEY", detail: nil)
        }
        var request = HTTPClientRequest(url: account.tokenURI)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        let form =
            "grant_type=" + "urn:ietf:params:oauth:grant-type:jwt-bearer".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            + "&assertion=" + assertion
        request.body = .bytes(ByteBuffer(string: form))
        struct Grant: Decodable {
            var access_token: String
            var expires_in: Int64?
        }
        let grant = try await observed(.token) { (answered: inout UInt?) throws(Failure) -> Grant in
            let (status, data) = try await send(request)
            answered = status
            guard status == 200, let grant = try? JSONDecoder().decode(Grant.self, from: data) else {
                if status >= 500 { throw .noAnswer }
                throw .refused(code: "SERVICE_ACCOUNT_REFUSED", detail: nil)
            }
            return grant
        }
        let until = now + max(0, (grant.expires_in ?? 3600) - 60)
        token.withLock { $0 = (grant.access_token, until) }
        return grant.access_token
    }

    /// The default service account's access token from the metadata server (Cloud Run, GKE,
    /// Compute Engine: no key file, which organizations made since 2024-05-03 forbid):
    /// `GET <server>/computeMetadata/v1/instance/service-accounts/default/token?scopes=...` with
    /// `Metadata-Flavor: Google`, whose answer must carry `Metadata-Flavor: Google` too (anything
    /// else is not the metadata server: a proxy's or a captive portal's page); kept until a minute
    /// before its `expires_in`.
    private func metadataToken(from server: String, now: Int64) async throws(Failure) -> String {
        let scopes = Self.scopes.joined(separator: ",").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        var request = HTTPClientRequest(url: server + "/computeMetadata/v1/instance/service-accounts/default/token?scopes=" + scopes)
        request.method = .GET
        request.headers.add(name: "Metadata-Flavor", value: "Google")
        struct Grant: Decodable {
            var access_token: String
            var expires_in: Int64?
        }
        let grant = try await observed(.metadataToken) { (answered: inout UInt?) throws(Failure) -> Grant in
            let reply = try await answer(to: request, upTo: 64 << 10)
            answered = reply.status
            guard reply.headers["Metadata-Flavor"].first == "Google" else {
                throw .refused(code: "NOT_THE_METADATA_SERVER", detail: "the answer has no Metadata-Flavor: Google")
            }
            guard reply.status == 200, let grant = try? JSONDecoder().decode(Grant.self, from: Data(buffer: reply.body)),
                !grant.access_token.isEmpty
            else {
                if reply.status >= 500 { throw .noAnswer }
                throw .refused(code: "METADATA_SERVER_REFUSED", detail: "HTTP \(reply.status)")
            }
            return grant
        }
        let until = now + max(0, (grant.expires_in ?? 3600) - 60)
        token.withLock { $0 = (grant.access_token, until) }
        return grant.access_token
    }

    /// Whether `error` means the connection was never made (so the request was never sent).
    static func isConnectFailure(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError, error == .connectTimeout { return true }
        if error is NIOConnectionError { return true }
        if let error = error as? ChannelError, case .connectTimeout = error { return true }
        if let error = error as? IOError { return error.errnoCode == ECONNREFUSED }
        return false
    }

    private struct FirebaseErrorBody: Decodable {
        struct Detail: Decodable { var reason: String? }
        struct Inner: Decodable {
            var message: String
            var details: [Detail]?
        }
        var error: Inner
    }
}

/// The claims of the JWT-bearer assertion for the service account's access token (signed here,
/// checked by Google).
struct GrantAssertion: SignedOnlyClaims {
    var iss: String
    var scope: String
    var aud: String
    var iat: Int64
    var exp: Int64
}
