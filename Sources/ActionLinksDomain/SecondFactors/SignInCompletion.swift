import Crypto
import Foundation

/// How a first factor stands to the second.
package enum SecondFactorRule: Sendable, Hashable {
    /// A password, an email link (and its sign-in code), a provider (OpenID Connect, SAML, Yahoo,
    /// ...): an account with a second factor is asked for it wherever its tenant's settings ask.
    case ask
    /// Not asked: a custom token (Firebase issues its tokens directly: a backend that minted one
    /// vouches for the user), or an account that cannot have a factor yet (a sign-up, an anonymous
    /// user).
    case skip
    /// A change a signed-in session makes (linking an address or a provider, a new password): the
    /// new session keeps the second factor that session signed in with, if any.
    case carry(factor: String?, identifier: String?)
    /// The second factor `identifier` (a TOTP factor) was just proven: the session says so.
    case proven(identifier: String)
}

/// What a sign-in proved, for ``SignInCompletion``.
package struct FirstFactor: Sendable, Hashable {
    /// The sign-in provider its ID tokens carry (`password`, `anonymous`, `custom`, a provider's ID).
    package var provider: String
    /// Claims the session keeps (a custom token's, a SAML sign-in's attributes): a JSON object.
    package var claims: String?
    /// Whether and how a second factor stands between it and the tokens.
    package var rule: SecondFactorRule

    /// Makes the value.
    package init(provider: String, claims: String? = nil, rule: SecondFactorRule) {
        self.provider = provider
        self.claims = claims
        self.rule = rule
    }

    /// The same first factor, continued by a signed-in user's session (its second factor kept).
    package static func continuing(_ user: AccountService.User, provider: String? = nil) -> FirstFactor {
        FirstFactor(
            provider: provider ?? user.claims.firebase.signInProvider,
            rule: .carry(factor: user.claims.firebase.signInSecondFactor, identifier: user.claims.firebase.secondFactorIdentifier))
    }
}

/// A sign-in that waits for its second factor: what the first factor's answer carries instead of
/// tokens (`mfaPendingCredential`, `mfaInfo`).
package struct PendingSecondFactor: Sendable {
    /// The sealed, short-lived credential `mfaSignIn:finalize` takes.
    package var credential: String
    /// The account's factors (their hints: never a secret).
    package var factors: [SecondFactor]
}

/// **Where every sign-in completes.** Every first factor (password, email link and its sign-in
/// code, OpenID Connect and SAML, custom token, anonymous sign-in and its upgrade, sign-up) and
/// every change that starts a new session ends here, in its own transaction, with the account as it
/// left it: this records how the person signed in (`lastLoginAt`) and starts the session (the only
/// place a session is created), or, when the account has a second factor its tenant asks for,
/// keeps what the first factor changed and answers with a pending credential instead
/// (``PendingSecondFactor``), which ``SecondFactorService`` completes here again once the factor
/// is proven. The session's tokens are minted in one place too: ``SignedInUser/tokens(_:now:)``
/// (and a refresh's ``TokenService/idToken(for:session:now:)``).
package struct SignInCompletion: Sendable {
    let tokens: TokenService
    let pending: PendingCredentials

    init(tokens: TokenService, formKey: SymmetricKey) {
        self.tokens = tokens
        pending = PendingCredentials(formKey: formKey)
    }

    /// Completes a sign-in in `tx`: writes `account` (inserted when `isNew`) with `lastLoginAt` and
    /// a new session, or, when a second factor is needed, writes what the first factor changed and
    /// starts no session.
    package func complete(
        _ given: Account, isNew: Bool, by factor: FirstFactor, tenant: TenantPolicy, in tx: any AccountTransaction
    ) throws -> SignedInUser {
        var account = given
        if Self.asksSecondFactor(of: account, by: factor, tenant: tenant) {
            // As in Firebase, what the first factor changed stays (a provider linked, an address
            // proven); the sign-in itself waits for the second factor.
            if isNew { try tx.insert(account) } else { try tx.update(account) }
            let credential = try pending.credential(for: account, factor: factor, now: tx.now)
            return SignedInUser(
                account: account, isNewUser: isNew,
                step: .secondFactor(PendingSecondFactor(credential: credential, factors: account.secondFactors)))
        }
        account.lastLoginAt = tx.now
        if isNew { try tx.insert(account) } else { try tx.update(account) }
        let session = newSession(for: account, by: factor, now: tx.now)
        try tx.addSession(session.session)
        return SignedInUser(account: account, isNewUser: isNew, step: .session(session))
    }

    /// Starts a new session in `tx` for a change that a signed-in session made to `account` (a new
    /// password or address, which revoked the others): not a sign-in, so `lastLoginAt` stays and
    /// no second factor is asked (the caller's session keeps its own, ``SecondFactorRule/carry(factor:identifier:)``).
    package func continueSession(of account: Account, by factor: FirstFactor, in tx: any AccountTransaction) throws -> SignedInUser {
        let session = newSession(for: account, by: factor, now: tx.now)
        try tx.addSession(session.session)
        return SignedInUser(account: account, isNewUser: false, step: .session(session))
    }

    /// Whether `factor` must be followed by a second one for `account` in `tenant`.
    package static func asksSecondFactor(of account: Account, by factor: FirstFactor, tenant: TenantPolicy) -> Bool {
        guard case .ask = factor.rule else { return false }
        return !account.secondFactors.isEmpty && tenant.multiFactor.challengesEnrolledAccounts
    }

    /// A new session for `account` signed in by `factor` (stored by the caller's transaction):
    /// for ``complete(_:isNew:by:tenant:in:)``, and for the one statement that signs in with an
    /// email link on PostgreSQL, which runs only where no second factor can be asked
    /// (``ActionCompleter``).
    package func newSession(for account: Account, by factor: FirstFactor, now: Timestamp) -> TokenService.NewSession {
        tokens.newSession(
            accountID: account.localID, tenantID: account.tenantID, signInProvider: factor.provider,
            claims: Self.sessionClaims(factor), now: now)
    }

    /// The session's claims: the first factor's, with the second factor's under `firebase`.
    static func sessionClaims(_ factor: FirstFactor) -> String? {
        let second: (factor: String, identifier: String?)?
        switch factor.rule {
        case .ask, .skip: second = nil
        case .carry(let kind, let identifier): second = kind.map { ($0, identifier) }
        case .proven(let identifier): second = ("totp", identifier)
        }
        guard let second else { return factor.claims }
        var claims = factor.claims.flatMap(ClaimValue.object(json:)) ?? [:]
        var firebase = claims["firebase"]?.objectValue ?? [:]
        firebase["sign_in_second_factor"] = .string(second.factor)
        if let identifier = second.identifier { firebase["second_factor_identifier"] = .string(identifier) }
        claims["firebase"] = .object(firebase)
        return ClaimValue.object(claims).json
    }
}

/// The pending credentials of sign-ins that wait for their second factor: sealed (``Sealing``)
/// with the account, tenant and first factor they stand for, valid for ten minutes, used once
/// (``SecondFactorService``).
struct PendingCredentials: Sendable {
    let sealing: Sealing

    /// How long a first factor waits for its second.
    static let lifetime: Duration = .seconds(600)

    /// What a credential holds.
    struct Content: Codable, Sendable, Hashable {
        /// The account.
        var account: String
        /// Its tenant.
        var tenant: String
        /// The first factor's provider and the session claims it brings.
        var provider: String
        var claims: String?
        /// When it was issued (ms) and a random nonce: the credential's identity for its single use.
        var issued: Int64
        var nonce: String
    }

    init(formKey: SymmetricKey) {
        sealing = Sealing(formKey: formKey, purpose: "actionlinks mfa pending credential v1")
    }

    static let context = "mfaPendingCredential"

    /// A credential for `account` after `factor`.
    func credential(for account: Account, factor: FirstFactor, now: Timestamp) throws -> String {
        let content = Content(
            account: account.localID, tenant: account.tenantID, provider: factor.provider, claims: factor.claims,
            issued: now.milliseconds, nonce: Secrets.token())
        return Base64URL.encode(try sealing.seal(content, context: Self.context))
    }

    /// What `credential` holds, if it opens, is of `tenantID` and has not expired
    /// (`INVALID_MFA_PENDING_CREDENTIAL` otherwise).
    func open(_ credential: String, tenantID: String, now: Timestamp) throws(ActionError) -> Content {
        guard let sealed = Base64URL.decode(credential), let content = sealing.open(Content.self, Data(sealed), context: Self.context),
            content.tenant == tenantID, now.milliseconds - content.issued < Int64(Self.lifetime.components.seconds) * 1000,
            content.issued <= now.milliseconds + 60_000
        else {
            throw ActionError(.invalidMFAPendingCredential, "The pending credential is invalid or expired; sign in again.")
        }
        return content
    }
}
