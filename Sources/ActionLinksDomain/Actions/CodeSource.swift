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
    /// `pending`'s code and its store's write of it (``LinkIssueWrite``, without the counts and the
    /// sign-in code, which ``CodeIssuer`` adds), when the store makes all of a link's writes in one
    /// (``LinkIssuingInOneWrite``): the same rules as ``code(for:)``, in that write. `nil`: the
    /// code comes from ``code(for:)``.
    func oneWrite(for pending: PendingCode) -> OneWriteCode?

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
    /// The code's hash in this server's code store (``ActionCodeRecord/hash``); `nil` for a code
    /// that is another's (a front's: Google's).
    var hash: Data? = nil
}

/// A code a ``LinkIssuingInOneWrite`` store writes with the link's other writes.
struct OneWriteCode: Sendable {
    /// The code the link carries.
    var code: String
    /// Its record and the rule that decides it; ``CodeIssuer`` adds the counts and the sign-in code.
    var write: LinkIssueWrite
    /// The store that makes the write.
    var store: any LinkIssuingInOneWrite
    /// The sign-in code written with it (its digits), which ``CodeIssuer`` adds.
    var signInCode: String? = nil
}

extension CodeSource {
    func oneWrite(for pending: PendingCode) -> OneWriteCode? { nil }
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
    /// `codes`, when it makes all of a link's writes in one.
    let oneWriteStore: (any LinkIssuingInOneWrite)?

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
        oneWriteStore = codes as? any LinkIssuingInOneWrite
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
        var record = record(pending, code: code)
        let (tenantID, email) = (pending.tenant.tenantID, pending.email)
        var deliver = true
        var account = pending.account
        if account == nil { account = try await store.call { try await self.accounts.account(email: email, tenantID: tenantID) } }
        if account == nil { deliver = try Self.deliverWithoutAccount(pending).get() }
        if let newEmail = pending.newEmail,
            let taken = try await store.call({ try await self.accounts.account(email: newEmail, tenantID: tenantID) }),
            taken.localID != account?.localID
        {
            // With email-enumeration protection a client learns nothing from Firebase production
            // here either: the same answer, and no mail (the emulator, like an admin, is told).
            guard !pending.isAdmin, pending.tenant.emailEnumerationProtection, !settings.server.development else {
                throw ActionError.emailExists
            }
            deliver = false
        }
        record.accountID = account?.localID
        let issued = record
        try await store.call { try await self.codes.issue(issued) }
        return SourcedCode(code: code, deliver: deliver, hash: issued.hash)
    }

    /// The code of a link about an address the request did not name an account for, looked up in
    /// the write that stores it (``LinkIssuingInOneWrite``), with ``code(for:)``'s rules. A link
    /// that moves an address (a new address to check too) takes ``code(for:)``.
    func oneWrite(for pending: PendingCode) -> OneWriteCode? {
        guard let oneWriteStore, pending.account == nil, pending.newEmail == nil else { return nil }
        let code = Secrets.token()
        let write = LinkIssueWrite(
            stages: [], record: record(pending, code: code), looksUpAccount: true,
            decide: { accountID in accountID != nil ? .success(true) : Self.deliverWithoutAccount(pending) }, signInCode: nil)
        return OneWriteCode(code: code, write: write, store: oneWriteStore)
    }

    /// The stored form of `pending`'s `code` (its hash), for the account the request named.
    private func record(_ pending: PendingCode, code: String) -> ActionCodeRecord {
        ActionCodeRecord(
            hash: keys.newCodeHash(code), mode: pending.mode, tenantID: pending.tenant.tenantID, accountID: pending.account?.localID,
            email: pending.email, newEmail: pending.newEmail, continueURL: pending.continueURL, languageCode: pending.languageCode,
            appSettings: pending.appSettings.json, createdAt: pending.now, expiresAt: pending.expiresAt)
    }

    /// Whether a link to an address with no account goes out, or its refusal: a sign-in link where
    /// people may sign up (or the admin asked); a reset to nobody only with email-enumeration
    /// protection, undelivered (else `EMAIL_NOT_FOUND`, always for the admin); any other
    /// `USER_NOT_FOUND`.
    static func deliverWithoutAccount(_ pending: PendingCode) -> Result<Bool, ActionError> {
        switch pending.mode {
        case .signIn:
            return .success(pending.tenant.selfServiceSignUp || pending.isAdmin)
        case .resetPassword:
            if pending.isAdmin || !pending.tenant.emailEnumerationProtection { return .failure(ActionError.emailNotFound) }
            return .success(false)
        default:
            return .failure(ActionError.userNotFound)
        }
    }
}
