import ActionLinks
import ActionLinksConfiguration
import Crypto
import Foundation
import Logging

/// Issues codes (docs/ARCHITECTURE.md §2, step 1): checks the request, the continue URL and the
/// link domain, stores the code's hash, and returns or mails the link; also announces the recovery
/// code an email change leaves behind.
public final class CodeIssuer: Sendable {
    let settings: ServiceSettings
    let policy: ContinueURLPolicy
    let codes: any CodeStore
    let accounts: any AccountStore
    let keys: ServerKeys
    let mailer: Mailer
    let listing: IssuedLinkListing?
    let metrics: ServerMetrics
    let store: StoreGateway
    let clock: any ServiceClock
    /// The short code beside each sign-in link (``SignInCodes``).
    let signInCodes: SignInCodes

    init(
        settings: ServiceSettings, policy: ContinueURLPolicy, codes: any CodeStore, accounts: any AccountStore,
        keys: ServerKeys, mailer: Mailer, listing: IssuedLinkListing?, metrics: ServerMetrics, store: StoreGateway,
        clock: any ServiceClock, signInCodes: SignInCodes
    ) {
        self.clock = clock
        self.signInCodes = signInCodes
        self.settings = settings
        self.policy = policy
        self.codes = codes
        self.accounts = accounts
        self.keys = keys
        self.mailer = mailer
        self.listing = listing
        self.metrics = metrics
        self.store = store
    }

    /// What a caller asks for when it asks for a link.
    public struct IssueRequest: Sendable {
        /// The mode of the link.
        public var mode: ActionCodeLink.Mode
        /// The tenant the call resolved (its policy decides what an unknown address is told).
        public var tenant: TenantPolicy
        /// The address (a password reset or sign-in; the admin's verification by address).
        public var email: String?
        /// The new address (`verifyAndChangeEmail`).
        public var newEmail: String?
        /// The signed-in user a verification or an email change is for (from the ID token).
        public var user: Account?
        /// The continue URL, checked against the allow-list.
        public var continueURL: String?
        /// The language of the email and the landing page.
        public var languageCode: String?
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
        /// The admin asked (may learn whether an address exists; may have the link returned).
        public var isAdmin = false
        /// Return the link instead of emailing it (admin only).
        public var returnLink = false
        /// The client's address, for the per-IP send limit.
        public var clientAddress: String?
        /// The API key the client asked with: the link carries it, as Firebase's do (``linkKey(_:)``).
        public var apiKey: String?

        /// A request for a `mode` link in `tenant`.
        public init(mode: ActionCodeLink.Mode, tenant: TenantPolicy) {
            self.mode = mode
            self.tenant = tenant
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

    /// Issues a code and returns the link (`returnLink`) or emails it. An address with no account
    /// is `EMAIL_NOT_FOUND` for the admin and, without email-enumeration protection, for a client;
    /// with it, nothing is sent (``IssuedLink/delivered`` is `false`) and the caller answers exactly
    /// as if it had been. The checks, in order: the continue URL, the mobile settings, the link
    /// domain, the addresses, the hourly send limits (clients), the daily quota of the mode.
    public func issue(_ request: IssueRequest) async throws(ActionError) -> IssuedLink {
        let now = clock.now
        let tenantID = request.tenant.tenantID
        // A development server, like Firebase's emulator, needs no continue URL for a sign-in link;
        // Firebase production needs one from a client, not from the admin (OAuth).
        let continueURL = try checkedContinueURL(
            request.continueURL, required: request.mode == .signIn && !settings.server.development && !request.isAdmin)
        // Firebase production refuses an app's bundle or package (the iOS SDK always sends its bundle)
        // where the project has no mobile link domain; its emulator ignores them.
        let namesApp = !(request.iOSBundleID ?? "").isEmpty || !(request.androidPackageName ?? "").isEmpty
        let mobileDomain = settings.mobileLinkDomain
        if namesApp, mobileDomain == nil, !settings.server.development {
            throw ActionError(.dynamicLinkNotActivated, "FDL domain is not configured")
        }
        let mobile = request.canHandleCodeInApp && namesApp && mobileDomain != nil
        let domain = try linkDomain(request.linkDomain, default: mobile ? mobileDomain : nil)
        var email: String
        var newEmail: String?
        var account = request.user

        switch request.mode {
        case .resetPassword, .signIn:
            guard let given = request.email, !given.isEmpty else { throw ActionError.missingEmail }
            guard let canonical = EmailAddress.canonical(given) else { throw ActionError.invalidEmail }
            email = canonical
        case .verifyEmail, .verifyAndChangeEmail:
            if let user = request.user {
                guard let address = user.email else { throw ActionError.missingEmail }
                email = address
            } else {
                guard let given = request.email, !given.isEmpty else { throw ActionError.missingEmail }
                guard let canonical = EmailAddress.canonical(given) else { throw ActionError.invalidEmail }
                email = canonical
            }
            if request.mode == .verifyAndChangeEmail {
                guard let given = request.newEmail, !given.isEmpty else { throw ActionError(.missingNewEmail) }
                guard let canonical = EmailAddress.canonical(given) else { throw ActionError(.invalidNewEmail) }
                newEmail = canonical
            }
        case .recoverEmail, .revertSecondFactorAddition:
            throw ActionError(.invalidRequestType, "\(request.mode.requestType) links are sent by the server itself, not on request")
        }

        if !request.isAdmin {
            try await checkSendLimits(addresses: [email] + (newEmail.map { [$0] } ?? []), clientAddress: request.clientAddress, now: now)
        }
        try await checkDailyQuota(request.mode, returnLink: request.returnLink, now: now)

        var appSettings = AppSettings()
        appSettings.iOSBundleId = request.iOSBundleID
        appSettings.androidPackageName = request.androidPackageName
        appSettings.androidMinimumVersion = request.androidMinimumVersion
        if request.androidInstallApp { appSettings.androidInstallApp = "true" }
        if request.canHandleCodeInApp { appSettings.canHandleCodeInApp = "true" }

        let code = Secrets.token()
        var record = ActionCodeRecord(
            hash: keys.newCodeHash(code), mode: request.mode, tenantID: tenantID, accountID: account?.localID, email: email,
            newEmail: newEmail, continueURL: continueURL, languageCode: request.languageCode,
            appSettings: appSettings.json,
            createdAt: now, expiresAt: now + .seconds(settings.codes.lifetime(of: request.mode)))

        // With email-enumeration protection an address with no account gets no mail, but the same
        // answer, byte for byte, after the same work: a code is stored (for no account, so it can
        // never be completed, and never shown to anyone), counted and its message rendered.
        let mode = request.mode
        let tenant = request.tenant
        let isAdmin = request.isAdmin
        let deliverWithout = { @Sendable () throws(ActionError) -> Bool in
            switch mode {
            case .signIn:
                return tenant.selfServiceSignUp || isAdmin
            case .resetPassword:
                if isAdmin || !tenant.emailEnumerationProtection { throw ActionError.emailNotFound }
                return false
            default:
                throw ActionError.userNotFound
            }
        }
        var deliver = true
        if account == nil, newEmail == nil, let sqlite = codes as? SQLiteCodeStore {
            // The address's account is looked up in the write that stores the code (one trip to the
            // database's writer instead of a reader and then the writer).
            let issued = record
            deliver = try await store.call {
                try await sqlite.issue(issued, accountOf: email) { accountID in accountID != nil ? true : try deliverWithout() }
            }
        } else {
            if account == nil { account = try await store.call { try await self.accounts.account(email: email, tenantID: tenantID) } }
            if account == nil { deliver = try deliverWithout() }
            if let newEmail, let taken = try await store.call({ try await self.accounts.account(email: newEmail, tenantID: tenantID) }),
                taken.localID != account?.localID
            {
                // With email-enumeration protection a client learns nothing from Firebase production
                // here either: the same answer, and no mail (the emulator, like an admin, is told).
                guard !request.isAdmin, request.tenant.emailEnumerationProtection, !settings.server.development else {
                    throw ActionError.emailExists
                }
                deliver = false
            }
            record.accountID = account?.localID
            let issued = record
            try await store.call { try await self.codes.issue(issued) }
        }
        metrics.codeIssued(request.mode)

        let action = ActionCodeLink(
            mode: request.mode, oobCode: code, apiKey: linkKey(request.apiKey), continueURL: continueURL,
            languageCode: request.languageCode, tenantID: tenantID.isEmpty ? nil : tenantID)
        let link = mobile ? action.mobileLink(on: domain) : action.webLink(on: domain)
        let recipient = newEmail ?? email
        // A sign-in link's code is stored whether or not the link goes out (the same work).
        var signInCode: String?
        if request.mode == .signIn {
            signInCode = try await signInCodes.issue(
                tenantID: tenantID, email: email, link: link, oobCode: code, linkExpiry: record.expiresAt)
        }
        guard deliver else {
            _ = mailer.render(
                mode: request.mode, to: recipient, link: link, languageCode: request.languageCode, appName: settings.project.appName,
                signInCode: signInCode)
            return IssuedLink(link: link, code: code, email: email, delivered: false)
        }
        listing?.record(.init(tenantID: tenantID, email: email, newEmail: newEmail, mode: request.mode, code: code, link: link))
        if !request.returnLink {
            await mailer.send(
                mode: request.mode, to: recipient, link: link, languageCode: request.languageCode, appName: settings.project.appName,
                signInCode: signInCode)
        }
        return IssuedLink(link: link, code: code, email: email, delivered: true, signInCode: signInCode)
    }

    /// The key a link carries: the key of the client that asked for it when that is one of the
    /// project's (a development server takes any key, and a link with a key that is not the
    /// project's would not open its page), else (the admin, the server's own mail) the project's
    /// first unrestricted key (``ProjectSettings/apiKey``).
    func linkKey(_ asked: String?) -> String {
        asked.flatMap { settings.project.apiKey(matching: $0)?.key } ?? settings.project.apiKey
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
            mode: .recoverEmail, oobCode: code, apiKey: linkKey(nil), languageCode: change.languageCode,
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
