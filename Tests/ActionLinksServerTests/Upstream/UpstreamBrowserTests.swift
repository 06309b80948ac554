import ActionLinksTestSupport
import Foundation
import Testing

/// Upstream mode with the real Firebase JS SDK in Chromium (Tests/Browser/js_sdk_upstream_test.py):
/// the SDK's project is an upstream as strict as Google (``StrictUpstream``, production mode), and
/// the front, in production, is the link domain that sends, opens and completes the links.
@Suite("Upstream mode: the Firebase JS SDK in a browser", .timeLimit(.minutes(20)))
struct UpstreamBrowserTests {
    static let script = Repository.root.appendingPathComponent("Tests/Browser/js_sdk_upstream_test.py").path

    @Test(
        "a sign-in link asked of the front's sendOobCode, mailed, opened and finished by the SDK with the upstream; its mail's sign-in code exchanged at the front by a second browser context, which signs in as the same user; a reset mailed by the upstream completed on the front's page, then signInWithEmailAndPassword"
    )
    func firebaseJSSDK() async throws {
        try await BrowserTests.checkDependencies()
        let (frontPort, appPort, mailPort) = (try LoopbackPort.free(), try LoopbackPort.free(), try LoopbackPort.free())
        let frontOrigin = "http://localhost:\(frontPort)"
        // The upstream's links are built on the front's domain: Firebase's action URL set to the front.
        // The front sends the continue URL upstream, which checks it against the project's authorized
        // domains: the app's origin is one, as a Firebase project lists its app's domain.
        // It mails (the reset the SDK asks for) through the script's webhook, as the front does.
        var options = StrictUpstream.Options()
        options.authorizedDomains.append("http://127.0.0.1:\(appPort)/")
        let upstream = try await StrictUpstream.start(
            options,
            environment: [
                "ACTIONLINKS_LINK_DOMAINS": frontOrigin,
                "ACTIONLINKS_MAIL_BACKEND": "webhook", "ACTIONLINKS_MAIL_WEBHOOK_URL": "http://127.0.0.1:\(mailPort)/mail",
            ])
        let account = try await UpstreamModeTests.serviceAccount(of: upstream)
        let front = try await TestServer(environment: [
            "ACTIONLINKS_SERVER_DEVELOPMENT": "false", "ACTIONLINKS_SERVER_ADMIN_TOKEN": UpstreamModeTests.frontAdmin,
            "ACTIONLINKS_SERVER_PORT": String(frontPort), "ACTIONLINKS_LINK_DOMAINS": frontOrigin,
            "ACTIONLINKS_CONTINUE_URLS_ALLOW": "https://app.example.com/,http://127.0.0.1:\(appPort)/",
            "ACTIONLINKS_MAIL_BACKEND": "webhook", "ACTIONLINKS_MAIL_WEBHOOK_URL": "http://127.0.0.1:\(mailPort)/mail",
            "ACTIONLINKS_UPSTREAM_PROJECT_ID": TestProject.id, "ACTIONLINKS_UPSTREAM_API_KEYS": StrictUpstream.unrestrictedKey,
            "ACTIONLINKS_UPSTREAM_IDENTITY_TOOLKIT_URL": upstream.base, "ACTIONLINKS_UPSTREAM_SECURE_TOKEN_URL": upstream.base,
            "ACTIONLINKS_UPSTREAM_SERVICE_ACCOUNT_FILE": account,
            // A hang guard, not the 10 s default (tested on its own): the upstream is a loaded debug binary.
            "ACTIONLINKS_UPSTREAM_ANSWER_TIMEOUT": "120s",
        ])
        let sdk = Repository.firebaseJSSDK.path
        let (status, text) = try await BrowserTests.python([
            Self.script, "--upstream", upstream.base, "--front", frontOrigin, "--sdk", sdk, "--app-port", String(appPort),
            "--mail-port", String(mailPort), "--api-key", StrictUpstream.unrestrictedKey,
        ])
        withExtendedLifetime((upstream, front)) {}
        if status == 3 { throw TestSupportError(BrowserTests.install + "\n" + text) }
        #expect(status == 0 && text.contains(", 0 failed"), "js_sdk_upstream_test.py failed (exit \(status)):\n\(text)")
    }
}
