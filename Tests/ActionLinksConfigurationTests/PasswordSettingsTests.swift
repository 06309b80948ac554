import Foundation
import Testing

@testable import ActionLinksConfiguration

/// `passwords`: Firebase's password policy (lengths, four character rules, enforcement), its
/// defaults, values from the file and the environment, a tenant's own, and bad values with their
/// key and line.
@Suite("The passwords section", .timeLimit(.minutes(5)))
struct PasswordSettingsTests: ServiceSettingsSuite {
    @Test("defaults: 8 to 4096 characters, no character rule, enforcement off (the policy as it was before it had rules)")
    func defaults() throws {
        let passwords = try parse("").passwords
        #expect(passwords == PasswordSettings())
        #expect(passwords.minimumLength == 8 && passwords.maximumLength == 4096 && passwords.enforcement == .off)
        #expect(
            !passwords.requireLowercase && !passwords.requireUppercase && !passwords.requireNumeric && !passwords.requireNonAlphanumeric)
        let shipped = try ActionLinksConfiguration.load(file: ConfigurationText.shippedFile).service.passwords
        #expect(shipped == PasswordSettings(), "the shipped file spells out the defaults")
    }

    @Test("every key from the file, and from ACTIONLINKS_PASSWORDS_* variables, which win")
    func values() throws {
        let yaml = """
            passwords:
              minimumLength: 10
              maximumLength: 64
              requireLowercase: true
              requireUppercase: true
              requireNumeric: false
              requireNonAlphanumeric: true
              enforcement: enforce

            """
        #expect(
            try parse(yaml).passwords
                == PasswordSettings(
                    minimumLength: 10, maximumLength: 64, requireLowercase: true, requireUppercase: true, requireNumeric: false,
                    requireNonAlphanumeric: true, enforcement: .enforce))
        let overridden = try parse(
            yaml,
            environment: [
                "ACTIONLINKS_PASSWORDS_REQUIRE_NUMERIC": "true", "ACTIONLINKS_PASSWORDS_ENFORCEMENT": "off",
                "ACTIONLINKS_PASSWORDS_REQUIRE_UPPERCASE": "false",
            ]
        ).passwords
        #expect(overridden.requireNumeric && !overridden.requireUppercase && overridden.enforcement == .off)
        #expect(overridden.minimumLength == 10 && overridden.requireNonAlphanumeric)
    }

    @Test("a tenant's passwords keep the project's keys they leave out, the new ones too")
    func tenants() throws {
        let settings = try parse(
            """
            passwords: {minimumLength: 10, requireUppercase: true, enforcement: enforce}
            tenants:
              - plain
              - id: loose
                passwords: {enforcement: off}
              - id: strict
                passwords: {requireNumeric: true, requireNonAlphanumeric: true, minimumLength: 12}

            """)
        let project = PasswordSettings(minimumLength: 10, requireUppercase: true, enforcement: .enforce)
        #expect(settings.accountSettings(forTenant: "plain")?.passwords == project)
        #expect(settings.tenantSettings["plain"]?.passwords == nil)
        var loose = project
        loose.enforcement = .off
        #expect(settings.accountSettings(forTenant: "loose")?.passwords == loose)
        #expect(
            settings.accountSettings(forTenant: "strict")?.passwords
                == PasswordSettings(
                    minimumLength: 12, requireUppercase: true, requireNumeric: true, requireNonAlphanumeric: true, enforcement: .enforce))
        let fromEnvironment = try parse(
            "tenants:\n  - id: a\n    passwords: {minimumLength: 9}\n",
            environment: ["ACTIONLINKS_TENANTS_0_PASSWORDS_ENFORCEMENT": "enforce"])
        #expect(fromEnvironment.accountSettings(forTenant: "a")?.passwords == PasswordSettings(minimumLength: 9, enforcement: .enforce))
    }

    /// A bad value's YAML (the key on its last line), its key, and what the message says.
    static let badValues: [(yaml: String, key: String, message: String)] = [
        ("passwords:\n  enforcement: strict\n", "passwords.enforcement", "expected enforce or off; got 'strict'"),
        ("passwords:\n  enforcement: true\n", "passwords.enforcement", "expected enforce or off; got 'true'"),
        ("passwords:\n  requireUppercase: always\n", "passwords.requireUppercase", "expected true or false; got 'always'"),
        ("passwords:\n  requireSymbols: true\n", "passwords.requireSymbols", "unknown key"),
        ("passwords:\n  requireNumber: true\n", "passwords.requireNumber", "did you mean 'requireNumeric'?"),
        ("passwords:\n  minimumLength: 5\n", "passwords.minimumLength", "from 6 to 128; got '5'"),
        ("passwords:\n  maximumLength: 5000\n", "passwords.maximumLength", "from 8 to 4096; got '5000'"),
        ("tenants:\n  - id: a\n    passwords: {enforcement: Enforce}\n", "tenants[0].passwords.enforcement", "expected enforce or off"),
    ]

    @Test("bad values name their key and line and say what was expected")
    func bad() throws {
        for (yaml, key, message) in Self.badValues {
            let problem = try #require(ConfigurationText.problem(yaml), "\(yaml) was taken")
            let line = yaml.filter { $0 == "\n" }.count
            #expect(problem.key == key && problem.line == line, "\(problem)")
            #expect(problem.message.contains(message), "\(problem)")
        }
    }

    @Test("a bad value from the environment names the variable")
    func badVariable() throws {
        let problem = try #require(ConfigurationText.problem("", environment: ["ACTIONLINKS_PASSWORDS_ENFORCEMENT": "yes"]))
        #expect(
            problem.description
                == "environment variable ACTIONLINKS_PASSWORDS_ENFORCEMENT: passwords.enforcement: expected enforce or off; got 'yes'")
    }
}
