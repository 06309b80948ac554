import ActionLinks
import ActionLinksDomain
import Foundation

/// Authenticator apps as a second factor, as Identity Platform's v2 API has them
/// (`/v2/accounts/mfaEnrollment:start|finalize|withdraw`, `/v2/accounts/mfaSignIn:start|finalize`),
/// over ``SecondFactorService``. Only TOTP: a phone factor is refused (this server sends no SMS).
extension IdentityToolkitAPI {
    mutating func addSecondFactorOperations(_ services: LinkDomainServices) {
        let secondFactors = services.secondFactors
        let accounts = services.accounts
        let tokens = services.tokens
        let clock = services.clock

        add("mfaEnrollment:start", on: .path, requires: [.enabledTenant], body: StartEnrollmentRequest.self) {
            fields, call, _ throws(ActionError) in
            guard let idToken = fields.idToken, !idToken.isEmpty else { throw ActionError(.missingIDToken) }
            let user = try await accounts.user(idToken: idToken, caller: call.caller, bodyTenant: fields.tenantId)
            guard fields.totpEnrollmentInfo != nil else { throw Self.totpOnly("totpEnrollmentInfo", fields.phoneEnrollmentInfo != nil) }
            let start = try secondFactors.startEnrollment(user, caller: call.caller)
            return StartEnrollmentResponse(
                totpSessionInfo: .init(
                    sharedSecretKey: start.sharedSecretKey, verificationCodeLength: TOTP.digits, hashingAlgorithm: TOTP.hashingAlgorithm,
                    periodSec: Int(TOTP.period), sessionInfo: start.sessionInfo,
                    finalizeEnrollmentTime: UserRecord.rfc3339(start.finalizeBy)))
        }

        add("mfaEnrollment:finalize", on: .path, requires: [.enabledTenant], body: FinalizeEnrollmentRequest.self) {
            fields, call, _ throws(ActionError) in
            guard let idToken = fields.idToken, !idToken.isEmpty else { throw ActionError(.missingIDToken) }
            let user = try await accounts.user(idToken: idToken, caller: call.caller, bodyTenant: fields.tenantId)
            guard let verification = fields.totpVerificationInfo else {
                throw Self.totpOnly("totpVerificationInfo", fields.phoneVerificationInfo != nil)
            }
            let signedIn = try await secondFactors.finishEnrollment(
                user, sessionInfo: verification.sessionInfo, code: verification.verificationCode, displayName: fields.displayName,
                caller: call.caller)
            return SecondFactorTokens(try await signedIn.requiredTokens(tokens, now: clock.now))
        }

        add("mfaEnrollment:withdraw", on: .path, requires: [.enabledTenant], body: WithdrawRequest.self) {
            fields, call, _ throws(ActionError) in
            guard let idToken = fields.idToken, !idToken.isEmpty else { throw ActionError(.missingIDToken) }
            let user = try await accounts.user(idToken: idToken, caller: call.caller, bodyTenant: fields.tenantId)
            let signedIn = try await secondFactors.withdraw(user, enrollmentID: fields.mfaEnrollmentId, caller: call.caller)
            // The factor the session signed in with: every session is revoked, and the answer is
            // empty (the JS SDK then reloads and signs out; iOS signs out).
            guard let signedIn else { return SecondFactorTokens(nil) }
            return SecondFactorTokens(try await signedIn.requiredTokens(tokens, now: clock.now))
        }

        add("mfaSignIn:start", on: .path, requires: [.enabledTenant], body: StartSignInRequest.self) {
            _, _, _ throws(ActionError) -> SecondFactorTokens in
            // TOTP's sign-in has only a finalize step; this is the phone's (as Google's emulator says).
            throw Self.totpOnly("totpVerificationInfo", true)
        }

        add("mfaSignIn:finalize", on: .path, requires: [.enabledTenant], body: FinalizeSignInRequest.self) {
            fields, call, tenant throws(ActionError) in
            guard fields.mfaPendingCredential?.isEmpty == false else {
                throw ActionError(.missingCredential, "Please set MFA Pending Credential.")
            }
            guard let verification = fields.totpVerificationInfo else {
                throw Self.totpOnly("totpVerificationInfo", fields.phoneVerificationInfo != nil)
            }
            let signedIn = try await secondFactors.finishSignIn(
                pendingCredential: fields.mfaPendingCredential, enrollmentID: fields.mfaEnrollmentId,
                code: verification.verificationCode, tenant: tenant, caller: call.caller)
            return SecondFactorTokens(try await signedIn.requiredTokens(tokens, now: clock.now))
        }
    }

    /// A request without the TOTP object it needs: a phone factor's, or none.
    static func totpOnly(_ field: String, _ isPhone: Bool) -> ActionError {
        isPhone
            ? ActionError(.invalidArgument, "MFA provider not supported! This server's second factors are authenticator apps (TOTP).")
            : ActionError(.invalidArgument, "((Missing \(field).))")
    }
}

extension MFAEnrollmentInfo {
    /// What a first factor's answer carries instead of tokens when the sign-in waits for a second:
    /// the pending credential and the factors' hints.
    static func pending(_ user: SignedInUser) -> (String?, [MFAEnrollmentInfo]?) {
        guard let pending = user.pendingSecondFactor else { return (nil, nil) }
        return (pending.credential, pending.factors.map(MFAEnrollmentInfo.init))
    }
}

/// An empty JSON object in a request (`totpEnrollmentInfo: {}`); any members are ignored.
struct AnyObject: Decodable, Sendable {}

/// `mfaEnrollment:start`.
struct StartEnrollmentRequest: Decodable, Sendable, NamesTenant {
    var idToken: String?
    var totpEnrollmentInfo: AnyObject?
    var phoneEnrollmentInfo: AnyObject?
    var tenantId: String?
}

/// `mfaEnrollment:start`'s answer.
struct StartEnrollmentResponse: Encodable, Sendable {
    struct TOTPSessionInfo: Encodable, Sendable {
        var sharedSecretKey: String
        var verificationCodeLength: Int
        var hashingAlgorithm: String
        var periodSec: Int
        var sessionInfo: String
        var finalizeEnrollmentTime: String
    }

    var totpSessionInfo: TOTPSessionInfo
}

/// `totpVerificationInfo`: the code, and at enrolment its `sessionInfo`.
struct TOTPVerificationInfo: Decodable, Sendable {
    var sessionInfo: String?
    var verificationCode: String?
}

/// `mfaEnrollment:finalize`.
struct FinalizeEnrollmentRequest: Decodable, Sendable, NamesTenant {
    var idToken: String?
    var displayName: String?
    var totpVerificationInfo: TOTPVerificationInfo?
    var phoneVerificationInfo: AnyObject?
    var tenantId: String?
}

/// `mfaEnrollment:withdraw`.
struct WithdrawRequest: Decodable, Sendable, NamesTenant {
    var idToken: String?
    var mfaEnrollmentId: String?
    var tenantId: String?
}

/// `mfaSignIn:start` (the phone's: refused).
struct StartSignInRequest: Decodable, Sendable, NamesTenant {
    var tenantId: String?
}

/// `mfaSignIn:finalize`.
struct FinalizeSignInRequest: Decodable, Sendable, NamesTenant {
    var mfaPendingCredential: String?
    var mfaEnrollmentId: String?
    var totpVerificationInfo: TOTPVerificationInfo?
    var phoneVerificationInfo: AnyObject?
    var tenantId: String?
}

/// The answer of an enrolment, a withdrawal and a second factor's sign-in: new tokens (none after
/// a withdrawal that revoked the session).
struct SecondFactorTokens: Encodable, Sendable {
    var idToken: String?
    var refreshToken: String?
    var expiresIn: String?

    init(_ tokens: SignedInUser.Tokens?) {
        idToken = tokens?.idToken
        refreshToken = tokens?.refreshToken
        expiresIn = tokens?.expiresIn
    }
}
