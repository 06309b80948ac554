import ActionLinks
import ActionLinksConfiguration
import Crypto
import Foundation
import Logging

/// Issues codes (docs/ARCHITECTURE.md §2, step 1): `accounts:sendOobCode`'s rules, once for both
/// back ends (the REST API of this server's accounts and the front of a Firebase project call
/// ``issue(_:caller:tenant:)``), with the code from a ``CodeSource``; also announces the recovery
/// code an email change leaves behind.
public final class CodeIssuer: Sendable {
    let settings: ServiceSettings
    let policy: ContinueURLPolicy
    /// Where codes come from: this server's store, or the project it fronts.
    let source: any CodeSource
    /// The send limits' and quotas' counters.
    let codes: any CodeStore
    let keys: ServerKeys
    let mailer: Mailer
    let listing: IssuedLinkListing?
    let metrics: ServerMetrics
    let store: StoreGateway
    let clock: any ServiceClock
    /// The short code beside each sign-in link (``SignInCodes``).
    package let signInCodes: SignInCodes

    init(
        settings: ServiceSettings, policy: ContinueURLPolicy, source: any CodeSource, codes: any CodeStore, keys: ServerKeys,
        mailer: Mailer, listing: IssuedLinkListing?, metrics: ServerMetrics, store: StoreGateway, clock: any ServiceClock,
        signInCodes: SignInCodes
    ) {
        self.settings = settings
        self.policy = policy
        self.source = source
        self.codes = codes
        self.keys = keys
        self.mailer = mailer
        self.listing = listing
        self.metrics = metrics
        self.store = store
        self.clock = clock
        self.signInCodes = signInCodes
    }

    /// What a caller asks for when it asks for a link (`accounts:sendOobCode`'s fields).
    public struct IssueRequest: Sendable {
        /// Firebase's `requestType` (`PASSWORD_RESET`, `EMAIL_SIGNIN`, `VERIFY_EMAIL`, `VERIFY_AND_CHANGE_EMAIL`).
        public var requestType: String?
        /// The address (a password reset or sign-in; the admin's verification by address).
        public var email: String?
        /// The new address (`verifyAndChangeEmail`).
        public var newEmail: String?
        /// The signed-in user's ID token (a verification or an email change for oneself).
        public var idToken: String?
        /// The tenant the body names (the ID token's must agree).
        public var tenantID: String?
        /// The continue URL, checked against the allow-list.
        public var continueURL: String?
        /// Whether the app completes the action itself (mobile link when an app is named).
        public var canHandleCodeInApp = false
        /// The iOS app's bundle ID.
        public var iOSBundleID: String?
        /// The Android app's package name.
        public var androidPackageName: String?
        /// Whether the Android fallback should offer to install the app.
        public var androidInstallApp = false
        /// The lowest Android app version that can handle the link.
        public var androidMinimumVersion: String?
        /// The link domain to build the link on (one of the configured ones).
        public var linkDomain: String?
        /// Return the link instead of emailing it (admin only).
        public var returnLink = false

        /// A request for a link of Firebase's `requestType`.
        public init(requestType: String?) {
            self.requestType = requestType
        }
    }

    /// A link that was issued.
    public struct IssuedLink: Sendable {
        /// The link to open.
        public var link: String
        /// The code in it.
        public var code: String
        /// The address the answer names: the one asked about (for an email change, the current one).
        public var email: String
        /// Whether it was sent (or returned): `false` when the address has no account, so nothing
        /// went out; the caller answers exactly as if it had.
        public var delivered: Bool
        /// The sign-in code that came with a sign-in link (its digits), when codes are on.
        public var signInCode: String? = nil
    }

    /// Issues a code and returns the link (`returnLink`, the admin only) or emails it. Whether an
    /// address with no account is told so is the source's (``CodeSource/code(for:)``); when it is
    /// not, nothing is sent (``IssuedLink/delivered`` is `false`) and the caller answers exactly as
    /// if it had been. The checks, in order: the request type, who may have the link returned,
    /// what the source can issue, the signed-in user (an ID token), the continue URL, the mobile
    /// settings, the link domain, the addresses, the hourly send limits (clients), the daily quota
    /// of the mode. `tenant` is the tenant the call resolved; `caller.locale` is the language of
    /// the mail and the pages.
    ///
    /// The work is a plan (every check that reads nothing), the writes, and a finish (the metrics,
    /// the listing, the mail). With a store that makes all of a link's writes in one
    /// (``LinkIssuingInOneWrite``), they are one trip to its writer; else one call each, in order.
    package func issue(_ request: IssueRequest, caller: Caller, tenant named: TenantPolicy) async throws(ActionError) -> IssuedLink {
        let mode = try checkedMode(request, caller: caller, tenant: named)
        let requester = try await requester(mode, request, caller: caller, tenant: named)
        let plan = try plan(mode, request, caller: caller, tenant: requester?.tenant ?? named, requester: requester)
        if let prepared = try prepareOneWrite(plan) {
            let outcome = try await store.call {
                try await withCheckedThrowingContinuation { (done: CheckedContinuation<LinkIssueWrite.Outcome, any Error>) in
                    prepared.store.issueLink(prepared.write) { done.resume(with: $0) }
                }
            }
            return try finish(plan, prepared, outcome)
        }
        for (index, stage) in plan.stages.enumerated() {
            let counts = try await store.call {
                try await self.codes.countEvents(keys: stage.limits.map(\.key), windowStart: stage.windowStart)
            }
            if zip(counts, stage.limits).contains(where: { $0 > $1.maximum }) { throw plan.refusals[index] }
        }
        let sourced = try await source.code(for: plan.pending)
        metrics.codeIssued(plan.pending.mode)
        let link = link(plan, code: sourced.code)
        // With email-enumeration protection an address with no account gets no mail, but the same
        // answer, byte for byte, after the same work: its code made and counted, its sign-in code
        // stored (a sign-in code lives no longer than its link) and its mail sealed.
        var signInCode: String?
        if plan.pending.mode == .signIn {
            signInCode = try await signInCodes.issue(
                tenantID: plan.tenantID, email: plan.pending.email, link: link, oobCode: sourced.code, linkHash: sourced.hash,
                linkExpiry: plan.pending.expiresAt)
        }
        // The mail is stored before the answer (after its code: a crash between the two leaves a
        // code with no mail, never a mail whose link does not work).
        if let mail = try letter(plan, link: link, signInCode: signInCode, codeHash: sourced.hash), sourced.deliver {
            try await mailer.enqueue(mail)
        }
        return issued(plan, code: sourced.code, link: link, delivered: sourced.deliver, signInCode: signInCode)
    }

    /// The sealed mail of `plan`'s link, or `nil` when the link is returned rather than mailed.
    func letter(_ plan: Plan, link: String, signInCode: String?, codeHash: Data?) throws(ActionError) -> OutboxMail? {
        guard !plan.request.returnLink else { return nil }
        return try mailer.letter(
            mode: plan.pending.mode, to: plan.recipient, link: link, languageCode: plan.caller.locale, appName: settings.project.appName,
            signInCode: signInCode, codeHash: codeHash, expiresAt: plan.pending.expiresAt, now: plan.pending.now)
    }

    /// ``issue(_:caller:tenant:)`` for a caller on an event loop, which waits for nothing: `false`
    /// when the request needs more than the plan and one write (a verification or an email change,
    /// which read the signed-in user; a source or store that writes in several calls), and then
    /// nothing was done. Else `true`, and `completion` is given the written link once its write has
    /// committed, on the thread that ran the write: it should only hand it to its own thread, where
    /// ``finish(_:)`` makes the answer (the write's next batch waits for the completions of this one).
    /// A refusal the plan finds is thrown, before anything is written.
    package func issueNow(
        _ request: IssueRequest, caller: Caller, tenant named: TenantPolicy, completion: @escaping @Sendable (WrittenLink) -> Void
    ) throws(ActionError) -> Bool {
        let mode = try checkedMode(request, caller: caller, tenant: named)
        guard mode == .signIn || mode == .resetPassword else { return false }
        let plan = try plan(mode, request, caller: caller, tenant: named, requester: nil)
        guard let prepared = try prepareOneWrite(plan) else { return false }
        prepared.store.issueLink(prepared.write) { outcome in
            completion(WrittenLink(plan: plan, prepared: prepared, outcome: outcome))
        }
        return true
    }

    /// A link of ``issueNow(_:caller:tenant:completion:)`` whose write is over.
    package struct WrittenLink: Sendable {
        let plan: Plan
        let prepared: OneWriteCode
        let outcome: Result<LinkIssueWrite.Outcome, any Error>
    }

    /// The link issued by `written`'s write, or the refusal it came to (the metrics counted, the
    /// link listed and mailed, as ``issue(_:caller:tenant:)`` does).
    package func finish(_ written: WrittenLink) -> Result<IssuedLink, ActionError> {
        Result { () throws(ActionError) in
            let outcome = try written.outcome.mapError { self.store.failure($0) }.get()
            return try finish(written.plan, written.prepared, outcome)
        }
    }

    /// A link's request, settled by the checks that read nothing (``plan(_:_:caller:tenant:requester:)``).
    struct Plan: Sendable {
        var pending: PendingCode
        var request: IssueRequest
        var caller: Caller
        /// Whether the link is the mobile one (on `domain`).
        var mobile: Bool
        var domain: LinkDomain
        /// Whom the mail goes to: the new address of an email change, else the address.
        var recipient: String
        /// The counts to make before the code, in order, and what each refuses with.
        var stages: [LinkIssueWrite.Stage]
        var refusals: [ActionError]

        var tenantID: String { pending.tenant.tenantID }
    }

    /// The mode `request` asks for, after the checks before anything else: the request type, who
    /// may have the link returned, and what the source can issue.
    func checkedMode(_ request: IssueRequest, caller: Caller, tenant: TenantPolicy) throws(ActionError) -> ActionCodeLink.Mode {
        guard let type = request.requestType, !type.isEmpty, type != "OOB_REQ_TYPE_UNSPECIFIED" else {
            throw ActionError(.missingRequestType)
        }
        guard let mode = ActionCodeLink.Mode(requestType: type) else {
            throw ActionError(.invalidRequestType, "unknown requestType '\(type.prefix(100))'")
        }
        guard [.signIn, .resetPassword, .verifyEmail, .verifyAndChangeEmail].contains(mode) else {
            throw ActionError(.invalidRequestType, "\(mode.requestType) links are sent when their change is made, not on request")
        }
        if request.returnLink, !caller.isAdmin { throw ActionError.insufficientPermission }
        try source.checkIssuable(mode, tenant: tenant)
        return mode
    }

    /// The signed-in user a verification or an email change is for, or `nil` for a link by address.
    /// As in Firebase, `returnOobLink` marks the admin's request by address; any other is the
    /// signed-in user's own. The admin may also have it mailed (Firebase's admin can only have it
    /// returned).
    func requester(_ mode: ActionCodeLink.Mode, _ request: IssueRequest, caller: Caller, tenant: TenantPolicy) async throws(ActionError)
        -> CodeRequester?
    {
        guard mode == .verifyEmail || mode == .verifyAndChangeEmail else { return nil }
        if mode == .verifyAndChangeEmail, request.newEmail?.isEmpty ?? true { throw ActionError(.missingNewEmail) }
        guard !caller.isAdmin || request.idToken != nil else { return nil }
        // Firebase's emulator: no token is MISSING_ID_TOKEN for an email change and an unreadable
        // one (INVALID_ID_TOKEN) for a verification.
        guard let idToken = request.idToken, !idToken.isEmpty else {
            throw mode == .verifyAndChangeEmail ? ActionError(.missingIDToken) : ActionError.invalidIDToken
        }
        let requester = try await source.requester(
            idToken: idToken, mode: mode, caller: caller, tenant: tenant, bodyTenant: request.tenantID)
        guard requester.email != nil else { throw ActionError.missingEmail }
        return requester
    }

    /// The rest of the checks, which read nothing: the continue URL, the mobile settings, the link
    /// domain, the addresses; and the counts to make (the hourly send limits for a client, the
    /// daily quota of the mode).
    func plan(_ mode: ActionCodeLink.Mode, _ request: IssueRequest, caller: Caller, tenant: TenantPolicy, requester: CodeRequester?)
        throws(ActionError) -> Plan
    {
        let isAdmin = caller.isAdmin
        let emulator = source.followsEmulator
        // A development server, like Firebase's emulator, needs no continue URL for a sign-in link;
        // Firebase production needs one from a client, not from the admin (OAuth).
        let continueURL = try checkedContinueURL(request.continueURL, required: mode == .signIn && !emulator && !isAdmin)
        // Firebase production refuses an app's bundle or package (the iOS SDK always sends its bundle)
        // where the project has no mobile link domain; its emulator ignores them.
        let namesApp = !(request.iOSBundleID ?? "").isEmpty || !(request.androidPackageName ?? "").isEmpty
        let mobileDomain = settings.mobileLinkDomain
        if namesApp, mobileDomain == nil, !emulator {
            throw ActionError(.dynamicLinkNotActivated, "FDL domain is not configured")
        }
        let mobile = request.canHandleCodeInApp && namesApp && mobileDomain != nil
        let domain = try linkDomain(request.linkDomain, default: mobile ? mobileDomain : nil)

        let address: String
        if let email = requester?.email {
            guard let canonical = EmailAddress.canonical(email) else { throw ActionError.missingEmail }
            address = canonical
        } else {
            guard let given = request.email, !given.isEmpty else { throw ActionError.missingEmail }
            guard let canonical = EmailAddress.canonical(given) else { throw ActionError.invalidEmail }
            address = canonical
        }
        var newEmail: String?
        if mode == .verifyAndChangeEmail {
            guard let canonical = EmailAddress.canonical(request.newEmail ?? "") else { throw ActionError(.invalidNewEmail) }
            newEmail = canonical
        }

        let now = clock.now
        var stages: [LinkIssueWrite.Stage] = []
        var refusals: [ActionError] = []
        if !isAdmin {
            for stage in sendLimits(addresses: [address] + (newEmail.map { [$0] } ?? []), clientAddress: caller.clientAddress, now: now) {
                stages.append(stage)
                refusals.append(.tooManyAttempts)
            }
        }
        if let quota = dailyQuota(mode, returnLink: request.returnLink, now: now) {
            stages.append(quota)
            refusals.append(Self.quotaExceeded(mode, links: request.returnLink))
        }

        var appSettings = AppSettings()
        appSettings.iOSBundleId = request.iOSBundleID
        appSettings.androidPackageName = request.androidPackageName
        appSettings.androidMinimumVersion = request.androidMinimumVersion
        if request.androidInstallApp { appSettings.androidInstallApp = "true" }
        if request.canHandleCodeInApp { appSettings.canHandleCodeInApp = "true" }
        let pending = PendingCode(
            mode: mode, tenant: tenant, email: address, newEmail: newEmail, account: requester?.account, continueURL: continueURL,
            languageCode: caller.locale, appSettings: appSettings, isAdmin: isAdmin, now: now,
            expiresAt: now + .seconds(settings.codes.lifetime(of: mode)))
        return Plan(
            pending: pending, request: request, caller: caller, mobile: mobile, domain: domain, recipient: newEmail ?? address,
            stages: stages, refusals: refusals)
    }

    /// The source's one write for `plan`, with the counts and the sign-in code added; `nil` when
    /// the source writes its code itself (``CodeSource/code(for:)``).
    func prepareOneWrite(_ plan: Plan) throws(ActionError) -> OneWriteCode? {
        guard var prepared = source.oneWrite(for: plan.pending) else { return nil }
        prepared.write.stages = plan.stages
        if plan.pending.mode == .signIn,
            let made = try signInCodes.prepare(
                tenantID: plan.tenantID, email: plan.pending.email, link: link(plan, code: prepared.code), oobCode: prepared.code,
                linkHash: prepared.write.record.hash, linkExpiry: plan.pending.expiresAt)
        {
            prepared.write.signInCode = made.record
            prepared.signInCode = made.code
        }
        // Written with the code when the link goes out (the store asks ``LinkIssueWrite/decide``).
        prepared.write.mail = try letter(
            plan, link: link(plan, code: prepared.code), signInCode: prepared.signInCode, codeHash: prepared.write.record.hash)
        return prepared
    }

    /// The link issued once its one write came out as `outcome`, or the refusal it came to.
    func finish(_ plan: Plan, _ prepared: OneWriteCode, _ outcome: LinkIssueWrite.Outcome) throws(ActionError) -> IssuedLink {
        switch outcome {
        case .overLimit(let stage): throw plan.refusals[stage]
        case .refused(let refusal): throw refusal
        case .stored(let deliver):
            metrics.codeIssued(plan.pending.mode)
            if deliver, prepared.write.mail != nil { mailer.wake() }
            let code = prepared.code
            return issued(plan, code: code, link: link(plan, code: code), delivered: deliver, signInCode: prepared.signInCode)
        }
    }

    /// The link of `plan` with `code`.
    func link(_ plan: Plan, code: String) -> String {
        let tenantID = plan.tenantID
        let action = ActionCodeLink(
            mode: plan.pending.mode, oobCode: code, apiKey: source.linkKey(plan.caller.apiKey), continueURL: plan.pending.continueURL,
            languageCode: plan.caller.locale, tenantID: tenantID.isEmpty ? nil : tenantID)
        return plan.mobile ? action.mobileLink(on: plan.domain) : action.webLink(on: plan.domain)
    }

    /// The finish of an issued link: listed and mailed (unless returned) when it is delivered; its
    /// mail rendered all the same when it is not, so both take the same work.
    func issued(_ plan: Plan, code: String, link: String, delivered: Bool, signInCode: String?) -> IssuedLink {
        let address = plan.pending.email
        guard delivered else { return IssuedLink(link: link, code: code, email: address, delivered: false) }
        listing?.record(
            .init(tenantID: plan.tenantID, email: address, newEmail: plan.pending.newEmail, mode: plan.pending.mode, code: code, link: link)
        )
        return IssuedLink(link: link, code: code, email: address, delivered: true, signInCode: signInCode)
    }

    /// The `recoverEmail` code for an email change (its hash, stored by the caller in the change's
    /// transaction, and the code to announce afterwards).
    func recoveryCode(now: Timestamp) -> (code: String, hash: Data, expiresAt: Timestamp) {
        noticeCode(.recoverEmail, now: now)
    }

    /// A code of `mode` that a change leaves for the account's owner to undo it (`recoverEmail`
    /// after an email change, `revertSecondFactorAddition` after an enrolment): its hash, stored by
    /// the caller in the change's transaction, and the code to announce afterwards.
    func noticeCode(_ mode: ActionCodeLink.Mode, now: Timestamp) -> (code: String, hash: Data, expiresAt: Timestamp) {
        let code = Secrets.token()
        return (code, keys.newCodeHash(code), now + .seconds(settings.codes.lifetime(of: mode)))
    }

    /// The sealed mail of the `recoverEmail` code an email change leaves for the old address, to be
    /// written in the change's transaction: `change` names the old address (`email`) and the new one.
    func recoveryLetter(code: String, hash: Data, expiresAt: Timestamp, for change: ActionCodeRecord, now: Timestamp) throws(ActionError)
        -> OutboxMail
    {
        var record = change
        record.mode = .recoverEmail
        return try noticeLetter(code: code, hash: hash, expiresAt: expiresAt, for: record, now: now)
    }

    /// The sealed mail of a code a change leaves for the account's owner (``noticeCode(_:now:)``;
    /// `record` is the code's record: its mode, address, language and tenant), to be written in the
    /// change's transaction.
    func noticeLetter(code: String, hash: Data, expiresAt: Timestamp, for record: ActionCodeRecord, now: Timestamp) throws(ActionError)
        -> OutboxMail
    {
        try mailer.letter(
            mode: record.mode, to: record.email, link: noticeLink(code: code, for: record), languageCode: record.languageCode,
            appName: settings.project.appName, signInCode: nil, codeHash: hash, expiresAt: expiresAt, now: now)
    }

    /// Counts and lists the `recoverEmail` code a completed email change stored with its mail, and
    /// sends the mail at once.
    func announceRecovery(code: String, for change: ActionCodeRecord) {
        var record = change
        record.mode = .recoverEmail
        announceNotice(code: code, for: record)
    }

    /// Counts and lists a code a completed change stored with its mail (``noticeLetter(code:hash:expiresAt:for:now:)``),
    /// and sends the mail at once.
    func announceNotice(code: String, for record: ActionCodeRecord) {
        metrics.codeIssued(record.mode)
        listing?.record(
            .init(
                tenantID: record.tenantID, email: record.email, newEmail: record.newEmail, mode: record.mode, code: code,
                link: noticeLink(code: code, for: record)))
        mailer.wake()
    }

    /// The link of a notice's code: on the first link domain, with the project's key.
    private func noticeLink(code: String, for record: ActionCodeRecord) -> String {
        ActionCodeLink(
            mode: record.mode, oobCode: code, apiKey: settings.project.apiKey, languageCode: record.languageCode,
            tenantID: record.tenantID.isEmpty ? nil : record.tenantID
        ).webLink(on: settings.linkDomains[0])
    }

    /// The link domain `requested` names (one of `linkDomains`, else `INVALID_HOSTING_LINK_DOMAIN`),
    /// or `fallback`, or the first link domain.
    func linkDomain(_ requested: String?, default fallback: LinkDomain? = nil) throws(ActionError) -> LinkDomain {
        guard let requested, !requested.isEmpty else { return fallback ?? settings.linkDomains[0] }
        guard let domain = try? LinkDomain(requested),
            let known = settings.linkDomains.first(where: { $0.host == domain.host && $0.port == domain.port })
        else {
            throw ActionError(.invalidHostingLinkDomain, "The provided link domain is not configured for this project.")
        }
        return known
    }

    /// The re-serialised, allow-listed continue URL; `nil` when none was given. The allow-list
    /// (`continueUrls.allow`) is the project's authorized domains: a URL none allows is
    /// `UNAUTHORIZED_DOMAIN : Domain not allowlisted by project`. A production server takes only an
    /// absolute URL with a scheme and a host, as Firebase production does (`INVALID_CONTINUE_URI`, no
    /// detail); a development server resolves a path against `continueUrls.defaultOrigin`.
    func checkedContinueURL(_ given: String?, required: Bool) throws(ActionError) -> String? {
        guard let given, !given.isEmpty else {
            if required { throw ActionError(.missingContinueURI, "A continue URL must be provided in the request.") }
            return nil
        }
        if !settings.server.development {
            guard let parts = try? URLParts(given), let host = parts.host, !host.isEmpty else { throw ActionError(.invalidContinueURI) }
        }
        switch policy.evaluate(given) {
        case .allowed(let url): return url
        case .rejected(let rejection):
            if rejection.code == .notAllowed {
                throw ActionError(.unauthorizedDomain, "Domain not allowlisted by project")
            }
            throw ActionError(.invalidContinueURI, "The continue URL provided in the request is invalid: \(rejection.message)")
        }
    }

    /// The count of a link against the project's daily quota of its mode (`limits.dailyQuotas` for
    /// mail, `limits.dailyLinkQuotas` for links returned to the admin), per UTC day in the store,
    /// shared by every instance, refused beyond (``quotaExceeded(_:links:)``); `nil` when the mode
    /// has no quota. Every accepted request counts, whether or not its address has an account (so
    /// the count tells nothing about addresses).
    func dailyQuota(_ mode: ActionCodeLink.Mode, returnLink: Bool, now: Timestamp) -> LinkIssueWrite.Stage? {
        let quotas = returnLink ? settings.limits.dailyLinkQuotas : settings.limits.dailyQuotas
        let quota: Int?
        switch mode {
        case .signIn: quota = quotas.signIn
        case .resetPassword: quota = quotas.resetPassword
        case .verifyEmail: quota = quotas.verifyEmail
        case .verifyAndChangeEmail: quota = quotas.verifyAndChangeEmail
        default: quota = nil
        }
        guard let quota else { return nil }
        let key = (returnLink ? "quota:links:" : "quota:mail:") + mode.rawValue
        return LinkIssueWrite.Stage(limits: [EventLimit(key: key, maximum: quota)], windowStart: now.roundedDown(to: .seconds(86400)))
    }

    /// `QUOTA_EXCEEDED` with the detail Google gives for the quota. Two are public: sign-in mail
    /// ("Exceeded daily quota for email sign-in.", seen on the wire) and reset mail ("Exceeded quota
    /// for sending password reset email.", from a public test fixture). The others are written
    /// here in the same form; Google's wording for them is not public.
    static func quotaExceeded(_ mode: ActionCodeLink.Mode, links: Bool) -> ActionError {
        let detail: String
        switch (mode, links) {
        case (.signIn, false): detail = "Exceeded daily quota for email sign-in."
        case (.resetPassword, false): detail = "Exceeded quota for sending password reset email."
        case (.verifyEmail, false): detail = "Exceeded quota for sending verification email."
        case (_, false): detail = "Exceeded quota for sending email change verification email."
        case (.signIn, true): detail = "Exceeded daily quota for generating email sign-in links."
        case (.resetPassword, true): detail = "Exceeded daily quota for generating password reset links."
        case (.verifyEmail, true): detail = "Exceeded daily quota for generating email verification links."
        case (_, true): detail = "Exceeded daily quota for generating email change links."
        }
        return ActionError(.quotaExceeded, detail)
    }

    /// The counts of a send, in two stages: the client's IP first, then every address the send
    /// involves (the requester's and the recipient's, in canonical form and whatever the tenant:
    /// one mailbox is one mailbox), each refused (`TOO_MANY_ATTEMPTS_TRY_LATER`) when a count is
    /// over its hourly limit. A request refused for its IP spends nothing of the addresses' budgets,
    /// so a client over its own limit cannot lock others out of their links.
    func sendLimits(addresses: [String], clientAddress: String?, now: Timestamp) -> [LinkIssueWrite.Stage] {
        let window = now.roundedDown(to: .seconds(3600))
        var stages: [LinkIssueWrite.Stage] = []
        if let clientAddress {
            let key = "ip:" + settings.limits.clientBucket(clientAddress)
            stages.append(
                LinkIssueWrite.Stage(limits: [EventLimit(key: key, maximum: settings.limits.sendsPerIPPerHour)], windowStart: window))
        }
        var limits: [EventLimit] = []
        for address in addresses where !limits.contains(where: { $0.key == "address:" + address }) {
            limits.append(EventLimit(key: "address:" + address, maximum: settings.limits.sendsPerAddressPerHour))
        }
        stages.append(LinkIssueWrite.Stage(limits: limits, windowStart: window))
        return stages
    }
}
