import ActionLinksConfiguration
import Foundation
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// The one judge of a new password (``PasswordPolicy``): Firebase's floor, the two enforcement
/// states, Google's phrases and order, the characters each rule counts, and Google's shapes of a
/// policy (what `GET /v2/passwordPolicy` serves and what a front reads).
@Suite("Password policy", .timeLimit(.minutes(5)))
struct PasswordPolicyTests {
    static let strict = PasswordPolicy(
        settings: PasswordSettings(
            minimumLength: 10, maximumLength: 25, requireLowercase: true, requireUppercase: true, requireNumeric: true,
            requireNonAlphanumeric: true, enforcement: .enforce))

    static func message(_ policy: PasswordPolicy, _ password: String) -> String? {
        do throws(ActionError) {
            try policy.check(password)
            return nil
        } catch {
            return error.message
        }
    }

    @Test("fewer than 6 characters is WEAK_PASSWORD : Password should be at least 6 characters, whatever the policy")
    func floor() {
        let policies = [
            PasswordPolicy(settings: PasswordSettings()), PasswordPolicy(settings: PasswordSettings(minimumLength: 6)), Self.strict,
            PasswordPolicy(settings: PasswordSettings(minimumLength: 20, enforcement: .enforce)),
        ]
        for policy in policies {
            #expect(Self.message(policy, "Ab1!x") == "WEAK_PASSWORD : Password should be at least 6 characters", "\(policy)")
            #expect(Self.message(policy, "") == "MISSING_PASSWORD")
        }
        #expect(Self.message(PasswordPolicy(settings: PasswordSettings(minimumLength: 6)), "sixsix") == nil)
    }

    @Test("enforcement off: the lengths with WEAK_PASSWORD as before; the character rules are not enforced")
    func off() {
        let policy = PasswordPolicy(
            settings: PasswordSettings(minimumLength: 8, maximumLength: 12, requireUppercase: true, requireNonAlphanumeric: true))
        #expect(Self.message(policy, "sevenxx") == "WEAK_PASSWORD : Password should be at least 8 characters")
        #expect(Self.message(policy, "thirteen-long") == "WEAK_PASSWORD : Password should be at most 12 characters")
        #expect(Self.message(policy, "lowercase") == nil, "no upper-case letter, no symbol: published, not enforced")
    }

    @Test("enforce: every missing rule, in Google's words and order, in one pair of brackets")
    func enforce() {
        #expect(
            Self.message(Self.strict, "abcdefg")
                == "PASSWORD_DOES_NOT_MEET_REQUIREMENTS : Missing password requirements: [Password must contain at least 10 characters, "
                + "Password must contain an upper case character, Password must contain a numeric character, "
                + "Password must contain a non-alphanumeric character]")
        #expect(
            Self.message(Self.strict, "ABCDEFGHIJ1!")
                == "PASSWORD_DOES_NOT_MEET_REQUIREMENTS : Missing password requirements: [Password must contain a lower case character]")
        // Firebase production's answer to a 36-character password under a 25-character maximum.
        #expect(
            Self.message(Self.strict, "&1aR61!xA&1aR61!xA&1aR61!xA&1aR61!xA")
                == "PASSWORD_DOES_NOT_MEET_REQUIREMENTS : Missing password requirements: [Password may contain at most 25 characters]")
        #expect(Self.message(Self.strict, "Abcdefgh1!") == nil)
        let error = Self.strict.problem("abcdefg").map(PasswordPolicy.error)
        #expect(error?.status == .badRequest && error?.code.rawValue == "PASSWORD_DOES_NOT_MEET_REQUIREMENTS")
    }

    @Test(
        "what each rule counts: lengths in UTF-16 units as the JS SDK counts; ASCII letters and digits; Firebase's 29 symbols, not - + = or a space"
    )
    func characters() {
        let symbol = PasswordPolicy(settings: PasswordSettings(minimumLength: 6, requireNonAlphanumeric: true, enforcement: .enforce))
        for other in ["-", "+", "=", " ", "€", "é"] {
            #expect(symbol.unmet("abcdef" + other) == [.nonAlphanumeric], "\(other) is not one of Firebase's symbols")
        }
        for allowed in PasswordSettings.nonAlphanumericCharacters {
            #expect(symbol.unmet("abcdef" + String(allowed)).isEmpty, "\(allowed) is one of Firebase's symbols")
        }
        #expect(PasswordSettings.nonAlphanumericCharacters.count == 29)
        let letters = PasswordPolicy(
            settings: PasswordSettings(minimumLength: 6, requireLowercase: true, requireUppercase: true, requireNumeric: true))
        #expect(letters.unmet("äöüÄÖÜ١٢٣") == [.lowercase, .uppercase, .numeric], "only ASCII letters and digits count")
        #expect(letters.unmet("aB3xyz").isEmpty)
        let length = PasswordPolicy(settings: PasswordSettings(minimumLength: 8, enforcement: .enforce))
        #expect(length.unmet("😀😀😀😀").isEmpty, "four emoji are eight UTF-16 units")
        #expect(length.unmet("ééééééé") == [.minimumLength(8)], "seven precomposed letters are seven units")
        #expect(Self.message(PasswordPolicy(settings: PasswordSettings(minimumLength: 6)), "😀😀😀") == nil, "three emoji are six units")
    }

    @Test("Google's phrases read back into rules, unknown ones left out")
    func phrases() {
        let rules: [PasswordPolicy.Requirement] = [
            .minimumLength(10), .maximumLength(25), .lowercase, .uppercase, .numeric, .nonAlphanumeric,
        ]
        for rule in rules { #expect(PasswordPolicy.Requirement(googlePhrase: rule.googlePhrase) == rule) }
        #expect(
            PasswordPolicy.Requirement.parse(
                detail:
                    "Missing password requirements: [Password must contain at least 8 characters, Password must contain a lower case character, Password must contain an upper case character, Password must contain a non-alphanumeric character]"
            ) == [.minimumLength(8), .lowercase, .uppercase, .nonAlphanumeric])
        #expect(
            PasswordPolicy.Requirement.parse(
                detail: "Missing password requirements: [Password must rhyme, Password must contain a numeric character]")
                == [.numeric])
        #expect(PasswordPolicy.Requirement.parse(detail: nil).isEmpty && PasswordPolicy.Requirement.parse(detail: "no brackets").isEmpty)
    }

    @Test("GET /v2/passwordPolicy's shape: lengths always, a boolean only for a required rule, the symbols, the state, schema 1")
    func servedShape() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let symbols =
            ##"["^","$","*",".","[","]","{","}","(",")","?","\"","!","@","#","%","&","/","\\",",",">","<","'",":",";","|","_","~","`"]"##
        let plain = String(
            decoding: try encoder.encode(PasswordPolicyResponse(PasswordPolicy(settings: PasswordSettings()))), as: UTF8.self)
        #expect(
            plain
                == #"{"allowedNonAlphanumericCharacters":"# + symbols
                + #","customStrengthOptions":{"maxPasswordLength":4096,"minPasswordLength":8},"enforcementState":"OFF","forceUpgradeOnSignin":false,"schemaVersion":1}"#
        )
        let strict = String(decoding: try encoder.encode(PasswordPolicyResponse(Self.strict)), as: UTF8.self)
        #expect(
            strict.contains(
                #""customStrengthOptions":{"containsLowercaseCharacter":true,"containsNonAlphanumericCharacter":true,"containsNumericCharacter":true,"containsUppercaseCharacter":true,"maxPasswordLength":25,"minPasswordLength":10},"enforcementState":"ENFORCE""#
            ), "\(strict)")
    }

    @Test("what a front enforces from an answer: the rules with ENFORCE; only Firebase's floor with OFF or UNSPECIFIED")
    func readByAFront() throws {
        func read(_ json: String) throws -> PasswordPolicy {
            try JSONDecoder().decode(PasswordPolicyResponse.self, from: Data(json.utf8)).enforcedPolicy
        }
        #expect(
            try read(
                #"{"customStrengthOptions":{"minPasswordLength":10,"containsUppercaseCharacter":true},"enforcementState":"ENFORCE","schemaVersion":1}"#
            )
                == PasswordPolicy(settings: PasswordSettings(minimumLength: 10, requireUppercase: true, enforcement: .enforce)))
        // Google's answer for a project that never set a policy.
        let recorded = try read(
            #"{"customStrengthOptions":{"minPasswordLength":6,"maxPasswordLength":4096},"schemaVersion":1,"enforcementState":"ENFORCE"}"#)
        #expect(recorded.settings.minimumLength == 6 && recorded.enforced && recorded.unmet("sixsix").isEmpty)
        for state in ["OFF", "ENFORCEMENT_STATE_UNSPECIFIED"] {
            let off = try read(
                #"{"customStrengthOptions":{"minPasswordLength":20,"containsNumericCharacter":true},"enforcementState":"\#(state)"}"#)
            #expect(off == PasswordPolicyResponse.floorPolicy && off.problem("sixsix") == nil, "\(state)")
        }
        #expect(try read(#"{"enforcementState":"ENFORCE"}"#).settings.minimumLength == 6, "no minimum: Firebase's floor")
    }

    @Test("a tenant's passwordPolicyConfig: Google's limits, one version, forceUpgradeOnSignin false")
    func tenantConfig() throws {
        func settings(_ json: String) throws(ActionError) -> PasswordSettings {
            guard let config = try? JSONDecoder().decode(PasswordPolicyConfig.self, from: Data(json.utf8)) else {
                throw ActionError(.invalidJSON)
            }
            return try config.settings()
        }
        #expect(
            try settings(
                #"{"passwordPolicyEnforcementState":"ENFORCE","passwordPolicyVersions":[{"customStrengthOptions":{"minPasswordLength":12,"containsNumericCharacter":true}}]}"#
            ) == PasswordSettings(minimumLength: 12, requireNumeric: true, enforcement: .enforce))
        #expect(try settings(#"{"passwordPolicyEnforcementState":"OFF"}"#) == PasswordSettings(minimumLength: 6, enforcement: .off))
        let refusals = [
            (#"{"passwordPolicyEnforcementState":"STRICT"}"#, "passwordPolicyConfig.passwordPolicyEnforcementState"),
            (#"{"passwordPolicyVersions":[{},{}]}"#, "expected exactly one version"),
            (
                #"{"passwordPolicyVersions":[{"customStrengthOptions":{"minPasswordLength":5}}]}"#,
                "minPasswordLength: expected 6 to 30; got 5"
            ),
            (#"{"passwordPolicyVersions":[{"customStrengthOptions":{"minPasswordLength":31}}]}"#, "expected 6 to 30; got 31"),
            (
                #"{"passwordPolicyVersions":[{"customStrengthOptions":{"minPasswordLength":12,"maxPasswordLength":10}}]}"#,
                "maxPasswordLength: expected 12 to 4096; got 10"
            ),
            (#"{"forceUpgradeOnSignin":true}"#, "forceUpgradeOnSignin"),
        ]
        for (json, detail) in refusals {
            do throws(ActionError) {
                let accepted = try settings(json)
                Issue.record("\(json) was taken: \(accepted)")
            } catch {
                #expect(error.detail?.contains(detail) == true, "\(json): \(error.message)")
            }
        }
        let round = PasswordPolicyConfig(Self.strict.settings)
        #expect(try round.settings() == Self.strict.settings)
    }
}
