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
    package func issue(_ request: IssueRequest, caller: Caller, tenant named: TenantPolicy) async throws(ActionError) -> IssuedLink {
        guard let type = request.requestType, !type.isEmpty, type != "OOB_REQ_TYPE_UNSPECIFIED" else {
            throw ActionError(.missingRequestType)
        }
        guard let mode = ActionCodeLink.Mode(requestType: type) else {
            throw ActionError(.invalidRequestType, "unknown requestType '\(type.prefix(100))'")
        }
        guard [.signIn, .resetPassword, .verifyEmail, .verifyAndChangeEmail].contains(mode) else {
            throw ActionError(.invalidRequestType, "\(mode.requestType) links are sent when their change is made, not on request")
        }
        let isAdmin = caller.isAdmin
        if request.returnLink, !isAdmin { throw ActionError.insufficientPermission }
        var tenant = named
        try source.checkIssuable(mode, tenant: tenant)
        let emulator = source.followsEmulator

        var email: String?
        var account: Account?
        if mode == .verifyEmail || mode == .verifyAndChangeEmail {
            if mode == .verifyAndChangeEmail, request.newEmail?.isEmpty ?? true { throw ActionError(.missingNewEmail) }
            // As in Firebase, `returnOobLink` marks the admin's request by address; any other is
            // the signed-in user's own. The admin may also have it mailed (Firebase's admin can
            // only have it returned).
            if !isAdmin || request.idToken != nil {
                // Firebase's emulator: no token is MISSING_ID_TOKEN for an email change and an
                // unreadable one (INVALID_ID_TOKEN) for a verification.
                guard let idToken = request.idToken, !idToken.isEmpty else {
                    throw mode == .verifyAndChangeEmail ? ActionError(.missingIDToken) : ActionError.invalidIDToken
                }
                let requester = try await source.requester(
                    idToken: idToken, mode: mode, caller: caller, tenant: tenant, bodyTenant: request.tenantID)
                guard let address = requester.email else { throw ActionError.missingEmail }
                (email, account, tenant) = (address, requester.account, requester.tenant)
            }
        }
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
        if let email {
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
        if !isAdmin {
            try await checkSendLimits(addresses: [address] + (newEmail.map { [$0] } ?? []), clientAddress: caller.clientAddress, now: now)
        }
        try await checkDailyQuota(mode, returnLink: request.returnLink, now: now)

        var appSettings = AppSettings()
        appSettings.iOSBundleId = request.iOSBundleID
        appSettings.androidPackageName = request.androidPackageName
        appSettings.androidMinimumVersion = request.androidMinimumVersion
        if request.androidInstallApp { appSettings.androidInstallApp = "true" }
        if request.canHandleCodeInApp { appSettings.canHandleCodeInApp = "true" }
        let pending = PendingCode(
            mode: mode, tenant: tenant, email: address, newEmail: newEmail, account: account, continueURL: continueURL,
            languageCode: caller.locale, appSettings: appSettings, isAdmin: isAdmin, now: now,
            expiresAt: now + .seconds(settings.codes.lifetime(of: mode)))
        let sourced = try await source.code(for: pending)
        metrics.codeIssued(mode)

        let tenantID = tenant.tenantID
        let action = ActionCodeLink(
            mode: mode, oobCode: sourced.code, apiKey: source.linkKey(caller.apiKey), continueURL: continueURL,
            languageCode: caller.locale, tenantID: tenantID.isEmpty ? nil : tenantID)
        let link = mobile ? action.mobileLink(on: domain) : action.webLink(on: domain)
        let recipient = newEmail ?? address
        // With email-enumeration protection an address with no account gets no mail, but the same
        // answer, byte for byte, after the same work: its code made and counted, its sign-in code
        // stored (a sign-in code lives no longer than its link) and its message rendered.
        var signInCode: String?
        if mode == .signIn {
            signInCode = try await signInCodes.issue(
                tenantID: tenantID, email: address, link: link, oobCode: sourced.code, linkExpiry: pending.expiresAt)
        }
        let appName = settings.project.appName
        guard sourced.deliver else {
            _ = mailer.render(mode: mode, to: recipient, link: link, languageCode: caller.locale, appName: appName, signInCode: signInCode)
            return IssuedLink(link: link, code: sourced.code, email: address, delivered: false)
        }
        listing?.record(.init(tenantID: tenantID, email: address, newEmail: newEmail, mode: mode, code: sourced.code, link: link))
        if !request.returnLink {
            await mailer.send(mode: mode, to: recipient, link: link, languageCode: caller.locale, appName: appName, signInCode: signInCode)
        }
        return IssuedLink(link: link, code: sourced.code, email: address, delivered: true, signInCode: signInCode)
    }

    /// The `recoverEmail` code for an email change (its hash, stored by the caller in the change's
    /// transaction, and the code to announce afterwards).
    func recoveryCode(now: Timestamp) -> (code: String, hash: Data, expiresAt: Timestamp) {
        let code = Secrets.token()
        return (code, keys.newCodeHash(code), now + .seconds(settings.codes.lifetime(of: .recoverEmail)))
    }

    /// Lists and mails the `recoverEmail` code that a completed email change stored (in its own
    /// transaction) for the old address: `change` names the old address (`email`) and the new one.
    func announceRecovery(code: String, for change: ActionCodeRecord) async {
        metrics.codeIssued(.recoverEmail)
        let link = ActionCodeLink(
            mode: .recoverEmail, oobCode: code, apiKey: settings.project.apiKey, languageCode: change.languageCode,
            tenantID: change.tenantID.isEmpty ? nil : change.tenantID
        ).webLink(on: settings.linkDomains[0])
        listing?.record(
            .init(tenantID: change.tenantID, email: change.email, newEmail: change.newEmail, mode: .recoverEmail, code: code, link: link))
        await mailer.send(
            mode: .recoverEmail, to: change.email, link: link, languageCode: change.languageCode, appName: settings.project.appName)
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

    /// Counts a link against the project's daily quota of its mode (`limits.dailyQuotas` for mail,
    /// `limits.dailyLinkQuotas` for links returned to the admin), per UTC day in the store, shared by
    /// every instance, and refuses it beyond: `QUOTA_EXCEEDED` with Google's detail for the quota.
    /// Every accepted request counts, whether or not its address has an account (so the count tells
    /// nothing about addresses).
    func checkDailyQuota(_ mode: ActionCodeLink.Mode, returnLink: Bool, now: Timestamp) async throws(ActionError) {
        let quotas = returnLink ? settings.limits.dailyLinkQuotas : settings.limits.dailyQuotas
        let quota: Int?
        switch mode {
        case .signIn: quota = quotas.signIn
        case .resetPassword: quota = quotas.resetPassword
        case .verifyEmail: quota = quotas.verifyEmail
        case .verifyAndChangeEmail: quota = quotas.verifyAndChangeEmail
        default: quota = nil
        }
        guard let quota else { return }
        let key = (returnLink ? "quota:links:" : "quota:mail:") + mode.rawValue
        let day = now.roundedDown(to: .seconds(86400))
        let counts = try await store.call { try await self.codes.countEvents(keys: [key], windowStart: day) }
        if let count = counts.first, count > quota { throw Self.quotaExceeded(mode, links: returnLink) }
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

    /// Counts a send against every address it involves (the requester's and the recipient's, in
    /// canonical form and whatever the tenant: one mailbox is one mailbox) and the client's IP, and
    /// refuses it when any of them is over its hourly limit.
    func checkSendLimits(addresses: [String], clientAddress: String?, now: Timestamp) async throws(ActionError) {
        var keys: [String] = []
        for address in addresses where !keys.contains("address:" + address) { keys.append("address:" + address) }
        let addressCount = keys.count
        if let clientAddress { keys.append("ip:" + clientAddress) }
        let counts = try await store.call { try await self.codes.countEvents(keys: keys, windowStart: now.roundedDown(to: .seconds(3600))) }
        if counts.prefix(addressCount).contains(where: { $0 > settings.limits.sendsPerAddressPerHour }) {
            throw ActionError.tooManyAttempts
        }
        if counts.count > addressCount, counts[addressCount] > settings.limits.sendsPerIPPerHour { throw ActionError.tooManyAttempts }
    }
}
