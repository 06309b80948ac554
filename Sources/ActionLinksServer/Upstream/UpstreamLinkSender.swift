import ActionLinks
import ActionLinksConfiguration
import Foundation

/// `accounts:sendOobCode` in upstream mode: the project's service account asks upstream for the
/// code (`returnOobLink`, so upstream mails nothing), and this server builds the link on its own
/// link domain and mails it with its own templates, limits and enumeration protection.
struct UpstreamLinkSender: Sendable {
    let upstream: UpstreamClient
    let issuer: CodeIssuer
    let settings: ServiceSettings
    let clock: any ServiceClock

    /// Who asks: the admin, or a client with one of the project's API keys.
    enum Caller: Sendable {
        case admin
        case client(apiKey: String)
    }

    func send(_ fields: SendOobCodeRequest, caller: Caller, locale: String?, clientAddress: String?) async throws(ActionError)
        -> SendOobCodeResponse
    {
        guard let type = fields.requestType?.name, !type.isEmpty, type != "OOB_REQ_TYPE_UNSPECIFIED" else {
            throw ActionError(.missingRequestType)
        }
        guard let mode = ActionCodeLink.Mode(requestType: type) else {
            throw ActionError(.invalidRequestType, "unknown requestType '\(type.prefix(100))'")
        }
        guard [.signIn, .resetPassword, .verifyEmail, .verifyAndChangeEmail].contains(mode) else {
            throw ActionError(.invalidRequestType, "\(mode.requestType) links are sent by Firebase itself, not on request")
        }
        let isAdmin: Bool
        let apiKey: String
        switch caller {
        case .admin: (isAdmin, apiKey) = (true, upstream.settings.apiKeys[0])
        case .client(let key): (isAdmin, apiKey) = (false, key)
        }
        let returnLink = fields.returnOobLink?.value ?? false
        if returnLink, !isAdmin { throw ActionError.insufficientPermission }
        guard upstream.settings.hasServiceAccount else {
            throw ActionError(
                .operationNotAllowed,
                "this server has no service account for project \(upstream.settings.projectID) (upstream.serviceAccountFile, or upstream.metadataServer on Google Cloud), so it cannot send links; send them through Firebase"
            )
        }
        let tenantID = fields.tenantId.flatMap { $0.isEmpty ? nil : $0 }
        let domain = try issuer.linkDomain(fields.linkDomain ?? fields.dynamicLinkDomain)
        let continueURL = try issuer.checkedContinueURL(fields.continueUrl, required: mode == .signIn)

        var email: String
        if mode == .verifyEmail || mode == .verifyAndChangeEmail, !isAdmin || fields.idToken != nil {
            // The signed-in user's own address, as upstream knows it from the ID token.
            guard let idToken = fields.idToken, !idToken.isEmpty else { throw ActionError(.missingIDToken) }
            let found = try await upstream.email(idToken: idToken, apiKey: apiKey, tenantID: tenantID)
            guard let found, let canonical = EmailAddress.canonical(found) else { throw ActionError.missingEmail }
            email = canonical
            // Upstream is asked for the code as the service account, so its own recent sign-in
            // rule never applies: the front applies it, to the token upstream just accepted.
            if mode == .verifyAndChangeEmail { try checkRecentSignIn(idToken: idToken) }
        } else {
            guard let given = fields.email, !given.isEmpty else { throw ActionError.missingEmail }
            guard let canonical = EmailAddress.canonical(given) else { throw ActionError.invalidEmail }
            email = canonical
        }
        var newEmail: String?
        if mode == .verifyAndChangeEmail {
            guard let given = fields.newEmail, !given.isEmpty else { throw ActionError(.missingNewEmail) }
            guard let canonical = EmailAddress.canonical(given) else { throw ActionError(.invalidNewEmail) }
            newEmail = canonical
        }
        if !isAdmin {
            try await issuer.checkSendLimits(
                addresses: [email] + (newEmail.map { [$0] } ?? []), clientAddress: clientAddress, now: clock.now)
        }

        // Upstream checks the continue URL against the project's authorized domains too (so a URL
        // this server allows and Google does not is refused as Google refuses it); the link is built
        // here, so nothing about apps or link domains is asked for.
        var asked = ["requestType": mode.requestType, "email": email]
        if let newEmail { asked["newEmail"] = newEmail }
        if let tenantID { asked["tenantId"] = tenantID }
        if let continueURL { asked["continueUrl"] = continueURL }
        var issuedCode: String?
        var deliver = true
        do throws(ActionError) {
            issuedCode = try await upstream.issueCode(asked, locale: locale, now: clock.now.seconds).oobCode
        } catch let refusal
            where !isAdmin && settings.users.emailEnumerationProtection
            && (refusal.code == .emailNotFound || refusal.code == .userNotFound
                || (refusal.code == .emailExists && mode == .verifyAndChangeEmail))
        {
            // As Firebase production with enumeration protection: an unknown address, or a new
            // address another account has, is not told apart from a mailed link.
            // The same answer after the same work (the link built and the message rendered), and no mail.
            issuedCode = Secrets.token()
            deliver = false
        }
        guard let code = issuedCode, !code.isEmpty else { throw ActionError(.internalError, "upstream answered no code") }
        let action = ActionCodeLink(
            mode: mode, oobCode: code, apiKey: apiKey, continueURL: continueURL, languageCode: locale, tenantID: tenantID)
        let mobile =
            (fields.canHandleCodeInApp?.value ?? false)
            && ((fields.iOSBundleId ?? fields.iosBundleId) != nil || fields.androidPackageName != nil)
        let link = mobile ? action.mobileLink(on: domain) : action.webLink(on: domain)
        let recipient = newEmail ?? email
        let appName = settings.project.appName
        // A sign-in link's code, derived from Google's oobCode as the standalone server derives it
        // from its own, stored whether or not the link goes out (the same work). It lives no longer
        // than codes.lifetimes.signIn, this server's idea of the link's life.
        var signInCode: String?
        if mode == .signIn {
            signInCode = try await issuer.signInCodes.issue(
                tenantID: tenantID ?? "", email: email, link: link, oobCode: code,
                linkExpiry: clock.now + .seconds(settings.codes.lifetime(of: .signIn)))
        }
        if !deliver {
            _ = issuer.mailer.render(
                mode: mode, to: recipient, link: link, languageCode: locale, appName: appName, signInCode: signInCode)
        } else if !returnLink {
            await issuer.mailer.send(mode: mode, to: recipient, link: link, languageCode: locale, appName: appName, signInCode: signInCode)
        }
        return SendOobCodeResponse(
            email: email, oobLink: returnLink ? link : nil, oobCode: returnLink ? code : nil,
            signInCode: returnLink ? signInCode : nil)
    }

    /// `signInCodes:exchange` on the front: a code from a sign-in mail this server sent, exchanged
    /// for the link as mailed (``SignInCodes/exchange(email:code:tenantID:clientAddress:)``); the
    /// app then completes `signInWithEmailLink` with Google, which issued the link's code.
    func exchange(_ fields: SignInCodeExchangeRequest, clientAddress: String?) async throws(ActionError) -> SignInCodeExchangeResponse {
        let tenantID = fields.tenantId.flatMap { $0.isEmpty ? nil : $0 } ?? ""
        let exchange = try await issuer.signInCodes.exchange(
            email: fields.email, code: fields.code, tenantID: tenantID, clientAddress: clientAddress)
        return SignInCodeExchangeResponse(emailLink: exchange.emailLink, email: exchange.email)
    }

    /// Firebase production's recent sign-in rule for moving an address (as the standalone server's
    /// ``AccountService/checkRecentSignIn(_:caller:)``): the sign-in behind an ID token upstream
    /// accepted (`auth_time`, which a refresh keeps) must be at most `users.recentSignInSeconds`
    /// old, else `CREDENTIAL_TOO_OLD_LOGIN_AGAIN`; an anonymous session is exempt. Upstream
    /// checked the token's signature, so its claims are read, not verified, here. A development
    /// front checks too: upstream is asked with admin rights, so nothing else would.
    func checkRecentSignIn(idToken: String) throws(ActionError) {
        struct Claims: Decodable {
            struct Firebase: Decodable { var sign_in_provider: String? }
            var auth_time: Int64?
            var firebase: Firebase?
        }
        let parts = idToken.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
            let claims = try? JSONDecoder().decode(Claims.self, from: payload), let authTime = claims.auth_time
        else { throw ActionError.invalidIDToken }
        if claims.firebase?.sign_in_provider == "anonymous" { return }
        if clock.now.seconds - authTime > Int64(settings.users.recentSignInSeconds) {
            throw ActionError(.credentialTooOld, "this change needs a recent sign-in; sign in again (reauthenticate) and retry")
        }
    }
}
