import ActionLinks
import ActionLinksDomain
import Foundation
import Hummingbird

/// Sign-up and sign-in: `accounts:signUp` (and the admin's `projects/<p>/accounts`),
/// `accounts:signInWithPassword`, `accounts:signInWithCustomToken`, the token refresh and
/// session cookies.
extension IdentityToolkitAPI {
    mutating func addSignInOperations(_ services: LinkDomainServices) {
        let signIn = services.signIn
        let accounts = services.accounts
        let tokens = services.tokens
        let clock = services.clock
        let projectID = services.settings.project.id

        add("signUp", legacy: "signupNewUser", requires: [.enabledTenant], body: SignUpRequest.self) {
            fields, call, tenant throws(ActionError) in
            var request = SignInService.SignUp()
            request.email = fields.email
            request.password = fields.password
            request.displayName = fields.displayName
            request.photoURL = fields.photoUrl
            request.phoneNumber = fields.phoneNumber
            request.emailVerified = fields.emailVerified?.value
            request.disabled = fields.disabled?.value
            request.localID = fields.localId
            request.idToken = fields.idToken
            request.bodyTenant = fields.tenantId
            let (account, session) = try await signIn.signUp(request, tenant: tenant, caller: call.caller)
            return SignUpResponse(
                localId: account.localID, email: account.email, displayName: account.displayName,
                tokens: try await session?.requiredTokens(tokens, now: clock.now))
        }

        add("signInWithPassword", legacy: "verifyPassword", requires: [.enabledTenant], body: PasswordSignInRequest.self) {
            fields, call, tenant throws(ActionError) in
            let user = try await signIn.signIn(email: fields.email, password: fields.password, tenant: tenant, caller: call.caller)
            return PasswordSignInResponse(user, tokens: try await user.tokens(tokens, now: clock.now))
        }

        add("signInWithCustomToken", legacy: "verifyCustomToken", requires: [.enabledTenant], body: CustomTokenSignInRequest.self) {
            fields, call, tenant throws(ActionError) in
            let user = try await signIn.signIn(customToken: fields.token, tenant: tenant, caller: call.caller)
            return CustomTokenSignInResponse(isNewUser: user.isNewUser, tokens: try await user.requiredTokens(tokens, now: clock.now))
        }

        add("token", on: .path, body: TokenRequest.self) { fields, call throws(ActionError) in
            let refreshed = try await signIn.refresh(grantType: fields.grantType, refreshToken: fields.refreshToken)
            return TokenResponse(
                accessToken: refreshed.idToken, expiresIn: String(TokenService.lifetime), tokenType: "Bearer",
                refreshToken: refreshed.refreshToken, idToken: refreshed.idToken, userID: refreshed.account.localID, projectID: projectID)
        }

        add("createSessionCookie", on: .project, requires: [.admin], body: SessionCookieRequest.self) { fields, call throws(ActionError) in
            let cookie = try await accounts.sessionCookie(
                idToken: fields.idToken, lifetime: fields.validDuration.flatMap { Int64($0.text) }, bodyTenant: fields.tenantId,
                caller: call.caller)
            return SessionCookieResponse(sessionCookie: cookie)
        }
    }
}

/// `accounts:signUp` (a client's, or the admin's account creation).
struct SignUpRequest: Decodable, Sendable, NamesTenant {
    var email: String?
    var password: String?
    var displayName: String?
    var photoUrl: String?
    var phoneNumber: String?
    var emailVerified: LenientBool?
    var disabled: LenientBool?
    var localId: String?
    var idToken: String?
    var tenantId: String?
}

/// `accounts:signUp`'s answer; a client's carries its session's tokens.
struct SignUpResponse: Encodable, Sendable {
    var kind = "identitytoolkit#SignupNewUserResponse"
    var localId: String
    var email: String?
    var displayName: String?
    var idToken: String?
    var refreshToken: String?
    var expiresIn: String?

    init(localId: String, email: String?, displayName: String?, tokens: SignedInUser.Tokens?) {
        self.localId = localId
        self.email = email
        self.displayName = displayName
        idToken = tokens?.idToken
        refreshToken = tokens?.refreshToken
        expiresIn = tokens?.expiresIn
    }
}

/// `accounts:signInWithPassword`.
struct PasswordSignInRequest: Decodable, Sendable, NamesTenant {
    var email: String?
    var password: String?
    var tenantId: String?
}

/// `accounts:signInWithPassword`'s answer.
struct PasswordSignInResponse: Encodable, Sendable {
    var kind = "identitytoolkit#VerifyPasswordResponse"
    var registered = true
    var localId: String
    var email: String
    var displayName: String?
    var profilePicture: String?
    var idToken: String?
    var refreshToken: String?
    var expiresIn: String?
    /// Instead of tokens, when the account's second factor is asked for.
    var mfaPendingCredential: String?
    var mfaInfo: [MFAEnrollmentInfo]?

    init(_ user: SignedInUser, tokens: SignedInUser.Tokens?) {
        let account = user.account
        localId = account.localID
        email = account.email ?? ""
        displayName = account.displayName
        profilePicture = account.photoURL
        idToken = tokens?.idToken
        refreshToken = tokens?.refreshToken
        expiresIn = tokens?.expiresIn
        (mfaPendingCredential, mfaInfo) = MFAEnrollmentInfo.pending(user)
    }
}

/// `accounts:signInWithCustomToken`.
struct CustomTokenSignInRequest: Decodable, Sendable, NamesTenant {
    var token: String?
    var tenantId: String?
}

/// `accounts:signInWithCustomToken`'s answer.
struct CustomTokenSignInResponse: Encodable, Sendable {
    var kind = "identitytoolkit#VerifyCustomTokenResponse"
    var isNewUser: Bool
    var idToken: String
    var refreshToken: String
    var expiresIn: String

    init(isNewUser: Bool, tokens: SignedInUser.Tokens) {
        self.isNewUser = isNewUser
        idToken = tokens.idToken
        refreshToken = tokens.refreshToken
        expiresIn = tokens.expiresIn
    }
}

/// `token` (JSON or a form, `grant_type` / `grantType`).
struct TokenRequest: Decodable, Sendable, PlainFormDecodable {
    var grantType: String?
    var refreshToken: String?

    init(plainForm fields: [String: String]) {
        grantType = fields["grantType"]
        refreshToken = fields["refreshToken"]
    }
}

/// `token`'s answer, in the Secure Token API's snake case.
struct TokenResponse: Encodable, Sendable, PlainJSONEncodable {
    var accessToken: String
    var expiresIn: String
    var tokenType: String
    var refreshToken: String
    var idToken: String
    var userID: String
    var projectID: String

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case expiresIn = "expires_in"
        case tokenType = "token_type"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case userID = "user_id"
        case projectID = "project_id"
    }

    /// The bytes `IdentityToolkitJSON.encode` writes (keys sorted), when no value needs escaping.
    var plainJSON: Data? {
        PlainJSON.object([
            ("access_token", accessToken), ("expires_in", expiresIn), ("id_token", idToken), ("project_id", projectID),
            ("refresh_token", refreshToken), ("token_type", tokenType), ("user_id", userID),
        ])
    }
}

/// `projects/<p>:createSessionCookie`.
struct SessionCookieRequest: Decodable, Sendable {
    var idToken: String?
    var validDuration: LenientString?
    var tenantId: String?
}

/// `projects/<p>:createSessionCookie`'s answer.
struct SessionCookieResponse: Encodable, Sendable {
    var sessionCookie: String
}
