import ActionLinks
import ActionLinksConfiguration
import Foundation

/// The codes of the Firebase project this server fronts (``CodeSource``): the project's service
/// account asks upstream for each (`returnOobLink`, so upstream mails nothing), and ``CodeIssuer``
/// builds the link on this server's link domain and mails it with its own templates, limits and
/// enumeration protection. Upstream decides what an address is: its refusal of an unknown one is
/// what enumeration protection hides.
struct UpstreamCodeSource: CodeSource {
    let upstream: UpstreamClient
    let settings: ServiceSettings
    let clock: any ServiceClock

    /// The project behind a front is Firebase production, whatever the front's own mode.
    var followsEmulator: Bool { false }

    func checkIssuable(_ mode: ActionCodeLink.Mode, tenant: TenantPolicy) throws(ActionError) {
        guard upstream.settings.hasServiceAccount else {
            throw ActionError(
                .operationNotAllowed,
                "this server has no service account for project \(upstream.settings.projectID) (upstream.serviceAccountFile, or upstream.metadataServer on Google Cloud), so it cannot send links; send them through Firebase"
            )
        }
    }

    /// The signed-in user's own address, as upstream knows it from the ID token (looked up with
    /// the caller's key, or the project's first for the admin).
    func requester(idToken: String, mode: ActionCodeLink.Mode, caller: Caller, tenant: TenantPolicy, bodyTenant: String?)
        async throws(ActionError) -> CodeRequester
    {
        let tenantID = tenant.tenantID.isEmpty ? nil : tenant.tenantID
        let email = try await upstream.email(idToken: idToken, apiKey: linkKey(caller.apiKey), tenantID: tenantID)
        // Upstream is asked for the code as the service account, so its own recent sign-in rule
        // never applies: the front applies it, to the token upstream just accepted.
        if mode == .verifyAndChangeEmail { try checkRecentSignIn(idToken: idToken) }
        return CodeRequester(email: email, account: nil, tenant: tenant)
    }

    func linkKey(_ asked: String?) -> String {
        asked.flatMap { upstream.settings.accepts(apiKey: $0) ? $0 : nil } ?? upstream.settings.apiKeys[0]
    }

    /// Upstream's code for the link. It checks the continue URL against the project's authorized
    /// domains too (so a URL this server allows and Google does not is refused as Google refuses
    /// it); the link is built here, so nothing about apps or link domains is asked for. A client
    /// with email-enumeration protection is not told an unknown address (or a new address another
    /// account has) apart from a mailed link, as Firebase production does not tell it: a random
    /// code, not delivered.
    func code(for pending: PendingCode) async throws(ActionError) -> SourcedCode {
        var asked = ["requestType": pending.mode.requestType, "email": pending.email]
        if let newEmail = pending.newEmail { asked["newEmail"] = newEmail }
        if !pending.tenant.tenantID.isEmpty { asked["tenantId"] = pending.tenant.tenantID }
        if let continueURL = pending.continueURL { asked["continueUrl"] = continueURL }
        let code: String?
        do throws(ActionError) {
            code = try await upstream.issueCode(asked, locale: pending.languageCode, now: clock.now.seconds).oobCode
        } catch let refusal
            where !pending.isAdmin && pending.tenant.emailEnumerationProtection
            && (refusal.code == .emailNotFound || refusal.code == .userNotFound
                || (refusal.code == .emailExists && pending.mode == .verifyAndChangeEmail))
        {
            return SourcedCode(code: Secrets.token(), deliver: false)
        }
        guard let code, !code.isEmpty else { throw ActionError(.internalError, "upstream answered no code") }
        return SourcedCode(code: code, deliver: true)
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
