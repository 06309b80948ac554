import ActionLinks
import ActionLinksDomain
import Foundation

/// `accounts:sendOobCode`, `accounts:resetPassword` and `accounts:signInWithEmailLink`: links
/// issued, inspected and completed. (`accounts:update` with an `oobCode` is in
/// `Operations+Accounts.swift`.)
extension IdentityToolkitAPI {
    mutating func addOobCodeOperations(_ services: LinkDomainServices) {
        let issuer = services.issuer
        let completer = services.completer

        add("sendOobCode", legacy: "getOobConfirmationCode", requires: [.enabledTenant], body: SendOobCodeRequest.self) {
            fields, call, tenant throws(ActionError) in
            let issued = try await issuer.issue(fields.issueRequest, caller: call.caller, tenant: tenant)
            return SendOobCodeResponse(issued, returnLink: fields.returnOobLink?.value ?? false)
        }

        add("resetPassword", legacy: "resetPassword", requires: [.enabledTenant], body: OobCodeRequest.self) {
            fields, call, tenant throws(ActionError) in
            let disclosed = try await completer.resetPassword(
                code: fields.oobCode, newPassword: fields.newPassword, tenant: tenant,
                named: (fields.tenantId ?? call.pathTenant)?.isEmpty == false, consumer: call.consumer)
            return ResetPasswordResponse(
                email: disclosed.email, newEmail: disclosed.newEmail, requestType: disclosed.mode.requestType,
                mfaInfo: disclosed.factor.map(MFAEnrollmentInfo.init))
        }

        add("signInWithEmailLink", legacy: "emailLinkSignin", requires: [.enabledTenant], body: OobCodeRequest.self) {
            fields, call, tenant throws(ActionError) in
            let (signedIn, tokens) = try await completer.signInWithEmailLink(
                code: fields.oobCode, email: fields.email, idToken: fields.idToken, bodyTenant: fields.tenantId, tenant: tenant,
                caller: call.caller, consumer: call.consumer)
            return EmailLinkSignInResponse(signedIn, tokens: tokens)
        }
    }
}

/// `accounts:sendOobCode`.
struct SendOobCodeRequest: Decodable, Sendable, NamesTenant {
    var requestType: RequestType?
    var email: String?
    var newEmail: String?
    var idToken: String?
    var tenantId: String?
    var continueUrl: String?
    var canHandleCodeInApp: LenientBool?
    var iOSBundleId: String?
    var iosBundleId: String?
    var androidPackageName: String?
    var androidInstallApp: LenientBool?
    var androidMinimumVersion: VersionCode?
    var androidMinimumVersionCode: VersionCode?
    var linkDomain: String?
    var dynamicLinkDomain: String?
    var returnOobLink: LenientBool?
}

/// `accounts:resetPassword` and `accounts:signInWithEmailLink`.
struct OobCodeRequest: Decodable, Sendable, NamesTenant {
    var oobCode: String?
    var newPassword: String?
    var email: String?
    var idToken: String?
    var tenantId: String?
}

extension SendOobCodeRequest {
    /// The fields as ``CodeIssuer`` takes them (both REST surfaces: this server's and a front's).
    var issueRequest: CodeIssuer.IssueRequest {
        var issue = CodeIssuer.IssueRequest(requestType: requestType?.name)
        issue.email = email
        issue.newEmail = newEmail
        issue.idToken = idToken
        issue.tenantID = tenantId
        issue.continueURL = continueUrl
        issue.canHandleCodeInApp = canHandleCodeInApp?.value ?? false
        issue.iOSBundleID = iOSBundleId ?? iosBundleId
        issue.androidPackageName = androidPackageName
        issue.androidInstallApp = androidInstallApp?.value ?? false
        issue.androidMinimumVersion = androidMinimumVersion?.digits ?? androidMinimumVersionCode?.digits
        issue.linkDomain = linkDomain ?? dynamicLinkDomain
        issue.returnLink = returnOobLink?.value ?? false
        return issue
    }
}

/// `accounts:sendOobCode`'s answer.
struct SendOobCodeResponse: Encodable, Sendable {
    var kind = "identitytoolkit#GetOobConfirmationCodeResponse"
    var email: String
    var oobLink: String?
    var oobCode: String?
    /// A returned sign-in link's code (its digits; this server's own field), when codes are on.
    var signInCode: String? = nil
}

extension SendOobCodeResponse {
    /// The answer for `issued`: the link only when it was returned. The same bytes whether or not
    /// the address has an account: the canonical address either way.
    init(_ issued: CodeIssuer.IssuedLink, returnLink: Bool) {
        let returned = returnLink && issued.delivered
        self.init(
            email: issued.email, oobLink: returned ? issued.link : nil, oobCode: returned ? issued.code : nil,
            signInCode: returned ? issued.signInCode : nil)
    }
}

/// `accounts:resetPassword`'s answer (inspection or reset).
struct ResetPasswordResponse: Encodable, Sendable {
    var kind = "identitytoolkit#ResetPasswordResponse"
    var email: String?
    var newEmail: String?
    var requestType: String
    /// For a `REVERT_SECOND_FACTOR_ADDITION` code, the factor it removes: one object, not a list.
    var mfaInfo: MFAEnrollmentInfo?
}

/// `accounts:signInWithEmailLink`'s answer.
struct EmailLinkSignInResponse: Encodable, Sendable {
    var kind = "identitytoolkit#EmailLinkSigninResponse"
    var idToken: String?
    var refreshToken: String?
    var expiresIn: String?
    var email: String
    var localId: String
    var isNewUser: Bool
    /// Instead of tokens, when the account's second factor is asked for.
    var mfaPendingCredential: String?
    var mfaInfo: [MFAEnrollmentInfo]?

    init(_ user: SignedInUser, tokens: SignedInUser.Tokens?) {
        idToken = tokens?.idToken
        refreshToken = tokens?.refreshToken
        expiresIn = tokens?.expiresIn
        email = user.account.email ?? ""
        localId = user.account.localID
        isNewUser = user.isNewUser
        (mfaPendingCredential, mfaInfo) = MFAEnrollmentInfo.pending(user)
    }
}
