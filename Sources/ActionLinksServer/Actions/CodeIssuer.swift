import ActionLinks
import ActionLinksConfiguration
import Crypto
import Foundation
import Logging

/// Issues codes (DESIGN §2, step 1): checks the request, the continue URL and the link domain,
/// stores the code's hash, and returns or mails the link; also announces the recovery code an email
/// change leaves behind.
public final class CodeIssuer: Sendable {
    let settings: ServiceSettings
    let policy: ContinueURLPolicy
    let codes: any CodeStore
    let accounts: any AccountStore
    let accountService: AccountService
    let keys: ServerKeys
    let mailer: Mailer
    let listing: IssuedLinkListing?
    let metrics: ServerMetrics
    let store: StoreGateway
    let clock: any ServiceClock

    init(
        settings: ServiceSettings, policy: ContinueURLPolicy, codes: any CodeStore, accounts: any AccountStore,
        accountService: AccountService,
        keys: ServerKeys, mailer: Mailer, listing: IssuedLinkListing?, metrics: ServerMetrics, store: StoreGateway,
        clock: any ServiceClock
    ) {
        self.clock = clock
        self.settings = settings
        self.policy = policy
        self.codes = codes
        self.accounts = accounts
        self.accountService = accountService
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
        /// The address (for the admin, or a public password-reset or sign-in request).
        public var email: String?
        /// The new address (`verifyAndChangeEmail`).
        public var newEmail: String?
        /// An ID token that names the account (public `verifyEmail` and `verifyAndChangeEmail` requests).
        public var idToken: String?
        /// The tenant ("" for the project).
        public var tenantID = ""
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

        /// A request for a `mode` link.
        public init(mode: ActionCodeLink.Mode) { self.mode = mode }
    }

    /// A link that was issued.
    public struct IssuedLink: Sendable {
        /// The link to open.
        public var link: String
        /// The code in it.
        public var code: String
        /// The address it was sent (or is for), in canonical form.
        public var email: String
        /// Whether it was sent (or returned): `false` when the address has no account, so nothing
        /// went out; the caller answers exactly as if it had.
        public var delivered: Bool
    }

    /// Issues a code and returns the link (`returnLink`) or emails it. When the address has no
    /// account nothing is sent (``IssuedLink/delivered`` is `false`) and the caller answers exactly
    /// as if it had been.
    public func issue(_ request: IssueRequest) async throws(ActionError) -> IssuedLink {
        let now = clock.now
        if request.returnLink, !request.isAdmin { throw ActionError.insufficientPermission }
        let domain = try linkDomain(request.linkDomain)
        let continueURL = try checkedContinueURL(request.continueURL, required: request.mode == .signIn)
        var email: String
        var newEmail: String?
        var account: Account?

        switch request.mode {
        case .resetPassword, .signIn:
            guard let given = request.email, !given.isEmpty else { throw ActionError.missingEmail }
            guard let canonical = EmailAddress.canonical(given) else { throw ActionError.invalidEmail }
            email = canonical
        case .verifyEmail, .verifyAndChangeEmail:
            if let idToken = request.idToken {
                account = try await accountService.account(fromIDToken: idToken, tenantID: request.tenantID, now: now)
                guard let address = account?.email else { throw ActionError.missingEmail }
                email = address
            } else if request.isAdmin, let given = request.email {
                guard let canonical = EmailAddress.canonical(given) else { throw ActionError.invalidEmail }
                email = canonical
            } else if request.email != nil {
                throw ActionError(.missingIDToken, "a verification link for a signed-in user needs idToken")
            } else {
                throw ActionError.missingEmail
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

        if account == nil { account = try await store.call { try await self.accounts.account(email: email, tenantID: request.tenantID) } }
        // An address with no account gets no mail, but the same answer, byte for byte, after the same
        // work: a code is stored (for no account, so it can never be completed, and never shown to
        // anyone), counted and its message rendered. Only the admin learns that nothing was sent.
        var deliver = true
        if account == nil, request.mode != .signIn || !settings.signUpAllowed {
            if request.isAdmin { throw ActionError.emailNotFound }
            deliver = false
        }
        if let newEmail, let taken = try await store.call({ try await self.accounts.account(email: newEmail, tenantID: request.tenantID) }),
            taken.localID != account?.localID
        {
            throw ActionError.emailExists
        }

        var appSettings = AppSettings()
        appSettings.iOSBundleId = request.iOSBundleID
        appSettings.androidPackageName = request.androidPackageName
        appSettings.androidMinimumVersion = request.androidMinimumVersion
        if request.androidInstallApp { appSettings.androidInstallApp = "true" }
        if request.canHandleCodeInApp { appSettings.canHandleCodeInApp = "true" }

        let code = Secrets.token()
        let record = ActionCodeRecord(
            hash: keys.newCodeHash(code), mode: request.mode, tenantID: request.tenantID, accountID: account?.localID, email: email,
            newEmail: newEmail, continueURL: continueURL, languageCode: request.languageCode,
            appSettings: appSettings.json,
            createdAt: now, expiresAt: now + Timestamp(settings.codes.lifetime(of: request.mode)) * 1000)
        try await store.call { try await self.codes.issue(record) }
        metrics.codeIssued(request.mode)

        let action = ActionCodeLink(
            mode: request.mode, oobCode: code, apiKey: settings.project.apiKey, continueURL: continueURL,
            languageCode: request.languageCode,
            tenantID: request.tenantID.isEmpty ? nil : request.tenantID)
        let mobile = request.canHandleCodeInApp && (request.iOSBundleID != nil || request.androidPackageName != nil)
        let link = mobile ? action.mobileLink(on: domain) : action.webLink(on: domain)
        let recipient = newEmail ?? email
        guard deliver else {
            _ = mailer.render(
                mode: request.mode, to: recipient, link: link, languageCode: request.languageCode, appName: settings.project.appName)
            return IssuedLink(link: link, code: code, email: recipient, delivered: false)
        }
        listing?.record(email: recipient, mode: request.mode, code: code, link: link)
        if !request.returnLink {
            await mailer.send(
                mode: request.mode, to: recipient, link: link, languageCode: request.languageCode, appName: settings.project.appName)
        }
        return IssuedLink(link: link, code: code, email: recipient, delivered: true)
    }

    /// Lists and mails the `recoverEmail` code that a completed email change stored (in its own
    /// transaction) for the old address.
    func announceRecovery(code: String, change: ActionCodeRecord) async {
        metrics.codeIssued(.recoverEmail)
        let link = ActionCodeLink(
            mode: .recoverEmail, oobCode: code, apiKey: settings.project.apiKey, languageCode: change.languageCode,
            tenantID: change.tenantID.isEmpty ? nil : change.tenantID
        ).webLink(on: settings.linkDomains[0])
        listing?.record(email: change.email, mode: .recoverEmail, code: code, link: link)
        await mailer.send(
            mode: .recoverEmail, to: change.email, link: link, languageCode: change.languageCode, appName: settings.project.appName)
    }

    func linkDomain(_ requested: String?) throws(ActionError) -> LinkDomain {
        guard let requested, !requested.isEmpty else { return settings.linkDomains[0] }
        guard let domain = try? LinkDomain(requested),
            let known = settings.linkDomains.first(where: { $0.host == domain.host && $0.port == domain.port })
        else {
            throw ActionError(.invalidHostingLinkDomain, "The provided link domain is not configured for this project.")
        }
        return known
    }

    /// The re-serialised, allow-listed continue URL; `nil` when none was given.
    func checkedContinueURL(_ given: String?, required: Bool) throws(ActionError) -> String? {
        guard let given, !given.isEmpty else {
            if required { throw ActionError(.missingContinueURI, "A continue URL must be provided in the request.") }
            return nil
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

    /// Counts a send against every address it involves (the requester's and the recipient's, in
    /// canonical form and whatever the tenant: one mailbox is one mailbox) and the client's IP, and
    /// refuses it when any of them is over its hourly limit.
    func checkSendLimits(addresses: [String], clientAddress: String?, now: Timestamp) async throws(ActionError) {
        let hour: Timestamp = 3_600_000
        var keys: [String] = []
        for address in addresses where !keys.contains("address:" + address) { keys.append("address:" + address) }
        let addressCount = keys.count
        if let clientAddress { keys.append("ip:" + clientAddress) }
        let counts = try await store.call { try await self.codes.countEvents(keys: keys, windowStart: now - now % hour) }
        if counts.prefix(addressCount).contains(where: { $0 > settings.limits.sendsPerAddressPerHour }) {
            throw ActionError.tooManyAttempts
        }
        if counts.count > addressCount, counts[addressCount] > settings.limits.sendsPerIPPerHour { throw ActionError.tooManyAttempts }
    }
}
