import ActionLinks
import ActionLinksDomain
import Foundation

/// Federated sign-in: `accounts:signInWithIdp` (v3 `verifyAssertion`). `accounts:createAuthUri`
/// with a `providerId` is answered by ``FederatedSignInService/authURI(providerID:continueURI:sessionID:customParameters:scopes:tenantID:)``.
extension IdentityToolkitAPI {
    mutating func addFederatedOperations(_ services: LinkDomainServices) {
        let federated = services.federated
        let tokens = services.tokens
        let clock = services.clock

        add("signInWithIdp", legacy: "verifyAssertion", requires: [.enabledTenant], body: SignInWithIdpRequest.self) {
            fields, call, tenant throws(ActionError) in
            var request = FederatedSignInService.Assertion()
            request.requestURI = fields.requestUri
            request.postBody = fields.postBody
            request.sessionID = fields.sessionId
            request.pendingToken = fields.pendingToken
            request.idToken = fields.idToken
            request.autoCreate = fields.autoCreate?.value ?? true
            request.tenantID = fields.tenantId
            request.returnIdpCredential = fields.returnIdpCredential?.value == true
            request.returnRefreshToken = fields.returnRefreshToken?.value ?? false
            request.pendingIDToken = fields.pendingIdToken
            let answer = try await federated.signInWithIdp(request, tenant: tenant, caller: call.caller)
            var response = SignInWithIdpResponse(answer)
            switch answer.outcome {
            case .signedIn(let user)?:
                response.localId = user.account.localID
                if let signed = try await user.tokens(tokens, now: clock.now) {
                    (response.idToken, response.refreshToken, response.expiresIn) = (signed.idToken, signed.refreshToken, signed.expiresIn)
                }
                (response.mfaPendingCredential, response.mfaInfo) = MFAEnrollmentInfo.pending(user)
                response.isNewUser = user.isNewUser ? true : nil
            case .needConfirmation(let providers)?:
                response.needConfirmation = true
                response.verifiedProvider = providers
            case nil:
                break
            }
            return response
        }
    }
}

/// `accounts:signInWithIdp` / `verifyAssertion`.
struct SignInWithIdpRequest: Decodable, Sendable, NamesTenant {
    var requestUri: String?
    var postBody: String?
    var sessionId: String?
    var pendingToken: String?
    var idToken: String?
    var returnSecureToken: LenientBool?
    var returnIdpCredential: LenientBool?
    var returnRefreshToken: LenientBool?
    var pendingIdToken: String?
    var autoCreate: LenientBool?
    var tenantId: String?
}

/// `accounts:signInWithIdp`'s answer, with the types the SDKs read (`expiresIn` and `rawUserInfo`
/// as strings; `needConfirmation` and `isNewUser` only when true: the JS SDK treats the mere key
/// `needConfirmation` as a refusal).
struct SignInWithIdpResponse: Encodable, Sendable {
    var kind = "identitytoolkit#VerifyAssertionResponse"
    var federatedId: String
    var providerId: String
    var localId: String?
    var email: String?
    var emailVerified: Bool?
    var displayName: String?
    var fullName: String?
    var firstName: String?
    var lastName: String?
    var photoUrl: String?
    var screenName: String?
    var rawUserInfo: String?
    var oauthIdToken: String?
    var oauthAccessToken: String?
    var oauthExpireIn: Int?
    var idToken: String?
    var refreshToken: String?
    var expiresIn: String?
    var isNewUser: Bool?
    var needConfirmation: Bool?
    var verifiedProvider: [String]?
    var pendingToken: String?
    var errorMessage: String?
    var tenantId: String?
    var mfaPendingCredential: String?
    var mfaInfo: [MFAEnrollmentInfo]?

    init(_ answer: FederatedSignInService.Answer) {
        let assertion = answer.assertion
        // Firebase names Google users by URL, every other provider's by the subject alone.
        federatedId = assertion.providerID == "google.com" ? "https://accounts.google.com/" + assertion.rawID : assertion.rawID
        providerId = assertion.providerID
        email = assertion.answeredEmail ?? assertion.email
        emailVerified = answer.emailVerified
        displayName = assertion.displayName
        fullName = assertion.displayName
        firstName = assertion.firstName
        lastName = assertion.lastName
        photoUrl = assertion.photoURL
        screenName = assertion.screenName
        rawUserInfo = assertion.rawUserInfo
        oauthIdToken = answer.oauthIDToken
        oauthAccessToken = answer.oauthAccessToken
        oauthExpireIn = answer.oauthExpiresIn
        pendingToken = answer.pendingToken
        errorMessage = answer.errorMessage
        tenantId = answer.tenantID.isEmpty ? nil : answer.tenantID
    }
}
