import ActionLinks
import Foundation

// The bodies of the Identity Toolkit REST calls this server answers, with Firebase's field names.
// Unknown fields are ignored; a field of the wrong type is `INVALID_ARGUMENT` naming the field.

/// A boolean as the SDKs send it: `true` / `false`, or the strings `"true"` / `"false"`.
struct LenientBool: Decodable, Sendable {
    let value: Bool

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            value = flag
        } else if let text = try? container.decode(String.self), text == "true" || text == "false" {
            value = text == "true"
        } else {
            throw DecodingError.typeMismatch(Bool.self, .init(codingPath: decoder.codingPath, debugDescription: "must be true or false"))
        }
    }
}

/// An Android version code, sent as a string or a number depending on the SDK: a whole number from
/// 0 to 2100000000 (Play's largest versionCode). It is shown on a page, so nothing else is accepted.
struct VersionCode: Decodable, Sendable {
    /// The code's digits, or `nil` for an empty string.
    let digits: String?

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let problem = DecodingError.typeMismatch(
            Int.self,
            .init(codingPath: decoder.codingPath, debugDescription: "must be an Android version code: a whole number from 0 to 2100000000"))
        var text: String
        if let number = try? container.decode(Int.self) {
            text = String(number)
        } else if let string = try? container.decode(String.self) {
            text = string
        } else {
            throw problem
        }
        guard !text.isEmpty else {
            digits = nil
            return
        }
        guard text.utf8.count <= 10, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let code = Int(text), code <= 2_100_000_000
        else {
            throw problem
        }
        text = String(code)
        digits = text
    }
}

/// `requestType` by name (`PASSWORD_RESET`) or by number (`1`, as the Android SDK sends it).
struct RequestType: Decodable, Sendable {
    /// The numbers of Identity Toolkit's `OobReqType` enum.
    static let numbers: [Int: String] = [
        1: "PASSWORD_RESET", 4: "VERIFY_EMAIL", 5: "RECOVER_EMAIL", 6: "EMAIL_SIGNIN", 7: "VERIFY_AND_CHANGE_EMAIL",
        8: "REVERT_SECOND_FACTOR_ADDITION",
    ]
    /// The name given (or the name of the number given); empty when it was empty.
    let name: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self) {
            name = Self.numbers[number] ?? String(number)
        } else {
            name = try container.decode(String.self)
        }
    }
}

/// `accounts:sendOobCode`.
struct SendOobCodeRequest: Decodable, Sendable {
    var requestType: RequestType?
    var email: String?
    var newEmail: String?
    var idToken: String?
    var tenantId: String?
    var continueUrl: String?
    var canHandleCodeInApp: LenientBool?
    var iOSBundleId: String?
    var iosBundleId: String?
    var androidPackageName: String?
    var androidInstallApp: LenientBool?
    var androidMinimumVersion: VersionCode?
    var androidMinimumVersionCode: VersionCode?
    var linkDomain: String?
    var dynamicLinkDomain: String?
    var returnOobLink: LenientBool?
}

/// `accounts:resetPassword`, `accounts:update` (with `oobCode`) and `accounts:signInWithEmailLink`.
struct OobCodeRequest: Decodable, Sendable {
    var oobCode: String?
    var newPassword: String?
    var email: String?
    var tenantId: String?
}

/// `accounts:lookup`: by ID token, or (admin) by IDs and addresses, one or several.
struct LookupRequest: Decodable, Sendable {
    var idToken: String?
    var localId: OneOrMany?
    var email: OneOrMany?
    var tenantId: String?
}

/// A string or a list of strings.
struct OneOrMany: Decodable, Sendable {
    let values: [String]

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let one = try? container.decode(String.self) {
            values = [one]
        } else {
            values = try container.decode([String].self)
        }
    }
}

/// `projects/<p>/accounts` (admin): a new account.
struct CreateAccountRequest: Decodable, Sendable {
    var email: String?
    var password: String?
    var emailVerified: LenientBool?
    var displayName: String?
    var localId: String?
    var tenantId: String?
}

/// The tenant a body names, whatever the call (read before the call's own body).
struct TenantField: Decodable, Sendable {
    var tenantId: String?
}

/// `accounts:sendOobCode`'s answer.
struct SendOobCodeResponse: Encodable, Sendable {
    var kind = "identitytoolkit#GetOobConfirmationCodeResponse"
    var email: String
    var oobLink: String?
    var oobCode: String?
}

/// `accounts:resetPassword`'s answer (inspection or reset).
struct ResetPasswordResponse: Encodable, Sendable {
    var kind = "identitytoolkit#ResetPasswordResponse"
    var email: String?
    var newEmail: String?
    var requestType: String
}

/// `accounts:signInWithEmailLink`'s answer.
struct EmailLinkSignInResponse: Encodable, Sendable {
    var kind = "identitytoolkit#EmailLinkSigninResponse"
    var idToken: String
    var refreshToken: String
    var email: String
    var localId: String
    var expiresIn: String
    var isNewUser: Bool
}

/// `accounts:lookup`'s answer.
struct LookupResponse: Encodable, Sendable {
    var kind = "identitytoolkit#GetAccountInfoResponse"
    var users: [UserInfo]?
}

/// The admin's `accounts` (create) answer.
struct CreateAccountResponse: Encodable, Sendable {
    var kind = "identitytoolkit#SignupNewUserResponse"
    var localId: String
    var email: String?
}

/// `GET /emulator/v1/projects/<p>/oobCodes`'s answer.
struct OobCodeListing: Encodable, Sendable {
    struct Entry: Encodable, Sendable {
        var email: String
        var oobCode: String
        var oobLink: String
        var requestType: String
    }
    var oobCodes: [Entry]
}

/// A provider linked to an account, as `accounts:lookup` shows it.
struct ProviderUserInfo: Encodable, Sendable {
    var providerId: String
    var federatedId: String
    var email: String
    var rawId: String
}

/// An account as `accounts:lookup` (and `accounts:update`, with its `kind`) shows it; the password
/// hash itself is never returned.
struct UserInfo: Encodable, Sendable {
    var kind: String?
    var localId: String
    var email: String?
    var emailVerified: Bool
    var displayName: String?
    var disabled: Bool
    var createdAt: String
    var lastLoginAt: String?
    var validSince: String
    var tenantId: String?
    var passwordHash: String?
    var passwordUpdatedAt: Int64?
    var providerUserInfo: [ProviderUserInfo]

    init(_ account: Account, kind: String? = nil) {
        self.kind = kind
        localId = account.localID
        email = account.email
        emailVerified = account.emailVerified
        displayName = account.displayName
        disabled = account.disabled
        createdAt = String(account.createdAt)
        lastLoginAt = account.lastLoginAt.map { String($0) }
        validSince = String(account.validSince)
        tenantId = account.tenantID.isEmpty ? nil : account.tenantID
        providerUserInfo = []
        if account.passwordHash != nil {
            passwordHash = "UkVEQUNURUQ="
            passwordUpdatedAt = account.passwordUpdatedAt
            if let email = account.email {
                providerUserInfo = [ProviderUserInfo(providerId: "password", federatedId: email, email: email, rawId: email)]
            }
        }
    }
}

/// Firebase's error body: `{"error":{"code":400,"message":"CODE : detail","errors":[...]}}`.
struct ErrorBody: Encodable, Sendable {
    struct Detail: Encodable, Sendable {
        struct Item: Encodable, Sendable {
            var message: String
            var domain = "global"
            var reason: String
        }
        var code: Int
        var message: String
        var errors: [Item]
    }
    var error: Detail
}

/// Reads and writes the REST bodies.
enum IdentityToolkitJSON {
    /// Sorted keys and unescaped slashes, as Google's endpoint writes them.
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func encode(_ value: some Encodable) -> Data {
        (try? encoder.encode(value)) ?? Data("{}".utf8)
    }

    /// Decodes a request body (empty: an empty object); malformed JSON is `INVALID_JSON`, a field of
    /// the wrong type `INVALID_ARGUMENT` naming it.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(ActionError) -> T {
        let data = data.isEmpty ? Data("{}".utf8) : data
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let DecodingError.typeMismatch(_, context) where !context.codingPath.isEmpty {
            throw ActionError.invalidArgument(Self.describe(context))
        } catch let DecodingError.valueNotFound(_, context) where !context.codingPath.isEmpty {
            throw ActionError.invalidArgument(Self.describe(context))
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            throw ActionError.invalidArgument(Self.describe(context))
        } catch {
            throw ActionError(.invalidJSON, "Invalid JSON payload received: the body is not a JSON object")
        }
    }

    static func describe(_ context: DecodingError.Context) -> String {
        let field = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        let reason = context.debugDescription.hasPrefix("must ") ? context.debugDescription : "has the wrong type"
        return "'\(field.prefix(100))' \(reason)"
    }
}
