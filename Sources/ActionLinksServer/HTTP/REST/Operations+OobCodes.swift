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
            fields, call, named throws(ActionError) in
            var tenant = named
            guard let type = fields.requestType?.name, !type.isEmpty, type != "OOB_REQ_TYPE_UNSPECIFIED" else {
                throw ActionError(.missingRequestType)
            }
            guard let mode = ActionCodeLink.Mode(requestType: type) else {
                throw ActionError(.invalidRequestType, "unknown requestType '\(type.prefix(100))'")
            }
            let returnLink = fields.returnOobLink?.value ?? false
            if returnLink, !call.isAdmin { throw ActionError.insufficientPermission }
            var user: Account?
            switch mode {
            case .signIn:
                guard tenant.enableEmailLinkSignin else { throw ActionError(.operationNotAllowed) }
            case .verifyEmail, .verifyAndChangeEmail:
                // As in Firebase, `returnOobLink` marks the admin's request by address; any other
                // is the signed-in user's own. The admin may also have it mailed (Firebase's admin
                // can only have it returned).
                if mode == .verifyAndChangeEmail, fields.newEmail?.isEmpty ?? true { throw ActionError(.missingNewEmail) }
                if !((returnLink || call.isAdmin) && fields.idToken == nil) {
                    if mode == .verifyAndChangeEmail, fields.idToken == nil { throw ActionError(.missingIDToken) }
                    let signedIn = try await accounts.user(idToken: fields.idToken ?? "", caller: call.caller, bodyTenant: fields.tenantId)
                    // verifyBeforeUpdateEmail moves the address: as sensitive as changing it.
                    if mode == .verifyAndChangeEmail { try accounts.checkRecentSignIn(signedIn, caller: call.caller) }
                    user = signedIn.account
                    tenant = signedIn.tenant
                }
            default: break
            }
            var issue = CodeIssuer.IssueRequest(mode: mode, tenant: tenant)
            issue.email = fields.email
            issue.newEmail = fields.newEmail
            issue.user = user
            issue.continueURL = fields.continueUrl
            issue.canHandleCodeInApp = fields.canHandleCodeInApp?.value ?? false
            issue.iOSBundleID = fields.iOSBundleId ?? fields.iosBundleId
            issue.androidPackageName = fields.androidPackageName
            issue.androidInstallApp = fields.androidInstallApp?.value ?? false
            issue.androidMinimumVersion = fields.androidMinimumVersion?.digits ?? fields.androidMinimumVersionCode?.digits
            issue.linkDomain = fields.linkDomain ?? fields.dynamicLinkDomain
            issue.languageCode = call.locale
            issue.isAdmin = call.isAdmin
            issue.returnLink = returnLink
            issue.clientAddress = call.caller.clientAddress
            issue.apiKey = call.caller.apiKey
            let issued = try await issuer.issue(issue)
            // The same bytes whether or not the address has an account: the canonical address either way.
            let returned = returnLink && issued.delivered
            return SendOobCodeResponse(
                email: issued.email, oobLink: returned ? issued.link : nil, oobCode: returned ? issued.code : nil,
                signInCode: returned ? issued.signInCode : nil)
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

/// `accounts:sendOobCode`'s answer.
struct SendOobCodeResponse: Encodable, Sendable {
    var kind = "identitytoolkit#GetOobConfirmationCodeResponse"
    var email: String
    var oobLink: String?
    var oobCode: String?
    /// A returned sign-in link's code (its digits; this server's own field), when codes are on.
    var signInCode: String? = nil
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
