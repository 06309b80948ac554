import Testing

@testable import ActionLinksConfiguration

@Suite("Multi-factor settings (mfa)", .timeLimit(.minutes(5)))
struct MultiFactorSettingsTests: ServiceSettingsSuite {
    @Test("left out: disabled, no TOTP provider, for the project and every tenant")
    func defaults() throws {
        let settings = try parse("tenants: [a]\n")
        #expect(settings.multiFactor == MultiFactorSettings())
        #expect(settings.multiFactor.state == .disabled && settings.multiFactor.totp == nil)
        #expect(settings.accountSettings(forTenant: "a")?.multiFactor == MultiFactorSettings())
    }

    @Test("the project's state and TOTP provider")
    func project() throws {
        let settings = try parse("mfa:\n  state: ENABLED\n  totp:\n    state: MANDATORY\n    adjacentIntervals: 3\n")
        #expect(settings.multiFactor == MultiFactorSettings(state: .enabled, totp: .init(state: .mandatory, adjacentIntervals: 3)))
        #expect(settings.accountSettings(forTenant: "")?.multiFactor == settings.multiFactor)
    }

    @Test("a TOTP entry without a state is enabled; without adjacentIntervals it has none (Google's default applies)")
    func totpDefaults() throws {
        #expect(try parse("mfa: {totp: {}}\n").multiFactor.totp == .init(state: .enabled, adjacentIntervals: nil))
        #expect(try parse("mfa: {totp: {adjacentIntervals: 0}}\n").multiFactor.totp == .init(state: .enabled, adjacentIntervals: 0))
        #expect(try parse("mfa: {totp: {state: DISABLED}}\n").multiFactor.totp == .init(state: .disabled))
        #expect(try parse("mfa: {state: ENABLED}\n").multiFactor == MultiFactorSettings(state: .enabled))
    }

    @Test("a tenant's keys left out are the project's; a tenant may have its own")
    func tenants() throws {
        let settings = try parse(
            """
            mfa:
              state: ENABLED
              totp: {adjacentIntervals: 2}
            tenants:
              - plain
              - id: strict
                mfa: {state: MANDATORY, totp: {adjacentIntervals: 1}}
              - id: off
                mfa: {state: DISABLED, totp: {state: DISABLED}}

            """)
        let project = MultiFactorSettings(state: .enabled, totp: .init(adjacentIntervals: 2))
        #expect(settings.accountSettings(forTenant: "plain")?.multiFactor == project)
        #expect(settings.tenantSettings["plain"]?.multiFactor == nil)
        #expect(
            settings.accountSettings(forTenant: "strict")?.multiFactor
                == MultiFactorSettings(state: .mandatory, totp: .init(adjacentIntervals: 1)))
        #expect(
            settings.accountSettings(forTenant: "off")?.multiFactor
                == MultiFactorSettings(state: .disabled, totp: .init(state: .disabled, adjacentIntervals: 2)))
    }

    @Test("the keys take environment variables, a tenant's by its index")
    func environment() throws {
        let settings = try parse(
            "tenants:\n  - id: a\n",
            environment: [
                "ACTIONLINKS_MFA_STATE": "ENABLED", "ACTIONLINKS_MFA_TOTP_STATE": "ENABLED", "ACTIONLINKS_MFA_TOTP_ADJACENT_INTERVALS": "4",
                "ACTIONLINKS_TENANTS_0_MFA_STATE": "MANDATORY",
            ])
        #expect(settings.multiFactor == MultiFactorSettings(state: .enabled, totp: .init(adjacentIntervals: 4)))
        #expect(
            settings.accountSettings(forTenant: "a")?.multiFactor
                == MultiFactorSettings(state: .mandatory, totp: .init(adjacentIntervals: 4)))
        #expect(
            try parse("", environment: ["ACTIONLINKS_MFA_TOTP_ADJACENT_INTERVALS": "7"]).multiFactor.totp == .init(adjacentIntervals: 7))
    }

    @Test(
        "bad values name the file, the key, the line and what was expected",
        arguments: [
            ("mfa:\n  state: on\n", "mfa.state", 2, "expected DISABLED, ENABLED or MANDATORY; got 'on'"),
            ("mfa:\n  state: enabled\n", "mfa.state", 2, "expected DISABLED, ENABLED or MANDATORY; got 'enabled'"),
            ("mfa:\n  totp:\n    state: YES\n", "mfa.totp.state", 3, "expected DISABLED, ENABLED or MANDATORY; got 'YES'"),
            (
                "mfa:\n  totp:\n    adjacentIntervals: 11\n", "mfa.totp.adjacentIntervals", 3,
                "expected a whole number from 0 to 10; got '11'"
            ),
            ("mfa:\n  totp:\n    adjacentIntervals: -1\n", "mfa.totp.adjacentIntervals", 3, "from 0 to 10; got '-1'"),
            ("mfa:\n  totp:\n    adjacentIntervals: 2.5\n", "mfa.totp.adjacentIntervals", 3, "from 0 to 10; got '2.5'"),
            ("mfa:\n  totp:\n    window: 3\n", "mfa.totp.window", 3, "unknown key; expected one of state, adjacentIntervals"),
            ("mfa:\n  sms: true\n", "mfa.sms", 2, "unknown key; expected one of state, totp"),
            ("mfa:\n  totp: yes\n", "mfa.totp", 2, "expected a mapping of state, adjacentIntervals"),
            ("mfa: ENABLED\n", "mfa", 1, "expected a mapping of state, totp"),
            ("tenants:\n  - id: a\n    mfa: {state: maybe}\n", "tenants[0].mfa.state", 3, "expected DISABLED, ENABLED or MANDATORY"),
            (
                "tenants:\n  - id: a\n    mfa:\n      totp: {adjacentIntervals: 20}\n", "tenants[0].mfa.totp.adjacentIntervals", 4,
                "from 0 to 10; got '20'"
            ),
        ] as [(String, String, Int, String)])
    func bad(yaml: String, key: String, line: Int, message: String) throws {
        let problem = try #require(error(yaml))
        #expect(problem.file == "t.yaml" && problem.key == key && problem.line == line, "\(problem)")
        #expect(problem.message.contains(message), "\(problem)")
        #expect(problem.description.hasPrefix("t.yaml:\(line):"), "\(problem)")
    }

    @Test("a bad value from an environment variable names the variable")
    func badVariable() throws {
        let problem = try #require(error("", environment: ["ACTIONLINKS_MFA_TOTP_ADJACENT_INTERVALS": "eleven"]))
        #expect(problem.file == "environment variable ACTIONLINKS_MFA_TOTP_ADJACENT_INTERVALS", "\(problem)")
        #expect(problem.key == "mfa.totp.adjacentIntervals" && problem.message.contains("from 0 to 10; got 'eleven'"), "\(problem)")
    }
}
