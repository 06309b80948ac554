import ActionLinksTestSupport
import Foundation
import Testing

/// TOTP second factors through Google's modular Firebase JS SDK 11.9.0 (Tests/Clients), the MFA
/// code production apps run, in headless Chromium against the real server: enrolment with the
/// secret the SDK is given, `auth/multi-factor-auth-required` and its resolver after a password and
/// after an email link, wrong, out-of-window and replayed codes refused, the token's
/// `sign_in_second_factor`, and withdrawal. Driven by Tests/Browser/js_sdk_mfa_test.py, which
/// computes the authenticator app's codes itself (RFC 6238) from the real clock.
@Suite("TOTP second factors in a real browser", .timeLimit(.minutes(20)))
struct BrowserMFATests {
    static let script = Repository.root.appendingPathComponent("Tests/Browser/js_sdk_mfa_test.py").path

    @Test(
        "the modular Firebase JS SDK enrols a TOTP factor, resolves multi-factor-auth-required after a password and an email link, is refused wrong, late and replayed codes, and unenrols"
    )
    func totp() async throws {
        try await BrowserTests.checkDependencies()
        // TOTP on, with the default window (ACTIONLINKS_MFA_TOTP_ADJACENT_INTERVALS 5): the script
        // signs in with the next step's code, as enrolment used the current one. The app's pages are
        // on http://127.0.0.1:<another port>, a loopback origin the continue-URL list takes.
        let (server, origin) = try await BrowserTests.server([
            "ACTIONLINKS_MFA_STATE": "ENABLED", "ACTIONLINKS_MFA_TOTP_STATE": "ENABLED",
            "ACTIONLINKS_CONTINUE_URLS_ALLOW": "https://app.example.com/,http://127.0.0.1",
        ])
        let (status, text) = try await BrowserTests.python([
            Self.script, "--server", origin, "--sdk", Repository.firebaseJSSDKModular.path,
        ])
        withExtendedLifetime(server) {}
        if status == 3 { throw TestSupportError(BrowserTests.install + "\n" + text) }
        #expect(status == 0 && text.contains(", 0 failed"), "js_sdk_mfa_test.py failed (exit \(status)):\n\(text)")
    }
}
