import Testing

@testable import ActionLinksConfiguration

/// Sections of the service settings: each key's default, good values from the file and the
/// environment, and bad values with their key and line.
@Suite("Service sections", .timeLimit(.minutes(5)))
struct ServiceSectionTests: ServiceSettingsSuite {
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

@Suite("The users section", .timeLimit(.minutes(5)))
struct UserSettingsTests: ConfigurationSuite {
    @Test("defaults: sign-up, deletion and one account per email on; enumeration protection on in production only")
    func defaults() throws {
        let production = try parse("").service.users
        #expect(production == UserSettings())
        #expect(production.selfServiceSignUp && production.selfServiceDelete && production.emailEnumerationProtection)
        #expect(production.oneAccountPerEmail)
        let development = try parse("server:\n  development: true\n").service.users
        #expect(!development.emailEnumerationProtection && development.selfServiceSignUp)
    }

    @Test("explicit values win, from the file or the environment")
    func values() throws {
        let users = try parse(
            "server:\n  development: true\nusers:\n  selfServiceSignUp: false\n  selfServiceDelete: false\n  emailEnumerationProtection: true\n  oneAccountPerEmail: false\n"
        ).service
        #expect(
            users.users
                == UserSettings(
                    selfServiceSignUp: false, selfServiceDelete: false, emailEnumerationProtection: true, oneAccountPerEmail: false))
        #expect(!users.signUpAllowed)
        let production = try parse("users:\n  emailEnumerationProtection: false\n").service.users
        #expect(!production.emailEnumerationProtection)
        let fromEnvironment = try parse(
            "", environment: ["ACTIONLINKS_USERS_SELF_SERVICE_DELETE": "false", "ACTIONLINKS_USERS_EMAIL_ENUMERATION_PROTECTION": "false"]
        ).service.users
        #expect(!fromEnvironment.selfServiceDelete && !fromEnvironment.emailEnumerationProtection && fromEnvironment.selfServiceSignUp)
    }

    @Test("the deprecated signUp still works, with a warning; contradicting users.selfServiceSignUp is an error")
    func deprecatedSignUp() throws {
        let old = try parse("project:\n  id: p\nsignUp: false\n")
        #expect(!old.service.users.selfServiceSignUp && !old.service.signUpAllowed)
        #expect(old.warnings == ["t.yaml:3:9: signUp: deprecated; write users.selfServiceSignUp: false instead"])
        let agreeing = try parse("signUp: true\nusers:\n  selfServiceSignUp: true\n")
        #expect(agreeing.service.signUpAllowed && agreeing.warnings.count == 1)
        let fromEnvironment = try parse("", environment: ["ACTIONLINKS_SIGN_UP": "false"])
        #expect(!fromEnvironment.service.signUpAllowed)
        #expect(fromEnvironment.warnings.first?.hasPrefix("environment variable ACTIONLINKS_SIGN_UP: signUp: deprecated") == true)
        #expect(try parse("").warnings.isEmpty)
        do {
            _ = try parse("signUp: false\nusers:\n  selfServiceSignUp: true\n")
            Issue.record("accepted")
        } catch {
            #expect(
                error.key == "signUp" && error.line == 1 && error.message.contains("contradicts users.selfServiceSignUp (true)"), "\(error)"
            )
        }
    }

    @Test(
        "bad values name their key and line",
        arguments: [
            ("users:\n  selfServiceSignUp: maybe\n", "users.selfServiceSignUp"),
            ("users:\n  selfServiceDelete: 2\n", "users.selfServiceDelete"),
            ("users:\n  emailEnumerationProtection: [x]\n", "users.emailEnumerationProtection"),
            ("users:\n  oneAccountPerEmail: ''\n", "users.oneAccountPerEmail"),
            ("users:\n  signUp: true\n", "users.signUp"),
        ])
    func bad(yaml: String, key: String) {
        do {
            _ = try parse(yaml)
            Issue.record("accepted \(yaml)")
        } catch {
            #expect(error.key == key && error.line == 2, "\(error)")
            #expect(error.message.hasPrefix("expected true or false; got ") || error.message.hasPrefix("unknown key"), "\(error)")
        }
    }
}
