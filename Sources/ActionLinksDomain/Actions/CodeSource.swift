import ActionLinks
import ActionLinksConfiguration
import Foundation

/// Where the code in a link comes from, and who decides what an address is told (docs/ARCHITECTURE.md
/// §2, step 1). ``CodeIssuer`` holds `accounts:sendOobCode`'s rules once (the request, the continue
/// URL, the mobile settings and link domain, the addresses, the limits and quotas, the link, the
/// sign-in code, the mail); a source answers the parts that depend on whose accounts they are:
/// ``LocalCodeSource`` for this server's own, `UpstreamCodeSource` for the Firebase project it fronts.
protocol CodeSource: Sendable {
    /// Whether the rules are those of Firebase's emulator (a development server with its own
    /// accounts) rather than Firebase production's. A front always answers as production does:
    /// the project behind it is production.
    var followsEmulator: Bool { get }

    /// Refuses a `mode` link in `tenant` that this source can never issue, before anything is
    /// counted (email-link sign-in turned off; a front without a service account).
    func checkIssuable(_ mode: ActionCodeLink.Mode, tenant: TenantPolicy) throws(ActionError)

    /// The signed-in user behind `idToken` (a verification or an email change asked for oneself),
    /// after the recent sign-in rule when the link moves the address (`verifyAndChangeEmail`).
    func requester(idToken: String, mode: ActionCodeLink.Mode, caller: Caller, tenant: TenantPolicy, bodyTenant: String?)
        async throws(ActionError) -> CodeRequester

    /// A code for `pending`, and whether its link goes out: `deliver` is `false` when the address
    /// must not be told apart from one with an account (email-enumeration protection), and the
    /// caller then does the same work and answers the same bytes, without the mail.
    func code(for pending: PendingCode) async throws(ActionError) -> SourcedCode

    /// The API key a link carries: the key the client asked with when it is one of the project's,
    /// else (the admin) the project's first.
    func linkKey(_ asked: String?) -> String
}

/// The signed-in user a link is for, as its source knows it.
struct CodeRequester: Sendable {
    /// The user's address (`nil` when the account has none).
    var email: String?
    /// The user's account, when it is this server's.
    var account: Account?
    /// The tenant of the user (which the ID token may name).
    var tenant: TenantPolicy
}

/// A link's code about to be made: everything ``CodeIssuer`` settled.
struct PendingCode: Sendable {
    /// What the link does.
    var mode: ActionCodeLink.Mode
    /// The tenant of the address (its policy decides what an unknown address is told).
    var tenant: TenantPolicy
    /// The canonical address the link is about (for an email change, the current one).
    var email: String
    /// The canonical new address (`verifyAndChangeEmail`).
    var newEmail: String?
    /// The signed-in user's account, when the request came with an ID token of this server's.
    var account: Account?
    /// The allow-listed continue URL.
    var continueURL: String?
    /// The language of the mail and the pages (`X-Firebase-Locale`).
    var languageCode: String?
    /// The app settings the link was asked with (kept with a local code).
    var appSettings: AppSettings
    /// Whether the admin asked (who may learn whether an address has an account).
    var isAdmin: Bool
    /// When the request was made.
    var now: Timestamp
    /// When the link stops working (`codes.lifetimes`).
    var expiresAt: Timestamp
}

/// A code from a ``CodeSource``.
struct SourcedCode: Sendable {
    /// The code the link carries.
    var code: String
    /// Whether the link goes out (see ``CodeSource/code(for:)``).
    var deliver: Bool
}

/// This server's own codes: stored as hashes beside its accounts, and enumeration decided by
/// whether the address has an account here and the tenant's policy.
struct LocalCodeSource: CodeSource {
    let settings: ServiceSettings
    let codes: any CodeStore
    let accounts: any AccountStore
    let accountService: AccountService
    let keys: ServerKeys
    let store: StoreGateway
    /// `codes`, when it can look the account up in the write that stores a code.
    let oneWrite: (any AccountLookupWhileIssuing)?

    init(
        settings: ServiceSettings, codes: any CodeStore, accounts: any AccountStore, accountService: AccountService, keys: ServerKeys,
        store: StoreGateway
    ) {
        self.settings = settings
        self.codes = codes
        self.accounts = accounts
        self.accountService = accountService
        self.keys = keys
        self.store = store
        oneWrite = codes as? any AccountLookupWhileIssuing
    }

    var followsEmulator: Bool { settings.server.development }

    func checkIssuable(_ mode: ActionCodeLink.Mode, tenant: TenantPolicy) throws(ActionError) {
        if mode == .signIn, !tenant.enableEmailLinkSignin { throw ActionError(.operationNotAllowed) }
    }

    func requester(idToken: String, mode: ActionCodeLink.Mode, caller: Caller, tenant: TenantPolicy, bodyTenant: String?)
        async throws(ActionError) -> CodeRequester
    {
        let signedIn = try await accountService.user(idToken: idToken, caller: caller, bodyTenant: bodyTenant)
        // verifyBeforeUpdateEmail moves the address: as sensitive as changing it.
        if mode == .verifyAndChangeEmail { try accountService.checkRecentSignIn(signedIn, caller: caller) }
        return CodeRequester(email: signedIn.account.email, account: signedIn.account, tenant: signedIn.tenant)
    }

    func linkKey(_ asked: String?) -> String {
        asked.flatMap { settings.project.apiKey(matching: $0)?.key } ?? settings.project.apiKey
    }

    /// Stores the code's hash. An address with no account is `EMAIL_NOT_FOUND` for the admin and,
    /// without email-enumeration protection, for a client (`USER_NOT_FOUND` for a verification);
    /// with it, a code is stored for no account (so it can never be completed) and not delivered.
    /// A sign-in link to a new address is delivered where people may sign up.
    func code(for pending: PendingCode) async throws(ActionError) -> SourcedCode {
        let code = Secrets.token()
        let tenantID = pending.tenant.tenantID
        var record = ActionCodeRecord(
            hash: keys.newCodeHash(code), mode: pending.mode, tenantID: tenantID, accountID: pending.account?.localID,
            email: pending.email, newEmail: pending.newEmail, continueURL: pending.continueURL, languageCode: pending.languageCode,
            appSettings: pending.appSettings.json, createdAt: pending.now, expiresAt: pending.expiresAt)
        let (mode, tenant, isAdmin) = (pending.mode, pending.tenant, pending.isAdmin)
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
        let email = pending.email
        if pending.account == nil, pending.newEmail == nil, let oneWrite {
            // The address's account is looked up in the write that stores the code (one trip to the
            // store's writer instead of a read and then the write).
            let issued = record
            let deliver = try await store.call {
                try await oneWrite.issue(issued, accountOf: email) { accountID in accountID != nil ? true : try deliverWithout() }
            }
            return SourcedCode(code: code, deliver: deliver)
        }
        var deliver = true
        var account = pending.account
        if account == nil { account = try await store.call { try await self.accounts.account(email: email, tenantID: tenantID) } }
        if account == nil { deliver = try deliverWithout() }
        if let newEmail = pending.newEmail,
            let taken = try await store.call({ try await self.accounts.account(email: newEmail, tenantID: tenantID) }),
            taken.localID != account?.localID
        {
            // With email-enumeration protection a client learns nothing from Firebase production
            // here either: the same answer, and no mail (the emulator, like an admin, is told).
            guard !isAdmin, tenant.emailEnumerationProtection, !settings.server.development else { throw ActionError.emailExists }
            deliver = false
        }
        record.accountID = account?.localID
        let issued = record
        try await store.call { try await self.codes.issue(issued) }
        return SourcedCode(code: code, deliver: deliver)
    }
}
