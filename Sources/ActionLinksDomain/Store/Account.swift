import Foundation

/// A user: every field of Firebase's user record that applies here (second factors are
/// authenticator apps only; there is no SMS sign-in). `accounts:lookup` shows it as Firebase does (``UserRecord``).
public struct Account: Sendable, Hashable {
    /// The user's ID (`localId`): 28 random letters and digits, or one an admin chose.
    public var localID: String
    /// The tenant ("" for the project itself).
    public var tenantID: String
    /// The address, in lower case as Firebase keeps it.
    public var email: String?
    /// Whether the address was proven (by a link, a trusted provider or an admin).
    public var emailVerified: Bool
    /// The password hash (``PasswordHasher``'s PHC string, or an imported Firebase scrypt hash).
    public var passwordHash: String?
    /// When the password was last set.
    public var passwordUpdatedAt: Timestamp?
    /// The display name.
    public var displayName: String?
    /// The photo URL.
    public var photoURL: String?
    /// The phone number (E.164, set by admins only: there is no SMS sign-in).
    public var phoneNumber: String?
    /// Whether sign-in and token refresh are refused (`USER_DISABLED`).
    public var disabled: Bool
    /// When the account was created.
    public var createdAt: Timestamp
    /// When the account last signed in.
    public var lastLoginAt: Timestamp?
    /// When a token was last issued or refreshed.
    public var lastRefreshAt: Timestamp?
    /// Tokens issued before this time (whole seconds) are revoked (`TOKEN_EXPIRED`).
    public var validSince: Int64
    /// Developer claims added to every ID token: a JSON object, as Firebase stores it.
    public var customAttributes: String?
    /// The address the account had before its first change (a `recoverEmail` link restores it).
    public var initialEmail: String?
    /// Whether the account has signed in with an email link.
    public var emailLinkSignin: Bool
    /// Whether the account has signed in with a custom token.
    public var customAuth: Bool
    /// The federated identities linked to the account (Yahoo, an OpenID Connect provider, ...).
    public var federatedIdentities: [FederatedIdentity]
    /// The user's handle at a provider (its `screen_name` claim), copied at sign-up as Firebase does.
    public var screenName: String?
    /// The second factors enrolled (authenticator apps), oldest first.
    public var secondFactors: [SecondFactor]

    /// Creates an account value.
    public init(
        localID: String, tenantID: String = "", email: String? = nil, emailVerified: Bool = false, passwordHash: String? = nil,
        passwordUpdatedAt: Timestamp? = nil, displayName: String? = nil, photoURL: String? = nil, phoneNumber: String? = nil,
        disabled: Bool = false, createdAt: Timestamp, lastLoginAt: Timestamp? = nil, lastRefreshAt: Timestamp? = nil, validSince: Int64 = 0,
        customAttributes: String? = nil, initialEmail: String? = nil, emailLinkSignin: Bool = false, customAuth: Bool = false,
        federatedIdentities: [FederatedIdentity] = [], screenName: String? = nil, secondFactors: [SecondFactor] = []
    ) {
        self.localID = localID
        self.tenantID = tenantID
        self.email = email
        self.emailVerified = emailVerified
        self.passwordHash = passwordHash
        self.passwordUpdatedAt = passwordUpdatedAt
        self.displayName = displayName
        self.photoURL = photoURL
        self.phoneNumber = phoneNumber
        self.disabled = disabled
        self.createdAt = createdAt
        self.lastLoginAt = lastLoginAt
        self.lastRefreshAt = lastRefreshAt
        self.validSince = validSince
        self.customAttributes = customAttributes
        self.initialEmail = initialEmail
        self.emailLinkSignin = emailLinkSignin
        self.customAuth = customAuth
        self.federatedIdentities = federatedIdentities
        self.screenName = screenName
        self.secondFactors = secondFactors
    }

    /// Whether the account has no way to sign in but the session it has (Firebase's anonymous user).
    public var isAnonymous: Bool {
        email == nil && passwordHash == nil && phoneNumber == nil && federatedIdentities.isEmpty && !customAuth
    }

    /// The identities an ID token lists (`firebase.identities`): the address, the phone number and
    /// each linked provider's subject.
    public var identities: [String: [String]] {
        var identities: [String: [String]] = [:]
        if let email { identities["email"] = [email] }
        if let phoneNumber { identities["phone"] = [phoneNumber] }
        for identity in federatedIdentities { identities[identity.providerID, default: []].append(identity.rawID) }
        return identities
    }

    /// The sign-in methods `accounts:createAuthUri` reports for the account's address:
    /// `password`, `emailLink` and each linked provider.
    public var signInMethods: [String] {
        var methods: [String] = []
        if email != nil, passwordHash != nil { methods.append("password") }
        if email != nil, emailLinkSignin { methods.append("emailLink") }
        methods += federatedIdentities.map(\.providerID)
        return methods
    }

    /// The providers `accounts:createAuthUri` reports (`allProviders`): `password` for an address
    /// with a password or an email link, and each linked provider.
    public var providerIDs: [String] {
        var providers: [String] = []
        if email != nil, passwordHash != nil || emailLinkSignin { providers.append("password") }
        providers += federatedIdentities.map(\.providerID)
        return providers
    }
}

/// An identity at a federated provider, linked to an account.
public struct FederatedIdentity: Sendable, Hashable, Codable {
    /// Firebase's provider ID (`yahoo.com`, `oidc.corp`).
    public var providerID: String
    /// The user's ID at the provider (the ID token's `sub`).
    public var rawID: String
    /// The address the provider gave.
    public var email: String?
    /// The name the provider gave.
    public var displayName: String?
    /// The photo the provider gave.
    public var photoURL: String?
    /// The handle the provider gave (`screen_name`).
    public var screenName: String?

    /// Creates an identity.
    public init(
        providerID: String, rawID: String, email: String? = nil, displayName: String? = nil, photoURL: String? = nil,
        screenName: String? = nil
    ) {
        self.providerID = providerID
        self.rawID = rawID
        self.email = email
        self.displayName = displayName
        self.photoURL = photoURL
        self.screenName = screenName
    }
}

extension Account {
    /// Revokes every session the account has at `now`, whoever holds it (a second factor withdrawn
    /// by the session that used it, or reverted from its enrolment notice). Revocation is by whole
    /// seconds (`validSince`, as Firebase's: a session of that very second stays valid), so this one
    /// runs through the end of `now`'s second; a sign-in later in that same second is revoked too.
    public mutating func revokeEverySession(at now: Timestamp) {
        validSince = max(validSince, now.seconds + 1)
    }
}

/// A session: what a refresh token stands for. Only the token's hash is stored.
public struct Session: Sendable, Hashable {
    /// SHA-256 of the refresh token.
    public var hash: Data
    /// The tenant of the account.
    public var tenantID: String
    /// The account signed in.
    public var accountID: String
    /// When the session began (ms); a session older than the account's `validSince` is revoked.
    public var createdAt: Timestamp
    /// How the session signed in (`password`, `anonymous`, `custom`, `yahoo.com`, ...), for the
    /// ID tokens refreshed from it.
    public var signInProvider: String
    /// When the user signed in (seconds): every ID token of the session carries it as `auth_time`.
    public var authTime: Int64
    /// Claims a custom token added for this session (a JSON object), carried by every refreshed token.
    public var claims: String?

    /// Creates a session value.
    public init(
        hash: Data, tenantID: String, accountID: String, createdAt: Timestamp, signInProvider: String, authTime: Int64,
        claims: String? = nil
    ) {
        self.hash = hash
        self.tenantID = tenantID
        self.accountID = accountID
        self.createdAt = createdAt
        self.signInProvider = signInProvider
        self.authTime = authTime
        self.claims = claims
    }

    /// Whether a change to the account since the session began revoked it (`validSince` is in whole
    /// seconds, and a session of that same second stays valid, as firebase-admin compares).
    public func isRevoked(by account: Account) -> Bool { createdAt.seconds < account.validSince }
}
