/// An action-code link: what a Firebase-style email link asks the app or the link domain to do.
///
/// Build one to send (``webLink(on:)``, ``mobileLink(on:)``) and parse what comes back
/// (``parse(_:)``); a link you build parses back to the same value.
public struct ActionCodeLink: Sendable, Hashable {
    /// What the link does; the raw values are the `mode` parameter, compared case-sensitively.
    public enum Mode: String, Sendable, Hashable, CaseIterable, Codable {
        /// Email-link sign-in.
        case signIn
        /// Set a new password.
        case resetPassword
        /// Mark the email address verified.
        case verifyEmail
        /// Undo an email change: restore the previous address.
        case recoverEmail
        /// Change the email address to a new, verified one.
        case verifyAndChangeEmail
        /// Remove a second factor that was just added.
        case revertSecondFactorAddition

        /// The Identity Toolkit `requestType` that issues codes for this mode (`EMAIL_SIGNIN`, ...).
        public var requestType: String {
            switch self {
            case .signIn: "EMAIL_SIGNIN"
            case .resetPassword: "PASSWORD_RESET"
            case .verifyEmail: "VERIFY_EMAIL"
            case .recoverEmail: "RECOVER_EMAIL"
            case .verifyAndChangeEmail: "VERIFY_AND_CHANGE_EMAIL"
            case .revertSecondFactorAddition: "REVERT_SECOND_FACTOR_ADDITION"
            }
        }

        /// The mode for an Identity Toolkit `requestType`, or `nil` for an unknown one.
        public init?(requestType: String) {
            guard let mode = Mode.allCases.first(where: { $0.requestType == requestType }) else { return nil }
            self = mode
        }

        /// The mode whose raw value is exactly `bytes`.
        @inline(__always)
        init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
            let candidate: Mode
            let text: StaticString
            switch bytes.count {
            case 6: (candidate, text) = (.signIn, "signIn")
            case 13: (candidate, text) = (.resetPassword, "resetPassword")
            case 11: (candidate, text) = (.verifyEmail, "verifyEmail")
            case 12: (candidate, text) = (.recoverEmail, "recoverEmail")
            case 20: (candidate, text) = (.verifyAndChangeEmail, "verifyAndChangeEmail")
            case 26: (candidate, text) = (.revertSecondFactorAddition, "revertSecondFactorAddition")
            default: return nil
            }
            guard memoryEquals(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount), bytes) else { return nil }
            self = candidate
        }

        /// The handler of the link domain that completes this mode, in words.
        public var handlerDescription: String {
            switch self {
            case .signIn: "sign-in with an email link"
            case .resetPassword: "password reset"
            case .verifyEmail: "email verification"
            case .recoverEmail: "email recovery (undo an email change)"
            case .verifyAndChangeEmail: "email change (verify the new address)"
            case .revertSecondFactorAddition: "second-factor removal (undo an enrolment)"
            }
        }
    }

    /// What the link does.
    public var mode: Mode
    /// The one-time code (`oobCode`); never empty in a parsed link.
    public var oobCode: String
    /// The project's web API key (`apiKey`), if the link carries one.
    public var apiKey: String?
    /// Where to go after the action (`continueUrl`), decoded.
    public var continueURL: String?
    /// The BCP 47 language of the pages (`lang`).
    public var languageCode: String?
    /// The tenant the account belongs to (`tenantId`).
    public var tenantID: String?

    /// Creates a link value; empty optional fields are treated as absent, as the Firebase SDKs do.
    public init(
        mode: Mode, oobCode: String, apiKey: String? = nil, continueURL: String? = nil,
        languageCode: String? = nil, tenantID: String? = nil
    ) {
        self.mode = mode
        self.oobCode = oobCode
        self.apiKey = apiKey.nonEmpty
        self.continueURL = continueURL.nonEmpty
        self.languageCode = languageCode.nonEmpty
        self.tenantID = tenantID.nonEmpty
    }

    /// The path of the action handler on a link domain.
    public static let actionPath = "/__/auth/action"
    /// The path of the mobile-link wrapper on a link domain.
    public static let mobileLinkPath = "/__/auth/links"
    static let mobileLinkPathBytes: StaticString = "/__/auth/links"

    /// The web link: `https://<domain>/__/auth/action?mode=…&oobCode=…&apiKey=…&continueUrl=…&lang=…&tenantId=…`.
    ///
    /// Values are encoded as URI components, which is what the JS SDK (split, then decode) reads.
    public func webLink(on domain: LinkDomain) -> String {
        var query = "mode=" + mode.rawValue + "&oobCode=" + PercentEncoding.encodeComponent(oobCode)
        if let apiKey { query += "&apiKey=" + PercentEncoding.encodeComponent(apiKey) }
        appendOptionalParameters(to: &query)
        return domain.origin + Self.actionPath + "?" + query
    }

    /// The mobile link: `https://<domain>/__/auth/links?link=<inner web link>`.
    ///
    /// The inner link starts with `apiKey` and only its `%`, `&` and `=` are escaped, so the iOS SDK
    /// (which decodes the whole query before splitting it) sees `mode`, `oobCode` and the rest as
    /// top-level parameters while the JS and Android SDKs read them from the decoded `link`. A link
    /// without an API key gets an empty `apiKey=` for the same reason; parsing reads it as absent.
    public func mobileLink(on domain: LinkDomain) -> String {
        var inner = "apiKey=" + PercentEncoding.encodeComponent(apiKey ?? "")
        inner += "&mode=" + mode.rawValue + "&oobCode=" + PercentEncoding.encodeComponent(oobCode)
        appendOptionalParameters(to: &inner)
        let innerLink = domain.origin + Self.actionPath + "?" + inner
        return domain.origin + Self.mobileLinkPath + "?link=" + PercentEncoding.escapeNestedLink(innerLink)
    }

    private func appendOptionalParameters(to query: inout String) {
        if let continueURL { query += "&continueUrl=" + PercentEncoding.encodeComponent(continueURL) }
        if let languageCode { query += "&lang=" + PercentEncoding.encodeComponent(languageCode) }
        if let tenantID { query += "&tenantId=" + PercentEncoding.encodeComponent(tenantID) }
    }

    /// Parses a link (unwrapping mobile, Dynamic Links and `deep_link_id` wrappers); `nil` when it is
    /// not an action link. Never throws and never traps, whatever the input.
    ///
    /// Use ``LinkInspection`` to learn why a link is not an action link and how each SDK reads it.
    public static func parse(_ link: String) -> ActionCodeLink? {
        LinkParser.parse(link)
    }
}

/// Reads the action out of the innermost URL of a link.
enum ActionParameters {
    /// The parsed link and the names of the parameters that were repeated.
    struct Reading {
        var link: ActionCodeLink
        var repeated: [String]
    }

    static func read(_ url: ScannedURL) -> Result<Reading, LinkInspection.Failure> {
        do throws(LinkInspection.Failure) {
            guard let modeText = try url.value(.mode) else {
                throw LinkInspection.Failure(code: .missingMode, message: "there is no mode parameter, so this is not an action link")
            }
            guard let mode = ActionCodeLink.Mode(rawValue: modeText) else {
                let known = ActionCodeLink.Mode.allCases.map(\.rawValue)
                if let near = known.first(where: { $0.lowercased() == modeText.lowercased() }) {
                    throw LinkInspection.Failure(
                        code: .unknownMode, message: "mode '\(modeText)' is not known; modes are case-sensitive: did you mean '\(near)'?")
                }
                throw LinkInspection.Failure(
                    code: .unknownMode, message: "mode '\(modeText)' is not one of \(known.joined(separator: ", "))")
            }
            guard let code = try url.value(.oobCode) else {
                throw LinkInspection.Failure(code: .missingCode, message: "there is no oobCode parameter")
            }
            guard !code.isEmpty else { throw LinkInspection.Failure(code: .missingCode, message: "the oobCode parameter is empty") }
            let link = ActionCodeLink(
                mode: mode, oobCode: code, apiKey: try url.value(.apiKey), continueURL: try url.value(.continueUrl),
                languageCode: try url.value(.lang), tenantID: try url.value(.tenantId))
            var repeated: [String] = []
            if url.query.repeated != 0 {
                for name in QueryScan.Name.allCases
                where name != .link && name != .deepLinkID && url.query.repeated & (1 << UInt8(name.rawValue)) != 0 {
                    repeated.append(name.text.description)
                }
            }
            return .success(Reading(link: link, repeated: repeated))
        } catch {
            return .failure(error)
        }
    }
}

/// Whether two byte buffers hold the same bytes (eight at a time while eight remain in both).
@inline(__always)
func memoryEquals(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
    guard a.count == b.count else { return false }
    guard let p = a.baseAddress, let q = b.baseAddress else { return true }
    var k = 0
    while k &+ 8 <= a.count {
        guard UnsafeRawPointer(p + k).loadUnaligned(as: UInt64.self) == UnsafeRawPointer(q + k).loadUnaligned(as: UInt64.self) else {
            return false
        }
        k &+= 8
    }
    while k < a.count {
        guard a[k] == b[k] else { return false }
        k &+= 1
    }
    return true
}

extension Optional where Wrapped == String {
    var nonEmpty: String? {
        guard let self, !self.isEmpty else { return nil }
        return self
    }
}
