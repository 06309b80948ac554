import ActionLinks
import Foundation

/// `accounts:sendOobCode`, `accounts:resetPassword` and `accounts:signInWithEmailLink`: links
/// issued, inspected and completed. (`accounts:update` with an `oobCode` is in
/// `Operations+Accounts.swift`.)
extension IdentityToolkitAPI {
    mutating func addOobCodeOperations(_ services: LinkDomainServices) {
        let issuer = services.issuer
        let completer = services.completer
        let accounts = services.accounts

        add("sendOobCode", legacy: "getOobConfirmationCode", requires: [.enabledTenant], body: SendOobCodeRequest.self) {
            fields, call, tenant throws(ActionError) in
            let issued = try await issuer.issue(fields.issueRequest, caller: call.caller, tenant: tenant)
            return SendOobCodeResponse(issued, returnLink: fields.returnOobLink?.value ?? false)
        }

        add("resetPassword", legacy: "resetPassword", requires: [.enabledTenant], body: OobCodeRequest.self) {
            fields, call, tenant throws(ActionError) in
            let named = fields.tenantId ?? call.pathTenant
            guard tenant.allowPasswordSignup else { throw ActionError(.passwordLoginDisabled) }
            guard let code = fields.oobCode, !code.isEmpty else { throw ActionError.missingCode }
            let scope = named?.isEmpty == false ? tenant : nil
            if let newPassword = fields.newPassword {
                let done = try await completer.resetPassword(code: code, newPassword: newPassword, tenant: scope, consumer: call.consumer)
                return ResetPasswordResponse(email: done.record.email, requestType: "PASSWORD_RESET")
            }
            let record = try await completer.check(code: code, tenantID: scope?.tenantID)
            // As Firebase does, an email sign-in code does not tell whom it was sent to: whoever holds
            // a forwarded link must still type the address.
            guard record.mode != .signIn else { return ResetPasswordResponse(requestType: record.mode.requestType) }
            return ResetPasswordResponse(email: record.email, newEmail: record.newEmail, requestType: record.mode.requestType)
        }

        add("signInWithEmailLink", legacy: "emailLinkSignin", requires: [.enabledTenant], body: OobCodeRequest.self) {
            fields, call, named throws(ActionError) in
            var tenant = named
            guard tenant.enableEmailLinkSignin else { throw ActionError(.operationNotAllowed) }
            var user: AccountService.User?
            if let idToken = fields.idToken {
                user = try await accounts.user(idToken: idToken, caller: call.caller, bodyTenant: fields.tenantId)
                tenant = user?.tenant ?? tenant
            }
            guard let email = fields.email, !email.isEmpty else { throw ActionError.missingEmail }
            guard let code = fields.oobCode, !code.isEmpty else { throw ActionError.missingCode }
            let done = try await completer.signIn(code: code, email: email, user: user, tenant: tenant, consumer: call.consumer)
            guard let signedIn = done.signedIn else { throw ActionError(.internalError, "the sign-in made no session") }
            let tokens = try await signedIn.tokens(accounts.tokens, now: accounts.clock.now)
            return EmailLinkSignInResponse(
                tokens: tokens, email: signedIn.account.email ?? "", localId: signedIn.account.localID, isNewUser: signedIn.isNewUser)
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
}

/// `accounts:signInWithEmailLink`'s answer.
struct EmailLinkSignInResponse: Encodable, Sendable {
    var kind = "identitytoolkit#EmailLinkSigninResponse"
    var idToken: String
    var refreshToken: String
    var expiresIn: String
    var email: String
    var localId: String
    var isNewUser: Bool

    init(tokens: SignedInUser.Tokens, email: String, localId: String, isNewUser: Bool) {
        idToken = tokens.idToken
        refreshToken = tokens.refreshToken
        expiresIn = tokens.expiresIn
        self.email = email
        self.localId = localId
        self.isNewUser = isNewUser
    }
}
