import ActionLinks
import Foundation
import Testing

@testable import ActionLinksConfiguration

@Suite("codes.signInCode and the exchange limits", .timeLimit(.minutes(5)))
struct SignInCodeSettingsTests: ServiceSettingsSuite {
    @Test(
        "defaults: six digits, 15 minutes, five wrong tries; 20 exchanges an hour per address, 100 per IP; the shipped file says the same")
    func defaults() throws {
        let settings = try parse("")
        #expect(settings.codes.signInCode == SignInCodeSettings())
        #expect(
            [settings.codes.signInCode.digits, settings.codes.signInCode.lifetime, settings.codes.signInCode.attempts] == [6, 900, 5]
                as [Int])
        #expect(settings.codes.signInCode.isEnabled)
        #expect(
            [settings.limits.signInCodeExchangesPerAddressPerHour, settings.limits.signInCodeExchangesPerIPPerHour] == [20, 100] as [Int])
        let shipped = try ActionLinksConfiguration.load(file: ConfigurationText.shippedFile).service
        #expect(shipped.codes.signInCode == settings.codes.signInCode && shipped.limits == settings.limits)
    }

    @Test("values from the file and from the environment; 0 digits turns codes off")
    func values() throws {
        let file = try parse(
            "codes:\n  signInCode:\n    digits: 8\n    lifetime: 30m\n    attempts: 3\nlimits:\n  signInCodeExchangesPerAddressPerHour: 7\n"
        )
        #expect([file.codes.signInCode.digits, file.codes.signInCode.lifetime, file.codes.signInCode.attempts] == [8, 1800, 3] as [Int])
        #expect(file.limits.signInCodeExchangesPerAddressPerHour == 7)
        let environment = try parse(
            "codes:\n  signInCode:\n    digits: 8\n",
            environment: [
                "ACTIONLINKS_CODES_SIGN_IN_CODE_DIGITS": "10", "ACTIONLINKS_CODES_SIGN_IN_CODE_LIFETIME": "5m",
                "ACTIONLINKS_CODES_SIGN_IN_CODE_ATTEMPTS": "2", "ACTIONLINKS_LIMITS_SIGN_IN_CODE_EXCHANGES_PER_IP_PER_HOUR": "9",
            ])
        #expect(
            [environment.codes.signInCode.digits, environment.codes.signInCode.lifetime, environment.codes.signInCode.attempts] == [
                10, 300, 2,
            ] as [Int])
        #expect(environment.limits.signInCodeExchangesPerIPPerHour == 9)
        let off = try parse("codes:\n  signInCode:\n    digits: 0\n")
        #expect(off.codes.signInCode.digits == 0 && !off.codes.signInCode.isEnabled)
    }

    @Test(
        "variable names",
        arguments: [
            ("codes.signInCode.digits", "ACTIONLINKS_CODES_SIGN_IN_CODE_DIGITS"),
            ("codes.signInCode.lifetime", "ACTIONLINKS_CODES_SIGN_IN_CODE_LIFETIME"),
            ("limits.signInCodeExchangesPerIPPerHour", "ACTIONLINKS_LIMITS_SIGN_IN_CODE_EXCHANGES_PER_IP_PER_HOUR"),
        ])
    func names(key: String, variable: String) {
        #expect(ConfigurationEnvironment.variable(for: EnvironmentOverrideTests.path(key)) == variable)
    }

    @Test("a code never outlives its link: the default is shortened to a shorter link's lifetime, a longer lifetime given is refused")
    func linkLifetime() throws {
        let short = try parse("codes:\n  lifetimes:\n    signIn: 10m\n")
        #expect(short.codes.signInCode.lifetime == 600)
        let fits = try parse("codes:\n  lifetimes:\n    signIn: 10m\n  signInCode:\n    lifetime: 10m\n")
        #expect(fits.codes.signInCode.lifetime == 600)
        do {
            _ = try parse("codes:\n  lifetimes:\n    signIn: 10m\n  signInCode:\n    lifetime: 15m\n")
            Issue.record("a code that outlives its link was accepted")
        } catch {
            #expect(error.key == "codes.signInCode.lifetime" && error.line == 5, "\(error)")
            #expect(
                error.message
                    == "expected at most the sign-in link's own lifetime (codes.lifetimes.signIn: 10m): a code must not outlive its link; got '15m'",
                "\(error)")
        }
        do {
            _ = try parse("", environment: ["ACTIONLINKS_CODES_SIGN_IN_CODE_LIFETIME": "2h"])
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("ACTIONLINKS_CODES_SIGN_IN_CODE_LIFETIME"), "\(error)")
            #expect(error.description.contains("codes.lifetimes.signIn: 1h"), "\(error)")
        }
    }

    @Test(
        "bad values name the key, the line and what was expected",
        arguments: [
            (
                "codes:\n  signInCode:\n    digits: 5\n", "codes.signInCode.digits",
                "expected 0 (no sign-in codes) or a whole number from 6 to 10; got '5'"
            ),
            (
                "codes:\n  signInCode:\n    digits: 11\n", "codes.signInCode.digits",
                "expected 0 (no sign-in codes) or a whole number from 6 to 10; got '11'"
            ),
            (
                "codes:\n  signInCode:\n    digits: six\n", "codes.signInCode.digits",
                "expected 0 (no sign-in codes) or a whole number from 6 to 10; got 'six'"
            ),
            (
                "codes:\n  signInCode:\n    lifetime: 30s\n", "codes.signInCode.lifetime",
                "expected a lifetime from 1m to 1d such as 10m or 15m; got '30s'"
            ),
            ("codes:\n  signInCode:\n    attempts: 0\n", "codes.signInCode.attempts", "expected a whole number from 1 to 20; got '0'"),
            ("codes:\n  signInCode:\n    tries: 3\n", "codes.signInCode.tries", "unknown key; expected one of digits, lifetime, attempts"),
        ])
    func badValues(yaml: String, key: String, message: String) {
        do {
            _ = try parse(yaml)
            Issue.record("accepted: \(yaml)")
        } catch {
            #expect(error.key == key && error.line == 3, "\(error)")
            #expect(error.message.hasPrefix(message), "\(error)")
        }
    }
}
