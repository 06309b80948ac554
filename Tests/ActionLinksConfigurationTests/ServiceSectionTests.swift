import Testing

@testable import ActionLinksConfiguration

/// Sections of the service settings: each key's default, good values from the file and the
/// environment, and bad values with their key and line.
@Suite("Service sections")
struct ServiceSectionTests {
    func parse(_ yaml: String, environment: [String: String] = [:]) throws(ConfigurationError) -> ServiceSettings {
        try ActionLinksConfiguration.parse(yaml: yaml, file: "t.yaml", environment: environment).service
    }

    func error(_ yaml: String, environment: [String: String] = [:]) -> ConfigurationError? {
        do {
            _ = try parse(yaml, environment: environment)
            return nil
        } catch {
            return error
        }
    }

    @Test("pages.signIn: redirect by default, confirm when asked")
    func signInPage() throws {
        #expect(try parse("").pages.signIn == .redirect)
        #expect(try parse("pages:\n  signIn: confirm\n").pages.signIn == .confirm)
        #expect(try parse("pages:\n  signIn: redirect\n").pages.signIn == .redirect)
        #expect(try parse("", environment: ["ACTIONLINKS_PAGES_SIGN_IN": "confirm"]).pages.signIn == .confirm)
        let bad = try #require(error("pages:\n  signIn: Confirm\n"))
        #expect(bad.description == "t.yaml:2:11: pages.signIn: expected redirect or confirm; got 'Confirm'")
        let fromEnvironment = try #require(error("", environment: ["ACTIONLINKS_PAGES_SIGN_IN": "page"]))
        #expect(
            fromEnvironment.description
                == "environment variable ACTIONLINKS_PAGES_SIGN_IN: pages.signIn: expected redirect or confirm; got 'page'")
    }

    @Test("sign-in failure limits: 10 per account and 100 per IP an hour by default")
    func signInFailureLimits() throws {
        let defaults = try parse("").limits
        #expect(defaults.signInFailuresPerAccountPerHour == 10 && defaults.signInFailuresPerIPPerHour == 100)
        let limits = try parse(
            "limits:\n  signInFailuresPerAccountPerHour: 5\n  signInFailuresPerIPPerHour: 50\n",
            environment: ["ACTIONLINKS_LIMITS_SIGN_IN_FAILURES_PER_IP_PER_HOUR": "60"]
        ).limits
        #expect(limits.signInFailuresPerAccountPerHour == 5 && limits.signInFailuresPerIPPerHour == 60)
    }

    @Test(
        "sign-in failure limits: bad values",
        arguments: [
            ("limits:\n  signInFailuresPerAccountPerHour: 0\n", "limits.signInFailuresPerAccountPerHour", "from 1 to 1000000; got '0'"),
            ("limits:\n  signInFailuresPerAccountPerHour: many\n", "limits.signInFailuresPerAccountPerHour", "got 'many'"),
            ("limits:\n  signInFailuresPerIPPerHour: -1\n", "limits.signInFailuresPerIPPerHour", "from 1 to 100000000; got '-1'"),
            (
                "limits:\n  signInFailuresPerIpPerHour: 5\n", "limits.signInFailuresPerIpPerHour",
                "did you mean 'signInFailuresPerIPPerHour'?"
            ),
        ])
    func badSignInFailureLimits(yaml: String, key: String, message: String) throws {
        let bad = try #require(error(yaml))
        #expect(bad.key == key && bad.line == 2 && bad.message.contains(message), "\(bad)")
    }
}
