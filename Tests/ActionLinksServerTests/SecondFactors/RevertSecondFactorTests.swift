import ActionLinks
import ActionLinksTestSupport
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP

/// The notice an enrolment mails and its `revertSecondFactorAddition` link (Firebase's "Multi-factor
/// enrollment notification"), on both stores: the mail in the enrolment's language, the action page
/// (a GET shows the factor and consumes nothing; the confirm removes it and revokes every session),
/// and the REST calls the JS SDK makes with its code (`checkActionCode`: `accounts:resetPassword`;
/// `applyActionCode`: `accounts:update`).
@Suite("Second-factor revert", .timeLimit(.minutes(5)))
struct RevertSecondFactorTests {
    typealias TOTP2 = TOTPSecondFactorTests

    /// The enrolment notice mailed to `email`, once the mailer has delivered it.
    static func notice(_ app: TestApp, to email: String) async throws -> MailMessage {
        for _ in 0..<400 {
            if let mail = app.mailbox.messages(to: email).last(where: { $0.mode == .revertSecondFactorAddition }) { return mail }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw TestSupportError("no enrolment notice was mailed to \(email)")
    }

    /// The link a notice carries, and its code.
    static func link(in mail: MailMessage) throws -> (link: String, code: String) {
        let start = try #require(mail.text.range(of: TestProject.linkOrigin + "/__/auth/action?"), "\(mail.text)")
        let link = String(mail.text[start.lowerBound...].prefix { !$0.isWhitespace })
        let parsed = try #require(ActionCodeLink.parse(link), "\(link)")
        #expect(parsed.mode == .revertSecondFactorAddition)
        return (link, parsed.oobCode)
    }

    /// An account enrolled with a factor named "Phone", the finalize sent in `language` (as a
    /// client's `X-Firebase-Locale`).
    static func enroll(_ app: TestApp, _ clock: ManualClock, email: String, language: String) async throws {
        let user = try await app.signInWithEmailLink(email)
        _ = try await app.api("update", ["idToken": user.idToken, "password": Spec.password])
        let fresh = try await app.signInWithPassword(email)
        let start = try await TOTP2.v2(app, "mfaEnrollment:start", ["idToken": fresh.idToken, "totpEnrollmentInfo": [String: Any]()])
        let info = try #require(start.json["totpSessionInfo"] as? [String: Any], "\(start.text)")
        let key = try #require(info["sharedSecretKey"] as? String)
        let secret = try #require(Base32.decode(key))
        let sessionInfo = try #require(info["sessionInfo"] as? String)
        let finalize = try await app.post(
            "/v2/accounts/mfaEnrollment:finalize?key=\(TestProject.apiKey)",
            [
                "idToken": fresh.idToken, "displayName": "Phone",
                "totpVerificationInfo": ["sessionInfo": sessionInfo, "verificationCode": TOTP2.code(secret, clock)],
            ], headers: ["X-Firebase-Locale": language])
        #expect(finalize.status == 200, "\(finalize.text)")
        clock.advance(seconds: 30)
    }

    /// A refresh with `refreshToken`'s error code (`nil` when it still works).
    static func refreshError(_ app: TestApp, _ refreshToken: String) async throws -> String? {
        try await app.post("/v1/token?key=\(TestProject.apiKey)", ["grant_type": "refresh_token", "refresh_token": refreshToken])
            .errorCode
    }

    @Test(
        "enrolment mails the notice; its page shows the factor and consumes nothing; checkActionCode tells the factor; the confirm removes it and revokes every session, once",
        arguments: StoreFactory.kinds)
    func noticeAndPage(kind: String) async throws {
        let clock = ManualClock.midHour()
        try await TestApp.router(environment: try await TOTP2.environment(kind), clock: clock) { app in
            let enrolled = try await TOTP2.enroll(app, clock, email: "revert@example.com")
            let mail = try await Self.notice(app, to: enrolled.email)
            #expect(mail.subject.hasPrefix("You've added 2-step verification to your "), "\(mail.subject)")
            #expect(mail.text.contains("If you didn't add this 2-step verification, click the link below to remove it."), "\(mail.text)")
            let (link, code) = try Self.link(in: mail)
            let path = try app.local(link)

            // GET (twice, as a mail scanner would) shows what will be undone, and consumes nothing.
            for _ in 0..<2 {
                let page = try await app.request("GET", path)
                #expect(page.status == 200, "\(page.text)")
                #expect(page.text.contains("Remove a 2-step verification method"), "\(page.text)")
                #expect(page.text.contains("Phone") && page.text.contains(enrolled.email) && page.text.contains(" UTC"), "\(page.text)")
            }

            // checkActionCode: the factor, as one object.
            let checked = try await app.api("resetPassword", ["oobCode": code])
            #expect(checked.status == 200, "\(checked.text)")
            #expect(checked.json["kind"] as? String == "identitytoolkit#ResetPasswordResponse")
            #expect(checked.json["email"] as? String == enrolled.email)
            #expect(checked.json["requestType"] as? String == "REVERT_SECOND_FACTOR_ADDITION")
            let info = try #require(checked.json["mfaInfo"] as? [String: Any], "a single object: \(checked.text)")
            #expect(info["mfaEnrollmentId"] as? String == enrolled.enrollmentID)
            #expect(info["displayName"] as? String == "Phone")
            #expect((info["enrolledAt"] as? String)?.hasSuffix("Z") == true)
            #expect((info["totpInfo"] as? [String: Any])?.isEmpty == true, "\(checked.text)")
            // Not a password reset's code.
            let reset = try await app.api("resetPassword", ["oobCode": code, "newPassword": "another password"])
            #expect(reset.errorCode == "INVALID_OOB_CODE", "\(reset.text)")
            #expect(try await app.lookup(email: enrolled.email)?["mfaInfo"] != nil, "nothing consumed so far")

            // The confirm removes the factor and revokes every session.
            let page = try await app.request("GET", path)
            let done = try await app.submitForm(of: page, [:])
            #expect(done.status == 200 && done.text.contains("The 2-step verification method has been removed"), "\(done.text)")
            #expect(done.text.contains("reset your password"), "the done page suggests a password reset: \(done.text)")
            #expect(try await app.lookup(email: enrolled.email)?["mfaInfo"] == nil)
            #expect(try await Self.refreshError(app, enrolled.refreshToken) == "TOKEN_EXPIRED")

            // The code is spent: a second confirm and the link both refuse.
            let again = try await app.submitForm(of: page, [:])
            #expect(again.status == 400 && again.text.contains("This link has already been used"), "\(again.text)")
            let spent = try await app.request("GET", path)
            #expect(spent.status == 400 && spent.text.contains("This link cannot be used"), "\(spent.text)")
            #expect(try await app.api("resetPassword", ["oobCode": code]).errorCode == "INVALID_OOB_CODE")
            // A password sign-in now needs no second factor.
            #expect(try await app.signInWithPassword(enrolled.email).idToken.isEmpty == false)
        }
    }

    @Test(
        "applyActionCode (accounts:update with the oobCode) removes the factor and revokes every session, once",
        arguments: StoreFactory.kinds)
    func applyActionCode(kind: String) async throws {
        let clock = ManualClock.midHour()
        try await TestApp.router(environment: try await TOTP2.environment(kind), clock: clock) { app in
            let enrolled = try await TOTP2.enroll(app, clock, email: "apply@example.com")
            let (_, code) = try Self.link(in: try await Self.notice(app, to: enrolled.email))
            // A session that signs in with both factors in the very second the code is applied goes
            // too: revocation is by the second, so the revert's runs through the end of its own
            // (found by the pages' browser test, where the enrolment and the revert shared a second).
            let second = try await TOTP2.signInWithBothFactors(app, clock, enrolled)
            let sameSecond = try #require(second.json["refreshToken"] as? String, "\(second.text)")
            let applied = try await app.api("update", ["oobCode": code])
            #expect(applied.status == 200, "\(applied.text)")
            #expect(applied.json["email"] as? String == enrolled.email)
            #expect(try await app.lookup(email: enrolled.email)?["mfaInfo"] == nil)
            #expect(try await Self.refreshError(app, enrolled.refreshToken) == "TOKEN_EXPIRED")
            #expect(try await Self.refreshError(app, sameSecond) == "TOKEN_EXPIRED", "a session of the revert's own second")
            #expect(try await app.api("update", ["oobCode": code]).errorCode == "INVALID_OOB_CODE")
        }
    }

    @Test(
        "a notice whose factor is already gone (withdrawn) is an invalid link, and checkActionCode refuses it",
        arguments: StoreFactory.kinds)
    func factorGone(kind: String) async throws {
        let clock = ManualClock.midHour()
        try await TestApp.router(environment: try await TOTP2.environment(kind), clock: clock) { app in
            let enrolled = try await TOTP2.enroll(app, clock, email: "gone@example.com")
            let (link, code) = try Self.link(in: try await Self.notice(app, to: enrolled.email))
            let withdrawn = try await TOTP2.v2(
                app, "mfaEnrollment:withdraw", ["idToken": enrolled.idToken, "mfaEnrollmentId": enrolled.enrollmentID])
            #expect(withdrawn.status == 200, "\(withdrawn.text)")
            let page = try await app.request("GET", try app.local(link))
            #expect(page.status == 400 && page.text.contains("This link cannot be used"), "\(page.text)")
            #expect(try await app.api("resetPassword", ["oobCode": code]).errorCode == "INVALID_OOB_CODE")
            #expect(try await app.api("update", ["oobCode": code]).errorCode == "INVALID_OOB_CODE")
        }
    }

    @Test("the notice and its page are in the enrolment's language (en, ru, ja, ar)")
    func languages() async throws {
        let clock = ManualClock.midHour()
        try await TestApp.router(environment: try await TOTP2.environment("sqlite"), clock: clock) { app in
            for (language, subject, title) in [
                ("en", "You've added 2-step verification", "Remove a 2-step verification method"),
                ("ru", "Вы добавили двухэтапную проверку", "Удаление способа двухэтапной проверки"),
                ("ja", "2 段階認証を追加しました", "2 段階認証の方法を削除"),
                ("ar", "لقد أضفت التحقق بخطوتين", "إزالة طريقة التحقق بخطوتين"),
            ] {
                let email = "lang-\(language)@example.com"
                try await Self.enroll(app, clock, email: email, language: language)
                let mail = try await Self.notice(app, to: email)
                #expect(mail.subject.contains(subject), "\(language): \(mail.subject)")
                let (link, _) = try Self.link(in: mail)
                #expect(link.contains("lang=\(language)"), "\(link)")
                let page = try await app.request("GET", try app.local(link))
                #expect(page.status == 200 && page.text.contains("<title>\(title)"), "\(language): \(page.text)")
            }
        }
    }
}
