import ActionLinksChildProcess
import ActionLinksSMTPTestSupport
import ActionLinksTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The pages in headless Chromium (Debian's `chromium` and `chromium-driver`, Selenium and axe-core
/// from pip: Tests/Browser/requirements.txt), driven by Tests/Browser/pages_test.py against the real
/// server (and one that enforces a password policy): every flow by clicking, in every language, at
/// 320 px, with JavaScript off; axe on every
/// page; screenshots in English and Arabic written to `.build/browser-screenshots` (or
/// `$BROWSER_SCREENSHOTS_DIR`).
@Suite("Pages in a real browser", .timeLimit(.minutes(20)))
struct BrowserTests {
    static let script = Repository.root.appendingPathComponent("Tests/Browser/pages_test.py").path
    static let install =
        "the browser tests need Debian's chromium and chromium-driver and pip's selenium, axe-selenium-python and axe-core-python; "
        + "run `bash scripts/install-test-dependencies.sh` (or `apt-get install chromium chromium-driver` and "
        + "`bash scripts/test-python.sh install` with `export PATH=\"$(bash scripts/test-python.sh bin):$PATH\"`)"

    /// A server whose link domain is itself (`http://localhost:<port>`), so a browser can follow every link.
    static func server(_ environment: [String: String] = [:]) async throws -> (TestServer, String) {
        var lastError: (any Error)?
        for _ in 0..<3 {
            let port = try LoopbackPort.free()
            var all = environment
            all["ACTIONLINKS_SERVER_PORT"] = String(port)
            all["ACTIONLINKS_LINK_DOMAINS"] = "http://localhost:\(port)"
            do {
                return (try await TestServer(environment: all), "http://localhost:\(port)")
            } catch {
                lastError = error
            }
        }
        throw lastError!
    }

    static func checkDependencies() async throws {
        let chromium = ProcessInfo.processInfo.environment["CHROMIUM"] ?? "/usr/bin/chromium"
        let driver = ProcessInfo.processInfo.environment["CHROMEDRIVER"] ?? "/usr/bin/chromedriver"
        for path in [chromium, driver] where !FileManager.default.isExecutableFile(atPath: path) {
            throw TestSupportError("\(path) is missing: " + install)
        }
        let probe = try await Command.run(
            program: URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import selenium, axe_selenium_python, axe_core_python"])
        if probe.status != 0 {
            throw TestSupportError("Python cannot import selenium, axe_selenium_python and axe_core_python: " + install)
        }
    }

    @Test("every flow by clicking in en, ru, ja and ar at 320 px without JavaScript; axe finds nothing on any page; screenshots")
    func browser() async throws {
        try await Self.checkDependencies()
        // Authenticator apps on, for the second factor's revert link.
        let (server, origin) = try await Self.server(["ACTIONLINKS_MFA_STATE": "ENABLED", "ACTIONLINKS_MFA_TOTP_STATE": "ENABLED"])
        let (expiring, expiringOrigin) = try await Self.server(["ACTIONLINKS_CODES_LIFETIMES_VERIFY_EMAIL": "1s"])
        let (policy, policyOrigin) = try await Self.server([
            "ACTIONLINKS_PASSWORDS_ENFORCEMENT": "enforce", "ACTIONLINKS_PASSWORDS_MINIMUM_LENGTH": "10",
            "ACTIONLINKS_PASSWORDS_REQUIRE_UPPERCASE": "true", "ACTIONLINKS_PASSWORDS_REQUIRE_NUMERIC": "true",
        ])
        let screenshots =
            ProcessInfo.processInfo.environment["BROWSER_SCREENSHOTS_DIR"]
            ?? Repository.root.appendingPathComponent(".build/browser-screenshots").path

        let (status, text) = try await Self.python([
            Self.script, "--origin", origin, "--expiring-origin", expiringOrigin, "--policy-origin", policyOrigin, "--screenshots",
            screenshots,
        ])
        withExtendedLifetime((server, expiring, policy)) {}
        if status == 3 { throw TestSupportError(Self.install + "\n" + text) }
        #expect(status == 0, "pages_test.py failed (exit \(status)):\n\(text)")
        #expect(text.contains(" passed, 0 failed"), "\(text)")
        let pngs = (try? FileManager.default.contentsOfDirectory(atPath: screenshots))?.filter { $0.hasSuffix(".png") } ?? []
        #expect(pngs.contains("en-reset-weak.png") && pngs.contains("ar-reset-weak.png"), "screenshots in \(screenshots)")
    }

    @Test(
        "the real Firebase JS SDK from a web app's own origin: email-link sign-in in the app, on the web (through the link's 303) and on another device with the mail's sign-in code, password accounts, refresh, profile, verification, reset, anonymous upgrade, custom tokens, deletion; validatePassword against the served policy"
    )
    func firebaseJSSDK() async throws {
        try await Self.checkDependencies()
        // The app's pages are on http://127.0.0.1:<another port>: a loopback origin, which a development
        // server's CORS and continue-URL list accept. The mail goes to the script's webhook, where it
        // reads the sign-in code as a person reads it in the mail.
        let mailPort = try LoopbackPort.free()
        let (server, origin) = try await Self.server([
            "ACTIONLINKS_CONTINUE_URLS_ALLOW": "https://app.example.com/,http://127.0.0.1", "ACTIONLINKS_MAIL_BACKEND": "webhook",
            "ACTIONLINKS_MAIL_WEBHOOK_URL": "http://127.0.0.1:\(mailPort)/mail",
        ])
        // A second project that enforces a password policy, for validatePassword (js_sdk_test.py's run_password_policy).
        let (policyServer, policyOrigin) = try await Self.server([
            "ACTIONLINKS_PASSWORDS_ENFORCEMENT": "enforce", "ACTIONLINKS_PASSWORDS_MINIMUM_LENGTH": "10",
            "ACTIONLINKS_PASSWORDS_MAXIMUM_LENGTH": "30", "ACTIONLINKS_PASSWORDS_REQUIRE_UPPERCASE": "true",
            "ACTIONLINKS_PASSWORDS_REQUIRE_NUMERIC": "true", "ACTIONLINKS_PASSWORDS_REQUIRE_NON_ALPHANUMERIC": "true",
        ])
        let sdk = Repository.firebaseJSSDK.path
        let (status, text) = try await Self.python([
            Self.sdkScript, "--server", origin, "--sdk", sdk, "--mail-port", String(mailPort), "--policy-server", policyOrigin,
        ])
        withExtendedLifetime((server, policyServer)) {}
        if status == 3 { throw TestSupportError(Self.install + "\n" + text) }
        #expect(status == 0 && text.contains(", 0 failed"), "js_sdk_test.py failed (exit \(status)):\n\(text)")
    }

    static let sdkScript = Repository.root.appendingPathComponent("Tests/Browser/js_sdk_test.py").path

    /// Runs a Python script to its end; returns its exit status and everything it printed.
    static func python(_ arguments: [String]) async throws -> (Int32, String) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ACTIONLINKS_") }
        // One pipe for both streams, read to the end: the script's output is shown when it fails.
        let output = Pipe()
        process.standardOutput = .pipe(output)
        process.standardError = .pipe(output)
        process.standardInput = .nullDevice
        try process.run()
        let watchdog = Task {
            try await Task.sleep(for: .seconds(900))
            if process.isRunning { process.terminate() }
        }
        // The script runs for minutes: read and wait on a thread of its own, not on one of the few
        // cooperative threads every other test in this process needs (blocking one starved them).
        let text: String = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }
        }
        watchdog.cancel()
        return (process.terminationStatus, text)
    }
}
